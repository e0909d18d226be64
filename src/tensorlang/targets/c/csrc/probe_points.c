// probe_points.c: tl_probe_points and tl_unpack (probe.py); follows probe_sort.c (docs/c-backend.md, "The C files").
/* The probes of points pts[0 .. n-1]; the result of point q goes to out at index q:
   all its derivative components (NC*TL_FILL_FULL doubles), or, packed, each distinct one once
   (PACKED doubles, in the order of r: tl_unpack spreads them). */
static void tl_probe_points(int64_t n, const double *pts, int packed, const double *data,
                            const int64_t *sizes, const double *M, double *out, int threads, int64_t look)
{
    int64_t stride[D];
    stride[D-1] = NC;
    for (int a = D - 2; a >= 0; a--) stride[a] = stride[a+1] * sizes[a+1];
    const int64_t TL_FILL_STRIDES;
    TL_FILL_UNUSED
    const int64_t batches = (n + B - 1) / B;
    const int64_t each = packed ? PACKED : NC*TL_FILL_FULL;
    #pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1 && n >= TL_FILL_PARALLEL)
    for (int64_t batch = 0; batch < batches; batch++) {
        const int64_t p0 = batch * B;
        const int64_t early = look > 0 ? look + 16*B : TL_FILL_AHEAD*B;  /* the coordinates read below (in block order */
        if (early > 0 && p0 + early + B <= n)  /* the look-ahead's, 16 batches past it), asked for: a miss there stalled */
            for (int q = 0; q < B*D; q += 8) __builtin_prefetch(pts + (p0 + early) * D + q, 0, 0);
        if (look > 0 && p0 + look + B <= n)
            for (int j = 0; j < B; j++) {  /* the rows of the points look ahead: in block order, the next blocks' */
                const double *pt = pts + (p0 + look + j) * D;
                int64_t at = 0;
                int inside = 1;
                for (int a = 0; a < D; a++) {
                    double v = M[a*(D+1) + D];
                    for (int c = 0; c < D; c++) v += M[a*(D+1) + c] * pt[c];
                    const double fl = floor(v);
                    inside &= (fl + TL_FILL_FIRSTTAP >= 0.0) & (fl + TL_FILL_RADIUS <= (double)(sizes[a] - 1));
                    at += inside ? (int64_t)(fl + TL_FILL_FIRSTTAP) * stride[a] : 0;
                }
                const double *r = data + at;
                if (inside) { TL_FILL_ROWS }
            }
        int64_t first[B];
        int64_t ok[B];
        TL_FILL_WDECLS
        tl_cells(M, pts, p0, n, sizes, stride, first, ok, TL_FILL_WARGS);
        const int count = n - p0 < B ? (int)(n - p0) : B;
        {  /* the batch's B points across the lanes (_lanes_sums) */
        int64_t any = 0;
        for (int j = 0; j < B; j++) any |= ok[j];
        if (!any) {  /* no point inside (an image smaller than the support has none): no sample read */
            for (int64_t q = 0; q < count*each; q++) out[p0*each + q] = NAN;
            continue;
        }
        const tl_bm fi = TL_LOADM(first), okm = TL_LOADM(ok);
        (void)fi;
        const tl_bd nanv = (tl_bd){0} + NAN;
        TL_FILL_LANES
        TL_FILL_RESULTS
        TL_FILL_KEEP
        for (int j = 0; j < count; j++) {
            double *o = out + (p0 + j)*each;
            for (int k = 0; k < NC; k++) {
                if (packed) {
                    TL_FILL_PACKS
                } else {
                    TL_FILL_STORES
                }
            }
        }
        }
    }
}

/* The results of the points in block order (packed) to their points' own places: point
   p's from place inv[p].  out is written in order, UNPACK points at a time gathered in a
   buffer, streamed out where it is large (whole lines, none read first); packed is read in the order of
   each block's points, one stream a block (a stable sort: each block's points keep their
   order), so a line of packed results is read once for the points it holds while the
   streams' current lines stay in L2, and the next run's are asked for ahead. */
static void tl_unpack(int64_t n, const int32_t *inv, const double *packed, double *out, int threads)
{
    const int64_t chunks = (n + UNPACK - 1) / UNPACK;
    /* streamed where the results pass the caches' share (UNPACK_STREAM_BYTES); a block
       of a field program's points stays in cache for the statements that read it */
    const int stream = (double)n * (NC*TL_FILL_FULL) * 8.0 >= TL_FILL_STREAMBYTES;
    #pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1 && n >= TL_FILL_PARALLEL)
    for (int64_t chunk = 0; chunk < chunks; chunk++) {
        double run[UNPACK * NC*TL_FILL_FULL];
        const int64_t p0 = chunk * UNPACK, count = n - p0 < UNPACK ? n - p0 : UNPACK;
        if (UNPACK_AHEAD && p0 + UNPACK_AHEAD*UNPACK + UNPACK <= n)
            for (int64_t i = 0; i < UNPACK; i++) {
                const char *a = (const char *)(packed + (int64_t)inv[p0 + UNPACK_AHEAD*UNPACK + i] * PACKED);
                __builtin_prefetch(a, 0, 1);
                __builtin_prefetch(a + PACKED*8 - 1, 0, 1);
            }
        for (int64_t i = 0; i < count; i++) {
            const double *r = packed + (int64_t)inv[p0 + i] * PACKED;
            double *o = run + i*(NC*TL_FILL_FULL);
            for (int k = 0; k < NC; k++) {
                TL_FILL_UNPACKS
            }
        }
        if (stream) {
            TL_STREAM_RUN(out + p0*(NC*TL_FILL_FULL), run, count*(NC*TL_FILL_FULL));
            TL_STREAM_FENCE();
        } else {
            for (int64_t i = 0; i < count*(NC*TL_FILL_FULL); i++) out[p0*(NC*TL_FILL_FULL) + i] = run[i];
        }
    }
}

