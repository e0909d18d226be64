// tl_blas.h: GEMM, SYRK and GEMV over the pointers tl_set_blas installs (blascall.py) (docs/c-backend.md, "The C files").

/* BLAS, found in the library numpy loaded and installed by tl_set_blas (machine/blas.py) */
static void *tl_blas_gemm, *tl_blas_gemv, *tl_blas_syrk;
static int tl_blas_kind;
int tl_set_blas(void *gemm, void *gemv, void *syrk, int kind) {
    tl_blas_gemm = gemm; tl_blas_gemv = gemv; tl_blas_syrk = syrk; tl_blas_kind = kind;
    return 0;
}
/* each routine as CBLAS with 64-bit or 32-bit integers (I), then as Fortran (every argument by address) */
#define TL_CGEMM(I) void (*)(int, int, int, I, I, I, real, const real *, I, const real *, I, real, real *, I)
#define TL_CGEMV(I) void (*)(int, int, I, I, real, const real *, I, const real *, I, real, real *, I)
#define TL_CSYRK(I) void (*)(int, int, int, I, I, real, const real *, I, real, real *, I)
typedef void (*tl_fgemm_t)(char *, char *, int32_t *, int32_t *, int32_t *, real *, const real *, int32_t *,
                           const real *, int32_t *, real *, real *, int32_t *);
typedef void (*tl_fgemv_t)(char *, int32_t *, int32_t *, real *, const real *, int32_t *, const real *, int32_t *,
                           real *, real *, int32_t *);
typedef void (*tl_fsyrk_t)(char *, char *, int32_t *, int32_t *, real *, const real *, int32_t *, real *, real *,
                           int32_t *);
enum { TL_ROW_MAJOR = 101, TL_NO_TRANS = 111, TL_TRANS = 112, TL_UPPER = 121 };
#define TL_OP(t) ((t) ? TL_TRANS : TL_NO_TRANS)

/* C (m x n, row-major) = op(A) op(B) */
static int tl_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const real *a, int64_t lda,
                   const real *b, int64_t ldb, real *c) {
    real one = 1, zero = 0;
    switch (tl_blas_kind) {
    case TL_FILL_CBLAS64:
        ((TL_CGEMM(int64_t))tl_blas_gemm)(TL_ROW_MAJOR, TL_OP(ta), TL_OP(tb), m, n, k, one, a, lda, b, ldb, zero, c, n);
        return 0;
    case TL_FILL_CBLAS32:
        ((TL_CGEMM(int32_t))tl_blas_gemm)(TL_ROW_MAJOR, TL_OP(ta), TL_OP(tb), (int32_t)m, (int32_t)n, (int32_t)k, one, a,
                                          (int32_t)lda, b, (int32_t)ldb, zero, c, (int32_t)n);
        return 0;
    case TL_FILL_FORTRAN32: {  /* column-major: Cᵀ = op(B)ᵀ op(A)ᵀ */
        char fa = ta ? 'T' : 'N', fb = tb ? 'T' : 'N';
        int32_t fm = (int32_t)n, fn = (int32_t)m, fk = (int32_t)k, flda = (int32_t)ldb, fldb = (int32_t)lda;
        int32_t fldc = (int32_t)n;
        ((tl_fgemm_t)tl_blas_gemm)(&fb, &fa, &fm, &fn, &fk, &one, b, &flda, a, &fldb, &zero, c, &fldc);
        return 0;
    }
    default:
        return -1;  /* tl_set_blas was not called */
    }
}

/* the upper triangle of C (n x n, row-major, row length ldc) = Aᵀ A (trans 1: A stored
   k x n) or A Aᵀ (trans 0: A stored n x k); the lower triangle is not written */
static int tl_syrk(int trans, int64_t n, int64_t k, const real *a, int64_t lda, real *c, int64_t ldc) {
    real one = 1, zero = 0;
    if (tl_blas_syrk == 0) return -1;
    switch (tl_blas_kind) {
    case TL_FILL_CBLAS64:
        ((TL_CSYRK(int64_t))tl_blas_syrk)(TL_ROW_MAJOR, TL_UPPER, TL_OP(trans), n, k, one, a, lda, zero, c, ldc);
        return 0;
    case TL_FILL_CBLAS32:
        ((TL_CSYRK(int32_t))tl_blas_syrk)(TL_ROW_MAJOR, TL_UPPER, TL_OP(trans), (int32_t)n, (int32_t)k, one, a,
                                          (int32_t)lda, zero, c, (int32_t)ldc);
        return 0;
    case TL_FILL_FORTRAN32: {  /* column-major: A row-major is Aᵀ, C's row-major upper triangle its lower */
        char fu = 'L', ft = trans ? 'N' : 'T';
        int32_t fn = (int32_t)n, fk = (int32_t)k, flda = (int32_t)lda, fldc = (int32_t)ldc;
        ((tl_fsyrk_t)tl_blas_syrk)(&fu, &ft, &fn, &fk, &one, a, &flda, &zero, c, &fldc);
        return 0;
    }
    default:
        return -1;
    }
}

/* y = R x (trans 0) or y = Rᵀ x (trans 1), R stored rows x cols, row-major */
static int tl_gemv(int trans, int64_t rows, int64_t cols, const real *r, const real *x, real *y) {
    real one = 1, zero = 0;
    memset(y, 0, (size_t)(trans ? cols : rows) * sizeof(real));
    switch (tl_blas_kind) {
    case TL_FILL_CBLAS64:
        ((TL_CGEMV(int64_t))tl_blas_gemv)(TL_ROW_MAJOR, TL_OP(trans), rows, cols, one, r, cols, x, 1, zero, y, 1);
        return 0;
    case TL_FILL_CBLAS32:
        ((TL_CGEMV(int32_t))tl_blas_gemv)(TL_ROW_MAJOR, TL_OP(trans), (int32_t)rows, (int32_t)cols, one, r,
                                          (int32_t)cols, x, 1, zero, y, 1);
        return 0;
    case TL_FILL_FORTRAN32: {  /* R row-major is Rᵀ column-major (cols x rows) */
        char ft = trans ? 'N' : 'T';
        int32_t fm = (int32_t)cols, fn = (int32_t)rows, flda = (int32_t)cols, inc = 1;
        ((tl_fgemv_t)tl_blas_gemv)(&ft, &fm, &fn, &one, r, &flda, x, &inc, &zero, y, &inc);
        return 0;
    }
    default:
        return -1;
    }
}
