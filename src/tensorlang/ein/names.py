"""Index variables of EIN expressions: which are free, substitution, fresh names.

Every rewrite needs the same three things: the free index variables of a subexpression
(what it depends on), substituting indices for index variables without capturing a bound
one (004 §5.2's "index substitution"), and names that clash with nothing in a statement.
Lowering needs a fourth: readable fresh names for a statement's indices
(:class:`IndexNames`).
"""

from __future__ import annotations

from . import ir
from .index import index_variables, substitute_index, variables_of


class IndexNames:
    """Fresh index variables for one statement, as the front ends' lowerings name them:
    output indices ``i, j, l, m ...`` and summation indices ``k, a, b ...``, then the same
    with a number appended."""

    OUTPUT = ("i", "j", "l", "m", "n", "p", "q", "r", "s", "t")
    SUMMED = ("k", "a", "b", "c", "d", "e", "f", "g", "h", "u")

    def __init__(self):
        self.used: set[str] = set()

    def output(self) -> str:
        return self._fresh(self.OUTPUT)

    def summed(self) -> str:
        return self._fresh(self.SUMMED)

    def _fresh(self, pool: tuple[str, ...]) -> str:
        round_ = 0
        while True:
            for base in pool:
                name = base if round_ == 0 else f"{base}{round_}"
                if name not in self.used:
                    self.used.add(name)
                    return name
            round_ += 1


def free_indices(e: ir.Expr) -> frozenset[str]:
    """The index variables ``e`` depends on that no Σ/reduction inside ``e`` binds."""
    if isinstance(e, ir.Tensor):
        return frozenset(variables_of(e.indices))
    if isinstance(e, ir.Const):
        return frozenset()
    if isinstance(e, ir.Delta):
        return frozenset(variables_of((e.first, e.second)))
    if isinstance(e, ir.Epsilon):
        return frozenset(variables_of(e.indices))
    if isinstance(e, (ir.Sum, ir.Reduce)):
        return free_indices(e.body) - {name for name, _ in e.index}
    if isinstance(e, ir.Stack):
        inner = frozenset().union(*(free_indices(item) for item in e.items))
        return inner | set(index_variables(e.index))
    return frozenset().union(*(free_indices(c) for c in ir.children(e)))


def all_names(e: ir.Expr) -> set[str]:
    """Every index variable written anywhere in ``e``, free or bound."""
    names: set[str] = set()
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, (ir.Sum, ir.Reduce)):
            names.update(name for name, _ in node.index)
        elif isinstance(node, ir.Stack):
            names.update(index_variables(node.index))
        names.update(free_indices(node) if isinstance(node, (ir.Tensor, ir.Delta, ir.Epsilon)) else ())
        stack.extend(ir.children(node))
    return names


class Fresh:
    """Index variable names that avoid a growing set of taken ones."""

    def __init__(self, taken=()):
        self.taken = set(taken)

    def __call__(self, base: str) -> str:
        stem = base.rstrip("0123456789") or "k"
        n = 1
        while f"{stem}{n}" in self.taken:
            n += 1
        name = f"{stem}{n}"
        self.taken.add(name)
        return name


def substitute(e: ir.Expr, mapping: dict[str, ir.Index], fresh: Fresh | None = None) -> ir.Expr:
    """``e`` with each free index variable ``v`` replaced by ``mapping[v]`` (a variable or a
    fixed 1-based position).  A bound variable that would capture a substituted one is
    renamed first (``fresh`` supplies names; by default it avoids every name in sight).

    A stack selected at a fixed position is that item (``[a, b][2]`` is ``b``), which is
    how substituting a position into CFDlang's stacking stays EIN."""
    if not mapping:
        return e
    if fresh is None:
        fresh = Fresh(all_names(e) | set(mapping) | set(variables_of(mapping.values())))
    return _subst(e, dict(mapping), fresh)


def _subst(e: ir.Expr, m: dict[str, ir.Index], fresh: Fresh) -> ir.Expr:
    if isinstance(e, ir.Tensor):
        return ir.Tensor(e.name, tuple(substitute_index(i, m) for i in e.indices))
    if isinstance(e, ir.Const):
        return e
    if isinstance(e, ir.Delta):
        return ir.Delta(substitute_index(e.first, m), substitute_index(e.second, m))
    if isinstance(e, ir.Epsilon):
        return ir.Epsilon(tuple(substitute_index(i, m) for i in e.indices))
    if isinstance(e, ir.Neg):
        return ir.Neg(_subst(e.arg, m, fresh))
    if isinstance(e, ir.Apply):
        return ir.Apply(e.fn, _subst(e.arg, m, fresh))
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, _subst(e.left, m, fresh), _subst(e.right, m, fresh))
    if isinstance(e, (ir.Sum, ir.Reduce)):
        inner = {k: v for k, v in m.items() if k not in {name for name, _ in e.index}}
        targets = set(variables_of(inner.values()))
        index = []
        for name, extent in e.index:
            if name in targets:  # would capture a substituted variable: rename it
                new = fresh(name)
                inner[name] = new
                name = new
            index.append((name, extent))
        body = _subst(e.body, inner, fresh) if inner else e.body
        return ir.Sum(tuple(index), body) if isinstance(e, ir.Sum) else ir.Reduce(e.op, tuple(index), body)
    if isinstance(e, ir.Stack):
        at = substitute_index(e.index, m)
        items = tuple(_subst(item, m, fresh) for item in e.items)
        if isinstance(at, int):
            return items[at - 1]
        return ir.Stack(at, items)
    raise TypeError(f"not an EIN expression: {e!r}")


def rename_bound(e: ir.Expr, fresh: Fresh, seen: set[str] | None = None) -> ir.Expr:
    """``e`` with Σ/reduction variables renamed where needed so that no two binders share
    a name and none shadows a free index (what merging nested sums into one needs).
    ``seen`` holds the names already in use (by default e's free indices); a binder
    keeps its name when it is not among them."""
    if seen is None:
        seen = set(free_indices(e))
    if isinstance(e, (ir.Sum, ir.Reduce)):
        mapping = {}
        for name, _ in e.index:
            if name in seen:
                mapping[name] = fresh(name)
            seen.add(mapping.get(name, name))
        index = tuple((mapping.get(name, name), extent) for name, extent in e.index)
        body = substitute(e.body, mapping, fresh) if mapping else e.body
        body = rename_bound(body, fresh, seen)
        return ir.Sum(index, body) if isinstance(e, ir.Sum) else ir.Reduce(e.op, index, body)
    return rebuild(e, tuple(rename_bound(c, fresh, seen) for c in ir.children(e)))


def rebuild(e: ir.Expr, kids: tuple[ir.Expr, ...]) -> ir.Expr:
    """``e`` with its children replaced (same node kind, same non-child fields)."""
    if isinstance(e, (ir.Tensor, ir.Const, ir.Delta, ir.Epsilon)):
        return e
    if isinstance(e, ir.Neg):
        return ir.Neg(kids[0])
    if isinstance(e, ir.Apply):
        return ir.Apply(e.fn, kids[0])
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, kids[0], kids[1])
    if isinstance(e, ir.Sum):
        return ir.Sum(e.index, kids[0])
    if isinstance(e, ir.Reduce):
        return ir.Reduce(e.op, e.index, kids[0])
    if isinstance(e, ir.Stack):
        return ir.Stack(e.index, tuple(kids))
    raise TypeError(f"not an EIN expression: {e!r}")


def product(factors: list[ir.Expr]) -> ir.Expr:
    """``f1 * f2 * ... * fk`` (left-nested), for k >= 1."""
    result = factors[0]
    for f in factors[1:]:
        result = ir.BinOp("*", result, f)
    return result
