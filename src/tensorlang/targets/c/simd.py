"""The SIMD width ``pad="auto"`` (``--pad auto``) pads to: the widest vector registers the
generated code is compiled for, in elements of the kernel's dtype.

The rule: ask the C compiler, with the flags tensorlang builds with (``-march=native``
where it is accepted, targets/c/build.py), which vector extensions it targets (its
predefined macros, ``cc -dM -E``): ``__AVX512F__`` 64 bytes, ``__AVX__`` (and AVX2) 32
bytes, ``__SSE2__`` or ``__ARM_NEON`` 16 bytes; anything else, or no compiler, 16 bytes.
The width in elements is bytes / itemsize: AVX2 gives 4 doubles or 8 floats, AVX-512 8
doubles or 16 floats.  A multiple of the width also suits narrower vectors (gcc often
prefers 256-bit vectors even where AVX-512 exists), so the register width is the choice.
"""

from __future__ import annotations

import functools
import subprocess

from . import build as c_build

#: The vector width in bytes of each predefined macro, widest first.
WIDTHS = (("__AVX512F__", 64), ("__AVX__", 32), ("__SSE2__", 16), ("__ARM_NEON", 16))

#: The width when the compiler says nothing (or there is none): 128-bit vectors, which
#: every x86-64 (SSE2) and AArch64 (NEON) machine has.
DEFAULT_BYTES = 16


@functools.lru_cache(maxsize=None)
def vector_bytes() -> int:
    """The widest vector register the generated C targets, in bytes (module docs)."""
    compiler = c_build.find_compiler()
    if compiler is None:
        return DEFAULT_BYTES
    flags = [f for f in compiler.flags if f.startswith("-m")]
    try:
        result = subprocess.run([*compiler.command, *flags, "-dM", "-E", "-x", "c", "-"], input="",
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return DEFAULT_BYTES
    defined = {line.split()[1] for line in result.stdout.splitlines() if line.startswith("#define ")}
    return next((width for macro, width in WIDTHS if macro in defined), DEFAULT_BYTES)


def simd_elements(itemsize: int) -> int:
    """The SIMD width in elements of ``itemsize`` bytes (a power of two, at least 1)."""
    return max(vector_bytes() // itemsize, 1)
