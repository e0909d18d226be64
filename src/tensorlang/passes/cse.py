"""Value numbering across statements (004 §2.4; docs/optimizer.md): a statement whose λ operator,
extents and arguments are an earlier one's, none assigned in between, reads that one's variable
(a temporary disappears, any other variable becomes a copy)."""

from __future__ import annotations

from ..ein import ir
from ..ein.names import rename_indices
from .program import assignments, temporaries


def value_number(program: ir.Program) -> ir.Program:
    temps = temporaries(program)
    assigned = assignments(program)
    version: dict[str, int] = {}
    table: dict[tuple, tuple[str, int]] = {}
    rename: dict[str, str] = {}
    statements: list[ir.Statement] = []
    for stmt in program.statements:
        body = ir.rename_tensors(stmt.body, rename) if rename else stmt.body
        stmt = ir.Statement(stmt.target, stmt.index, body)
        key = (canonical(stmt), tuple(version.get(name, 0) for name in stmt.reads))
        known = table.get(key)
        if known is not None and version.get(known[0], 0) == known[1] and known[0] != stmt.target:
            earlier = known[0]
            if stmt.target in temps and len(assigned[stmt.target]) == 1 and len(assigned.get(earlier, ())) <= 1:
                rename[stmt.target] = earlier
                continue
            stmt = ir.Statement(stmt.target, stmt.index, ir.Tensor(earlier, tuple(v for v, _ in stmt.index)))
        version[stmt.target] = version.get(stmt.target, 0) + 1
        if stmt.target not in stmt.reads:
            table[key] = (stmt.target, version[stmt.target])
        statements.append(stmt)
    used = {s.target for s in statements} | {n for s in statements for n in s.reads}
    decls = tuple(d for d in program.decls if d.name in used or d.name not in rename)
    return ir.Program(decls, tuple(statements))


def canonical(stmt: ir.Statement):
    """The statement's operator with index variables named by position: σ's as ``#0``,
    ``#1`` ..., binders' as ``$0``, ``$1`` ... in the order they occur; with σ's extents."""
    mapping: dict[str, ir.Index] = {name: f"#{n}" for n, (name, _) in enumerate(stmt.index)}
    counter = iter(range(1 << 62))
    body = rename_indices(stmt.body, mapping, lambda name, outer: f"${next(counter)}")
    return body, tuple(n for _, n in stmt.index)
