// tl_tiles_fma.h: register tiles' lane-wise fused multiply-add (codegen.tiles_prelude) (docs/c-backend.md, "The C files").
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
