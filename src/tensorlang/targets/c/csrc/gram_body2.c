// gram_body2.c: X^T X over the packed panels (gram.py); follows gram_pack.c. See docs/c-backend.md.

static int TL_FILL_Prun_TL_FILL_S(const double *restrict x, double *restrict res, double *restrict work, int nt) {
    (void)nt;
    double *g = (double *)(((unsigned long)work + 63) & ~(unsigned long)63);  /* MP x MP */
    double *p = g + MP * MP;                                                    /* MB x KC x 8 */
    #pragma omp parallel num_threads(nt) if(nt > 1)
    {
    /* two panel buffers: while one is multiplied, the tiles copy the next panel's rows
       into the other (a load and a store in the shadow of 24 FMAs), and the panel
       after it is prefetched from memory (row-major X; a transposed X is packed
       panel by panel) */
    double *cur = p, *nxt = p + MB * KC * 8;
#if !TRANSPOSED
    TL_FILL_Ppack_TL_FILL_S(x, cur, 0, N < KC ? N : KC);  /* (its loops end with a barrier) */
#endif
    for (long r0 = 0; r0 < N; r0 += KC) {
        long kc = N - r0 < KC ? N - r0 : KC;
        long r1 = r0 + kc, kc1 = N - r1 < KC ? N - r1 : KC;
        int first = r0 == 0;
#if TRANSPOSED
        TL_FILL_Ppack_TL_FILL_S(x, cur, r0, kc);
        kc1 = 0;
        long kc2 = 0;
#else
        long kc2 = N - r1 - kc1 < KC ? N - r1 - kc1 : KC;
#endif
        const char *after = (const char *)(x + (r1 + kc1) * M);
        long slice = kc2 * M * 8 / (TB > 0 ? TB : 1) + 1;
        #pragma omp for schedule(static, 1)
        for (long ib = 0; ib < TB; ib++) {  /* the triangle's tiles over the TB blocks */
            const double *a = cur + ib * kc * 8;
            const char *next = after + ib * slice, *end = next + slice;
            if (kc2 <= 0) next = end = (const char *)g;
            /* the first tile of each block row copies that block of the next panel */
            const double *src = x + r1 * M + 8 * ib;
            double *dst = nxt + ib * kc1 * 8;
            long cn = ib < M / 8 && kc1 > 0 ? kc1 : 0;
            long jb = ib;
            for (; jb + 3 <= TB; jb += 3, next = next + 64 * kc < end ? next + 64 * kc : (const char *)g, cn = 0)
                TL_FILL_Ptile3(a, cur + jb * kc * 8, kc, g + 8 * ib * MP + 8 * jb, first, next, src, dst, cn);
            if (TB - jb == 2) TL_FILL_Ptile2(a, cur + jb * kc * 8, kc, g + 8 * ib * MP + 8 * jb, first, next, src, dst, cn);
            else if (TB - jb == 1) TL_FILL_Ptile1(a, cur + jb * kc * 8, kc, g + 8 * ib * MP + 8 * jb, first, next, src, dst, cn);
        }
#if STRIP  /* the last TAIL columns against every row, vectors along the rows */
        #pragma omp for schedule(static, 1)
        for (long ib = 0; ib < MB; ib += SG)
            TL_FILL_Pstrip(cur + ib * kc * 8, cur + TB * kc * 8, kc, g + 8 * TB * MP + 8 * ib, first, MB - ib < SG ? MB - ib : SG);
#endif
#if !TRANSPOSED
        if (kc1 > 0) TL_FILL_Ppack_tail_TL_FILL_S(x, nxt, r1, kc1);  /* (ends with a barrier) */
        double *t = cur;
        cur = nxt;
        nxt = t;
#endif
    }
    /* the upper triangle into the result, mirrored into the lower one (the strip's
       columns were computed as rows: g[j][i] for j in the last block), in 16 x 16
       blocks, so that the mirror's column writes stay in L1 (m = 256, n = 100: 259 us
       with 32 x 32 blocks, whose 32 rows 2 KiB apart share two L1 sets; 123 us) */
    #pragma omp for schedule(dynamic, 1)
    for (long bi = 0; bi < M; bi += 16)
        for (long bj = bi; bj < M; bj += 16)
            for (long i = bi; i < bi + 16 && i < M; i++) {
                const double *gi = g + i * MP;
                double *ri = res + i * (long)M;
                for (long j = bj > i ? bj : i; j < bj + 16 && j < M; j++) {
                    double v = STRIP && j >= 8 * TB ? g[j * MP + i] : gi[j];
                    ri[j] = v;
                    res[j * (long)M + i] = v;
                }
            }
    }
    return 0;
}
