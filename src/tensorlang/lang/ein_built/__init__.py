"""EIN programs as a front end: programs Python builds as EIN (einsum, the builder, field
probes) enter here without text (docs/architecture.md); the "AST" is the :class:`~tensorlang.ein.ir.Program`."""

from __future__ import annotations

from types import MappingProxyType

from ...ein import ir
from ...ein.interp import reference
from ...ein.printer import to_text
from ...errors import error
from ...semantics.interface import interface, is_qualified
from ...semantics.types import CheckedProgram, Context
from ..language import Language, Params


def _parse(text: str, params: Params):
    raise error("input", "EIN programs come from Python (tl.einsum, tl.build, fields); as text, write them as "
                         "a .tl program (index notation)")


def check(program: ir.Program) -> CheckedProgram:
    """``program`` with its context and interface (the program is well formed by
    construction: its producer built it; the optimizer's verifier checks it under test)."""
    decls = {d.name: d for d in program.decls}
    context = Context(MappingProxyType({d.name: d.shape for d in program.decls}),
                      MappingProxyType({d.name: d.qual for d in program.decls}),
                      MappingProxyType(decls), is_qualified(program.decls))
    return CheckedProgram(program, context, interface(program.decls))


def _interpret(checked: CheckedProgram, supplied, dtype) -> dict:
    return reference(checked.program, checked.interface.roles)(supplied, dtype)


LANGUAGE = Language(
    name="ein_built",
    suffixes=(),
    parse=_parse,
    check=check,
    lower=lambda checked: checked.program,
    interpret=_interpret,
    print=to_text,
    description="EIN programs built in Python (einsum, builder, field probes), printed as index notation",
)
