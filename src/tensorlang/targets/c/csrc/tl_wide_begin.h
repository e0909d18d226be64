// tl_wide_begin.h: 512-bit vectors for the functions that follow (codegen.function) (docs/c-backend.md, "The C files").
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC target("prefer-vector-width=512")
#endif
