// tl_tiles_fma.h: the lane-wise fused multiply-add of register tiles, in sources
// compiled with fma=True that use it (targets/c/codegen.py).  Follows tl_tiles.h.
// Placeholders: TL_FILL_FORCED (as tl_tiles.h), TL_FILL_FMADD (_mm512_fmadd_pd or _ps),
// TL_FILL_M512 (__m512d or __m512), TL_FILL_COUNT (lanes), TL_FILL_FMA (fma or fmaf).
#if TL_TILES || TL_FILL_FORCED
#if defined(__AVX512F__)
static inline tl_vd tl_vfma(tl_vd a, tl_vd b, tl_vd c) { return (tl_vd)TL_FILL_FMADD((TL_FILL_M512)a, (TL_FILL_M512)b, (TL_FILL_M512)c); }
#else
static inline tl_vd tl_vfma(tl_vd a, tl_vd b, tl_vd c) {
    tl_vd r;
    for (int i = 0; i < TL_FILL_COUNT; i++) r[i] = TL_FILL_FMA(a[i], b[i], c[i]);
    return r;
}
#endif
#endif
