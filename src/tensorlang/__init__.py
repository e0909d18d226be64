"""tensorlang: a typed tensor language, its reference interpreter and compiler.

Public API (SPEC section 7)::

    import tensorlang as tl
    k = tl.compile("examples/matrix_product.tl")
    res = k(A=a, B=b)          # dict of results
    tl.check(source)           # raises tl.TensorLangError
    tl.available_backends()    # ("c", "numpy", "interp") where a C compiler works
"""

from .api import available_backends, check, compile
from .errors import TensorLangError
from .kernel import Kernel
from .specialize import SymbolicKernel

__all__ = ["compile", "check", "available_backends", "Kernel", "SymbolicKernel", "TensorLangError", "__version__"]
__version__ = "0.1.0"
