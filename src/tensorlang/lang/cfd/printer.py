"""Print a model-language AST in the CFDlang dialect, the inverse of :mod:`.parser`
(docs/cfdlang.md, "Printing the other way")."""

from __future__ import annotations

import numpy as np

from ..tl import ast

# Binding levels of cfd.lark, loosest first.
_EXPR, _TERM, _CONTR, _FACTOR, _POSTFIX, _ATOM = range(1, 7)

_QUALIFIERS = {None: "", "in": "input ", "out": "output ", "inout": "input output "}


def _number(value: float) -> str:
    if value < 0 or not np.isfinite(value):
        raise ValueError(f"CFDlang has no literal for {value!r}")
    if float(value).is_integer():
        return str(int(value))
    return np.format_float_positional(value, unique=True)  # digits '.' digits, reads back exactly


def _fmt(e: ast.Expr, need: int) -> str:
    text, level = _render(e)
    return f"({text})" if level < need else text


def _dims(pairs) -> str:
    return "[" + " ".join(f"[{p.first - 1} {p.second - 1}]" for p in pairs) + "]"


def _render(e: ast.Expr) -> tuple[str, int]:
    if isinstance(e, ast.Var):
        return e.name, _ATOM
    if isinstance(e, ast.Number):
        return _number(e.value), _ATOM
    if isinstance(e, ast.Paren):
        return f"({_fmt(e.expr, _EXPR)})", _ATOM
    if isinstance(e, ast.Neg):  # -1 * e is exactly -e, NaN, inf and signed zeros included
        return f"(0 - 1) * {_fmt(e.expr, _CONTR)}", _TERM
    if isinstance(e, ast.Stack) and e.index is None:
        return "[" + " ".join(_fmt(item, _EXPR) for item in e.items) + "]", _ATOM
    if isinstance(e, ast.Transpose):
        return f"{_fmt(e.expr, _POSTFIX)} ^ {_dims([e.pair])}", _POSTFIX
    if isinstance(e, ast.Outer):
        return f"{_fmt(e.left, _FACTOR)} # {_fmt(e.right, _POSTFIX)}", _FACTOR
    if isinstance(e, ast.Contract):
        return f"{_fmt(e.expr, _CONTR)} . {_dims(e.pairs)}", _CONTR
    if isinstance(e, ast.Binary):
        if e.op in "+-":
            return f"{_fmt(e.left, _EXPR)} {e.op} {_fmt(e.right, _TERM)}", _EXPR
        return f"{_fmt(e.left, _TERM)} {e.op} {_fmt(e.right, _CONTR)}", _TERM
    if isinstance(e, ast.Call):
        raise ValueError(f"CFDlang has no functions: {e.fn}(...) cannot be printed")
    raise ValueError(f"CFDlang has no form for {type(e).__name__} (index-form statements included)")


def to_cfd_source(program: ast.Program) -> str:
    """The whole program in the CFDlang dialect: declarations, then statements."""
    lines = []
    for d in program.decls:
        lines.append(f"var {_QUALIFIERS[d.qual]}{d.name} : [{' '.join(str(x) for x in d.shape)}]")
    for s in program.stmts:
        if not isinstance(s, ast.Assign):
            raise ValueError("CFDlang has no index-form statements")
        lines.append(f"{s.target} = {_fmt(s.expr, _EXPR)}")
    return "\n".join(lines) + "\n"
