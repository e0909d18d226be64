"""Whether the C compiler here builds and runs code under a sanitizer: the one probe that
tests/properties/test_c_sanitizers.py (ASan and UBSan, a stand-alone program) and
tests/diderot/test_strand_sanitized.py (UBSan, a shared object loaded by Python) skip on.
The answer is computed once per process, when a test first asks (:func:`skip_unless`), not
when the module is collected: a run that selects none of their tests builds nothing."""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tensorlang.targets.c import build as c_build

#: AddressSanitizer and UBSan, every report fatal (the tests' ``asan_ubsan`` fixture, tests/conftest.py)
ASAN_UBSAN = ("-O1", "-g", "-std=c99", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
              "-fno-omit-frame-pointer")
#: a stand-alone program that touches the heap (ASan has something to watch)
PROGRAM = "#include <stdlib.h>\nint main(void) { double *x = malloc(8); x[0] = 1; free(x); return 0; }\n"
#: a shared object with one function, called from a child Python through ctypes
LIBRARY = "int tl_t(int x) { return x + 1; }\n"


@functools.cache
def works(flags: tuple[str, ...], shared: bool = False) -> bool:
    """Code built with ``flags`` runs clean: a program (:data:`PROGRAM`) run as it is, or with
    ``shared`` a shared object (:data:`LIBRARY`, with the compiler's own flags) that a child
    Python loads and calls (the sanitizer's runtime linked in)."""
    compiler = c_build.find_compiler()
    if compiler is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "t.c"), Path(tmp, "t.so" if shared else "t")
        src.write_text(LIBRARY if shared else PROGRAM)
        base = [*compiler.command, *compiler.flags] if shared else list(compiler.command)
        if subprocess.run([*base, *flags, str(src), "-o", str(out)], capture_output=True).returncode != 0:
            return False
        run = ([sys.executable, "-c", f"import ctypes; assert ctypes.CDLL({str(out)!r}).tl_t(1) == 2"] if shared
               else [str(out)])
        return subprocess.run(run, capture_output=True).returncode == 0


def skip_unless(flags, shared: bool = False, reason: str = "") -> None:
    """Skip the calling test where :func:`works` says no."""
    if not works(tuple(flags), shared):
        pytest.skip(reason or f"the C compiler here cannot build and run code with {' '.join(flags)}")

