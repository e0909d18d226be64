"""The model language of paper 000 (``.tl`` files), with index notation (004's EIN).

``parser`` reads the text (``grammar.lark``) into the AST of ``ast``, ``typecheck`` applies
000's rules by name, ``semantics`` transcribes 000's evaluation (the reference
interpreter), ``lower`` gives the EIN program, ``printer`` prints the AST back.
"""

from __future__ import annotations

from ..language import Language, Params
from . import ast, lower, parser, printer, semantics, structure, typecheck


def _parse(text: str, params: Params) -> ast.Program:
    return parser.parse_model(text)  # symbolic sizes stay symbols; the registry binds params


LANGUAGE = Language(
    name="tl",
    suffixes=(".tl",),
    parse=_parse,
    check=typecheck.check_program,
    lower=lower.lower_program,
    interpret=semantics.run,
    print=printer.to_source,
    description="the model language of paper 000, with index notation",
    check_structure=structure.check_promises,
    keep_structure=structure.keep_promise,
)
