"""Targets: each runs a compiled kernel's program on a store of numpy arrays.

``interp`` is the reference interpreter (the front end's own semantics), ``numpy`` runs
the schedule with generated einsum and matmul code, ``c`` compiles the schedule's loop
steps to C (loops, OpenMP, SIMD) and runs its BLAS steps with numpy.  ``auto`` picks C
when a C compiler works, otherwise numpy with a one-line notice.

A target is built from a :class:`~tensorlang.kernel.Kernel` (``REGISTRY[name](kernel)``); it
has ``run(supplied, targets, threads) -> results``, ``fast_call`` (a generated call for
the plain case, or None), ``c_call`` (the same in C, :mod:`.c.callext`, or None), ``schedule`` and ``loop_program`` (what it runs, or None) and
``source`` (its generated code, or None).
"""

from __future__ import annotations

import sys

from ..errors import error
from .c import build as c_build
from .c.runtime import CKernel
from .interp import InterpTarget
from .numpy.runtime import NumpyTarget

#: The targets a user may name, in the order ``auto`` prefers them.
REGISTRY = {"c": CKernel.for_kernel, "numpy": NumpyTarget, "interp": InterpTarget}
KNOWN = tuple(REGISTRY)


def available() -> tuple[str, ...]:
    """The targets that work on this machine (``c`` needs a working C compiler)."""
    return KNOWN if c_build.find_compiler() is not None else tuple(name for name in KNOWN if name != "c")


_notified = False


def resolve(name: str) -> str:
    """Map a requested target to one that works here, or raise error[backend]."""
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


def load(name: str, kernel):
    """The target ``name`` (as :func:`resolve` returned it) built for ``kernel``."""
    return REGISTRY[name](kernel)
