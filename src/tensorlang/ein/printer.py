"""EIN as text: index notation that the ``.tl`` front end parses back to the same EIN (docs/ein.md,
"Lowering"); ``to_lambda_text`` shows 004 §4's λ form.  A ``sum(k)`` (``prod``, ``max``, ``min``) extends
over the rest of its product, so it is parenthesized unless it ends a product or a term; a bound
variable used only in affine indices gets its extent, ``sum(a:3)``.  :func:`html_text`,
:func:`html_table` and :func:`to_html` are the blocks of the ``_repr_html_`` methods (notebooks)."""

from __future__ import annotations

import html
from typing import Any, Callable, Iterable

from ..semantics.values import FUNCTION_NAMES, REDUCTIONS
from . import ir

#: Words of the text form that cannot name a variable (keywords, functions, index-form
#: words): the model language (``.tl``) reads EIN text, so its parser reserves them too.
RESERVED = frozenset({"var", "in", "out", "inout", "sum", "delta", "eps", "concat", "vec", *FUNCTION_NAMES})


def number_text(value: float) -> str:
    """A non-negative number as a literal the grammar reads back to the same float."""
    if value == float("inf"):
        return "1e999"  # a literal beyond the float range reads as infinity
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def reserved_renaming(program, reserved=RESERVED) -> dict[str, str]:
    """Variable names ``reserved`` (the text form's words: a TeIL or CFDlang program may use
    ``sum``, ``in``, ``delta`` ...), each mapped to a free name: the name with underscores
    appended.  ``program`` is anything with ``decls`` that have a ``name``."""
    taken = {d.name for d in program.decls}
    mapping = {}
    for d in program.decls:
        if d.name in reserved:
            new = d.name + "_"
            while new in taken or new in reserved:
                new += "_"
            taken.add(new)
            mapping[d.name] = new
    return mapping


# Levels, loosest first.  ISUM is a sum (or a negated sum): allowed as the last factor of
# a product; TERM is a product that ends in such a sum: it may not be multiplied further.
_SUM, _TERM, _ISUM, _PROD, _FACTOR, _ATOM = range(1, 7)


def _indices(ids) -> str:
    return "[" + ",".join(str(i) for i in ids) + "]"


def expr_to_text(e: ir.Expr) -> str:
    return _render(e)[0]


def _wrap(e: ir.Expr, ok) -> str:
    text, level = _render(e)
    return text if ok(level) else f"({text})"


def _const(e: ir.Const) -> tuple[str, int]:
    if e.value < 0:
        return "-" + number_text(-e.value), _FACTOR
    return number_text(e.value), _ATOM


def _concat(e: ir.Concat) -> tuple[str, int]:
    """concat(a:3 => e1, b:4 => e2)[p]: the direct sum at p."""
    parts = ", ".join(f"{name}:{n} => {_render(item)[0]}" for (name, n), item in zip(e.parts, e.items))
    return f"concat({parts})[{e.index}]", _ATOM


def _neg(e: ir.Neg) -> tuple[str, int]:
    text, level = _render(e.arg)
    if level >= _FACTOR:
        return "-" + text, _FACTOR
    if level == _ISUM:
        return "-" + text, _ISUM
    return f"-({text})", _FACTOR


def _reduction(e: ir.Sum | ir.Reduce) -> tuple[str, int]:
    """Every reduction binds like sum."""
    word = REDUCTIONS[e.op].word if isinstance(e, ir.Reduce) else "sum"
    names = ",".join(name if _inferred(name, e.body) else f"{name}:{n}" for name, n in e.index)
    return f"{word}({names}) " + _wrap(e.body, lambda lv: lv >= _TERM), _ISUM


def _binop(e: ir.BinOp) -> tuple[str, int]:
    if e.op in "+-":
        left = _wrap(e.left, lambda lv: lv >= _SUM)
        right = _wrap(e.right, lambda lv: lv >= _TERM)
        return f"{left} {e.op} {right}", _SUM
    left = _wrap(e.left, lambda lv: lv >= _PROD)
    rtext, rlevel = _render(e.right)
    if rlevel == _ISUM:
        return f"{left} {e.op} {rtext}", _TERM
    right = rtext if rlevel >= _FACTOR else f"({rtext})"
    return f"{left} {e.op} {right}", _PROD


#: How each node kind prints, with its precedence level (a new node kind adds its entry:
#: tests/test_architecture.py checks that every kind of ein/ir.py has one).
RENDER: dict[type, Callable[[Any], tuple[str, int]]] = {
    ir.Tensor: lambda e: (e.name + (_indices(e.indices) if e.indices else ""), _ATOM),
    ir.Const: _const,
    ir.Delta: lambda e: (f"delta[{e.first},{e.second}]", _ATOM),
    ir.Epsilon: lambda e: (f"eps{_indices(e.indices)}", _ATOM),
    ir.Apply: lambda e: (f"{e.fn}({_render(e.arg)[0]})", _ATOM),
    # [e1, e2, ...][i]: item i of the stack
    ir.Stack: lambda e: (f"[{', '.join(_render(item)[0] for item in e.items)}][{e.index}]", _ATOM),
    ir.Concat: _concat,
    ir.Neg: _neg,
    ir.Sum: _reduction,
    ir.Reduce: _reduction,
    ir.BinOp: _binop,
}


def _render(e: ir.Expr) -> tuple[str, int]:
    rule = RENDER.get(type(e))
    if rule is None:
        raise TypeError(f"not an EIN expression: {e!r}")  # pragma: no cover
    return rule(e)


def _inferred(name: str, e: ir.Expr) -> bool:
    """Whether parsing ``e`` back infers the extent of the bound ``name``: some tensor
    access, ε or stack uses it plainly.  Where none does (it is used only inside affine
    indices, ``x[i+a]``), the binder is printed with its extent, ``sum(a:3)``."""
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, (ir.Tensor, ir.Epsilon)) and name in node.indices:
            return True
        if isinstance(node, (ir.Stack, ir.Concat)) and node.index == name:
            return True
        if isinstance(node, ir.Concat) and name in dict(node.parts):  # re-bound there
            continue
        if not (isinstance(node, (ir.Sum, ir.Reduce)) and name in dict(node.index)):  # not re-bound there
            stack.extend(ir.children(node))
    return False


def statement_to_text(s: ir.Statement) -> str:
    return f"{s.target}[{','.join(name for name, _ in s.index)}] = {expr_to_text(s.body)}"


def to_text(program: ir.Program) -> str:
    """The program in index notation, declarations included: a valid ``.tl`` file.

    A variable named with a word the model language reserves (TeIL and CFDlang allow
    ``sum``, ``in``, ``delta`` ...) is renamed as ``--emit tl`` renames it, with a comment."""
    mapping = reserved_renaming(program)
    lines = [f"// renamed: {old} -> {new} ('{old}' is a reserved word of the model language)"
             for old, new in mapping.items()]
    for d in program.decls:
        if d.qual == ir.TEMP:  # a compiler temporary (passes/program.py): never a result
            lines.append(f"// {d.name}: a compiler temporary")
        qual = f"{d.qual} " if d.qual and d.qual != ir.TEMP else ""
        lines.append(f"{qual}var {mapping.get(d.name, d.name)} : [{' '.join(str(x) for x in d.shape)}]")
    for s in program.statements:
        if mapping:
            s = ir.Statement(mapping.get(s.target, s.target), s.index, ir.rename_tensors(s.body, mapping))
        lines.append(statement_to_text(s))
    return "\n".join(lines) + "\n"


def to_lambda_text(program: ir.Program) -> str:
    """Each statement as ``t = λ T0 T1 ⟨e⟩_σ (args)``, the form of 004 §4."""
    lines = []
    for s in program.statements:
        body, args = s.operator()
        params = " ".join(f"T{n}" for n in range(len(args)))
        sigma = ", ".join(f"{name}<{n}" for name, n in s.index)
        lines.append(f"{s.target} = λ {params} ⟨{expr_to_text(body)}⟩_{{{sigma}}} ({', '.join(args)})")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ notebooks (HTML)
def html_text(text: str, title: str | None = None) -> str:
    """``text`` as an escaped ``<pre>`` block, under an escaped bold ``title``."""
    head = f"<b>{html.escape(title)}</b>" if title else ""
    return f'<div class="tensorlang">{head}<pre>{html.escape(text)}</pre></div>'


def html_table(header: Iterable[object], rows: Iterable[Iterable[object]], title: str | None = None) -> str:
    """A small table, every cell escaped."""
    def row(cells, tag):
        return "<tr>" + "".join(f"<{tag}>{html.escape(str(c))}</{tag}>" for c in cells) + "</tr>"

    head = f"<b>{html.escape(title)}</b>" if title else ""
    body = row(header, "th") + "".join(row(r, "td") for r in rows)
    return f'<div class="tensorlang">{head}<table>{body}</table></div>'


def to_html(program: ir.Program) -> str:
    """An EIN program for a notebook: its declarations as a table, its statements as text."""
    decls = [(d.name, "[" + " ".join(map(str, d.shape)) + "]", d.qual or "") for d in program.decls]
    statements = "\n".join(statement_to_text(s) for s in program.statements)
    return html_table(("variable", "shape", "role"), decls, "EIN program") + html_text(statements)


ir.Program._repr_html_ = to_html  # type: ignore[attr-defined]
