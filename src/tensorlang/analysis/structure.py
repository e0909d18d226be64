"""Structure inference (paper 003 §5.1): which entries of every tensor of an EIN program
can be non-zero (its *support*), which positions are interchangeable (its *symmetry*),
and from both its *unique set* — the entries a compressed computation must compute.

Sets of integer points with affine conditions are islpy sets (isl, the integer set
library 003's related work names; one wheel from PyPI, and it intersects, unites,
projects exactly and counts points, which is everything the rules below need).  Every
set is over 1-based positions, like every EIN index.

The rules, by the names 003 gives them (Fig. 9 and Fig. 10):

* **product** (Fig. 9): the support of ``e1 * e2`` is the *intersection* of the
  supports (a structural zero annihilates: 003's semantics, as in sparse compilers —
  ``0 · inf`` counts as 0 here);
* **sum** (Fig. 9): the support of ``e1 + e2`` is the *union*;
* **projection** (Fig. 9): the support of ``Σ_k e`` is e's support with k projected
  out (there is a k ...);
* **symmetry** (Fig. 10's self outer product ``x ⊗ x``, its generalisation to higher
  degree, and repetition): a statement is symmetric in two of its indices when swapping
  them gives the same expression up to commutativity of ``*`` and ``+`` and the declared
  symmetry of the tensors it reads.  So ``M3[i,j,k] = sum(r) F[r,i]*F[r,j]*F[r,k]`` is
  symmetric in i, j and k — without any annotation — and its unique set is
  i ≤ j ≤ k: a sixth of the dense cube;
* a declared structure (SPEC §4, ``ein.structure.Structure``) is an input's support
  (its unique set, or everything for a symmetric one) and symmetry.

The unique set of a tensor is its support with, for each group of interchangeable
positions, the positions in ascending order; its redundancy map sends every other
supported position to the sorted one.  Nothing here rewrites a program.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Iterable, Mapping

import islpy as isl

from ..ein import ir
from ..ein.index import Index, as_terms
from ..ein.names import substitute
from ..ein.printer import expr_to_text
from ..ein.structure import Structure, position_names
from ..semantics.values import FUNCTIONS


@dataclass(frozen=True)
class TensorStructure:
    """What is known of a tensor's entries: ``support`` (where it may be non-zero, an
    isl set over positions ``p1 .. pk``, 1-based) and ``groups`` (tuples of 0-based
    dimensions whose positions may be permuted without changing the value)."""

    name: str
    shape: tuple[int, ...]
    support: isl.Set
    groups: tuple[tuple[int, ...], ...] = ()

    @property
    def unique(self) -> isl.Set:
        """The unique set: the support with each symmetric group's positions ascending."""
        names = _positions(len(self.shape))
        conditions = [f"{names[g[n]]} <= {names[g[n + 1]]}" for g in self.groups for n in range(len(g) - 1)]
        if not conditions:
            return self.support
        order = isl.Set(f"{{ [{', '.join(names)}] : {' and '.join(conditions)} }}")
        return self.support.intersect(order)

    @property
    def dense_size(self) -> int:
        return prod(self.shape)

    @property
    def unique_size(self) -> int:
        return count(self.unique)

    @property
    def support_size(self) -> int:
        return count(self.support)

    def support_points(self) -> list[tuple[int, ...]]:
        """The support's points (1-based positions), for tests and small tensors."""
        points: list[tuple[int, ...]] = []
        self.support.foreach_point(lambda p: points.append(
            tuple(int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) for d in range(len(self.shape)))))
        return points

    def describe(self) -> str:
        """One line: unique-set size against the dense size, and what makes it smaller."""
        dense, unique = self.dense_size, self.unique_size
        share = f"{100.0 * unique / dense:.3g}%" if dense else "-"
        what = []
        if self.groups:
            what.append("symmetric in " + "; ".join(" ".join(f"i{d + 1}" for d in g) for g in self.groups))
        if self.support_size < dense:
            what.append(f"support {self.support_size}")
        kind = ", ".join(what) if what else "dense"
        return f"unique {unique} of {dense} ({share}): {kind}"


def count(s: isl.Set) -> int:
    """The number of integer points of a bounded set."""
    return int(s.count_val().to_python())


def _positions(rank: int) -> tuple[str, ...]:
    return tuple(f"p{n + 1}" for n in range(rank))


def _box_text(names: Iterable[str], shape: Iterable[int]) -> str:
    return " and ".join(f"1 <= {v} <= {n}" for v, n in zip(names, shape)) or "true"


def _index_text(i: Index, rename: Mapping[str, str]) -> str:
    terms, offset = as_terms(i)
    parts = [f"{c}*{rename[v]}" for v, c in terms]
    return " + ".join(parts + [str(offset)]) if parts else str(offset)


def box(shape: tuple[int, ...]) -> isl.Set:
    names = _positions(len(shape))
    return isl.Set(f"{{ [{', '.join(names)}] : {_box_text(names, shape)} }}")


def declared(name: str, shape: tuple[int, ...], structure: Structure | None) -> TensorStructure:
    """A declaration's structure: dense (the box), or its annotation's."""
    full = box(shape)
    if structure is None:
        return TensorStructure(name, shape, full)
    if structure.symmetric:
        return TensorStructure(name, shape, full, (tuple(range(len(shape))),))
    names = position_names(len(shape))
    rename = {v: p for v, p in zip(names, _positions(len(shape)))}
    pieces = []
    for conjunction in structure.unique:
        text = " and ".join(f"{_index_text(c.left, rename)} {'=' if c.op == '=' else c.op} "
                            f"{_index_text(c.right, rename)}" for c in conjunction)
        pieces.append(f"({text or 'true'})")
    if not pieces:
        return TensorStructure(name, shape, full.subtract(full))
    unique = isl.Set(f"{{ [{', '.join(_positions(len(shape)))}] : {' or '.join(pieces)} }}")
    return TensorStructure(name, shape, unique.intersect(full))


# ------------------------------------------------------------------ one statement
class _Space:
    """The variables of one statement (its σ and every binder), named v0, v1, ... in isl."""

    def __init__(self, stmt: ir.Statement):
        names: dict[str, int] = {}
        for v, _ in stmt.index:
            names.setdefault(v, 0)
        for node in ir.nodes(stmt.body):
            for v, _ in ir.binders(node):
                names.setdefault(v, 0)
        self.names = tuple(names)
        self.isl = {v: f"v{n}" for n, v in enumerate(self.names)}
        self.tuple = "[" + ", ".join(self.isl[v] for v in self.names) + "]"

    def universe(self) -> isl.Set:
        return isl.Set(f"{{ {self.tuple} }}")

    def where(self, condition: str) -> isl.Set:
        return isl.Set(f"{{ {self.tuple} : {condition} }}")

    def dim(self, v: str) -> int:
        return self.names.index(v)


def _support(e: ir.Expr, space: _Space, tensors: Mapping[str, TensorStructure], annihilating: bool = True) -> isl.Set:
    """Where ``e`` may be non-zero, over the statement's variables (Fig. 9).

    ``annihilating=False`` claims zeros only where a declaration promises them: a
    literal 0 or a δ off its diagonal times ⊥ is ⊥ in the dense meaning, so code that
    skips such points (compressed loops) must not rely on them."""
    if isinstance(e, ir.Tensor):
        known = tensors.get(e.name)
        if known is None or not e.indices:
            return space.universe()
        positions = _positions(len(e.indices))
        links = " and ".join(f"{p} = {_index_text(i, space.isl)}" for p, i in zip(positions, e.indices))
        access = isl.Map(f"{{ {space.tuple} -> [{', '.join(positions)}] : {links} }}")
        return access.intersect_range(known.support).domain()
    if isinstance(e, ir.Const):
        return space.universe() if e.value != 0 or not annihilating else space.universe().subtract(space.universe())
    if isinstance(e, ir.Delta) and annihilating:
        return space.where(f"{_index_text(e.first, space.isl)} = {_index_text(e.second, space.isl)}")
    if isinstance(e, ir.Neg):
        return _support(e.arg, space, tensors, annihilating)
    if isinstance(e, ir.Apply):
        inner = _support(e.arg, space, tensors, annihilating)
        return inner if FUNCTIONS[e.fn].zero_preserving else space.universe()
    if isinstance(e, ir.BinOp):
        left = _support(e.left, space, tensors, annihilating)
        if e.op == "*":
            return left.intersect(_support(e.right, space, tensors, annihilating))  # product: intersection
        if e.op == "/":
            return left  # controlled division: 0 / b = 0
        return left.union(_support(e.right, space, tensors, annihilating)).coalesce()  # sum: union
    if isinstance(e, ir.Sum):
        body = _support(e.body, space, tensors, annihilating)
        limits = " and ".join(f"1 <= {space.isl[v]} <= {n}" for v, n in e.index)
        body = body.intersect(space.where(limits))
        for v, _ in e.index:  # projection: there is a k ...
            body = body.eliminate(isl.dim_type.set, space.dim(v), 1)
        return body.coalesce()
    return space.universe()  # max, min, prod, ε, stacks: no claim


# ------------------------------------------------------------------ symmetry
def canonical(e: ir.Expr, tensors: Mapping[str, TensorStructure]) -> str:
    """A text of ``e`` equal for expressions equal up to the order of the operands of
    ``*`` and ``+`` and the order of the indices a symmetric tensor is read at."""
    if isinstance(e, ir.Tensor):
        indices = list(e.indices)
        known = tensors.get(e.name)
        if known is not None:
            for group in known.groups:
                ordered = sorted((str(indices[d]) for d in group))
                texts = {str(indices[d]): indices[d] for d in group}
                for d, t in zip(group, ordered):
                    indices[d] = texts[t]
        return expr_to_text(ir.Tensor(e.name, tuple(indices)))
    if isinstance(e, ir.BinOp) and e.op in ("*", "+"):
        operands = _flatten(e, e.op)
        return "(" + f" {e.op} ".join(sorted(canonical(x, tensors) for x in operands)) + ")"
    kids = ir.children(e)
    if not kids:
        return expr_to_text(e)
    inner = ", ".join(canonical(k, tensors) for k in kids)
    head = expr_to_text(ir.replace_children(e, tuple(ir.Const(0.0) for _ in kids)))
    return f"{head}<{inner}>"


def _flatten(e: ir.Expr, op: str) -> list[ir.Expr]:
    out: list[ir.Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.BinOp) and x.op == op:
            stack.extend((x.right, x.left))
        else:
            out.append(x)
    return out


def symmetric_groups(stmt: ir.Statement, tensors: Mapping[str, TensorStructure],
                     shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The groups of the target's dimensions the statement is symmetric in: the
    connected components of "swapping these two indices gives the same expression"
    (transpositions generate the symmetric group of each component)."""
    variables = [v for v, _ in stmt.index]
    if len(set(variables)) != len(variables):
        return ()
    here = canonical(stmt.body, tensors)
    parent = list(range(len(variables)))

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    for a in range(len(variables)):
        for b in range(a + 1, len(variables)):
            if shape[a] != shape[b] or find(a) == find(b):
                continue
            swapped = substitute(stmt.body, {variables[a]: variables[b], variables[b]: variables[a]})
            if canonical(swapped, tensors) == here:
                parent[find(b)] = find(a)
    groups: dict[int, list[int]] = {}
    for d in range(len(variables)):
        groups.setdefault(find(d), []).append(d)
    return tuple(tuple(g) for g in groups.values() if len(g) > 1)


def statement_structure(stmt: ir.Statement, shape: tuple[int, ...], tensors: Mapping[str, TensorStructure],
                        annihilating: bool = True) -> TensorStructure:
    """The structure of ``stmt``'s target as the statement computes it (``annihilating``:
    see :func:`_support`)."""
    space = _Space(stmt)
    support = _support(stmt.body, space, tensors, annihilating)
    limits = " and ".join(f"1 <= {space.isl[v]} <= {n}" for v, n in stmt.index)
    support = support.intersect(space.where(limits or "true"))
    keep = [space.dim(v) for v, _ in stmt.index]
    for d in reversed(range(len(space.names))):  # only the target's indices remain
        if d not in keep:
            support = support.project_out(isl.dim_type.set, d, 1)
    if not stmt.index:  # a scalar: every dimension is projected out
        return TensorStructure(stmt.target, shape, support.coalesce())
    # the target's positions p1 .. pk are σ's variables, in σ's order
    names = _positions(len(shape))
    order = [v for v in space.names if v in dict(stmt.index)]
    links = " and ".join(f"{names[n]} = {space.isl[v]}" for n, (v, _) in enumerate(stmt.index))
    rename = isl.Map(f"{{ [{', '.join(space.isl[v] for v in order)}] -> [{', '.join(names)}] : {links} }}")
    positions = rename.intersect_domain(support).range()
    return TensorStructure(stmt.target, shape, positions.coalesce(), symmetric_groups(stmt, tensors, shape))


def infer(program: ir.Program) -> dict[str, TensorStructure]:
    """Every tensor's structure: declarations first (inputs dense unless annotated),
    then each statement's target as computed, in order (a later statement sees it)."""
    shapes = program.shapes
    tensors: dict[str, TensorStructure] = {}
    for d in program.decls:
        if all(isinstance(n, int) for n in d.shape):
            tensors[d.name] = declared(d.name, tuple(d.shape), d.structure)
    for stmt in program.statements:
        shape = tuple(shapes[stmt.target])
        tensors[stmt.target] = statement_structure(stmt, shape, tensors)
    return tensors


def structure_lines(program: ir.Program) -> list[str]:
    """``tensorlang analyze``'s structure section: each tensor's unique set against its
    dense size."""
    found = {n: s for n, s in infer(program).items() if s.shape}
    width = max((len(n) for n in found), default=0)
    shapes = {n: "[" + " ".join(map(str, s.shape)) + "]" for n, s in found.items()}
    shape_width = max((len(t) for t in shapes.values()), default=0)
    return [f"  {name:<{width}} : {shapes[name]:<{shape_width}}   {s.describe()}" for name, s in found.items()]
