"""The C target: the C printer (codegen), compile and cache (build), the generated fast
call (fastcall) and the kernel that runs a schedule over one set of buffers (runtime)."""
