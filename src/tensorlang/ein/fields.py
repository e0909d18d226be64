"""EIN's field forms (004 Fig. 2): convolution, partial derivative and probe, nodes that
answer the traversal questions as every node does, and the :class:`Sample` statement of
a probe step (docs/fields.md, "How a probe is compiled").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import ir
from .index import Index
from .printer import _ATOM, RENDER, expr_to_text


class _AnyExtent(ir.Node):
    """A form whose index uses range over any extent (the verifier checks none of them)."""

    def use_extents(self, shapes):
        return (None,) * len(self.index_uses())


@dataclass(frozen=True)
class Conv(_AnyExtent):
    """V_α ⊛ H^β: the field reconstructed from image ``image`` with ``kernel``, at voxel
    component indices α = ``comps``, with derivative indices β = ``derivs`` (world space)."""

    image: str
    kernel: str
    comps: tuple[Index, ...]
    derivs: tuple[Index, ...] = ()

    def index_uses(self):
        return self.comps + self.derivs

    def with_index_uses(self, uses):
        n = len(self.comps)
        return Conv(self.image, self.kernel, tuple(uses[:n]), tuple(uses[n:]))


@dataclass(frozen=True)
class Diff(_AnyExtent):
    """∂/∂x_index ◇ body: the partial derivative along world axis ``index``."""

    index: Index
    body: Any  # a field expression (it may hold Conv and Diff)

    def children(self):
        return (self.body,)

    def replace_children(self, kids):
        return Diff(self.index, kids[0])

    def index_uses(self):
        return (self.index,)

    def with_index_uses(self, uses):
        return Diff(uses[0], self.body)


@dataclass(frozen=True)
class Probe(ir.Node):
    """body@at: the field ``body`` evaluated at the position variable ``at`` (a batch of
    points, not an index expression)."""

    body: Any  # a field expression (it may hold Conv and Diff)
    at: str

    def children(self):
        return (self.body,)

    def replace_children(self, kids):
        return Probe(kids[0], self.at)


@dataclass(frozen=True)
class Sample(_AnyExtent):
    """The probe tensor ``P[p, α, β] = ∂^β (V_α ⊛ h)(M·x[p])`` of one (image, kernel,
    derivative order) at a batch of points, index-space derivatives, ⊥ outside; it reads
    ``image``, ``points`` (N × dim) and ``geometry`` (per space axis the world-to-index
    row, then the samples along it) as accesses without indices.  A statement whose body
    is one Sample is a library step (docs/fields.md, "How a probe is compiled")."""

    kernel: str
    order: int
    indices: tuple[Index, ...]
    image: ir.Tensor
    points: ir.Tensor
    geometry: ir.Tensor

    def children(self):
        return (self.image, self.points, self.geometry)

    def replace_children(self, kids):
        return Sample(self.kernel, self.order, self.indices, *kids)

    def index_uses(self):
        return self.indices

    def with_index_uses(self, uses):
        return Sample(self.kernel, self.order, tuple(uses), self.image, self.points, self.geometry)


def sample_text(e: Sample) -> tuple[str, int]:
    """How a Sample prints in index notation: ``probe(I0 ⊛ bspln3^2, x, G0)[p,i,j]``."""
    from .index import to_text as index_text

    derivs = f"^{e.order}" if e.order else ""
    image, points, geometry = (expr_to_text(kid) for kid in e.children())
    return (f"probe({image} ⊛ {e.kernel}{derivs}, {points}, {geometry})"
            f"[{','.join(index_text(i) for i in e.indices)}]", _ATOM)


def is_sample(stmt: ir.Statement) -> bool:
    """Whether ``stmt`` is a probe tensor's library statement (its body one Sample)."""
    return isinstance(stmt.body, Sample)


FIELD_KINDS: tuple[type, ...] = (Conv, Diff, Probe)

for _cls in (*FIELD_KINDS, Sample):  # the iterative hash and equality of the other node kinds
    _cls.__hash__ = ir._node_hash  # type: ignore[assignment]
    _cls.__eq__ = ir._node_eq  # type: ignore[assignment,method-assign]
    _cls.__getstate__ = ir._node_getstate  # type: ignore[attr-defined,method-assign,assignment]
RENDER[Sample] = sample_text  # the EIN evaluator's entry is the reference's (fields/reconstruct.py)


def is_field_free(e: "ir.Expr") -> bool:
    """Whether ``e`` holds no field form (a tensor expression: lowering is done)."""
    return not any(isinstance(node, FIELD_KINDS) for node in ir.nodes(e))


def to_text(e: Any) -> str:
    """A field expression in the paper's notation, fully parenthesized (the index-notation
    printer of printer.py knows no field forms): ``(V1[i] ⊛ bspln3^[d])@x``,
    ``∂/∂x[d](...)``, ``Σ[k:3](...)``."""
    from .index import to_text as index_text

    def idx(ids) -> str:
        return "[" + ",".join(index_text(i) for i in ids) + "]" if ids else ""

    texts: dict[type, Any] = {
        Conv: lambda e: f"({e.image}{idx(e.comps)} ⊛ {e.kernel}{'^' + idx(e.derivs) if e.derivs else ''})",
        Diff: lambda e: f"∂/∂x[{index_text(e.index)}]({go(e.body)})", Probe: lambda e: f"({go(e.body)})@{e.at}",
        ir.Tensor: lambda e: e.name + idx(e.indices), ir.Const: lambda e: repr(float(e.value)),
        ir.Delta: lambda e: f"δ{idx((e.first, e.second))}", ir.Epsilon: lambda e: f"ε{idx(e.indices)}",
        ir.Neg: lambda e: f"-{go(e.arg)}", ir.Apply: lambda e: f"{e.fn}({go(e.arg)})",
        ir.BinOp: lambda e: f"({go(e.left)} {e.op} {go(e.right)})",
        ir.Sum: lambda e: f"Σ[{','.join(f'{v}:{n}' for v, n in e.index)}]({go(e.body)})"}

    def go(e: Any) -> str:
        if type(e) not in texts:
            raise TypeError(f"not a field expression: {e!r}")
        return texts[type(e)](e)

    return go(e)
