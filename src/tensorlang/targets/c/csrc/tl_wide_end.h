// tl_wide_end.h: after a step opened by tl_wide_begin.h.
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
