"""``tl.build``: a builder program (``tl.var``, ``tl.outer``, ``tl.contract``, ...)
compiled into a :class:`~tensorlang.kernel.Kernel`.

The expressions live in the builder front end (``lang/builder``); this module, above the
compiler, prints them as the builder's text (the model language) and compiles that with
the builder front end, so a built kernel is exactly the kernel of its text: the same EIN,
the same optimizer, the same targets.
"""

from __future__ import annotations

from typing import Mapping

from . import lang as languages
from .api import compile_source
from .errors import Source, TensorLangError, guard
from .kernel import Kernel
from .specialize import SymbolicKernel

var = languages.BUILDER.var
outer = languages.BUILDER.outer
contract = languages.BUILDER.contract
transpose = languages.BUILDER.transpose
kron = languages.BUILDER.kron
Expr = languages.BUILDER.Expr


def _outputs(outputs) -> dict:
    if isinstance(outputs, Expr):
        return {"R": outputs}
    if isinstance(outputs, Mapping):
        return dict(outputs)
    if isinstance(outputs, (list, tuple)) and all(isinstance(e, Expr) for e in outputs):
        return {f"R{n}": e for n, e in enumerate(outputs)}
    raise TensorLangError("input", "build takes an expression, a list of expressions or a dict from output names "
                          f"to expressions, got {type(outputs).__name__}")


def source(outputs) -> str:
    """The built program's text (the model language): what :func:`build` compiles."""
    return languages.BUILDER.to_model_source(_outputs(outputs))


@guard
def build(outputs, backend: str = "auto", dtype="float64", threads: int | None = None) -> Kernel | SymbolicKernel:
    """Compile built expressions: ``tl.build({"C": tl.contract(tl.outer(A, B), (2, 3))})``.

    ``outputs`` is a dict from output names to expressions, one expression (its output
    is called ``R``) or a list (``R0``, ``R1``, ...).  The kernel's inputs are the
    variables the expressions use, by the names given to ``tl.var``."""
    text = source(outputs)
    return compile_source(Source(text, "<builder>"), languages.BUILDER.LANGUAGE.name, backend, dtype, threads=threads)
