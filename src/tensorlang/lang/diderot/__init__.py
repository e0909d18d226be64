"""Diderot (``.diderot`` files): strands that probe tensor fields reconstructed from images (paper 004;
docs/diderot-language.md); a program runs (:class:`~.program.StrandProgram`), it is not lowered to one kernel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import error
from ..language import Language, Params
from .ast import show
from .parse import parse_program

if TYPE_CHECKING:  # the checker and the interpreter read tensorlang.fields, which imports
    # the compiler (and so this registry): they are imported when first used
    from .check import Checked
    from .program import StrandProgram


def _parse(text: str, params: Params):
    if params:
        raise error("input", f"a Diderot program has no symbolic sizes; --param {next(iter(params))} is not taken "
                             "(set its inputs instead)")
    return parse_program(text)


def _lower(checked):
    raise error("backend", "a Diderot program is a strand program: it runs (tensorlang run prog.diderot ...), "
                           "it is not lowered to one EIN kernel")


def _interpret(checked, supplied, dtype):
    raise error("backend", "a Diderot program runs as strands: use tensorlang run or tl.compile(...)(inputs)")


def typecheck(program, folder: str | None = None):
    """The typechecked program (:class:`~.check.Checked`), or error[CODE]; ``folder``: as :func:`.check.check`'s."""
    from .bounds import check_expansion, check_sizes, check_written_sizes
    from .check import check as run_check
    check_written_sizes(program)
    checked = run_check(program, folder)
    check_sizes(checked)
    check_expansion(checked)
    return checked


def strands(checked: "Checked", base_dir: str | None = None) -> "StrandProgram":
    """The runnable program (:class:`~.program.StrandProgram`)."""
    from .program import StrandProgram
    return StrandProgram(checked, base_dir)


LANGUAGE = Language(name="diderot", suffixes=(".diderot",), parse=_parse, check=typecheck, lower=_lower,
                    interpret=_interpret, print=show, strands=strands, check_in=typecheck,
                    description="Diderot: strands probing tensor fields (versions 1.0 and 2.0)",
                    binds_params=True)  # no symbolic sizes: the registry has nothing to bind

__all__ = ["LANGUAGE", "parse_program", "strands", "typecheck"]
