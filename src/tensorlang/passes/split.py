"""Split (004 §5.7.1; docs/optimizer.md): a costly subexpression (a sum, reduction, function,
division or stack; not ``a[i] + b[i]``, whose store and load cost more) that the loops around it
would recompute gets a temporary over its own free indices: ``exp(a[i]) * B[i,j]`` reads ``tmp1[i]``."""

from __future__ import annotations

import math

from ..ein import ir
from ..ein.names import TempNames, free_indices
from .program import lift_into_temporaries


def split(program: ir.Program) -> ir.Program:
    return lift_into_temporaries(program, _lift)


def _costly_nodes(e: ir.Expr) -> set[int]:
    """The ids of the subexpressions of ``e`` with real work somewhere inside them (a sum,
    a reduction, a function, a division or a stack), found in one pass."""
    costly: set[int] = set()
    for node in reversed(list(ir.nodes(e))):  # children before parents
        if isinstance(node, (ir.Sum, ir.Reduce, ir.Apply, ir.Stack)) or (isinstance(node, ir.BinOp) and node.op == "/") \
                or any(id(c) in costly for c in ir.children(node)):
            costly.add(id(node))
    return costly


def _lift(e: ir.Expr, scope: dict[str, int], names: TempNames, lifted: list[ir.Statement]) -> ir.Expr:
    """``e`` with every maximal recomputed costly subexpression replaced by a temporary
    (iteratively: ``e`` may be as deep as the parser accepts)."""
    costly = _costly_nodes(e)

    def enter(node: ir.Expr, ctx):
        outer, _ = ctx
        if not ir.children(node):
            return node, (outer, None)
        if id(node) in costly:
            free = free_indices(node)
            if math.prod(outer[v] for v in free) < math.prod(outer.values()):
                order = [v for v in outer if v in free]  # the enclosing loops' order: contiguous writes
                index = tuple((v, outer[v]) for v in order)
                return node, (dict(index) | dict(ir.binders(node)), index)
        return node, (outer | dict(ir.binders(node)), None)

    def leave(node: ir.Expr, ctx, inner) -> ir.Expr:
        _, index = inner
        if index is None:
            return node
        target = names()
        lifted.append(ir.Statement(target, index, node))
        return ir.Tensor(target, tuple(v for v, _ in index))

    return ir.transform(e, (scope, None), enter, leave)


def lift_concat_items(program: ir.Program) -> ir.Program:
    """``program`` with every item of a direct sum (EIN ``Concat``) that holds a sum or
    another reduction lifted into a temporary over the item's free indices.  A loop nest
    evaluates only the chosen item at each point (so an item reads only inside its
    piece); an item with loops of its own would run them at every point, reading out of
    its piece.  The schedule runs it before planning loop nests; the program is returned
    as it is when nothing is lifted."""
    if not any(isinstance(node, ir.Concat) and any(_reduces(item) for item in node.items)
               for stmt in program.statements for node in ir.nodes(stmt.body)):
        return program
    return lift_into_temporaries(program, _lift_items)


def _reduces(e: ir.Expr) -> bool:
    return any(isinstance(node, (ir.Sum, ir.Reduce)) for node in ir.nodes(e))


def _lift_items(e: ir.Expr, scope: dict[str, int], names: TempNames, lifted: list[ir.Statement]) -> ir.Expr:
    def enter(node: ir.Expr, outer: dict[str, int]):
        return node, outer | dict(ir.binders(node))

    def leave(node: ir.Expr, outer: dict[str, int], inner: dict[str, int]) -> ir.Expr:
        if not isinstance(node, ir.Concat):
            return node
        items = []
        for item in node.items:  # children first: items of inner concats are lifted already
            if _reduces(item):
                free = free_indices(item)
                index = tuple((v, n) for v, n in inner.items() if v in free)
                target = names()
                lifted.append(ir.Statement(target, index, item))
                item = ir.Tensor(target, tuple(v for v, _ in index))
            items.append(item)
        return ir.Concat(node.index, node.parts, tuple(items))

    return ir.transform(e, scope, enter, leave)
