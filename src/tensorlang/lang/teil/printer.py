"""Print a TeIL AST back as TeIL text, exactly the ``Paren`` nodes it has:
``parse_teil(to_teil_source(p)) == p`` (docs/teil.md, "Syntax")."""

from __future__ import annotations

from . import ast


def expr_to_teil(e: ast.Expr) -> str:
    if isinstance(e, ast.Var):
        return e.name
    if isinstance(e, ast.Paren):
        return f"({expr_to_teil(e.expr)})"
    if isinstance(e, ast.Op):
        return " ".join([e.op, *(str(p) for p in e.params), *(expr_to_teil(a) for a in e.args)])
    raise TypeError(f"not a TeIL expression: {e!r}")  # pragma: no cover


def to_teil_source(program: ast.Program) -> str:
    """Allocations, then statements, one per line."""
    lines = []
    for d in program.decls:
        qual = f"{d.qual} " if d.qual else ""
        lines.append(f"{qual}alloc {d.name} : [{' '.join(str(n) for n in d.shape)}]")
    lines.extend(f"{s.target} = {expr_to_teil(s.expr)}" for s in program.stmts)
    return "\n".join(lines) + "\n"
