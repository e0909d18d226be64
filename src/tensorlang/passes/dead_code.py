"""Dead-code elimination driven by the ``out`` qualifiers (000 §5; docs/optimizer.md): a backward
walk keeps the statements that assign a variable still needed; temporaries left unassigned are undeclared."""

from __future__ import annotations

from ..ein import ir
from .program import results, temporaries


def eliminate_dead_code(program: ir.Program) -> ir.Program:
    needed = set(results(program))
    kept: list[ir.Statement] = []
    for stmt in reversed(program.statements):
        if stmt.target not in needed:
            continue
        needed.discard(stmt.target)
        needed.update(stmt.reads)
        kept.append(stmt)
    statements = tuple(reversed(kept))
    used = {s.target for s in statements} | {name for s in statements for name in s.reads}
    removable = temporaries(program)
    decls = tuple(d for d in program.decls if d.name in used or d.name not in removable)
    return ir.Program(decls, statements)
