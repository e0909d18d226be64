"""Back ends: each runs a checked program on a store of numpy arrays.

``interp`` is the reference interpreter, ``numpy`` runs EIN through einsum and BLAS,
``c`` compiles EIN to C (loops, OpenMP, SIMD; BLAS for large contractions).  ``auto``
picks C when a C compiler works, otherwise numpy with a one-line notice.
"""

from __future__ import annotations

import sys

from ..errors import error
from .c import build as c_build

#: Back ends a user may name, in the order ``auto`` prefers them.
KNOWN = ("c", "numpy", "interp")


def available() -> tuple[str, ...]:
    """The back ends that work on this machine (``c`` needs a working C compiler)."""
    return KNOWN if c_build.find_compiler() is not None else ("numpy", "interp")


_notified = False


def resolve(name: str) -> str:
    """Map a requested back end to one that works here, or raise error[backend]."""
    global _notified

    if name == "auto":
        if c_build.find_compiler() is not None:
            return "c"
        if not _notified:
            print(f"tensorlang: note: using the numpy back end ({c_build.why_no_compiler()})", file=sys.stderr)
            _notified = True
        return "numpy"
    if name == "c":
        c_build.require_compiler()
        return "c"
    if name in KNOWN:
        return name
    raise error("backend", f"unknown back end {name!r}; choose one of auto, {', '.join(KNOWN)}")
