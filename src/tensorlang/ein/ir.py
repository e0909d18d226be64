"""EIN nodes: immutable, hashable, small enough to print and read.

A program is a sequence of statements ``t = λ params ⟨e⟩_σ (args)`` (004 §4).  Here a
statement keeps its arguments in place (``Tensor("A", ("i", "k"))`` rather than a
parameter plus an argument list), which is what the printer, the back ends and the
reader want; :meth:`Statement.operator` abstracts them into the λ form of the paper when
a pass needs to compare operators independently of what they are applied to.

Indices are plain values: a ``str`` is an index variable, an ``int`` a fixed position
(1-based, as the language writes it), an ``index.Affine`` a computed position such as
``i+1``.  σ, the index map, is an ``index.Domain`` of ``(index variable, extent)`` pairs
(a tuple of pairs is accepted): a statement's σ covers its target's dimensions in
order, a ``Sum`` carries its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ..semantics.interface import TEMP as _TEMP
from .index import Domain, Index, as_domain  # noqa: F401 - Index: str | int | Affine (index.py)

IndexMap = Domain  # σ: a tuple of (variable, extent) pairs is accepted and stored as a Domain


@dataclass(frozen=True)
class Tensor:
    """T_α: the component of variable ``name`` at indices α."""

    name: str
    indices: tuple[Index, ...]


@dataclass(frozen=True)
class Const:
    """A number."""

    value: float


@dataclass(frozen=True)
class Delta:
    """Kronecker δ_ij."""

    first: Index
    second: Index


@dataclass(frozen=True)
class Epsilon:
    """Levi-Civita ε_ij or ε_ijk."""

    indices: tuple[Index, ...]


@dataclass(frozen=True)
class Neg:
    arg: "Expr"


@dataclass(frozen=True)
class Apply:
    """An elementwise function (sqrt exp log sin cos tanh abs)."""

    fn: str
    arg: "Expr"


@dataclass(frozen=True)
class BinOp:
    """e1 op e2 for op in + - * /; division is controlled division (000 Definition 8)."""

    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Sum:
    """Σ over the index map ``index`` (the only binding form of EIN)."""

    index: IndexMap
    body: "Expr"

    def __post_init__(self):
        object.__setattr__(self, "index", as_domain(self.index))


@dataclass(frozen=True)
class Reduce:
    """A reduction other than Σ over the index map ``index``: ``op`` is ``*`` (product),
    ``max`` or ``min`` (TeIL's red*, redmax, redmin, 001 Fig. 6).  It starts from the
    operator's identity element (semantics.values.REDUCTIONS), so an empty map gives the
    identity."""

    op: str
    index: IndexMap
    body: "Expr"

    def __post_init__(self):
        object.__setattr__(self, "index", as_domain(self.index))


@dataclass(frozen=True)
class Stack:
    """items[s-1] at position s of the index variable ``index`` (CFDlang's stacking
    ``[a b c]``: a new leading dimension of equal-shaped operands)."""
    index: str
    items: tuple["Expr", ...]




Expr = Union[Tensor, Const, Delta, Epsilon, Neg, Apply, BinOp, Sum, Reduce, Stack]


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, (Tensor, Const, Delta, Epsilon)):
        return ()
    if isinstance(e, (Neg, Apply)):
        return (e.arg,)
    if isinstance(e, BinOp):
        return (e.left, e.right)
    if isinstance(e, (Sum, Reduce)):
        return (e.body,)
    if isinstance(e, Stack):
        return e.items
    raise TypeError(f"not an EIN expression: {e!r}")


def size(e: Expr) -> int:
    """The number of expression-tree nodes (004 §5.7.4 measures IR size this way)."""
    count, stack = 0, [e]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(children(node))
    return count


def tensors(e: Expr) -> list[Tensor]:
    """Every tensor access in ``e``, left to right."""
    found, stack = [], [e]
    while stack:
        node = stack.pop()
        if isinstance(node, Tensor):
            found.append(node)
        stack.extend(reversed(children(node)))
    return found


@dataclass(frozen=True)
class Statement:
    """``target[σ] = body``: for every point of σ, the target's component is the body."""

    target: str
    index: IndexMap
    body: Expr

    def __post_init__(self):
        object.__setattr__(self, "index", as_domain(self.index))

    @property
    def reads(self) -> tuple[str, ...]:
        """The variables the body reads, each once, in order of first use (the args)."""
        return tuple(dict.fromkeys(t.name for t in tensors(self.body)))

    def operator(self) -> tuple[Expr, tuple[str, ...]]:
        """The λ form: the body over parameters ``T0, T1, ...`` and the arguments it is
        applied to, so that ``λ T0 T1 ⟨T0_ik T1_kj⟩`` is one operator wherever it is used."""
        args = self.reads
        rename = {name: f"T{n}" for n, name in enumerate(args)}
        return _rename(self.body, rename), args


def _rename(e: Expr, rename: dict[str, str]) -> Expr:
    if isinstance(e, Tensor):
        return Tensor(rename.get(e.name, e.name), e.indices)
    if isinstance(e, (Const, Delta, Epsilon)):
        return e
    if isinstance(e, Neg):
        return Neg(_rename(e.arg, rename))
    if isinstance(e, Apply):
        return Apply(e.fn, _rename(e.arg, rename))
    if isinstance(e, BinOp):
        return BinOp(e.op, _rename(e.left, rename), _rename(e.right, rename))
    if isinstance(e, Sum):
        return Sum(e.index, _rename(e.body, rename))
    if isinstance(e, Reduce):
        return Reduce(e.op, e.index, _rename(e.body, rename))
    if isinstance(e, Stack):
        return Stack(e.index, tuple(_rename(item, rename) for item in e.items))
    raise TypeError(f"not an EIN expression: {e!r}")


#: The qualifier of a variable a pass introduced (semantics/interface.py): never an
#: input, never a result, whatever the program's own qualifiers say.
TEMP = _TEMP


@dataclass(frozen=True)
class Decl:
    name: str
    shape: tuple[int, ...]
    qual: str | None = None


@dataclass(frozen=True)
class Program:
    """Declarations (with qualifiers, as in the source) and statements in order.

    Statements keep the ev-stmt meaning: each reads the store as it was before it.
    """

    decls: tuple[Decl, ...]
    statements: tuple[Statement, ...]

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        return {d.name: d.shape for d in self.decls}

    @property
    def size(self) -> int:
        return sum(size(s.body) for s in self.statements)
