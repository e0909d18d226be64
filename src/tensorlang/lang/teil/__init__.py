"""TeIL, the type-safe imperative tensor intermediate language of paper 001: its parser,
typing, semantics, lowering, converters and Core-TeIL (docs/teil.md)."""

from __future__ import annotations

from ..language import Language
from . import core, lower, printer, semantics, typecheck
from .parser import parse_teil

LANGUAGE = Language(
    name="teil",
    suffixes=(".teil",),
    parse=lambda text, params: parse_teil(text),  # symbolic sizes stay symbols; the registry binds params
    check=typecheck.check_program,
    lower=lower.lower_program,
    interpret=semantics.run,
    print=printer.to_teil_source,
    core_check=core.check_core,
    description="TeIL, the tensor intermediate language of paper 001",
)
