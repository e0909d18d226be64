"""Back ends: each runs a checked program on a store of numpy arrays.

``interp`` is the reference interpreter, ``numpy`` runs EIN through einsum and BLAS;
``auto`` picks the best available one.
"""

from __future__ import annotations

from ..errors import error

#: Back ends a user may name, in the order ``auto`` prefers them once they exist.
KNOWN = ("c", "numpy", "interp")
AVAILABLE = ("numpy", "interp")


def resolve(name: str) -> str:
    """Map a requested back end to one that exists, or raise error[backend]."""
    if name == "auto":
        return AVAILABLE[0]
    if name in AVAILABLE:
        return name
    if name in KNOWN:
        raise error("backend", f"the {name!r} back end is not available in this version; use one of {', '.join(AVAILABLE)} or 'auto'")
    raise error("backend", f"unknown back end {name!r}; choose one of auto, {', '.join(KNOWN)}")
