"""The loop program: EIN statements as loop nests over buffers, between EIN and C.

An EIN statement ``T[σ] = e`` means "for every point of σ, T's component is e".  Here
that becomes explicit: one loop per index variable of σ (the target's dimensions, in
order, so writes are contiguous), and every ``Sum``/``Reduce`` inside ``e`` becomes an
accumulator initialised to the operator's identity and updated in its own inner loop
nest, just before the scalar expression that uses it.  Variables are *slots* (numbered
buffers); the C printer (:mod:`.c_codegen`) never sees a program's variable names, so no
name a user writes can clash with C.

ev-stmt says a statement reads the store as it was before the statement.  When the
target is also read (``x[i,j] = x[j,i]``), the loop nest writes a scratch buffer and a
``Copy`` moves it into the target afterwards; otherwise it writes the target directly.

Nodes are frozen dataclasses, like the IR they come from.  Scalar expressions reuse the
EIN nodes (``Const``, ``Delta``, ``Epsilon``, ``Neg``, ``Apply``, ``BinOp``) with two
additions: ``Load`` (a buffer component at 0-based index expressions) and ``Acc`` (an
accumulator's current value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Union

from ..ein import ir

#: A statement whose loop nest does at least this many scalar operations gets an
#: ``omp parallel for`` on its outermost loop; below it, starting threads costs more
#: than it saves (about 5-10 µs per parallel region on this class of machine).
PARALLEL_WORK = 1 << 17


@dataclass(frozen=True)
class Load:
    """Component of buffer ``slot`` at ``indices``: an index variable or a 0-based int."""

    slot: int
    indices: tuple[Union[str, int], ...]


@dataclass(frozen=True)
class Acc:
    """The current value of accumulator ``name``."""

    name: str


Scalar = Union[Load, Acc, ir.Const, ir.Delta, ir.Epsilon, ir.Neg, ir.Apply, ir.BinOp]


@dataclass(frozen=True)
class Init:
    """``acc = identity of op``."""

    acc: str
    op: str


@dataclass(frozen=True)
class Update:
    """``acc = acc op value``."""

    acc: str
    op: str
    value: Scalar


@dataclass(frozen=True)
class Store:
    """``slot[indices] = value``."""

    slot: int
    indices: tuple[Union[str, int], ...]
    value: Scalar


@dataclass(frozen=True)
class Copy:
    """Copy ``count`` elements of buffer ``source`` into ``target``."""

    target: int
    source: int
    count: int


@dataclass(frozen=True)
class Loop:
    """``for var in 0..extent-1: body``.

    ``parallel``: the iterations are independent and worth threads; ``simd``: the body is
    straight-line code the compiler may vectorize; ``reductions``: the (op, accumulator)
    pairs the body updates, which a vectorized or parallel loop must combine.
    """

    var: str
    extent: int
    body: tuple["Node", ...]
    parallel: bool = False
    simd: bool = False
    reductions: tuple[tuple[str, str], ...] = ()


Node = Union[Loop, Init, Update, Store, Copy]


@dataclass(frozen=True)
class Nest:
    """The loop nest of one EIN statement, with the statement (for comments)."""

    statement: ir.Statement
    body: tuple[Node, ...]


@dataclass(frozen=True)
class LoopProgram:
    """Buffers (one slot per variable, plus one scratch slot if needed) and the nests."""

    shapes: tuple[tuple[int, ...], ...]
    names: tuple[str, ...]
    nests: tuple[Nest, ...]


#: The name of the scratch slot (not a legal variable name, so it cannot clash).
SCRATCH = "<scratch>"


# ---------------------------------------------------------------------- lowering
def lower(program: ir.Program) -> LoopProgram:
    """The loop program of ``program``: a nest per statement, a slot per variable."""
    statements = program.statements
    names = [d.name for d in program.decls]
    shapes = [d.shape for d in program.decls]
    slots = {name: n for n, name in enumerate(names)}
    scratch_size = max(
        (math.prod(shapes[slots[s.target]]) for s in statements if not reads_only_its_own_point(s)), default=None
    )
    if scratch_size is not None:
        names.append(SCRATCH)
        shapes.append((scratch_size,))
    nests = tuple(_Lowering(slots).statement(s, len(names) - 1) for s in statements)
    return LoopProgram(tuple(shapes), tuple(names), nests)


def reads_only_its_own_point(stmt: ir.Statement) -> bool:
    """True when the statement may write its target while it runs (ev-stmt still holds):
    every read of the target is at exactly the point being written (``x[i] = s * x[i]``),
    so each point reads its old value before its new one is stored and no other point
    reads it.  Anything else (``x[i,j] = x[j,i]``, ``x[i] = sum(k) x[k]``) needs a copy."""
    here = tuple(name for name, _ in stmt.index)
    return all(t.indices == here for t in ir.tensors(stmt.body) if t.name == stmt.target)


class _Lowering:
    def __init__(self, slots: dict[str, int]):
        self.slots = slots
        self.counter = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"acc{self.counter}"

    def statement(self, stmt: ir.Statement, scratch_slot: int) -> Nest:
        self.counter = 0
        pre, value = self.expr(stmt.body)
        out_indices = tuple(name for name, _ in stmt.index)
        in_place = reads_only_its_own_point(stmt)
        if in_place:
            body: tuple[Node, ...] = (*pre, Store(self.slots[stmt.target], out_indices, value))
        else:  # the scratch buffer is flat: index it by the row-major offset
            body = (*pre, Store(scratch_slot, out_indices, value))
        inner_work = _work(body)
        points = math.prod(n for _, n in stmt.index)
        nest = body
        loops = list(stmt.index)
        for depth, (var, extent) in enumerate(reversed(loops)):
            innermost = depth == 0
            outermost = depth == len(loops) - 1
            nest = (
                Loop(
                    var,
                    extent,
                    nest,
                    parallel=outermost and extent > 1 and points * inner_work >= PARALLEL_WORK,
                    simd=innermost and not any(isinstance(n, Loop) for n in body),
                ),
            )
        if not loops:  # a scalar target: a big + or * reduction may share its outer loop out
            nest = tuple(_parallel_reduction(n, points * inner_work) for n in body)
        if not in_place:
            nest = (*nest, Copy(self.slots[stmt.target], scratch_slot, points))
        return Nest(stmt, nest)

    def expr(self, e: ir.Expr) -> tuple[tuple[Node, ...], Scalar]:
        """Statements to run first, and the scalar expression that then has e's value."""
        if isinstance(e, ir.Tensor):
            return (), Load(self.slots[e.name], tuple(i - 1 if isinstance(i, int) else i for i in e.indices))
        if isinstance(e, (ir.Const, ir.Delta, ir.Epsilon)):
            return (), e
        if isinstance(e, ir.Neg):
            pre, arg = self.expr(e.arg)
            return pre, ir.Neg(arg)
        if isinstance(e, ir.Apply):
            pre, arg = self.expr(e.arg)
            return pre, ir.Apply(e.fn, arg)
        if isinstance(e, ir.BinOp):
            pre_l, left = self.expr(e.left)
            pre_r, right = self.expr(e.right)
            return pre_l + pre_r, ir.BinOp(e.op, left, right)
        if isinstance(e, (ir.Sum, ir.Reduce)):
            op = "+" if isinstance(e, ir.Sum) else e.op
            acc = self.fresh()
            pre, value = self.expr(e.body)
            nest: tuple[Node, ...] = (*pre, Update(acc, op, value))
            for depth, (var, extent) in enumerate(reversed(e.index)):
                straight = not any(isinstance(n, Loop) for n in nest)
                nest = (Loop(var, extent, nest, simd=depth == 0 and straight, reductions=((op, acc),)),)
            return (Init(acc, op), *nest), Acc(acc)
        if isinstance(e, ir.Stack):  # CFDlang's stacking [a b c]
            return self.stack(e)
        raise TypeError(f"not an EIN expression: {e!r}")

    def stack(self, e: ir.Stack) -> tuple[tuple[Node, ...], Scalar]:
        """items[s] at position s: every item's statements run, the value is selected
        (a select, not a sum of δ-weighted items: a NaN or inf stays in its own slice)."""
        pres: list[Node] = []
        values = []
        for item in e.items:
            pre, value = self.expr(item)
            pres.extend(pre)
            values.append(value)
        return tuple(pres), Select(e.index, tuple(values))


@dataclass(frozen=True)
class Select:
    """``cases[var]`` (0-based): the value of CFDlang's stacking at position ``var``."""

    var: str
    cases: tuple[Scalar, ...]


def _parallel_reduction(node, work: int):
    """The outermost loop of a big sum or product, marked parallel (OpenMP combines the
    threads' partial results); max/min keep one thread, since their NaN rule is ours."""
    if isinstance(node, Loop) and work >= PARALLEL_WORK and node.extent > 1 and node.reductions and all(
        op in ("+", "*") for op, _ in node.reductions
    ):
        return replace(node, parallel=True)
    return node


def _work(nodes) -> int:
    """Scalar operations of a loop body (each Store/Update counts one, loops multiply)."""
    total = 0
    for node in nodes:
        if isinstance(node, Loop):
            total += node.extent * _work(node.body)
        elif isinstance(node, (Store, Update)):
            total += 1
    return max(total, 1)
