"""TeIL, the type-safe imperative tensor intermediate language of paper 001.

``parser`` reads ``.teil`` text (SPEC section 2), ``typecheck`` applies 001 Figure 8's
rules by name, ``semantics`` transcribes Figure 6 (the reference interpreter for TeIL),
``lower`` turns a program into the same EIN program every back end runs, ``convert``
translates to and from the model language, and ``core`` checks and produces Core-TeIL
(001 section 4).  See docs/teil.md.
"""

from __future__ import annotations

from ..language import Language, Params
from . import core, lower, printer, semantics, typecheck
from .parser import parse_teil


def _parse(text: str, params: Params):
    return parse_teil(text)  # symbolic sizes stay symbols; the registry binds params


LANGUAGE = Language(
    name="teil",
    suffixes=(".teil",),
    parse=_parse,
    check=typecheck.check_program,
    lower=lower.lower_program,
    interpret=semantics.run,
    print=printer.to_teil_source,
    core_check=core.check_core,
    description="TeIL, the tensor intermediate language of paper 001",
)
