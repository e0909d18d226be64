"""STUR, the rule language of StructTensor (paper 003), in the public tool's syntax: parser,
checker, oracle, lowering to EIN and printer (docs/structure.md)."""

from __future__ import annotations

import dataclasses

from ...errors import TensorLangError
from ..language import Language, Params
from . import ast, check, lower, printer, promise, semantics
from .parser import parse_stur


def _parse(text: str, params: Params) -> ast.Program:
    program = parse_stur(text)
    unknown = [name for name in params if name not in program.symbols]
    if unknown:
        have = f"its symbols are {', '.join(program.symbols)}" if program.symbols else "it has no symbols"
        raise TensorLangError("input", f"--param {unknown[0]}: the program has no symbol named {unknown[0]!r} ({have})")
    return dataclasses.replace(program, params=tuple((k, int(v)) for k, v in params.items()))


def as_model(checked):
    """``--emit tl|teil|core`` of a STUR program: its EIN lowering, which the registry's
    conversions print (``tl``) or refuse (TeIL); another front end's program as it is."""
    if not isinstance(checked.program, check.Model):
        return checked
    return dataclasses.replace(checked, program=lower.lower_program(checked))


LANGUAGE = Language(
    name="stur",
    suffixes=(".stur",),
    parse=_parse,
    check=check.check_program,
    lower=lower.lower_program,
    interpret=semantics.run,
    print=printer.to_source,
    description="STUR, the rule language of StructTensor (paper 003)",
    binds_params=True,
    check_structure=promise.check_promises,
    keep_structure=promise.keep_promise,
)
