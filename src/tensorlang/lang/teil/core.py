"""Core-TeIL (paper 001 section 4, Figure 12): :func:`check_core` and the rewriter
:func:`to_core` (docs/teil.md, "Core-TeIL")."""

from __future__ import annotations

from ...errors import TensorLangError, error
from . import ast
from .ast import full_params
from .typecheck import rule_of


def check_core(program: ast.Program) -> None:
    """Raise error[syntax] for the first operator (per statement) that Core-TeIL lacks."""
    found = []
    for stmt in program.stmts:
        for e in ast.operators(stmt.expr):
            problem = _not_core(e)
            if problem:
                found.extend(error("syntax", problem, e.head_span, rule_of(e).split("^")[0] + "^core").diagnostics)
                break
    if found:
        raise TensorLangError(found[0].code, found[0].message, diagnostics=found)


def _not_core(e: ast.Op) -> str | None:
    if e.op in ast.BINARY or e.core:
        return None
    if e.op == "contr":
        i0, i1 = e.params
        return f"contr is not Core-TeIL; write red+ (diag e) after moving dimensions {i0} and {i1} to the front"
    if e.op == "transp":
        i0, i1 = e.params
        if abs(i0 - i1) == 1:
            return f"Core-TeIL writes this adjacent transposition as transp {min(i0, i1)}"
        return f"Core-TeIL transposes adjacent dimensions only; transp {i0} {i1} is not adjacent"
    args = " ".join(str(p) for p in e.params)
    core = {"expa": f"expa {e.params[-1]}", "proj": f"proj {e.params[-1]}"}.get(e.op, e.op)
    return (f"Core-TeIL's {e.op} acts on the first dimension{'s' if e.op == 'diag' else ''} and takes no "
            f"dimension argument: {e.op} {args} is full TeIL (Core form: {core})")


# ---------------------------------------------------------------- the rewriter
def _transp(i: int, e: ast.Expr) -> ast.Expr:
    return ast.Op("transp", (i,), (parenthesized(e),))


def parenthesized(e: ast.Expr) -> ast.Expr:
    """An operand that is an operator application in parentheses, as the paper writes it."""
    return ast.Paren(e) if isinstance(e, ast.Op) else e


def to_front(p: int, e: ast.Expr) -> ast.Expr:
    """Dimension p moved to position 1 (dimensions 1..p-1 move one to the right)."""
    for q in range(p - 1, 0, -1):
        e = _transp(q, e)
    return e


def from_front(p: int, e: ast.Expr) -> ast.Expr:
    """Dimension 1 moved to position p (the inverse of :func:`to_front`)."""
    for q in range(1, p):
        e = _transp(q, e)
    return e


def swap(i0: int, i1: int, e: ast.Expr) -> ast.Expr:
    """Dimensions i0 and i1 exchanged by adjacent transpositions only."""
    i0, i1 = sorted((i0, i1))
    for q in range(i0, i1):  # dimension i0 travels up to position i1
        e = _transp(q, e)
    for q in range(i1 - 2, i0 - 1, -1):  # dimension i1, now at i1-1, travels down to i0
        e = _transp(q, e)
    return e


def core_expr(e: ast.Expr) -> ast.Expr:
    """The Core-TeIL expression equal to ``e`` (001 §4.1)."""
    if isinstance(e, ast.Var):
        return e
    if isinstance(e, ast.Paren):
        return ast.Paren(core_expr(e.expr))
    args = tuple(core_expr(a) for a in e.args)
    if e.op in ast.BINARY or e.core:
        return ast.Op(e.op, e.params, args)
    (arg,) = args
    p = full_params(e)
    if e.op in ast.REDUCTIONS:
        return ast.Op(e.op, (), (parenthesized(to_front(p[0], arg)),))
    if e.op == "proj":
        return ast.Op("proj", (p[1],), (parenthesized(to_front(p[0], arg)),))
    if e.op == "expa":
        return from_front(p[0], ast.Op("expa", (p[1],), (parenthesized(arg),)))
    if e.op == "transp":
        return arg if p[0] == p[1] else swap(p[0], p[1], arg)
    if e.op in ("diag", "contr"):
        i0, i1 = p  # i0 < i1 (T-Diag)
        # i0 to the front, then i1 (still at position i1) to position 2; diag keeps one
        # of the two at position 1, which then moves back to i0
        front = to_front(i0, arg)
        for q in range(i1 - 1, 1, -1):
            front = _transp(q, front)
        diag = ast.Op("diag", (), (parenthesized(front),))
        if e.op == "contr":  # red+ i0 (diag i0 i1 e): the diagonal is still at position 1
            return ast.Op("red+", (), (parenthesized(diag),))
        return from_front(i0, diag)
    raise TypeError(f"not a TeIL operator: {e.op!r}")  # pragma: no cover


def to_core(program: ast.Program) -> ast.Program:
    """The program with every statement rewritten into Core-TeIL."""
    return ast.Program(program.decls, tuple(ast.Assign(s.target, core_expr(s.expr)) for s in program.stmts))
