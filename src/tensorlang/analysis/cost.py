"""The cost model: flops and bytes per statement (``tensorlang analyze`` prints them).

The cost model is the loop nest the C back end runs for a statement: every point of the
target's index map evaluates the body once; inside, a Σ or reduction evaluates its body
once per point of its own index map (a direct sum selects, it loops over nothing), and
each arithmetic operation, function or accumulation counts one flop.  Bytes are what a
statement must move at least: every variable it reads, once, and its target, once.  The
floor of a statement on a machine is max(flops / peak, bytes / bandwidth) (DESIGN.md,
performance model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from ..ein import ir

#: What an extent counts as: itself, or, for costs at every size, a polynomial in the
#: symbolic sizes (:mod:`.polynomial`; ``tensorlang analyze`` without ``--param``).
Size = Callable[[int], Any]


def _itself(n: int) -> int:
    return n


@dataclass(frozen=True)
class Cost:
    flops: Any  # int, or a Poly where extents are symbolic
    bytes: Any


#: A sum stays a loop nest over its summand's support where that support has at most
#: 1/SPARSE_GAIN of the dense iteration space's points: BLAS does the dense work faster
#: per point, but not this many times faster (measured: the product with one row of a
#: 96x96 matrix, docs/structure.md "Supports instead of BLAS").  The C schedule decides
#: by it (``schedule.plan``), and contraction ordering costs such a sum at its support.
SPARSE_GAIN = 8

#: The node kinds that cost one flop where they are evaluated (an operation or a function).
_OPERATIONS = (ir.Neg, ir.Apply, ir.BinOp)


def body_flops(e: ir.Expr, size: Size = _itself) -> int:
    """Flops to evaluate ``e`` at one point: one per operation or function, and a Σ's or
    reduction's body (plus its accumulation) once per point of its index map."""
    if size is _itself:  # numeric extents: kept on each node (ir.cached_bottom_up)
        return ir.cached_bottom_up(e, "_flops", _node_flops)
    flops: dict[int, int] = {}
    for node in reversed(list(ir.nodes(e))):  # children before parents, no recursion
        flops[id(node)] = _node_flops(node, [flops[id(c)] for c in ir.children(node)], size)
    return flops[id(e)]


def _node_flops(node: ir.Expr, kids: list, size: Size = _itself):
    """A direct sum (``Concat``) binds its items' variables but loops over none: a point
    reads one item at one position, a select and no arithmetic, so a copy costs no flops
    (each item's own work counts once, as a stack's items do)."""
    if isinstance(node, (ir.Sum, ir.Reduce)):
        return math.prod(size(n) for _, n in node.index) * (sum(kids) + 1)
    return sum(kids) + (1 if isinstance(node, _OPERATIONS) else 0)


def statement_cost(stmt: ir.Statement, shapes: dict[str, tuple[int, ...]], itemsize: int = 8,
                   size: Size = _itself) -> Cost:
    points = math.prod(size(n) for _, n in stmt.index)
    moved = sum(math.prod(size(n) for n in shapes[name]) for name in stmt.reads) + points
    return Cost(points * body_flops(stmt.body, size), moved * itemsize)


def program_cost(program: ir.Program, itemsize: int = 8, size: Size = _itself) -> Cost:
    shapes = program.shapes
    costs = [statement_cost(s, shapes, itemsize, size) for s in program.statements]
    return Cost(sum(c.flops for c in costs), sum(c.bytes for c in costs))
