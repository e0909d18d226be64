// gram_pack.c: a panel of X's rows packed into 8-column blocks (gram.py) (docs/c-backend.md, "The C files").

/* the partial last block of rows r0..r0+kc (M mod 8 columns, zero beyond; row-major X) */
static void TL_FILL_Ppack_tail_TL_FILL_S(const double *restrict x, double *restrict p, long r0, long kc) {
    #pragma omp single
    if (M % 8 && !TRANSPOSED) {
        double *restrict pb = p + (M / 8) * kc * 8;
        const double *restrict xb = x + r0 * M + 8 * (M / 8);
        for (long r = 0; r < kc; r++)
            for (int v = 0; v < 8; v++) pb[8 * r + v] = v < M % 8 ? xb[r * M + v] : 0.0;
    }
}

/* pack rows r0..r0+kc of X: p[b][r][v] = X[r0 + r][8b + v], zero beyond M */
static void TL_FILL_Ppack_TL_FILL_S(const double *restrict x, double *restrict p, long r0, long kc) {
#if TRANSPOSED
    #pragma omp for schedule(static)
    for (long b = 0; b < MB; b++) {  /* X[r][c] at x[c * N + r]: read along r */
        double *restrict pb = p + b * kc * 8;
        long width = M - 8 * b < 8 ? M - 8 * b : 8;
        for (long v = 0; v < width; v++) {
            const double *restrict xc = x + (8 * b + v) * N + r0;
            for (long r = 0; r < kc; r++) pb[8 * r + v] = xc[r];
        }
        for (long v = width; v < 8; v++)
            for (long r = 0; r < kc; r++) pb[8 * r + v] = 0.0;
    }
#else
    /* a block at a time, its rows in order: the packed block is written as one stream
       (a row at a time would write MB streams kc * 64 bytes apart: the same L1 sets) */
    #pragma omp for schedule(static)
    for (long b = 0; b < MB; b++) {
        if (b == M / 8) continue;  /* the partial block: below (one thread) */
        double *restrict pb = p + b * kc * 8;
        const double *restrict xb = x + r0 * M + 8 * b;
        for (long r = 0; r < kc; r++)
            for (int v = 0; v < 8; v++) pb[8 * r + v] = xb[r * M + v];
    }
    TL_FILL_Ppack_tail_TL_FILL_S(x, p, r0, kc);
#endif
}

