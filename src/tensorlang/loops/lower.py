"""Lowering: an EIN statement as an unmarked loop nest in accumulator form over the
schedule's slots, with ev-stmt's scratch copy (docs/c-backend.md, "From EIN to loops to C")."""

from __future__ import annotations

import math

from ..analysis.inplace import compatible
from ..ein import ir as ein
from ..ein.index import affine, as_terms
from ..ein.names import free_indices, substitute
from ..schedule.padding import StatementPadding, decide as decide_padding, padded_shape
from ..schedule.plan import BufferPlan
from ..semantics.values import power_exponent
from .ir import (Acc, Apply, BinOp, Const, Copy, Delta, Epsilon, Init, Load, Loop, Neg, Nest, Node, Power, Scalar, Select,
                 Store, Update, around)


def _position(i: ein.Index):
    """An EIN index in the loop IR: a variable as it is, a 1-based position 0-based."""
    return i - 1 if isinstance(i, int) else i


class Lowering:
    """EIN expressions to loop-IR scalars over ``slots``, with fresh accumulators."""

    def __init__(self, slots: dict[str, int], padding: StatementPadding | None = None):
        self.slots = slots
        self.counter = 0
        self.padding = padding  # under pad=M, the padded extents of the sums that may run over them

    def fresh(self) -> str:
        self.counter += 1
        return f"acc{self.counter}"

    def expr(self, e: ein.Expr) -> tuple[tuple[Node, ...], Scalar]:
        """Statements to run first, and the scalar expression that then has e's value."""
        if isinstance(e, ein.Tensor):
            return (), Load(self.slots[e.name], tuple(_position(i) for i in e.indices))
        if isinstance(e, ein.Const):
            return (), Const(e.value)
        if isinstance(e, ein.Delta):
            return (), Delta(_position(e.first), _position(e.second))
        if isinstance(e, ein.Epsilon):
            return (), Epsilon(tuple(_position(i) for i in e.indices))
        if isinstance(e, (ein.Neg, ein.Apply)):
            pre, arg = self.expr(e.arg)
            return pre, Neg(arg) if isinstance(e, ein.Neg) else Apply(e.fn, arg)
        if isinstance(e, ein.BinOp):
            pre_l, left = self.expr(e.left)
            pre_r, right = self.expr(e.right)
            return pre_l + pre_r, BinOp(e.op, left, right)
        if isinstance(e, (ein.Sum, ein.Reduce)):
            op = "+" if isinstance(e, ein.Sum) else e.op
            pre, value = self.expr(e.body)
            used = free_indices(e.body)  # an index the body ignores is no loop: n·x, x^n, x
            count = math.prod(n for name, n in e.index if name not in used)
            if count > 1 and op in ("+", "*"):
                value = BinOp("*", Const(power_exponent(count)), value) if op == "+" else Power("pow", value, count)
            index = tuple(item for item in e.index if item[0] in used)
            if not index:  # a Σ starts from +0, so Σ over -0 is +0
                return pre, BinOp("+", value, Const(0.0)) if op == "+" else value
            acc = self.fresh()
            nest: tuple[Node, ...] = (*pre, Update(acc, op, value))
            for var, extent in reversed(index):
                if self.padding is not None and op == "+":
                    extent = self.padding.extent(var, extent)
                nest = (Loop(var, extent, nest, reductions=((op, acc),)),)
            return (Init(acc, op), *nest), Acc(acc)
        if isinstance(e, ein.Stack):  # CFDlang's stacking [a b c]
            return self.stack(e)
        if isinstance(e, ein.Concat):  # the direct sum (003 §3)
            return self.concat(e)
        raise TypeError(f"not an EIN expression: {e!r}")

    def stack(self, e: ein.Stack) -> tuple[tuple[Node, ...], Scalar]:
        """items[s] at position s: every item's statements run, the value is selected
        (a select, not a sum of δ-weighted items: a NaN or inf stays in its own slice)."""
        lowered = [self.expr(item) for item in e.items]
        return tuple(n for pre, _ in lowered for n in pre), Select(e.index, tuple(value for _, value in lowered))

    def concat(self, e: ein.Concat) -> tuple[tuple[Node, ...], Scalar]:
        """Item k where the index lies in its piece, read at index - S_k, evaluated there only
        (no statements of its own: :func:`tensorlang.passes.split.lift_concat_items`)."""
        if isinstance(e.index, int):  # a fixed position: that item, at its own position
            for (name, n), start, item in zip(e.parts, e.starts, e.items):
                if start < e.index <= start + n:
                    return self.expr(substitute(item, {name: e.index - start}))
        terms, offset = as_terms(e.index)
        lowered = [self.expr(substitute(item, {name: affine(terms, offset - start)}))
                   for (name, _), start, item in zip(e.parts, e.starts, e.items)]
        if any(pre for pre, _ in lowered):
            raise ValueError("a concat item with statements of its own (a sum): lift it into a temporary first")
        ends = tuple(start + n for start, (_, n) in zip(e.starts, e.parts))
        return (), Select(e.index, tuple(value for _, value in lowered), ends)


def scalar(e: ein.Expr, slots: dict[str, int]) -> Scalar:
    """The loop-IR scalar of an expression without sums or reductions."""
    pre, value = Lowering(slots).expr(e)
    if pre:
        raise ValueError(f"not a scalar expression: {e!r}")
    return value


def lower_statement(stmt: ein.Statement, buffers: BufferPlan, step: int = 0) -> Nest:
    """The accumulator-form nest of ``stmt`` over ``buffers``' slots; under padding (000 §4)
    to :func:`~tensorlang.schedule.padding.decide`'s extents, then :func:`rezero`."""
    slots = buffers.slot_of
    in_place = compatible(stmt).in_place  # 002: ev-c-stmt when compatible, else ev-stmt
    padding = decide_padding(stmt, buffers.pad, in_place) if buffers.pad > 1 else None
    pre, value = Lowering(slots, padding).expr(stmt.body)
    here = tuple(name for name, _ in stmt.index)
    # the scratch buffer is flat: a printer indexes it by the target's row-major offset
    body: tuple[Node, ...] = (*pre, Store(slots[stmt.target] if in_place else buffers.scratch_for(stmt), here, value))
    body = around(body, [(var, padding.extent(var, extent) if padding else extent) for var, extent in stmt.index])
    if not in_place:
        shape = tuple(n for _, n in stmt.index)
        count = math.prod(padded_shape(shape, buffers.pad))  # the scratch holds the target's padded layout
        body = (*body, Copy(slots[stmt.target], buffers.scratch_for(stmt), count))
    if padding is not None and padding.rezero:
        body = (*body, *rezero(slots[stmt.target], tuple(n for _, n in stmt.index), buffers.pad, padding.rezero))
    return Nest(stmt, body, step)


def rezero(slot: int, shape: tuple[int, ...], pad: int, dims: tuple[int, ...] | None = None,
           names: tuple[str, ...] | None = None) -> tuple[Node, ...]:
    """Loops that set the padding of ``slot`` (true ``shape``, padded by ``pad``) to zero
    along ``dims`` (default: all), each point once; ``names``: the loops' variables."""
    storage = padded_shape(shape, pad)
    nests: list[Node] = []
    names = names or tuple(f"pad{d}" for d in range(len(shape)))
    for d in range(len(shape)) if dims is None else dims:
        if storage[d] == shape[d]:
            continue
        node: Node = Store(slot, names, Const(0.0))
        for k in reversed(range(len(shape))):
            true = k < d or (dims is not None and k not in dims and k > d)  # the true extent, else padded (from shape[d] at d)
            node = Loop(names[k], shape[k] if true else storage[k], (node,), start=shape[k] if k == d else 0)
        nests.append(node)
    return tuple(nests)
