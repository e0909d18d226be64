// gram_body3.c: sum_n X_ni X_nj X_nk over the packed panels (gram.py); follows gram_pack.c. See docs/c-backend.md.

static int TL_FILL_Prun_TL_FILL_S(const double *restrict x, double *restrict res, double *restrict work, int nt) {
    (void)nt;
    double *g = (double *)(((unsigned long)work + 63) & ~(unsigned long)63);  /* MP x MP x MP */
    double *p = g + MP * MP * MP;                                               /* MB x KC x 8 */
    #pragma omp parallel num_threads(nt) if(nt > 1)
    {
    for (long r0 = 0; r0 < N; r0 += KC) {
        long kc = N - r0 < KC ? N - r0 : KC;
        int first = r0 == 0;
        TL_FILL_Ppack_TL_FILL_S(x, p, r0, kc);
        const char *after = (const char *)(x + (r0 + kc) * M);
        long slice = (N - r0 - kc < KC ? N - r0 - kc : KC) * M * 8 / M + 1;
        /* g[i][j][k] for i <= j <= k (and the rest of their blocks): for each i the Gram
           product of X scaled by column i with X, over the blocks from i's */
        #pragma omp for schedule(dynamic, 1)
        for (long i = 0; i < M; i++) {
            const double *s = p + (i / 8) * kc * 8 + i % 8;
            double *gi = g + i * MP * MP;
            const char *next = after + i * slice, *end = next + slice;
            if (TRANSPOSED || r0 + kc >= N) next = end = (const char *)g;
            for (long jb = i / 8; jb < MB; jb++) {
                const double *a = p + jb * kc * 8;
                int rows = jb == i / 8 ? 8 - (int)(i % 8) : 8;  /* the rows j >= i */
                long kb = jb;
                for (; kb + 3 <= MB; kb += 3, next = next + 64 * kc < end ? next + 64 * kc : (const char *)g)
                    TL_FILL_Psrow3(rows, a, p + kb * kc * 8, s, kc, gi + 8 * jb * MP + 8 * kb, first, next);
                if (MB - kb == 2) TL_FILL_Psrow2(rows, a, p + kb * kc * 8, s, kc, gi + 8 * jb * MP + 8 * kb, first, next);
                else if (MB - kb == 1) TL_FILL_Psrow1(rows, a, p + kb * kc * 8, s, kc, gi + 8 * jb * MP + 8 * kb, first, next);
            }
        }
    }
    /* every entry from its sorted one: exactly symmetric */
    #pragma omp for schedule(dynamic, 1)
    for (long i = 0; i < M; i++)
        for (long j = i; j < M; j++)
            for (long k = j; k < M; k++) {
                double v = g[(i * MP + j) * MP + k];
                res[(i * M + j) * M + k] = v;
                res[(i * M + k) * M + j] = v;
                res[(j * M + i) * M + k] = v;
                res[(j * M + k) * M + i] = v;
                res[(k * M + i) * M + j] = v;
                res[(k * M + j) * M + i] = v;
            }
    }
    return 0;
}
