"""Names in EIN: fresh names (:class:`Fresh` and its flavours), and the index variables
of expressions, all through one walk, :func:`rename_indices` (docs/ein.md, "The core")."""

from __future__ import annotations

import itertools
from typing import Callable, Iterable

from . import ir
from .index import substitute_index, variables_of


# ------------------------------------------------------------------ fresh names
class Fresh:
    """Names that avoid a growing set of taken ones.  ``fresh("k")`` gives ``k1``,
    ``k2`` ... (a trailing number of the base is dropped first)."""

    def __init__(self, taken: Iterable[str] = ()):
        self.taken = set(taken)

    def take(self, candidates: Iterable[str]) -> str:
        """The first candidate not taken yet, which is then taken."""
        for name in candidates:
            if name not in self.taken:
                self.taken.add(name)
                return name
        raise ValueError("no candidate name is free")  # pragma: no cover - candidates are endless

    def __call__(self, base: str) -> str:
        stem = base.rstrip("0123456789") or "k"
        return self.take(f"{stem}{n}" for n in itertools.count(1))


class IndexNames(Fresh):
    """Fresh index variables for one statement, as the front ends' lowerings name them:
    output indices ``i, j, l, m ...`` and summation indices ``k, a, b ...``, then the same
    with a number appended."""

    OUTPUT = ("i", "j", "l", "m", "n", "p", "q", "r", "s", "t")
    SUMMED = ("k", "a", "b", "c", "d", "e", "f", "g", "h", "u")

    def output(self) -> str:
        return self.take(self._pool(self.OUTPUT))

    def summed(self) -> str:
        return self.take(self._pool(self.SUMMED))

    @staticmethod
    def _pool(bases: tuple[str, ...]):
        for round_ in itertools.count():
            for base in bases:
                yield base if round_ == 0 else f"{base}{round_}"


class TempNames(Fresh):
    """Fresh variable names for compiler temporaries (``tmp1``, ``tmp2`` ...), clashing
    with no variable the program declares."""

    def __init__(self, program: ir.Program):
        super().__init__(d.name for d in program.decls)
        self.counter = 0

    def __call__(self) -> str:  # type: ignore[override]
        name = self.take(f"tmp{n}" for n in itertools.count(self.counter + 1))
        self.counter = int(name[3:])
        return name


# ------------------------------------------------------------------ index variables
def free_indices(e: ir.Expr) -> frozenset[str]:
    """The index variables ``e`` depends on that no Σ/reduction inside ``e`` binds.
    (Iterative: expressions may be as deep as the parser accepts.)"""
    return ir.cached_bottom_up(e, "_free", _free)


def _free(node: ir.Expr, kids: list[frozenset[str]]) -> frozenset[str]:
    own = set(variables_of(ir.index_uses(node)))
    if kids:
        bound = {name for name, _ in ir.binders(node)}
        own |= set().union(*kids) - bound
    return frozenset(own)


def free_index_sets(e: ir.Expr) -> dict[int, frozenset[str]]:
    """:func:`free_indices` of every node of ``e``, by node id (one walk computes and
    keeps them all on their nodes)."""
    free_indices(e)
    return {id(node): free_indices(node) for node in ir.nodes(e)}


def all_names(e: ir.Expr) -> set[str]:
    """Every index variable written anywhere in ``e``, free or bound."""
    return set(ir.cached_bottom_up(e, "_names", _names))


def _names(node: ir.Expr, kids: list[frozenset[str]]) -> frozenset[str]:
    own = {name for name, _ in ir.binders(node)} | set(variables_of(ir.index_uses(node)))
    return frozenset(own.union(*kids))


def rename_indices(e: ir.Expr, mapping: dict[str, ir.Index],
                   bind: Callable[[str, dict[str, ir.Index]], str]) -> ir.Expr:
    """The one walk over index variables: ``e`` with each free variable ``v`` written as
    ``mapping[v]`` and each binder's variable ``name`` renamed to ``bind(name, outer)``
    (``outer``: the mapping in force around the binder, less the names it binds), its
    uses following.  A binder shadows the mapping of its own names."""

    def enter(node: ir.Expr, m: dict[str, ir.Index]) -> tuple[ir.Expr, dict[str, ir.Index]]:
        bound = ir.binders(node)
        if bound:
            inner = {k: v for k, v in m.items() if k not in {name for name, _ in bound}}
            outer = dict(inner)
            index = []
            for name, extent in bound:
                new = bind(name, outer)
                if new != name:
                    inner[name] = new
                index.append((new, extent))
            node = ir.with_binders(node, tuple(index))
            m = inner
        return node, m

    def leave(node: ir.Expr, outer: dict[str, ir.Index], m: dict[str, ir.Index]) -> ir.Expr:
        uses = ir.index_uses(node)
        if uses and m:
            node = ir.with_index_uses(node, tuple(substitute_index(i, m) for i in uses))
        return node

    # iterative, parents' binders before children, left to right (the order ``bind``
    # is called in, which decides fresh names): the depth is the parser's, not Python's
    return ir.transform(e, dict(mapping), enter, leave)


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

    def bind(name: str, outer: dict[str, ir.Index]) -> str:
        captures = name in variables_of(outer.values())
        return fresh(name) if captures else name

    return rename_indices(e, mapping, bind)


def rename_bound(e: ir.Expr, fresh: Fresh, seen: set[str] | None = None) -> ir.Expr:
    """``e`` with Σ/reduction variables renamed where needed so that no two binders share
    a name and none shadows a free index (what merging nested sums into one needs).
    ``seen`` holds the names already in use (by default e's free indices); a binder
    keeps its name when it is not among them.  ``fresh`` must avoid every name of ``e``."""
    if seen is None:
        seen = set(free_indices(e))
    if binders_apart(e, seen):  # nothing to rename: ``e`` itself (no walk rebuilding it)
        seen.update(name for node in ir.nodes(e) for name, _ in ir.binders(node))
        return e

    def bind(name: str, outer) -> str:
        new = fresh(name) if name in seen else name
        seen.add(new)
        return new

    return rename_indices(e, {}, bind)


def binders_apart(e: ir.Expr, seen: Iterable[str] = ()) -> bool:
    """Whether no two binders of ``e`` bind one name and none binds a name of ``seen``:
    :func:`rename_bound` then renames nothing (a cheap look first, most bodies)."""
    names = set(seen)
    for node in ir.nodes(e):
        for name, _ in ir.binders(node):
            if name in names:
                return False
            names.add(name)
    return True


def distinct_binders(e: ir.Expr, taken: Iterable[str] = (), fresh: Fresh | None = None) -> ir.Expr:
    """``e`` with binders renamed so that no two bind the same name and none binds a
    name in ``taken`` or free in ``e``: after it, an index variable names one loop.
    (Sibling sums may share a binder in index notation; a back end that flattens a
    product under several sums into one contraction needs them apart.)"""
    taken = set(taken)
    if binders_apart(e, taken | free_indices(e)):
        return e
    if fresh is None:
        fresh = Fresh(all_names(e) | taken)
    return rename_bound(e, fresh, taken | set(free_indices(e)))
