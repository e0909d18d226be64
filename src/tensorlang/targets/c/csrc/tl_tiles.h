// tl_tiles.h: register tiles' 64-byte vectors (codegen.tiles_prelude); placeholders: docs/c-backend.md, "The C files".

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
