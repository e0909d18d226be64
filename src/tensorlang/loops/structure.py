"""Compressed loops (003 §5.5): compute a symmetric result on its unique set only, then
reconstruct the rest from the redundancy map.

A statement whose target structure inference (:mod:`tensorlang.analysis.structure`)
finds symmetric in a group of its indices — ``C[j,k] = sum(i) X[i,j]*X[i,k]``,
``M3[i,j,k] = sum(r) F[r,i]*F[r,j]*F[r,k]`` — has equal entries at every permutation
of those indices.  Its nest is rewritten so that:

1. **compute**: within each group the loops are *triangular*, each starting at the
   enclosing one's value (``for j: for k in j..n-1``): exactly the unique set
   i1 <= i2 <= ..., no dense loop with a test;
2. **reconstruct**: a second nest over the same unique set copies each computed entry
   to every permutation of its position within the groups (``T[k,j] = T[j,k]``):
   every redundant entry is written once from the sorted one it copies (ties write an
   entry onto itself), so the result is the dense one.

The result equals the dense computation up to the order of a product's factors
(``X[i,j]*X[i,k]`` against ``X[i,k]*X[i,j]``: exact for two factors, rounding for
more), which every target already allows.  Groups of more than
:data:`MAX_GROUP` indices are left dense (their reconstruction would store k! copies).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from typing import Any, Mapping

import islpy as isl

from ..analysis.structure import TensorStructure, declared as declared_structure, statement_structure
from ..ein import ir as ein
from ..ein.structure import Structure
from ..schedule.plan import BufferPlan
from .ir import Const, Copy, Load, Loop, Nest, Node, Store

#: The largest symmetric group compressed (4! = 24 stores per unique entry rebuild it).
MAX_GROUP = 4


def declared_structures(buffers: BufferPlan, declared: Mapping[str, Structure]) -> dict[str, TensorStructure]:
    """What the declarations promise, as the analysis' tensor structures."""
    shapes = dict(zip(buffers.names, buffers.shapes))
    return {name: declared_structure(name, tuple(shapes[name]), s) for name, s in declared.items()
            if s is not None and name in shapes}


def target_structure(stmt: ein.Statement, known: dict[str, TensorStructure]) -> TensorStructure | None:
    """The structure of ``stmt``'s target (recorded in ``known`` for the statements
    after it), or None where the analysis cannot read the statement."""
    shape = tuple(n for _, n in stmt.index)
    try:
        found = statement_structure(stmt, shape, known, annihilating=False)
    except (isl.Error, KeyError, ValueError, TypeError):  # an expression isl cannot take: no claim, dense loops
        known.pop(stmt.target, None)
        return None
    known[stmt.target] = found
    return found


def symmetric_groups(stmt: ein.Statement, buffers: BufferPlan,
                     known: dict[str, TensorStructure]) -> tuple[tuple[int, ...], ...]:
    """The groups of ``stmt``'s target dimensions it is symmetric in (inputs are taken
    as dense: the schedule does not carry their annotations), recording the target's
    structure in ``known`` for the statements after it."""
    shape = tuple(n for _, n in stmt.index)
    try:
        found = statement_structure(stmt, shape, known)
    except (isl.Error, KeyError, ValueError, TypeError):  # an expression isl cannot take: no claim, dense loops
        known.pop(stmt.target, None)
        return ()
    known[stmt.target] = found
    return tuple(g for g in found.groups if len(g) <= MAX_GROUP)


def _chain(body: tuple[Node, ...], variables: list[str]) -> bool:
    """Whether ``body`` starts with the loops over ``variables``, outermost first."""
    nodes = body
    for var in variables:
        if not nodes or not isinstance(nodes[0], Loop) or nodes[0].var != var:
            return False
        nodes = nodes[0].body
    return True


def _triangular(node: Node, starts: dict[str, str]) -> Node:
    if not isinstance(node, Loop):
        return node
    body = tuple(_triangular(child, starts) for child in node.body)
    return replace(node, body=body, start=starts.get(node.var, node.start))


def _enclosed(nodes, starts: Mapping[str, str], outer: frozenset[str] = frozenset()) -> bool:
    """Whether every loop that is to start at another loop's variable runs inside it."""
    for node in nodes:
        if isinstance(node, Loop):
            if node.var in starts and starts[node.var] not in outer:
                return False
            if not _enclosed(node.body, starts, outer | {node.var}):
                return False
    return True


def compress(nest: Nest, groups: tuple[tuple[int, ...], ...], target_slot: int) -> Nest | None:
    """``nest`` computing only the unique set of ``groups``, then reconstructing; None
    where a loop of the group does not run inside the loop it would start at.  The
    nest may be the dense one or the interchanged one (:mod:`.interchange`: the output
    loops but the last outside, the last innermost), whose row loops then start at
    the enclosing output loop as well."""
    variables = [v for v, _ in nest.statement.index]
    if not groups:
        return nest
    starts = {variables[g[n + 1]]: variables[g[n]] for g in groups for n in range(len(g) - 1)}
    if not _enclosed(nest.body, starts):
        return None
    compute = tuple(_triangular(node, starts) for node in nest.body)
    here = tuple(variables)
    stores: list[Node] = []
    seen = {here}
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        position = list(here)
        for group, perm in zip(groups, perms):
            for d, e in zip(group, perm):
                position[d] = here[e]
        permuted = tuple(position)
        if permuted not in seen:
            seen.add(permuted)
            stores.append(Store(target_slot, permuted, Load(target_slot, here)))
    rebuild: tuple[Node, ...] = tuple(stores)
    for var, extent in reversed(nest.statement.index):
        rebuild = (Loop(var, extent, rebuild, start=starts.get(var, 0)),)
    body = compute + rebuild
    assert not any(isinstance(n, Copy) for n in rebuild)
    return replace(nest, body=body)


# ------------------------------------------------------------------ supports
def _plan(support: isl.Set, shape: tuple[int, ...]):
    """How the target's loops cover ``support``: per dimension, None (its whole
    range), ``("fixed", p)`` (0-based position), ``("same", d, offset)`` (equal to
    dimension d's position plus offset, d outer) or ``("from", d)`` (starts at dimension
    d's position, d outer); None where the support is not of that form (a union, or a
    bound a loop of this IR cannot state)."""
    support = support.coalesce()
    pieces = support.get_basic_sets()
    if len(pieces) != 1 or pieces[0].dim(isl.dim_type.div):
        return None
    plan: list = [None] * len(shape)
    for c in pieces[0].get_constraints():
        coeffs = [int(c.get_coefficient_val(isl.dim_type.set, d).to_python()) for d in range(len(shape))]
        const = int(c.get_constant_val().to_python())
        used = [d for d, k in enumerate(coeffs) if k]
        if c.is_equality():
            if len(used) == 1 and abs(coeffs[used[0]]) == 1:
                d = used[0]
                position = -const * coeffs[d]  # k*p + const = 0, k = ±1
                if plan[d] is not None or not 1 <= position <= shape[d]:
                    return None
                plan[d] = ("fixed", position - 1)
                continue
            if len(used) == 2 and {coeffs[used[0]], coeffs[used[1]]} == {1, -1}:
                a, b = used  # a outer: p_b = p_a + offset
                offset = -const if coeffs[b] == 1 else const  # ±(p_b - p_a) + const = 0
                if plan[b] is not None:
                    return None
                plan[b] = ("same", a, offset)
                continue
            return None
        if len(used) == 1:
            d, k = used[0], coeffs[used[0]]
            if (k == 1 and const == -1) or (k == -1 and const == shape[d]):
                continue  # the box
            return None
        if len(used) == 2 and const == 0 and sorted((coeffs[used[0]], coeffs[used[1]])) == [-1, 1]:
            a, b = used
            if coeffs[b] == 1 and coeffs[a] == -1 and plan[b] is None:  # p_b >= p_a, a outer
                plan[b] = ("from", a)
                continue
            return None
        return None
    return plan


def _map_index(i, mapping: Mapping[str, object]):
    """A loop-IR index with loop variables replaced: ``mapping`` gives a variable a
    0-based position (int), another variable (str) or (variable, offset)."""
    from ..ein.index import Affine, affine, as_terms
    if isinstance(i, str):
        target = mapping.get(i, i)
        if isinstance(target, tuple):
            var, offset = target
            return affine([(var, 1)], offset + 1) if offset else var
        return target
    if isinstance(i, Affine):  # 1-based over 1-based variables
        terms, offset = as_terms(i)
        new_terms = []
        for v, k in terms:
            target = mapping.get(v, v)
            if isinstance(target, int):
                offset += k * (target + 1)
            elif isinstance(target, tuple):
                new_terms.append((target[0], k))
                offset += k * target[1]
            else:
                new_terms.append((target, k))
        result = affine(new_terms, offset)
        return result - 1 if isinstance(result, int) else result
    return i


def _substitute(node: Any, mapping: Mapping[str, object]) -> Any:
    """``node`` (any loop-IR node or scalar) with its indices mapped."""
    from dataclasses import fields, is_dataclass
    if not is_dataclass(node) or isinstance(node, type):
        return node
    changes: dict[str, Any] = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if f.name in ("indices",):
            changes[f.name] = tuple(_map_index(i, mapping) for i in value)
        elif f.name in ("first", "second", "var") and not isinstance(node, Loop):
            changes[f.name] = _map_index(value, mapping)
        elif isinstance(value, tuple) and value and is_dataclass(value[0]):
            changes[f.name] = tuple(_substitute(v, mapping) for v in value)
        elif is_dataclass(value):
            changes[f.name] = _substitute(value, mapping)
    if isinstance(node, Loop) and isinstance(node.start, str) and node.start in mapping:
        target = mapping[node.start]
        # a start at a fixed or renamed loop follows it; at an offset one, from 0 (a
        # superset of the points: the extra ones are promised zeros)
        changes["start"] = target if isinstance(target, (int, str)) else 0
    return replace(node, **changes)


def restricts(found: TensorStructure) -> bool:
    """Whether computing only ``found``'s support saves at least a quarter of the
    target's entries (the zero fill costs a store per entry)."""
    return bool(found.shape) and 4 * found.support_size <= 3 * found.dense_size


def restrict(nest: Nest, support: isl.Set) -> Nest:
    """``nest`` with its target's loops over ``support`` only: the target is filled with
    zeros first, then the statement runs where the support says it may be non-zero
    (fixed positions and equal indices drop a loop, an ordering starts one at another)."""
    variables = [v for v, _ in nest.statement.index]
    shape = tuple(n for _, n in nest.statement.index)
    if not variables or not _chain(nest.body, variables):
        return nest
    plan = _plan(support, shape)
    if plan is None or all(p is None for p in plan):
        return nest
    # the chain of target loops and what is inside the innermost
    loops_: list[Loop] = []
    nodes = nest.body
    for _ in variables:
        head = nodes[0]
        assert isinstance(head, Loop)  # _chain checked it
        loops_.append(head)
        nodes = head.body
    inner, rest = nodes, nest.body[1:]
    store_slot = next((n.slot for n in inner if isinstance(n, Store)), None)
    if store_slot is None:
        return nest
    mapping: dict[str, object] = {}
    for d, p in enumerate(plan):
        if p is None:
            continue
        if p[0] == "fixed":
            mapping[variables[d]] = p[1]
        elif p[0] == "same":
            source = mapping.get(variables[p[1]], variables[p[1]])
            if not isinstance(source, str):
                return nest
            mapping[variables[d]] = (source, p[2]) if p[2] else source
    body: tuple[Node, ...] = tuple(_substitute(n, mapping) for n in inner)
    for d in reversed(range(len(variables))):
        if variables[d] in mapping:
            continue
        p = plan[d]
        start = variables[p[1]] if p is not None and p[0] == "from" and variables[p[1]] not in mapping else 0
        if p is not None and p[0] == "from" and variables[p[1]] in mapping:
            return nest
        body = (replace(loops_[d], body=body, start=start),)
    zero: tuple[Node, ...] = (Store(store_slot, tuple(variables), Const(0.0)),)
    for var, extent in reversed(nest.statement.index):
        zero = (Loop(var, extent, zero),)
    return replace(nest, body=zero + body + tuple(rest))


# ------------------------------------------------------------------ summation supports
def _sum_plans(stmt: ein.Statement, known: Mapping[str, TensorStructure]) -> dict[str, tuple]:
    """For each summed variable whose summand is zero outside a smaller range (by the
    promises of the tensors it reads): ``("fixed", p)``, ``("same", u, offset)``,
    ``("from", u)`` or ``("start", p)`` (0-based positions; u an enclosing variable).
    Constraints a loop cannot state are left out: the loops then visit a superset of
    the support, where the extra points add promised zeros."""
    from ..analysis.structure import _Space, _support
    space = _Space(stmt)
    binders = [v for node in ein.nodes(stmt.body) for v, _ in ein.binders(node)]
    if len(binders) != len(set(binders)) or set(binders) & {v for v, _ in stmt.index}:
        return {}
    extents = dict(stmt.index)
    for node in ein.nodes(stmt.body):
        extents.update(dict(ein.binders(node)))
    limits = space.where(" and ".join(f"1 <= {space.isl[v]} <= {n}" for v, n in extents.items()))
    plans: dict[str, tuple] = {}

    def visit(e: ein.Expr, enclosing: tuple[str, ...]) -> None:
        if isinstance(e, ein.Sum):
            hull = _support(e.body, space, known, annihilating=False).intersect(limits).simple_hull()
            outer = list(enclosing)
            for v, n in e.index:
                plan = _variable_plan(hull, space, v, outer, n)
                if plan is not None:
                    plans[v] = plan
                outer.append(v)
            visit(e.body, tuple(outer))
            return
        for kid in ein.children(e):
            visit(kid, enclosing)

    visit(stmt.body, tuple(v for v, _ in stmt.index))
    return plans


def _variable_plan(hull: isl.BasicSet, space, v: str, outer: list[str], extent: int) -> tuple | None:
    d = space.dim(v)
    allowed = {space.dim(u) for u in outer}
    best = None
    for c in hull.get_constraints():
        k = int(c.get_coefficient_val(isl.dim_type.set, d).to_python())
        if k == 0:
            continue
        others = {e: int(c.get_coefficient_val(isl.dim_type.set, e).to_python()) for e in range(len(space.names))
                  if e != d and int(c.get_coefficient_val(isl.dim_type.set, e).to_python())}
        const = int(c.get_constant_val().to_python())
        if not set(others) <= allowed or abs(k) != 1:
            continue
        if c.is_equality():
            if not others:
                position = -const * k
                if 1 <= position <= extent:
                    return ("fixed", position - 1)
            elif len(others) == 1:
                (e, ke), = others.items()
                if ke == -k:  # v = u + offset
                    return ("same", space.names[e], -const * k)
            continue
        if k == 1 and not others and const <= -2:  # v >= 1 - const, beyond the box's 1
            best = best or ("start", -const - 1)
        elif k == 1 and len(others) == 1 and const == 0:
            (e, ke), = others.items()
            if ke == -1:  # v >= u
                best = ("from", space.names[e])
    return best


def restrict_sums(nest: Nest, known: Mapping[str, TensorStructure]) -> Nest:
    """``nest`` with its summation loops over the support of their summands only
    (a fixed position or an equal index drops a loop, an ordering starts one later)."""
    sparse = [t for t in ein.tensors(nest.statement.body)
              if t.name in known and known[t.name].shape and known[t.name].support_size < known[t.name].dense_size]
    if not sparse:
        return nest  # only a promise restricts a sum (a box's own bounds are no reason to)
    plans = _sum_plans(nest.statement, known)
    if not plans:
        return nest
    mapping: dict[str, object] = {}

    def apply(nodes: tuple[Node, ...]) -> tuple[Node, ...]:
        out: list[Node] = []
        for node in nodes:
            if isinstance(node, Loop) and node.var in plans:
                plan = plans[node.var]
                if plan[0] in ("fixed", "same"):
                    if plan[0] == "fixed":
                        mapping[node.var] = plan[1]
                    else:
                        source = mapping.get(plan[1], plan[1])
                        if not isinstance(source, str):
                            out.append(replace(node, body=apply(node.body)))
                            continue
                        mapping[node.var] = (source, plan[2]) if plan[2] else source
                    out.extend(_substitute(n, mapping) for n in apply(node.body))
                    continue
                start: int | str = plan[1]
                if plan[0] == "from":
                    source = mapping.get(plan[1], plan[1])
                    start = source if isinstance(source, (str, int)) else 0
                out.append(replace(node, body=apply(node.body), start=start))
            elif isinstance(node, Loop):
                out.append(replace(node, body=apply(node.body)))
            else:
                out.append(node)
        return tuple(out)

    return replace(nest, body=apply(nest.body))
