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

