// tl_wide_begin.h: before a step whose nests ask for the widest vectors
// (loops.ir.Nest.wide_vectors): gcc on x86-64 prefers 256-bit vectors even with
// AVX-512; the step's functions may use 512.  tl_wide_end.h closes it.
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC target("prefer-vector-width=512")
#endif
