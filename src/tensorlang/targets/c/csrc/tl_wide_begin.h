// tl_wide_begin.h: before a step whose nests ask for 512-bit vectors (gcc on x86-64
// prefers 256 even with AVX-512).  tl_wide_end.h closes it.
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC target("prefer-vector-width=512")
#endif
