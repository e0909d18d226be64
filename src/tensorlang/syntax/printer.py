"""Print an AST back as model-language text, with only the parentheses it needs.

``parse_model(to_source(p)) == p`` holds for every program, whether it came from the
parser or was built by hand (the property tests check this).
"""

from __future__ import annotations

from . import ast

# Binding levels, loosest first, as SPEC section 1 fixes them.
_SUM, _TERM, _POST, _PROD, _UNARY, _ATOM = range(1, 7)


def _number(value: float) -> str:
    """A non-negative number as a literal the grammar reads back to the same float."""
    if value == float("inf"):
        return "1e999"  # a literal beyond the float range reads as infinity
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def expr_to_source(e: ast.Expr) -> str:
    """The text of one expression."""
    return _fmt(e, _SUM)


def _fmt(e: ast.Expr, need: int) -> str:
    text, level = _render(e)
    return f"({text})" if level < need else text


def _pair(p: ast.Pair) -> str:
    return f"[{p.first} {p.second}]"


def _render(e: ast.Expr) -> tuple[str, int]:
    if isinstance(e, ast.Var):
        return e.name, _ATOM
    if isinstance(e, ast.Number):
        if e.value < 0:
            return "-" + _number(-e.value), _UNARY
        return (e.text or _number(e.value)), _ATOM
    if isinstance(e, ast.Paren):
        return f"({_fmt(e.expr, _SUM)})", _ATOM
    if isinstance(e, ast.Call):
        return f"{e.fn}({_fmt(e.arg, _SUM)})", _ATOM
    if isinstance(e, ast.Neg):
        return "-" + _fmt(e.expr, _UNARY), _UNARY
    if isinstance(e, ast.Outer):
        return f"{_fmt(e.left, _PROD)} # {_fmt(e.right, _UNARY)}", _PROD
    if isinstance(e, ast.Transpose):
        return f"{_fmt(e.expr, _POST)} ^ {_pair(e.pair)}", _POST
    if isinstance(e, ast.Contract):
        pairs = " ".join(_pair(p) for p in e.pairs)
        group = f"[{pairs}]" if e.grouped else pairs
        return f"{_fmt(e.expr, _POST)} . {group}", _POST
    if isinstance(e, ast.Binary):
        if e.op in "+-":
            return f"{_fmt(e.left, _SUM)} {e.op} {_fmt(e.right, _TERM)}", _SUM
        return f"{_fmt(e.left, _TERM)} {e.op} {_fmt(e.right, _POST)}", _TERM
    raise TypeError(f"not an expression: {e!r}")  # pragma: no cover


def to_source(program: ast.Program) -> str:
    """The whole program: declarations, then statements, one per line."""
    lines = []
    for d in program.decls:
        qual = f"{d.qual} " if d.qual else ""
        lines.append(f"{qual}var {d.name} : [{' '.join(str(x) for x in d.shape)}]")
    for s in program.stmts:
        lines.append(f"{s.target} = {expr_to_source(s.expr)}")
    return "\n".join(lines) + "\n"
