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

from typing import Mapping

import islpy as isl

from ..analysis.structure import TensorStructure, declared as declared_structure, statement_structure
from ..ein import ir as ein
from ..ein.structure import Structure
from ..schedule.plan import BufferPlan
from .ir import Copy, Load, Loop, Nest, Node, Store

#: The largest symmetric group compressed (4! = 24 stores per unique entry rebuild it).
MAX_GROUP = 4


def declared_structures(buffers: BufferPlan, declared: Mapping[str, Structure]) -> dict[str, TensorStructure]:
    """What the declarations promise, as the analysis' tensor structures."""
    shapes = dict(zip(buffers.names, buffers.shapes))
    return {name: declared_structure(name, tuple(shapes[name]), s) for name, s in declared.items()
            if s is not None and name in shapes}


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


def compress(nest: Nest, groups: tuple[tuple[int, ...], ...], target_slot: int) -> Nest:
    """``nest`` computing only the unique set of ``groups``, then reconstructing."""
    variables = [v for v, _ in nest.statement.index]
    if not groups or not _chain(nest.body, variables):
        return nest
    starts = {variables[g[n + 1]]: variables[g[n]] for g in groups for n in range(len(g) - 1)}
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
