// probe_head.h: the vector types and macros of a field probe kernel
// (fields/cprobe.py, source()): a row's short vector and its load, the paired rows of
// 512 bits (TL_PAIRED), the transposes' shuffles, a batch's vectors and select.
// The generated prefix defines D, S, NC, VW, NV and B.  Placeholder: TL_FILL_PAIRED
// (cprobe.PAIRED: 1 forces the paired form whatever the target).
#if defined(__GNUC__) && !defined(__clang__)
/* no code here reads or traps on the floating-point exception flags: without this gcc
   keeps the batch's selects (weights at f = 0, the domain test) as branches, one point
   at a time, rather than vector selects; the values are the same (clang's default) */
#pragma GCC optimize("no-trapping-math")
#endif
/* a short vector of doubles (GCC/clang vector extension), and its unaligned load */
typedef double tl_v __attribute__((vector_size(VW * 8)));
typedef double tl_vu __attribute__((vector_size(VW * 8), aligned(8)));
#define tl_load(p) (*(const tl_vu *)(p))  /* a macro: inlined whatever the functions' options */
/* _paired_contract's 8 doubles: two rows, and the halves of one (GCC 12 and clang have
   __builtin_shufflevector; with AVX-512 each is one register, so TL_PAIRED is on there) */
#if defined(__AVX512F__) && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12))
#define TL_PAIRED 1
#else
#define TL_PAIRED 0
#endif
#if TL_PAIRED || TL_FILL_PAIRED
typedef double tl_w __attribute__((vector_size(64)));
#define TL_PAIR(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7)
#define TL_LO(w) __builtin_shufflevector(w, w, 0, 1, 2, 3)
#define TL_HI(w) __builtin_shufflevector(w, w, 4, 5, 6, 7)
#endif
#if VW == 4  /* lanes i, j, k, l of the 8 in (a, b): _vector_dots' transposes */
#if defined(__clang__)
#define TL_SHUF(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
typedef long long tl_i __attribute__((vector_size(32)));
#define TL_SHUF(a, b, i, j, k, l) __builtin_shuffle(a, b, (tl_i){i, j, k, l})
#endif
#endif

/* B doubles and B 64-bit integers (masks: all bits set for true) as vectors, and a
   lane-wise select by a mask */
typedef double tl_bd __attribute__((vector_size(B * 8)));
typedef long long tl_bm __attribute__((vector_size(B * 8)));
#define TL_SELECT(m, a, b) ((tl_bd)(((tl_bm)(a) & (m)) | ((tl_bm)(b) & ~(m))))

/* _lanes_sums: B doubles or 64-bit integers loaded from 8-byte aligned memory, B
   doubles stored there, and a gather: lane j of TL_GATHER(p, i) is p[i[j]] (one
   instruction where the target has one for B lanes; elsewhere lane by lane) */
typedef double tl_bdu __attribute__((vector_size(B * 8), aligned(8)));
typedef long long tl_bmu __attribute__((vector_size(B * 8), aligned(8)));
#define TL_LOADB(p) (*(const tl_bdu *)(p))
#define TL_LOADM(p) (*(const tl_bmu *)(p))
#define TL_STOREB(p, v) (*(tl_bdu *)(p) = (v))
#if defined(__AVX512F__) && B == 8
#include <immintrin.h>
#define TL_GATHER(p, i) ((tl_bd)_mm512_i64gather_pd((__m512i)(i), (const void *)(p), 8))
#elif defined(__AVX2__) && B == 8
#include <immintrin.h>
#define TL_GATHER(p, i) tl_gather2((p), (i))
static inline __attribute__((always_inline)) tl_bd tl_gather2(const double *p, tl_bm i)
{
    const __m256d lo = _mm256_i64gather_pd(p, _mm256_set_epi64x(i[3], i[2], i[1], i[0]), 8);
    const __m256d hi = _mm256_i64gather_pd(p, _mm256_set_epi64x(i[7], i[6], i[5], i[4]), 8);
    tl_bd v;
    __builtin_memcpy(&v, &lo, 32);
    __builtin_memcpy((char *)&v + 32, &hi, 32);
    return v;
}
#else
#define TL_GATHER(p, i) tl_gather2((p), (i))
static inline __attribute__((always_inline)) tl_bd tl_gather2(const double *p, tl_bm i)
{
    tl_bd v;
    for (int j = 0; j < B; j++) v[j] = p[i[j]];
    return v;
}
#endif
/* two rows of 4 doubles as one vector of B = 8, and lanes of two such vectors */
#if (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)) && B == 8
typedef double tl_v4u __attribute__((vector_size(32), aligned(8)));
#define tl_join(lo, hi) __builtin_shufflevector(*(const tl_v4u *)(lo), *(const tl_v4u *)(hi), 0, 1, 2, 3, 4, 5, 6, 7)
#else
static inline __attribute__((always_inline)) tl_bd tl_join(const double *lo, const double *hi)
{
    tl_bd v;
    __builtin_memcpy(&v, lo, 32);
    __builtin_memcpy((char *)&v + 32, hi, 32);
    return v;
}
#endif
#if defined(__clang__)
#define TL_SHUF8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define TL_SHUF8(a, b, ...) __builtin_shuffle(a, b, (tl_bm){__VA_ARGS__})
#endif
