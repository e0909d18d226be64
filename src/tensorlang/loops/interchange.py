"""Loop interchange: a contraction's summed loops outside its innermost output loop (an AXPY
per row): docs/c-backend.md, "When a contraction is interchanged"."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..ein import ir as ein
from ..ein.forms import monomial
from ..ein.index import has_affine
from ..schedule.plan import BufferPlan
from .ir import BinOp, Const, Load, Loop, Nest, Node, Scalar, Store, around, substitute
from ..schedule.padding import TRUE, decide as decide_padding
from .lower import rezero, scalar
from ..machine import PARALLEL_WORK

#: Contractions with fewer multiply-adds keep the accumulator form (the smaller code; under
#: a microsecond either way).
INTERCHANGE_WORK = 1 << 10


@dataclass(frozen=True)
class Contraction:
    """``T[σ] = scale(Σ_summed product)`` (:func:`contraction`): ``summed`` in loop order;
    ``scale``: None, or the body with the sum replaced by ``T[σ]``."""

    summed: tuple[tuple[str, int], ...]
    product: ein.Expr
    scale: ein.Expr | None


def contraction(stmt: ein.Statement, shapes: dict[str, tuple[int, ...]]) -> Contraction | None:
    """The statement as a :class:`Contraction` when the interchange applies, else None."""
    if not stmt.index:
        return None
    here = tuple(name for name, _ in stmt.index)
    last, width = stmt.index[-1]
    # ein.forms.monomial with this client's policy: a Σ directly under the scale, over a
    # product of tensors and numbers (no inner Σ); the scale is applied as written
    form = monomial(stmt.body)
    if not form.sums or form.nested or not all(isinstance(f, (ein.Tensor, ein.Const)) for f in form.factors):
        return None
    summed, body = list(form.sums), form.summand
    scale = None if form.scale is None else form.fill(ein.Tensor(stmt.target, here))
    names = [name for name, _ in summed]
    if len(set(names)) < len(names) or set(names) & set(here):
        return None
    if width < 2 or any(n < 1 for _, n in (*stmt.index, *summed)):
        return None
    accesses = ein.tensors(body)
    if any(t.name == stmt.target or has_affine(t.indices) for t in accesses):
        return None
    moving = [t for t in accesses if last in t.indices]
    if not moving or any(t.indices.count(last) != 1 or t.indices[-1] != last for t in moving):
        return None
    work = math.prod(n for _, n in stmt.index) * math.prod(n for _, n in summed)
    if work < INTERCHANGE_WORK or (len(here) == 1 and work >= PARALLEL_WORK):
        return None

    def stride(name: str) -> float:  # an element count; inf when no access has the name
        found = [math.prod(shapes[t.name][len(t.indices) - t.indices[::-1].index(name):])
                 for t in accesses if name in t.indices and t.name in shapes]
        return min(found, default=math.inf)

    order = sorted(summed, key=lambda pair: -stride(pair[0]))
    return Contraction(tuple(order), body, scale)


def rewrite(nest: Nest, buffers: BufferPlan) -> Nest:
    """``nest`` interchanged (the sum's first step peeled) where its statement is a
    :func:`contraction`, else ``nest``."""
    stmt = nest.statement
    found = contraction(stmt, buffers.variable_shapes)
    if found is None:
        return nest
    # under padding (000 §4) the loops run to the extents schedule/padding.py decides;
    # a contraction always writes its target in place here (contraction() requires it)
    padding = decide_padding(stmt, buffers.pad) if buffers.pad > 1 else None
    if padding is not None and padding.mode == TRUE:
        return nest
    # the summed loops sit outside the row here: only the row (the target's last,
    # contiguous index) runs to its padded extent
    reach = padding.extent if padding is not None else (lambda var, n: n)
    slots = buffers.slot_of
    slot = slots[stmt.target]
    here = tuple(name for name, _ in stmt.index)
    last, width = stmt.index[-1]
    width = reach(last, width)
    product = scalar(found.product, slots)  # a product holds no sum: nothing runs first
    point = Load(slot, here)

    def row(value: Scalar) -> Loop:
        return Loop(last, width, (Store(slot, here, value),))

    names = [name for name, _ in found.summed]
    body: list[Node] = [row(BinOp("+", Const(0.0), substitute(product, dict.fromkeys(names, 0))))]
    for d in reversed(range(len(found.summed))):
        var, extent = found.summed[d]
        if extent < 2:
            continue
        inner = around((row(BinOp("+", point, substitute(product, dict.fromkeys(names[:d], 0)))),), found.summed[d + 1:])
        body.append(Loop(var, extent, inner, start=1))
    if found.scale is not None:
        body.append(row(scalar(found.scale, slots)))
    result = around(tuple(body), [(var, reach(var, n)) for var, n in stmt.index[:-1]])
    if padding is not None and padding.rezero:
        result = (*result, *rezero(slot, tuple(n for _, n in stmt.index), buffers.pad, padding.rezero))
    return replace(nest, body=result, interchanged=True)
