"""The builder (docs/einsum.md, "The builder"): ``expressions`` holds the nodes, ``lower`` makes a program of them."""

from __future__ import annotations

from ..language import Language
from ..tl import LANGUAGE as MODEL
from .expressions import Expr, Kron, Var, contract, kron, outer, transpose, var
from .lower import to_program


def to_source(outputs) -> str:
    """The built program printed as the model language."""
    return MODEL.print(to_program(outputs))


LANGUAGE = Language(
    name="builder",
    suffixes=(),
    parse=MODEL.parse,  # its text is the model language's (a symbolic kernel reads it back per binding)
    check=MODEL.check,
    lower=MODEL.lower,
    interpret=MODEL.interpret,
    print=MODEL.print,
    description="programs built in Python (tl.var, tl.outer, tl.contract, ...), printed as the model language",
)

__all__ = ["Expr", "Kron", "LANGUAGE", "Var", "contract", "kron", "outer", "to_program", "to_source", "transpose",
           "var"]
