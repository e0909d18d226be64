"""tensorlang: a typed tensor language, its reference interpreter and compiler.

Public API (SPEC section 7)::

    import tensorlang as tl
    k = tl.compile("examples/matrix_product.tl")
    res = k(A=a, B=b)          # dict of results
    tl.check(source)           # raises tl.TensorLangError
    tl.available_backends()    # ("c", "numpy", "interp") where a C compiler works
"""

from .api import available_backends, check, compile, padded_empty
from .errors import TensorLangError
from .kernel import Kernel
from .specialize import SymbolicKernel

__all__ = ["compile", "check", "available_backends", "padded_empty", "Kernel", "SymbolicKernel", "TensorLangError", "__version__"]


def _version() -> str:
    """The installed distribution's version (pyproject.toml is the one place it is
    written); in a source checkout that is not installed, the version pyproject.toml
    beside ``src/`` states; "0+unknown" where neither can be read."""
    from importlib import metadata
    from pathlib import Path

    try:
        return metadata.version("tensorlang")
    except metadata.PackageNotFoundError:
        pass
    try:
        text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    except OSError:
        return "0+unknown"
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "version":
            return value.strip().strip('"')
    return "0+unknown"


__version__ = _version()
