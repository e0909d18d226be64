"""The C target: the C printer (codegen), compile and cache (build), the C-level call
path (callext), the generated Python fast call (fastcall) and the kernel that runs a schedule over
one set of buffers (runtime)."""
