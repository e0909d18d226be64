"""Hoist (001 §5): give a contraction written inside a nonlinear expression a statement
of its own, so that the targets' product kernels (BLAS from C) compute it:
``e[b,j] = exp(sum(k) x[b,k] * w[k,j])`` becomes ``tmp1[b,j] = sum(k) x[b,k] * w[k,j]``
and ``e[b,j] = exp(tmp1[b,j])``.  Where it applies and where not: docs/optimizer.md,
"Hoisting a contraction out of a nonlinear expression".
"""

from __future__ import annotations

import math

from ..ein import ir
from ..ein.forms import monomial
from ..ein.names import TempNames, free_indices, rename_indices
from ..limits import memory_budget_bytes
from .cse import canonical
from .program import lift_into_temporaries


def hoist(program: ir.Program) -> ir.Program:
    if not any(_hoistable_somewhere(s.body) for s in program.statements):
        return program  # (the common case: no walk that rebuilds the program)
    return lift_into_temporaries(program, _lift)


def _keeps_linear(node: ir.Expr) -> bool:
    """Whether a contraction under ``node`` stays a contraction: products, negations, Σ."""
    return isinstance(node, (ir.Neg, ir.Sum)) or (isinstance(node, ir.BinOp) and node.op == "*")


def _is_contraction(node: ir.Expr) -> bool:
    return isinstance(node, ir.Sum) and sum(isinstance(f, ir.Tensor) for f in monomial(node).factors) >= 2


def _reuses_operands(node: ir.Expr, free: set[str]) -> bool:
    """Whether some free index (of extent above 1) is missing from some tensor of the
    product: then entries share operands, and the contraction is a matrix product."""
    return any(free - free_indices(f) for f in monomial(node).factors if isinstance(f, ir.Tensor))


def _hoistable_somewhere(e: ir.Expr) -> bool:
    """A cheap first look: a Σ below a node that is not a product, negation or Σ."""
    stack = [(e, False)]
    while stack:
        node, under = stack.pop()
        if under and isinstance(node, ir.Sum):
            return True
        below = under or not _keeps_linear(node)
        stack.extend((child, below) for child in ir.children(node))
    return False


def _lift(e: ir.Expr, scope: dict[str, int], names: TempNames, lifted: list[ir.Statement]) -> ir.Expr:
    """``e`` with every contraction under a nonlinear node replaced by a temporary
    (inner ones first, so a temporary is assigned before the one that reads it)."""
    budget = memory_budget_bytes() // 8  # float64 entries
    made: dict[tuple, str] = {}  # a contraction's canonical form -> its temporary

    def enter(node: ir.Expr, ctx):
        outer, under, _ = ctx
        if under and _is_contraction(node):
            free = free_indices(node)
            index = tuple((v, n) for v, n in outer.items() if v in free)
            points = math.prod(n for _, n in index)
            if 1 < points <= budget and _reuses_operands(node, {v for v, n in index if n > 1}):
                return node, (dict(index) | dict(ir.binders(node)), False, index)
        return node, (outer | dict(ir.binders(node)), under or not _keeps_linear(node), None)

    def leave(node: ir.Expr, ctx, inner) -> ir.Expr:
        index = inner[2]
        if index is None:
            return node
        key = canonical(ir.Statement("", index, node))
        if key not in made:
            made[key] = names()
            lifted.append(ir.Statement(made[key], index, node))
        return ir.Tensor(made[key], tuple(v for v, _ in index))

    body = ir.transform(e, (scope, False, None), enter, leave)
    return _share_summand(body, scope, names, lifted) if made else body


def _share_summand(e: ir.Expr, scope: dict[str, int], names: TempNames, lifted: list[ir.Statement]) -> ir.Expr:
    """``e`` with the first summand ``E`` of a ``sum(l) E`` that ``e`` also reads outside
    the sum at an index ``j`` of the statement (``E`` with ``l`` renamed ``j``) given a
    temporary over its free indices; ``E`` elementwise (a function or quotient, no sum).
    Only at the statement's top level: inside another sum its indices would be bound."""
    for node in ir.nodes(e):
        if not (isinstance(node, ir.Sum) and len(node.index) == 1):
            continue
        (l, n), summand = node.index[0], node.body
        inner = list(ir.nodes(summand))
        if not any(isinstance(x, ir.Apply) or (isinstance(x, ir.BinOp) and x.op == "/") for x in inner) \
                or any(ir.binders(x) or isinstance(x, (ir.Stack, ir.Concat)) for x in inner):
            continue
        free = free_indices(summand)
        if l not in free or not free - {l} <= scope.keys():
            continue
        for j, extent in scope.items():
            if extent != n or j in free:
                continue
            outside = rename_indices(summand, {l: j}, lambda name, outer: name)
            if not any(x == outside for x in ir.nodes(e)):
                continue
            index = tuple((v, scope[v]) for v in scope if v in free - {l} or v == j)
            target = names()
            lifted.append(ir.Statement(target, index, outside))
            read = ir.Tensor(target, tuple(v for v, _ in index))
            at_l = ir.Tensor(target, tuple(l if v == j else v for v, _ in index))
            return ir.bottom_up(e, _swapper({node: ir.Sum(node.index, at_l), outside: read}))
    return e


def _swapper(swap: dict[ir.Expr, ir.Expr]):
    """A ``bottom_up`` function replacing each node that is a key of ``swap``."""
    return lambda x: swap.get(x, x)
