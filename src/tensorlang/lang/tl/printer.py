"""Print an AST back as model-language text, with only the parentheses it needs
(``parse_model(to_source(p)) == p``, checked by the property tests)."""

from __future__ import annotations

from ...ein.printer import number_text
from . import ast

# Binding levels, loosest first, as SPEC section 1 fixes them.
_SUM, _TERM, _POST, _PROD, _UNARY, _ATOM = range(1, 7)


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
            return "-" + number_text(-e.value), _UNARY
        return (e.text or number_text(e.value)), _ATOM
    if isinstance(e, ast.Paren):
        return f"({_fmt(e.expr, _SUM)})", _ATOM
    if isinstance(e, ast.Call):
        return f"{e.fn}({_fmt(e.arg, _SUM)})", _ATOM
    if isinstance(e, ast.Stack):
        return f"[{', '.join(_fmt(item, _SUM) for item in e.items)}]", _ATOM
    if isinstance(e, ast.Concat):
        return f"concat({', '.join(_fmt(item, _SUM) for item in e.items)})", _ATOM
    if isinstance(e, ast.Vec):
        return f"vec({_fmt(e.expr, _SUM)})", _ATOM
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


# ---------------------------------------------------------------- index form
# Levels of the index-form grammar, loosest first: a sum (or another reduction) extends
# over the rest of the product it starts, so it may only end a product (ITERM).
_ISUM, _ITERM, _IRED, _IPROD, _IFACTOR, _IATOM = range(1, 7)


def _index_ref(ref: ast.IndexRef) -> str:
    """An index as written: ``i``, ``3``, ``i+1`` (ein.index.to_text), a reduction's
    variable with the extent given for it, ``a:3``."""
    return str(ref.value) if ref.extent is None else f"{ref.value}:{ref.extent}"


def _render_index(e: ast.Expr) -> tuple[str, int]:
    if isinstance(e, ast.Access):
        return f"{e.name}[{','.join(_index_ref(r) for r in e.indices)}]", _IATOM
    if isinstance(e, ast.Var):
        return e.name, _IATOM
    if isinstance(e, ast.Number):
        if e.value < 0:
            return "-" + number_text(-e.value), _IFACTOR
        return (e.text or number_text(e.value)), _IATOM
    if isinstance(e, ast.Delta):
        return f"delta[{_index_ref(e.first)},{_index_ref(e.second)}]", _IATOM
    if isinstance(e, ast.Epsilon):
        return f"eps[{','.join(_index_ref(r) for r in e.indices)}]", _IATOM
    if isinstance(e, ast.Paren):
        return f"({_render_index(e.expr)[0]})", _IATOM
    if isinstance(e, ast.Call):
        return f"{e.fn}({_render_index(e.arg)[0]})", _IATOM
    if isinstance(e, ast.Stack):
        if e.index is None:  # the grammar's index form has only [e1, e2][i] (istack)
            raise TypeError(f"an index-form stack needs its index: {e!r}")
        items = ", ".join(_render_index(item)[0] for item in e.items)
        return f"[{items}][{_index_ref(e.index)}]", _IATOM
    if isinstance(e, ast.Concat):
        if e.index is None:  # the grammar's index form has only concat(a:3 => e1, ..)[p]
            raise TypeError(f"an index-form concat needs its index: {e!r}")
        parts = ", ".join(f"{ref.value}:{ref.extent} => {_render_index(item)[0]}" for ref, item in zip(e.parts, e.items))
        return f"concat({parts})[{_index_ref(e.index)}]", _IATOM
    if isinstance(e, ast.Neg):
        text, level = _render_index(e.expr)
        if level >= _IFACTOR:
            return "-" + text, _IFACTOR
        if level == _IRED:
            return "-" + text, _IRED
        return f"-({text})", _IFACTOR
    if isinstance(e, (ast.Sum, ast.Reduce)):
        word = e.op if isinstance(e, ast.Reduce) else "sum"
        body, level = _render_index(e.body)
        body = body if level >= _ITERM else f"({body})"
        return f"{word}({','.join(_index_ref(r) for r in e.indices)}) {body}", _IRED
    if isinstance(e, ast.Binary):
        left, llevel = _render_index(e.left)
        right, rlevel = _render_index(e.right)
        if e.op in "+-":
            left = left if llevel >= _ISUM else f"({left})"
            right = right if rlevel >= _ITERM else f"({right})"
            return f"{left} {e.op} {right}", _ISUM
        left = left if llevel >= _IPROD else f"({left})"
        if rlevel == _IRED:
            return f"{left} {e.op} {right}", _ITERM
        right = right if rlevel >= _IFACTOR else f"({right})"
        return f"{left} {e.op} {right}", _IPROD
    raise TypeError(f"not an index-form expression: {e!r}")  # pragma: no cover


def statement_to_source(s: ast.Stmt) -> str:
    """One statement, in operator form or in index form as it was written."""
    if isinstance(s, ast.IndexAssign):
        return f"{s.target}[{','.join(_index_ref(r) for r in s.indices)}] = {_render_index(s.expr)[0]}"
    return f"{s.target} = {expr_to_source(s.expr)}"


def _annotation(note: ast.Annotation | None) -> str:
    """A structure annotation as written (SPEC §4), with its leading space."""
    if note is None:
        return ""
    if note.kind == "where":
        chains = []
        for indices, ops in note.conditions:
            text = _index_ref(ast.IndexRef(indices[0]))
            for op, index in zip(ops, indices[1:]):
                text += f" {op} {_index_ref(ast.IndexRef(index))}"
            chains.append(text)
        return " where " + ", ".join(chains)
    return f" {note.kind}" + (f"({note.arg})" if note.arg is not None else "")


def to_source(program: ast.Program) -> str:
    """The whole program: declarations, then statements, one per line."""
    lines = []
    for d in program.decls:
        qual = f"{d.qual} " if d.qual else ""
        lines.append(f"{qual}var {d.name} : [{' '.join(str(x) for x in d.shape)}]{_annotation(d.structure)}")
    for s in program.stmts:
        lines.append(statement_to_source(s))
    return "\n".join(lines) + "\n"
