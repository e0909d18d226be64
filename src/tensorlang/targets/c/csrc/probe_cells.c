// probe_cells.c: tl_cells, a batch's cells and weights (probe.py); follows probe_head.h. See docs/c-backend.md.
/* The cells of points p0 .. p0+B-1 (those past n repeat point p0): the offset of each
   support's first sample, whether the point is inside the domain (a point outside or
   not finite gets the image's first cell, a safe address), and the kernel's weights
   w<axis>[derivative order][tap][point] at its fractional position.  With a tile (org
   not NULL: the tile's first sample's index per axis, tst its strides) also each
   support's first sample's offset in the tile (tfirst, 0 for a point outside); returns
   whether every point inside has its support in the tile (1 without a tile). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static int tl_cells(const double *M, const double *pts, int64_t p0, int64_t n, const int64_t *sizes,
                    const int64_t *stride, int64_t first[B], int64_t ok[B], const double *org, const int64_t *tst,
                    int64_t tfirst[B], TL_FILL_WPARAMS)
{
    /* no fused multiply-add here: positions and weights must be the reference's to the
       bit, or a point on the domain's border could be inside in one and outside in the
       other, and a weight that is exactly 0 there (bspln3's outer taps at integer
       positions) could come out 1e-17 and turn an ∞ sample's 0·∞ = ⊥ into ∞ */
#if defined(__clang__)
    #pragma clang fp contract(off)
#endif
    double x[D][B], fr[D][B];
    for (int a = 0; a < D; a++)
        for (int j = 0; j < B; j++) {
            const double *pt = pts + (p0 + j < n ? p0 + j : p0) * D;
            double v = 0.0;  /* the products, then the translation: Diderot's order (sampling/image.py: index_point) */
            for (int c = 0; c < D; c++) v += M[a*(D+1) + c] * pt[c];
            x[a][j] = v + M[a*(D+1) + D];
        }
    /* the batch as vectors (GCC/clang vector extensions, not left to the vectorizer):
       a point is inside on axis a where floor(x) >= s-1 and floor(x) + s <= size-1,
       that is s-1 <= x < size-s (false for NaN and ±inf); there x >= 0, so its floor
       is its truncation to an integer; elsewhere x is replaced by s-1 first (cell
       s-1, fraction 0: a safe address, and no conversion of a huge number) */
    tl_bm in = ~(tl_bm){0};
    tl_bd at = {0}, tat = {0};
    tl_bm tin = ~(tl_bm){0};
    for (int a = 0; a < D; a++) {
        tl_bd xa;
        __builtin_memcpy(&xa, x[a], sizeof xa);
        const tl_bm inside = (xa >= TL_FILL_LOW) & (xa < (double)(sizes[a] - TL_FILL_RADIUS));
        in &= inside;
        const tl_bd safe = TL_SELECT(inside, xa, (tl_bd){0} + TL_FILL_LOW);
        const tl_bd fl = __builtin_convertvector(__builtin_convertvector(safe, tl_bm), tl_bd);
        const tl_bd rest = TL_SELECT(inside, safe - fl, (tl_bd){0});
        __builtin_memcpy(fr[a], &rest, sizeof rest);
        at += (fl + TL_FILL_FIRST) * (double)stride[a];
        if (org != NULL) {  /* the first tap's index in the tile (exact: small integers) */
            const tl_bd rel = fl + TL_FILL_FIRST - org[a];
            tin &= (rel >= 0.0) & (rel <= (double)(TL_TILE_EDGE - S));
            tat += rel * (double)tst[a];
        }
    }
    const tl_bm okv = in & (at >= 0.0);
    const tl_bm firstv = okv & __builtin_convertvector(at, tl_bm);
    __builtin_memcpy(ok, &okv, sizeof okv);
    __builtin_memcpy(first, &firstv, sizeof firstv);
    int intile = 1;
    if (org != NULL) {
        const tl_bm tfirstv = okv & tin & __builtin_convertvector(tat, tl_bm);
        __builtin_memcpy(tfirst, &tfirstv, sizeof tfirstv);
        for (int j = 0; j < B; j++) intile &= !okv[j] | (tin[j] != 0);
    }
TL_FILL_WEIGHTS
    return intile;
}

