"""Hoist (001 §5): give a contraction written inside a nonlinear expression a statement
of its own, so that the targets' product kernels (BLAS from C) compute it.

``e[b,j] = exp(sum(k) x[b,k] * w[k,j])`` runs, as written, as a dot product per entry of
``e`` (a strided walk down a column of ``w`` for each one).  Hoist rewrites it to
``tmp1[b,j] = sum(k) x[b,k] * w[k,j]`` followed by ``e[b,j] = exp(tmp1[b,j])``: the same
arithmetic in the same order, the first statement one matrix product.  This is the
two-statement program fusion keeps apart (docs/optimizer.md, "A contraction is fused
only under products, negations and sums"), so one statement and two compile alike.

A contraction is a sum over a product of two or more tensor accesses
(:func:`fuse.contracts`); it is hoisted where it stands under anything but products,
negations and sums: a function, a quotient (either side), an addition, a comparison, a
reduction other than Σ.  It becomes a temporary over its free indices, in the order of
the loops around it.  Not hoisted:

* a contraction with a single value (a dot product of vectors, ``exp(sum(k) a[k] *
  b[k])``, or free indices of extent 1): its kernel is the same loop either way, and a
  temporary would only add a store and a load;
* a batch of dot products, every free index in every tensor of the product
  (``sqrt(sum(i) g[p,i] * g[p,i])``, the norm of each row): no entry reuses another's
  operands, so there is no matrix product to call, only the same loop and a temporary;
* a temporary that would not fit the memory budget (limits.py): the statement then runs
  as written, as it did before.
"""

from __future__ import annotations

import math

from ..ein import ir
from ..ein.forms import monomial
from ..ein.names import TempNames, free_indices
from ..limits import memory_budget_bytes
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
        target = names()
        lifted.append(ir.Statement(target, index, node))
        return ir.Tensor(target, tuple(v for v, _ in index))

    return ir.transform(e, (scope, False, None), enter, leave)
