"""einsum strings as a front end (docs/einsum.md, "What is compiled"): ``subscripts`` reads them
into a :class:`~.subscripts.Spec`, ``lower`` builds its EIN program; the Python surface is ``tensorlang.einsum_api``."""

from __future__ import annotations

from ...ein import ir
from ...ein.printer import to_text as ein_text
from ...semantics.types import CheckedProgram
from ..ein_built import LANGUAGE as EIN, check as check_ein
from ..language import Language
from .lower import RESULT, lower
from .program import parse_text, to_text
from .subscripts import EinsumError, Spec, from_sublists, numpy_refusal, parse


def check(spec: Spec) -> CheckedProgram:
    """The einsum's EIN program (:func:`~.lower.lower`), checked as EIN: its interface
    is its declarations' (``T0``, ``T1``, ... in, ``Res`` out)."""
    return check_ein(lower(spec))


def _print(program) -> str:
    """The einsum text of a Spec; a checked einsum's program is its EIN program, printed
    in index form."""
    return ein_text(program) if isinstance(program, ir.Program) else to_text(program)


LANGUAGE = Language(
    name="einsum",
    suffixes=(".einsum",),
    parse=lambda text, params: parse_text(text),
    check=check,
    lower=EIN.lower,
    interpret=EIN.interpret,
    print=_print,
    description="numpy.einsum's subscripts with the operands' shapes ('ij,jk->ik : [2 3] [3 4]')",
)

__all__ = ["EinsumError", "LANGUAGE", "RESULT", "Spec", "check", "from_sublists", "lower", "numpy_refusal", "parse", "to_text"]
