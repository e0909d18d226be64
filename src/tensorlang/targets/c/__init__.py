"""The C target: the C printer (codegen), compile and cache (build), the C-level call
path (callext) and the kernel that runs a schedule over
one set of buffers (runtime).  Importing it registers the fork handler of :mod:`.forking`
(a forked child's OpenMP teams stay usable)."""

from . import forking as _forking  # noqa: F401 - registers os.register_at_fork's handler
