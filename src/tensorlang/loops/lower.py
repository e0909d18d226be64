"""The loop program: EIN statements as loop nests over buffers, between EIN and C.

An EIN statement ``T[σ] = e`` means "for every point of σ, T's component is e".  Here
that becomes explicit: one loop per index variable of σ (the target's dimensions, in
order, so writes are contiguous), and every ``Sum``/``Reduce`` inside ``e`` becomes an
accumulator initialised to the operator's identity and updated in its own inner loop
nest, just before the scalar expression that uses it.  Variables are *slots* (numbered
buffers); the C printer (:mod:`tensorlang.targets.c.codegen`) never sees a program's variable names, so no
name a user writes can clash with C.

A contraction ``T[σ] = Σ_k product`` that writes its target in place is lowered the other
way round when that makes the innermost loop contiguous (:func:`contraction`, the rule is
given there): its summed loops move outside the innermost output loop, which then runs a
vectorizable ``T[σ] += product`` over one contiguous row of T (an AXPY), instead of a dot
product per point with a stride-n read.

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

from ..analysis.inplace import reads_only_its_own_point
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
    """``for var in start..extent-1: body`` (``start`` is 0 except where the first
    iteration of a sum was peeled off, see :meth:`_Lowering.interchanged`).

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
    start: int = 0


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
    lowering = _Lowering(slots, dict(zip(names, shapes)))
    nests = tuple(lowering.statement(s, len(names) - 1) for s in statements)
    return LoopProgram(tuple(shapes), tuple(names), nests)


class _Lowering:
    def __init__(self, slots: dict[str, int], shapes: dict[str, tuple[int, ...]] | None = None):
        self.slots = slots
        self.shapes = shapes or {}
        self.counter = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"acc{self.counter}"

    def statement(self, stmt: ir.Statement, scratch_slot: int) -> Nest:
        self.counter = 0
        found = contraction(stmt, self.shapes)
        if found is not None:
            return Nest(stmt, self.interchanged(stmt, found))
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

    def interchanged(self, stmt: ir.Statement, found: "Contraction") -> tuple[Node, ...]:
        """The nest of a :func:`contraction`, its summed loops outside the innermost one::

            for the output loops but the last (the outermost parallel if big enough):
                for x (simd):  T[σ] = 0 + product(k = 0)
                for k ≠ 0, in lexicographic order of the summed loops:
                    for x (simd):  T[σ] = T[σ] + product(k)
                for x (simd):  T[σ] = scale(T[σ])          (only under a scale or a Neg)

        This adds exactly the products the accumulator form adds, starting from the same
        0 (``0 + p`` is the first ``acc += p``: -0 still becomes +0, NaN and inf propagate
        alike), only in the summed loops' order, and scales the finished sum as the
        accumulator form does, so NaN and inf come out the same.  The first step of the
        sum is peeled (a store of ``0 + p`` rather than a loop storing zeros and then one
        adding ``p``): a row of zeros stored just before it is re-read costs gcc a
        store-forwarding stall per row, about 2-4x on the whole statement at n = 4..16.
        With several summed variables the peeled step is (0, ..., 0) and the rest is one
        loop nest per summed variable d: variable d from 1, those before it at 0, those
        after it over their whole range, which together visit every other point once in
        lexicographic order."""
        slot = self.slots[stmt.target]
        here = tuple(name for name, _ in stmt.index)
        last, width = stmt.index[-1]
        _, product = self.expr(found.product)  # a product holds no sum: nothing runs first
        point = Load(slot, here)

        def row(value: Scalar) -> Loop:
            return Loop(last, width, (Store(slot, here, value),), simd=True)

        names = [name for name, _ in found.summed]
        body: list[Node] = [row(ir.BinOp("+", ir.Const(0.0), _fix(product, dict.fromkeys(names, 0))))]
        for d in reversed(range(len(found.summed))):
            var, extent = found.summed[d]
            if extent < 2:
                continue
            nest: tuple[Node, ...] = (row(ir.BinOp("+", point, _fix(product, dict.fromkeys(names[:d], 0)))),)
            for inner, n in reversed(found.summed[d + 1:]):
                nest = (Loop(inner, n, nest),)
            body.append(Loop(var, extent, nest, start=1))
        if found.scale is not None:
            _, scaled = self.expr(found.scale)
            body.append(row(scaled))
        nest = tuple(body)
        outer = stmt.index[:-1]
        work = math.prod(n for _, n in outer) * _work(nest)
        for depth, (var, extent) in enumerate(reversed(outer)):
            outermost = depth == len(outer) - 1
            nest = (Loop(var, extent, nest, parallel=outermost and extent > 1 and work >= PARALLEL_WORK),)
        return nest

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
            total += max(node.extent - node.start, 0) * _work(node.body)
        elif isinstance(node, (Store, Update)):
            total += 1
    return max(total, 1)


# ------------------------------------------------------------ loop interchange
#: Contractions with fewer multiply-adds than this keep the accumulator form.  Below it
#: the whole statement runs in well under a microsecond either way (less than a kernel
#: call costs), so the interchange would buy nothing, and the accumulator form is the
#: smaller code: one copy of the product instead of one per summed variable plus one.
INTERCHANGE_WORK = 1 << 10


@dataclass(frozen=True)
class Contraction:
    """``T[σ] = scale(Σ_summed product)``, matched by :func:`contraction`.

    ``summed``: the summed variables in the loop order chosen (outer to inner);
    ``product``: the summand, a product of tensor accesses, constants and negations;
    ``scale``: None, or the body with the sum replaced by ``T[σ]`` (a constant factor or a
    negation applied to the finished sum)."""

    summed: tuple[tuple[str, int], ...]
    product: ir.Expr
    scale: ir.Expr | None


def contraction(stmt: ir.Statement, shapes: dict[str, tuple[int, ...]]) -> Contraction | None:
    """The statement as a :class:`Contraction` when the interchanged lowering applies, else
    None (the statement keeps the accumulator form).

    The rule.  The interchanged nest keeps every output loop outside except the last, x
    (the target's last index), and puts the summed loops between them and x; the
    innermost loop then walks one row of T with stride 1.  That is a win exactly when
    every read that moves with x is contiguous too, so it applies when

    * the body is a sum (directly nested sums are one sum over all their variables),
      possibly under constant factors and negations, over a product (``*``) of tensor
      accesses, constants and negations, and nothing else: no δ, ε, function, division
      or inner sum, whose lowering needs accumulators of its own;
    * the target is written in place and is not read at all (a statement that reads its
      target needs the scratch copy of ev-stmt and keeps the old form);
    * x occurs in at least one access, and in every access it occurs in, it occurs once,
      as the last index: every read that varies with x is contiguous, the others are
      invariant in the innermost loop.  If x is in no access, each row would be one
      value; if some access has x elsewhere (``C[x,q]`` in ``Σ_q u[..,q] C[x,q]``), the
      old innermost loop, a dot product over q, is the contiguous one: both keep the old
      form;
    * the summed variables are distinct, differ from the output variables and have
      extent ≥ 1 (the first step of the sum is peeled, so it must exist), x's extent is
      at least 2, and the statement does at least :data:`INTERCHANGE_WORK` multiply-adds;
    * the target has rank ≥ 2, or the statement is too small to run on threads: with
      rank 1 there is no output loop left outside the sum to share out, while the old
      form has its single output loop to run in parallel.

    Scalar targets never match (the old form's parallel reduction handles them).

    Moving the summed loops further out (outside more output loops) would only make the
    block of T that stays in cache bigger; it adds contiguity only when the trailing
    output indices are also trailing in every access, and then measured at most ~15%
    (collapsing ``v[e,i,j,k] = Σ_l A[i,l] t2[e,l,j,k]``'s j and k) for a second form of
    the rule, so it is not done.

    Summed loops are ordered by the smallest stride they have in any access, largest
    outside (stable, so ties keep the source order): the innermost summed loop steps
    the reads between rows by the shortest distance."""
    if not stmt.index:
        return None
    here = tuple(name for name, _ in stmt.index)
    last, width = stmt.index[-1]
    unwrapped = _unwrap(stmt.body, ir.Tensor(stmt.target, here))
    if unwrapped is None:
        return None
    scale, body = unwrapped
    summed: list[tuple[str, int]] = []
    while isinstance(body, ir.Sum):
        summed.extend(body.index)
        body = body.body
    if not summed or not _is_product(body):
        return None
    names = [name for name, _ in summed]
    if len(set(names)) < len(names) or set(names) & set(here):
        return None
    if width < 2 or any(n < 1 for _, n in (*stmt.index, *summed)):
        return None
    accesses = ir.tensors(body)
    if any(t.name == stmt.target for t in accesses):
        return None
    moving = [t for t in accesses if last in t.indices]
    if not moving or any(t.indices.count(last) != 1 or t.indices[-1] != last for t in moving):
        return None
    work = math.prod(n for _, n in stmt.index) * math.prod(n for _, n in summed)
    if work < INTERCHANGE_WORK or (len(here) == 1 and work >= PARALLEL_WORK):
        return None

    def stride(name: str) -> int:
        found = [math.prod(shapes[t.name][len(t.indices) - t.indices[::-1].index(name):])
                 for t in accesses if name in t.indices and t.name in shapes]
        return min(found, default=math.inf)

    order = sorted(summed, key=lambda pair: -stride(pair[0]))
    return Contraction(tuple(order), body, None if scale == ir.Tensor(stmt.target, here) else scale)


def _unwrap(e: ir.Expr, point: ir.Tensor):
    """(scale, sum): ``e`` as constant factors and negations around a Sum, the Sum itself
    replaced by ``point`` in ``scale``; None for any other shape.  The factors stay as
    they are written: the finished sum is scaled exactly as the accumulator form does."""
    if isinstance(e, ir.Sum):
        return point, e
    if isinstance(e, ir.Neg):
        inner = _unwrap(e.arg, point)
        return None if inner is None else (ir.Neg(inner[0]), inner[1])
    if isinstance(e, ir.BinOp) and e.op == "*":
        if _is_constant(e.left):
            inner = _unwrap(e.right, point)
            return None if inner is None else (ir.BinOp("*", e.left, inner[0]), inner[1])
        if _is_constant(e.right):
            inner = _unwrap(e.left, point)
            return None if inner is None else (ir.BinOp("*", inner[0], e.right), inner[1])
    return None


def _is_constant(e: ir.Expr) -> bool:
    """A number, a negated number (``-2`` reads as ``Neg(2)``) or a product of them."""
    if isinstance(e, ir.Const):
        return True
    if isinstance(e, ir.Neg):
        return _is_constant(e.arg)
    if isinstance(e, ir.BinOp) and e.op == "*":
        return _is_constant(e.left) and _is_constant(e.right)
    return False


def _is_product(e: ir.Expr) -> bool:
    if isinstance(e, (ir.Tensor, ir.Const)):
        return True
    if isinstance(e, ir.Neg):
        return _is_product(e.arg)
    if isinstance(e, ir.BinOp) and e.op == "*":
        return _is_product(e.left) and _is_product(e.right)
    return False


def _fix(e: Scalar, values: dict[str, int]) -> Scalar:
    """The product scalar ``e`` with the index variables in ``values`` fixed (0-based)."""
    if not values:
        return e
    if isinstance(e, Load):
        return Load(e.slot, tuple(values.get(i, i) if isinstance(i, str) else i for i in e.indices))
    if isinstance(e, ir.Neg):
        return ir.Neg(_fix(e.arg, values))
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, _fix(e.left, values), _fix(e.right, values))
    return e
