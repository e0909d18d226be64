"""einsum strings as a front end: numpy's notation for 004's EIN statements.

``subscripts`` reads numpy.einsum's subscripts against the operands' shapes (every rule
numpy has: implicit and explicit output, diagonals, ``...`` broadcasting, size-1
broadcasting, the interleaved sublist form) into a :class:`~.subscripts.Spec`;
``program`` writes the Spec as a program of the model language's index form, which the
model language then checks, lowers, interprets and prints.  The Python surface
(``tl.einsum``, ``tl.contract_expression``, ``tl.einsum_path``, the cache) is
``tensorlang.einsum_api``, above the compiler.
"""

from __future__ import annotations

from ...semantics.types import CheckedProgram
from ..language import Language, Params
from ..tl import LANGUAGE as MODEL
from ..tl.parser import parse_model
from .program import RESULT, parse_text, to_model_source, to_text
from .subscripts import EinsumError, Spec, from_sublists, parse


def _parse(text: str, params: Params) -> Spec:
    return parse_text(text)


def check(spec: Spec) -> CheckedProgram:
    """The einsum's index-form program, checked by the model language's rules."""
    return MODEL.check(parse_model(to_model_source(spec)))


def _print(program) -> str:
    """The einsum text of a Spec; a checked einsum's program is its index-form program,
    printed as the model language prints it."""
    return to_text(program) if isinstance(program, Spec) else MODEL.print(program)


LANGUAGE = Language(
    name="einsum",
    suffixes=(".einsum",),
    parse=_parse,
    check=check,
    lower=MODEL.lower,
    interpret=MODEL.interpret,
    print=_print,
    description="numpy.einsum's subscripts with the operands' shapes ('ij,jk->ik : [2 3] [3 4]')",
)

__all__ = ["EinsumError", "LANGUAGE", "RESULT", "Spec", "check", "from_sublists", "parse", "to_model_source", "to_text"]
