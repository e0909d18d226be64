"""The model language of paper 000 (``.tl`` files), with index notation (004's EIN):
parser, AST, typing, reference interpreter, lowering to EIN and printer (docs/language.md)."""

from __future__ import annotations

from ..language import Language
from . import lower, parser, printer, semantics, structure, typecheck

LANGUAGE = Language(
    name="tl",
    suffixes=(".tl",),
    parse=lambda text, params: parser.parse_model(text),  # symbolic sizes stay symbols; the registry binds params
    check=typecheck.check_program,
    lower=lower.lower_program,
    interpret=semantics.run,
    print=printer.to_source,
    description="the model language of paper 000, with index notation",
    check_structure=structure.check_promises,
    keep_structure=structure.keep_promise,
)
