"""``tl.build``: a builder program (``tl.var``, ``tl.contract``, ...) compiled as the same
program written as text would be (the front end ``lang/builder``; docs/einsum.md)."""

from __future__ import annotations

from typing import Mapping

from . import lang as languages
from .api import compile_checked, compile_options
from .errors import Source, TensorLangError, guard, pointing_into
from .kernel import Kernel
from .specialize import SymbolicKernel

var, outer, contract, transpose, kron, Expr = (getattr(languages.BUILDER, name) for name in (
    "var", "outer", "contract", "transpose", "kron", "Expr"))


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
    """The program :func:`build` compiles, printed in the model language (build reads no text)."""
    return languages.BUILDER.to_source(_outputs(outputs))


@guard
def build(outputs, backend: str = "auto", dtype="float64", threads: int | None = None) -> Kernel | SymbolicKernel:
    """Compile built expressions: ``tl.build({"C": tl.contract(tl.outer(A, B), (2, 3))})``; ``outputs``:
    a dict from names to expressions, one expression (``R``) or a list (``R0``, ``R1``, ...)."""
    language = languages.BUILDER.LANGUAGE
    program = languages.BUILDER.to_program(_outputs(outputs))
    # the printed program is the kernel's source: what errors name, and what a symbolic kernel specialises
    source = Source(language.print(program), "<builder>")
    with pointing_into(source):
        checked = language.check(program)
    return compile_checked(language, checked, source, compile_options(backend, dtype, threads=threads))
