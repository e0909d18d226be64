// tl_tiles.h: register tiles' vectors (targets/c/codegen.py, loops.microkernel.Tile): a
// vector of 64 bytes, its unaligned load and store, a scalar in every lane.  TL_TILES
// says whether tiles or the plain nests are compiled.  Follows tl_prelude.h.
// Placeholders: TL_FILL_FORCED (1: tiles whatever the target, microkernel.TILES),
// TL_FILL_LANES (s, s, ...: one s a lane), TL_FILL_SET1 (_mm512_set1_pd or _ps).

#ifndef TL_TILES
#if defined(__AVX512F__) && defined(__GNUC__)
#define TL_TILES 1
#else
#define TL_TILES 0
#endif
#endif
#if TL_TILES || TL_FILL_FORCED
typedef real tl_vd __attribute__((vector_size(64)));
typedef real tl_vu __attribute__((vector_size(64), aligned(sizeof(real))));
#define tl_vload(p) (*(const tl_vu *)(p))
#define tl_vstore(p, v) (*(tl_vu *)(p) = (v))
#if defined(__AVX512F__)
/* AVX-512's own: gcc then broadcasts from memory into the multiply-add */
#include <immintrin.h>
static inline tl_vd tl_vsplat(real s) { return (tl_vd)TL_FILL_SET1(s); }
#else
static inline tl_vd tl_vsplat(real s) { return (tl_vd){TL_FILL_LANES}; }
#endif
#endif
