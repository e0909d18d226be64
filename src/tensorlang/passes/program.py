"""What a pass may do with each variable: results stay, temporaries may go.

000 §5: with qualifiers, ``out``/``inout`` variables are the result and unqualified ones
are temporaries the compiler may remove or reuse; without qualifiers every variable is
a result.  Variables a pass introduces (an intermediate of a contraction order, a
subexpression Split lifts out) are declared with the qualifier ``"temp"``: never a
result, never an input, whatever the program's other qualifiers say.
"""

from __future__ import annotations

from ..ein import ir
from ..ein.names import TempNames
from ..semantics.interface import TEMP, interface


def results(program: ir.Program) -> frozenset[str]:
    """The variables whose final value the caller receives (semantics/interface.py)."""
    return frozenset(interface(program.decls).results)


def temporaries(program: ir.Program) -> frozenset[str]:
    """The variables a pass may remove, fuse away or merge: neither input nor result."""
    return frozenset(interface(program.decls).temporaries)


def assignments(program: ir.Program) -> dict[str, list[int]]:
    """For each variable, the positions of the statements that assign it."""
    found: dict[str, list[int]] = {}
    for n, s in enumerate(program.statements):
        found.setdefault(s.target, []).append(n)
    return found


def readers(program: ir.Program) -> dict[str, list[int]]:
    """For each variable, the positions of the statements that read it."""
    found: dict[str, list[int]] = {}
    for n, s in enumerate(program.statements):
        for name in s.reads:
            found.setdefault(name, []).append(n)
    return found


def lift_into_temporaries(program: ir.Program, rewrite) -> ir.Program:
    """Run ``rewrite(body, scope, names, lifted)`` on every statement's body: it returns
    the new body and appends to ``lifted`` the statements of the compiler temporaries it
    introduced (named by ``names``), which go just before the statement, declared ``temp``.
    Split and contraction ordering are both such rewrites."""
    names = TempNames(program)
    decls = list(program.decls)
    statements: list[ir.Statement] = []
    for stmt in program.statements:
        lifted: list[ir.Statement] = []
        body = rewrite(stmt.body, dict(stmt.index), names, lifted)
        decls.extend(ir.Decl(temp.target, tuple(n for _, n in temp.index), TEMP) for temp in lifted)
        statements.extend(lifted)
        statements.append(ir.Statement(stmt.target, stmt.index, body))
    return ir.Program(tuple(decls), tuple(statements))

