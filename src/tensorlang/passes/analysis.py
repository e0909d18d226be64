"""Flops and bytes per statement, before and after the optimizer (``tensorlang analyze``).

The cost model is the loop nest the C back end runs for a statement: every point of the
target's index map evaluates the body once; inside, a Σ or reduction evaluates its body
once per point of its own index map, and each arithmetic operation, function or
accumulation counts one flop.  Bytes are what a statement must move at least: every
variable it reads, once, and its target, once.  The floor of a statement on a machine is
max(flops / peak, bytes / bandwidth) (DESIGN.md, performance model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ein import ir
from ..ein.printer import statement_to_text


@dataclass(frozen=True)
class Cost:
    flops: int
    bytes: int


def body_flops(e: ir.Expr) -> int:
    """Flops to evaluate ``e`` at one point."""
    if isinstance(e, (ir.Tensor, ir.Const, ir.Delta, ir.Epsilon)):
        return 0
    if isinstance(e, (ir.Neg, ir.Apply)):
        return 1 + body_flops(e.arg)
    if isinstance(e, ir.BinOp):
        return 1 + body_flops(e.left) + body_flops(e.right)
    if isinstance(e, (ir.Sum, ir.Reduce)):
        return math.prod(n for _, n in e.index) * (body_flops(e.body) + 1)
    if isinstance(e, ir.Stack):
        return sum(body_flops(item) for item in e.items)
    raise TypeError(f"not an EIN expression: {e!r}")


def statement_cost(stmt: ir.Statement, shapes: dict[str, tuple[int, ...]], itemsize: int = 8) -> Cost:
    points = math.prod(n for _, n in stmt.index)
    moved = sum(math.prod(shapes[name]) for name in stmt.reads) + points
    return Cost(points * body_flops(stmt.body), moved * itemsize)


def in_place_verdict(stmt: ir.Statement) -> str:
    """Whether the statement may write its target while it runs, and why (002's
    compatible statements, as the loop back end decides it)."""
    from ..backends.loops import reads_only_its_own_point

    if stmt.target not in stmt.reads:
        return "in place (does not read its target)"
    if reads_only_its_own_point(stmt):
        return "in place (reads its target only at the point it writes)"
    return "copy (reads its target at other points)"


def program_cost(program: ir.Program, itemsize: int = 8) -> Cost:
    shapes = program.shapes
    costs = [statement_cost(s, shapes, itemsize) for s in program.statements]
    return Cost(sum(c.flops for c in costs), sum(c.bytes for c in costs))


def _amount(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.0f}"


def statement_table(program: ir.Program, itemsize: int) -> list[str]:
    shapes = program.shapes
    temps = {d.name for d in program.decls if d.qual == ir.TEMP}
    lines = []
    for n, stmt in enumerate(program.statements, 1):
        cost = statement_cost(stmt, shapes, itemsize)
        shape = "[" + " ".join(str(x) for x in shapes[stmt.target]) + "]"
        kind = "temporary " if stmt.target in temps else ""
        lines.append(f"  {n:>3}. {statement_to_text(stmt)}")
        lines.append(f"       {kind}{stmt.target} : {shape}   flops {_amount(cost.flops)}   "
                     f"bytes {_amount(cost.bytes)}   {in_place_verdict(stmt)}")
    total = program_cost(program, itemsize)
    lines.append(f"  total: {len(program.statements)} statements, flops {_amount(total.flops)}, "
                 f"bytes {_amount(total.bytes)}, {program.size} IR nodes")
    return lines


def report(before: ir.Program, optimized, itemsize: int = 8) -> str:
    """The text ``tensorlang analyze`` prints: both programs statement by statement, the
    totals, and the IR size and time after each pass (004 §5.7.4)."""
    lines = ["before the optimizer (as lowered):"]
    lines += statement_table(before, itemsize)
    lines.append("after the optimizer:")
    lines += statement_table(optimized.program, itemsize)
    a, b = program_cost(before, itemsize), program_cost(optimized.program, itemsize)
    if b.flops:
        lines.append(f"flops: {a.flops / b.flops:.3g}x fewer" if a.flops >= b.flops
                     else f"flops: {b.flops / a.flops:.3g}x more")
    lines.append("passes (IR nodes and statements after each):")
    for record in optimized.log:
        lines.append(f"  {record.name:<10} {record.nodes:>7} nodes  {record.statements:>4} statements  "
                     f"{record.seconds * 1e3:8.2f} ms")
    return "\n".join(lines) + "\n"
