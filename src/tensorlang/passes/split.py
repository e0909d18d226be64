"""Split (004 §5.7.1): lift a costly subexpression into its own statement when the loop
nest around it would recompute it.

In ``y[i,j] = exp(a[i]) * B[i,j]`` the loop over j evaluates ``exp(a[i])`` n_j times for
n_i distinct values.  Split gives it a statement of its own, ``tmp1[i] = exp(a[i])``,
placed just before, and the use reads ``tmp1[i]``: each value is computed once.  The same
holds for a sum inside a larger loop nest (``(Σ_k A[i,k] x[k]) * C[i,j]``): the sum
becomes a temporary over its own free indices, which is also how a nested contraction
is lifted out of an elementwise expression (001 §5).

Only subexpressions with real work are lifted (a sum, a reduction, a function, a
division or a stack); lifting ``a[i] + b[i]`` would trade n_j additions for a store and
a load.
"""

from __future__ import annotations

import math

from ..ein import ir
from ..ein.names import TempNames, free_indices
from .program import lift_into_temporaries


def split(program: ir.Program) -> ir.Program:
    return lift_into_temporaries(program, _lift)


def _costly(e: ir.Expr) -> bool:
    return any(isinstance(node, (ir.Sum, ir.Reduce, ir.Apply, ir.Stack)) or (isinstance(node, ir.BinOp) and node.op == "/")
               for node in ir.nodes(e))


def _lift(e: ir.Expr, scope: dict[str, int], names: TempNames, lifted: list[ir.Statement]) -> ir.Expr:
    """``e`` with every maximal recomputed costly subexpression replaced by a temporary."""
    if not ir.children(e):
        return e
    free = free_indices(e)
    if _costly(e) and math.prod(scope[v] for v in free) < math.prod(scope.values()):
        order = [v for v in scope if v in free]  # the enclosing loops' order: contiguous writes
        inner = _lift(e, {v: scope[v] for v in order}, names, lifted)
        target = names()
        index = tuple((v, scope[v]) for v in order)
        lifted.append(ir.Statement(target, index, inner))
        return ir.Tensor(target, tuple(order))
    inner_scope = scope | dict(ir.binders(e))
    return ir.map_children(e, lambda c: _lift(c, inner_scope, names, lifted))
