// tl_tiles_tail.h: the part vector of a register tile whose row is not whole vectors
// (targets/c/codegen.py, loops.microkernel.Tile.tail): its first n lanes loaded (the
// others 0) and stored, nothing read or written past them.  AVX-512's masked moves, else
// lane by lane.  Follows tl_tiles.h.  Placeholders: TL_FILL_FORCED (as tl_tiles.h),
// TL_FILL_MASK (__mmask8 or __mmask16), TL_FILL_LOADN (_mm512_maskz_loadu_pd or _ps),
// TL_FILL_STOREN (_mm512_mask_storeu_pd or _ps), TL_FILL_M512 (__m512d or __m512).
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
