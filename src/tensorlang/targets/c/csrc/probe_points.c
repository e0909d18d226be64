// probe_points.c: tl_probe_points and tl_unpack (probe.py); follows probe_sort.c (docs/c-backend.md, "The C files").
/* The probes of points pts[0 .. n-1]; the result of point q goes to out at index q:
   all its derivative components (NC*TL_FILL_FULL doubles), or, packed, each distinct one once
   (PACKED doubles, in the order of r: tl_unpack spreads them). */
/* The batch of points p0 .. p0+count-1 from the samples at data with strides stride:
   first, ok and the weights from tl_cells; its results to out (each doubles a point). */
static inline __attribute__((always_inline)) void tl_batch(const double *data, const int64_t *stride,
        const int64_t *first, const int64_t *ok, TL_FILL_WPARAMS, int count, int packed, int64_t each,
        double *out, int64_t p0)
{
    const int64_t TL_FILL_STRIDES;
    TL_FILL_UNUSED
    int64_t any = 0;
    for (int j = 0; j < B; j++) any |= ok[j];
    if (!any) {  /* no point inside (an image smaller than the support has none): no sample read */
        for (int64_t q = 0; q < count*each; q++) out[p0*each + q] = NAN;
        return;
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

static void tl_probe_points(int64_t n, const double *pts, int packed, const double *data,
                            const int64_t *sizes, const double *M, double *out, int threads, int64_t look)
{
    int64_t stride[D];
    stride[D-1] = NC;
    for (int a = D - 2; a >= 0; a--) stride[a] = stride[a+1] * sizes[a+1];
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
                    double v = 0.0;  /* probe_cells.c's index position */
                    for (int c = 0; c < D; c++) v += M[a*(D+1) + c] * pt[c];
                    const double fl = floor(v + M[a*(D+1) + D]);
                    inside &= (fl + TL_FILL_FIRSTTAP >= 0.0) & (fl + TL_FILL_RADIUS <= (double)(sizes[a] - 1));
                    at += inside ? (int64_t)(fl + TL_FILL_FIRSTTAP) * stride[a] : 0;
                }
                const int64_t TL_FILL_STRIDES;
                TL_FILL_UNUSED
                const double *r = data + at;
                if (inside) { TL_FILL_ROWS }
            }
        int64_t first[B];
        int64_t ok[B];
        TL_FILL_WDECLS
        tl_cells(M, pts, p0, n, sizes, stride, first, ok, NULL, NULL, NULL, TL_FILL_WARGS);
        const int count = n - p0 < B ? (int)(n - p0) : B;
        tl_batch(data, stride, first, ok, TL_FILL_WARGS, count, packed, each, out, p0);
    }
}

/* A block's region: the samples its cells' supports read, TL_TILE_EDGE per axis from
   org (clipped to the image: lo .. hi-1); returns its rows (runs along the last axis). */
static int64_t tl_region(int64_t k, const int64_t *blocks, const int64_t *mult, const int64_t *sizes,
                         int64_t org[D], int64_t lo[D], int64_t hi[D])
{
    int64_t rows = 1;
    for (int a = 0; a < D; a++) {
        org[a] = ((k / mult[a]) % blocks[a] << SHIFT) + TL_FILL_FIRSTTAP;
        lo[a] = org[a] < 0 ? 0 : org[a];
        hi[a] = org[a] + TL_TILE_EDGE < sizes[a] ? org[a] + TL_TILE_EDGE : sizes[a];
        if (a < D - 1) rows *= hi[a] - lo[a];
    }
    return rows;
}

/* Rows r0 .. r1-1 of a region (tl_region) from the image into its tile, or, with tile
   NULL, asked for (prefetched into the caches). */
static inline void tl_rows(const double *data, const int64_t *stride, const int64_t *tst, const int64_t org[D],
                           const int64_t lo[D], const int64_t hi[D], int64_t r0, int64_t r1, double *tile)
{
    if (r0 >= r1)
        return;
    const int64_t len = (hi[D-1] - lo[D-1]) * NC;
    int64_t i[D];  /* row r0's indices (divisions once a call; then counted up, an odometer) */
    int64_t rest = r0, at = lo[D-1] * NC, tat = (lo[D-1] - org[D-1]) * NC;
    i[D-1] = lo[D-1];
    for (int a = D - 2; a >= 0; a--) {
        i[a] = lo[a] + rest % (hi[a] - lo[a]);
        rest /= hi[a] - lo[a];
        at += i[a] * stride[a];
        tat += (i[a] - org[a]) * tst[a];
    }
    for (int64_t r = r0; r < r1; r++) {
        if (tile != NULL) {
            double *to = tile + tat;
            const double *from = data + at;
            for (int64_t q = 0; q < len; q++) to[q] = from[q];
        } else {
            for (int64_t q = 0; q < len; q += 8) __builtin_prefetch(data + at + q, 0, 1);
            __builtin_prefetch(data + at + len - 1, 0, 1);
        }
        for (int a = D - 2; a >= 0; a--) {  /* the next row */
            if (++i[a] < hi[a]) {
                at += stride[a];
                tat += tst[a];
                break;
            }
            i[a] = lo[a];
            at -= (hi[a] - 1 - lo[a]) * stride[a];
            tat -= (hi[a] - 1 - lo[a]) * tst[a];
        }
    }
}

/* The points in block order probed from tiles: each block's region (tl_region) copied
   into a tile of TL_TILE_EDGE samples per axis (strides that are no power of two, unlike
   a 2^k image's: a block's rows spread over the L1's sets instead of piling into a few,
   and the tile's lines are the block's alone).  The copies are pipelined: while a block's
   points are probed, a share of the next block's rows is copied into a second tile after
   each batch, and the rows of the block after it asked for.  ends[k]: the end of block k's
   points (pts, in block order).  A batch with a point whose support is not inside its
   block's tile (its cell rounded otherwise than tl_sort's key) is probed from the image.
   Without copy (or tiles) all are, and the next block's rows only asked for. */
static void tl_probe_tiles(int64_t n, const double *pts, const double *data, const int64_t *sizes,
                           const double *M, double *out, int threads, const int64_t *ends, int64_t total, int copy)
{
    int64_t stride[D], tst[D], blocks[D], mult[D];
    stride[D-1] = NC;
    for (int a = D - 2; a >= 0; a--) stride[a] = stride[a+1] * sizes[a+1];
    tst[D-1] = NC;
    for (int a = D - 2; a >= 0; a--) tst[a] = tst[a+1] * TL_TILE_EDGE;
    int64_t m = 1;
    for (int a = D - 1; a >= 0; a--) { blocks[a] = ((sizes[a] - 1) >> SHIFT) + 1; mult[a] = m; m *= blocks[a]; }
    const int team = threads > 1 && n >= TL_FILL_PARALLEL ? threads : 1;
    #pragma omp parallel num_threads(team) if(team > 1)
    {
    const int t = TL_THREAD();
    const int64_t kb = total * t / team, ke = total * (t + 1) / team;  /* this thread's blocks */
    double *room = copy ? (double *)malloc(sizeof(double) * 2 * TL_TILE_SIZE) : NULL;
    double *cur = room, *nxt = room != NULL ? room + TL_TILE_SIZE : NULL;
    int64_t done = 0;  /* the rows of block k's region already in cur */
    for (int64_t k = kb; k < ke; k++) {
        const int64_t start = k ? ends[k-1] : 0, end = ends[k];
        int64_t org[D], lo[D], hi[D], norg[D] = {0}, nlo[D] = {0}, nhi[D] = {0}, forg[D] = {0}, flo[D] = {0}, fhi[D] = {0};
        const int64_t rows = tl_region(k, blocks, mult, sizes, org, lo, hi);
        const int64_t nrows = k + 1 < ke ? tl_region(k + 1, blocks, mult, sizes, norg, nlo, nhi) : 0;
        const int64_t frows = k + 2 < ke ? tl_region(k + 2, blocks, mult, sizes, forg, flo, fhi) : 0;
        if (start == end) {  /* no points: the next block's rows start from none */
            done = 0;
            continue;
        }
        if (room != NULL)
            tl_rows(data, stride, tst, org, lo, hi, done, rows, cur);  /* what is left of this block's rows */
        double torg[D];
        for (int a = 0; a < D; a++) torg[a] = (double)org[a];
        const int64_t nbatch = (end - start + B - 1) / B;
        int64_t bi = 0;
        for (int64_t p0 = start; p0 < end; p0 += B, bi++) {
            int64_t first[B], tfirst[B];
            int64_t ok[B];
            TL_FILL_WDECLS
            const int intile = tl_cells(M, pts, p0, end, sizes, stride, first, ok, room ? torg : NULL, tst, tfirst, TL_FILL_WARGS);
            const int count = end - p0 < B ? (int)(end - p0) : B;
            if (room != NULL && intile)
                tl_batch(cur, tst, tfirst, ok, TL_FILL_WARGS, count, 1, PACKED, out, p0);
            else
                tl_batch(data, stride, first, ok, TL_FILL_WARGS, count, 1, PACKED, out, p0);
            /* a share of the next block's rows copied (without tiles: asked for), of the one after asked for */
            tl_rows(data, stride, tst, norg, nlo, nhi, bi * nrows / nbatch, (bi + 1) * nrows / nbatch, nxt);
            if (room != NULL)
                tl_rows(data, stride, tst, forg, flo, fhi, bi * frows / nbatch, (bi + 1) * frows / nbatch, NULL);
        }
        done = nrows;
        double *swap = cur;
        cur = nxt;
        nxt = swap;
    }
    free(room);
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

