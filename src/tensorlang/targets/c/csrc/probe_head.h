// probe_head.h: a field probe's vector types and macros (probe.py); placeholders: docs/c-backend.md, "The C files".
#if defined(__GNUC__) && !defined(__clang__)
/* no code here reads or traps on the floating-point exception flags: without this gcc
   keeps the batch's selects (weights at f = 0, the domain test) as branches, one point
   at a time, rather than vector selects; the values are the same (clang's default) */
#pragma GCC optimize("no-trapping-math")
#endif
/* B doubles and B 64-bit integers (masks: all bits set for true) as vectors, and a
   lane-wise select by a mask */
typedef double tl_bd __attribute__((vector_size(B * 8)));
typedef long long tl_bm __attribute__((vector_size(B * 8)));
#ifdef _OPENMP  /* this thread's number in its team */
#define TL_THREAD() omp_get_thread_num()
#else
#define TL_THREAD() 0
#endif
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
#define tl_join(lo, hi) tl_join2((lo), (hi))
static inline __attribute__((always_inline)) tl_bd tl_join2(const double *lo, const double *hi)
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
