// tl_tiles_tail.h: register tiles' part vectors (codegen.tiles_prelude) (docs/c-backend.md, "The C files").
#if TL_TILES || TL_FILL_FORCED
#if defined(__AVX512F__)
static inline tl_vd tl_vloadn(const real *p, int n) { return (tl_vd)TL_FILL_LOADN((TL_FILL_MASK)((1u << n) - 1u), p); }
static inline void tl_vstoren(real *p, tl_vd v, int n) { TL_FILL_STOREN(p, (TL_FILL_MASK)((1u << n) - 1u), (TL_FILL_M512)v); }
#else
static inline tl_vd tl_vloadn(const real *p, int n) {
    tl_vd r = {0};
    for (int i = 0; i < n; i++) r[i] = p[i];
    return r;
}
static inline void tl_vstoren(real *p, tl_vd v, int n) {
    for (int i = 0; i < n; i++) p[i] = v[i];
}
#endif
#endif
