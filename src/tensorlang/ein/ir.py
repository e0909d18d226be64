"""EIN nodes: immutable, hashable, small enough to print and read, with one generic traversal.

A program is a sequence of statements ``t = λ params ⟨e⟩_σ (args)`` (004 §4), each
keeping its arguments in place (``Tensor("A", ("i", "k"))``); :meth:`Statement.operator`
gives the λ form.  Indices are plain values (:mod:`.index`), and σ is an
``index.Domain``.  Every node kind answers what its children are (:func:`children`),
what index map it binds (:func:`binders`) and which indices it writes itself
(:func:`index_uses`), each with its ``replace``/``with`` counterpart; nothing outside
this module asks a node's kind to walk it, so the index-variable operations of
:mod:`.names` are written once (docs/ein.md, "The core").
"""

from __future__ import annotations

from functools import cached_property

import math
from operator import is_not as _is_not

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Union

from ..semantics.interface import TEMP as _TEMP
from .index import Domain, Index, as_domain  # noqa: F401 - Index: str | int | Affine (index.py)
from .structure import Structure

#: σ: a Domain, or a tuple of (variable, extent) pairs, which the nodes store as a Domain
IndexMap = Union[Domain, tuple[tuple[str, int], ...]]


class Node:
    """What every node kind answers (the defaults are a leaf's: no children, binds
    nothing, writes no index)."""

    __slots__ = ()

    def children(self) -> tuple["Expr", ...]:
        return ()

    def replace_children(self, kids: tuple["Expr", ...]) -> "Expr":
        return self  # type: ignore[return-value]

    def binders(self) -> IndexMap:
        return ()

    def with_binders(self, index: IndexMap) -> "Expr":
        return self  # type: ignore[return-value]

    def index_uses(self) -> tuple[Index, ...]:
        return ()

    def with_index_uses(self, uses: tuple[Index, ...]) -> "Expr":
        return self  # type: ignore[return-value]

    def use_extents(self, shapes: dict[str, tuple[int, ...]]) -> tuple[int | None, ...]:
        """The extent each index use must range over (None: any), given the variables'
        shapes; the verifier checks uses against it."""
        return ()


@dataclass(frozen=True)
class Tensor(Node):
    """T_α: the component of variable ``name`` at indices α."""

    name: str
    indices: tuple[Index, ...]

    def index_uses(self):
        return self.indices

    def with_index_uses(self, uses):
        return Tensor(self.name, tuple(uses))

    def use_extents(self, shapes):
        return shapes[self.name]


@dataclass(frozen=True)
class Const(Node):
    """A number.

    Two numbers are equal when they are the same IEEE value: ``0`` and ``-0`` differ
    (``1/x`` tells them apart, so value numbering must not merge ``x*0`` with ``x*-0``),
    and every NaN equals every NaN (⊥ is one value; payloads carry no meaning)."""

    value: float

    def _key(self) -> tuple:
        v = float(self.value)
        return ("nan",) if math.isnan(v) else (v, math.copysign(1.0, v))

    def __eq__(self, other: object) -> bool:
        return type(other) is Const and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class Delta(Node):
    """Kronecker δ_ij."""

    first: Index
    second: Index

    def index_uses(self):
        return (self.first, self.second)

    def with_index_uses(self, uses):
        return Delta(uses[0], uses[1])

    def use_extents(self, shapes):
        return (None, None)  # δ compares any two indices (a position beyond one is 0)


@dataclass(frozen=True)
class Epsilon(Node):
    """Levi-Civita ε_ij or ε_ijk."""

    indices: tuple[Index, ...]

    def index_uses(self):
        return self.indices

    def with_index_uses(self, uses):
        return Epsilon(tuple(uses))

    def use_extents(self, shapes):
        return (len(self.indices),) * len(self.indices)


@dataclass(frozen=True)
class Neg(Node):
    arg: "Expr"

    def children(self):
        return (self.arg,)

    def replace_children(self, kids):
        return Neg(kids[0])


@dataclass(frozen=True)
class Apply(Node):
    """An elementwise function (sqrt exp log sin cos tanh abs)."""

    fn: str
    arg: "Expr"

    def children(self):
        return (self.arg,)

    def replace_children(self, kids):
        return Apply(self.fn, kids[0])


@dataclass(frozen=True)
class BinOp(Node):
    """e1 op e2 for op in + - * /; division is controlled division (000 Definition 8)."""

    op: str
    left: "Expr"
    right: "Expr"

    def children(self):
        return (self.left, self.right)

    def replace_children(self, kids):
        return BinOp(self.op, kids[0], kids[1])


@dataclass(frozen=True)
class Sum(Node):
    """Σ over the index map ``index`` (EIN's summation, a binding form)."""

    index: IndexMap
    body: "Expr"

    def __post_init__(self):
        object.__setattr__(self, "index", as_domain(self.index))
    def children(self):
        return (self.body,)

    def replace_children(self, kids):
        return Sum(self.index, kids[0])

    def binders(self):
        return self.index

    def with_binders(self, index):
        return Sum(index, self.body)


@dataclass(frozen=True)
class Reduce(Node):
    """A reduction other than Σ over the index map ``index``: ``op`` is ``*`` (product),
    ``max`` or ``min`` (TeIL's red*, redmax, redmin, 001 Fig. 6).  It starts from the
    operator's identity element (semantics.values.REDUCTIONS), so an empty map gives the
    identity."""

    op: str
    index: IndexMap
    body: "Expr"

    def __post_init__(self):
        object.__setattr__(self, "index", as_domain(self.index))
    def children(self):
        return (self.body,)

    def replace_children(self, kids):
        return Reduce(self.op, self.index, kids[0])

    def binders(self):
        return self.index

    def with_binders(self, index):
        return Reduce(self.op, index, self.body)


@dataclass(frozen=True)
class Stack(Node):
    """items[s-1] at position s of the index variable ``index`` (CFDlang's stacking
    ``[a b c]``: a new leading dimension of equal-shaped operands).  The selector is an
    index use: substituting a position for it selects that item."""

    index: Index  # a variable; an affine selector is allowed too (a position selects an item)
    items: tuple["Expr", ...]

    def children(self):
        return self.items

    def replace_children(self, kids):
        return Stack(self.index, tuple(kids))

    def index_uses(self):
        return (self.index,)

    def with_index_uses(self, uses):
        at = uses[0]
        return self.items[at - 1] if isinstance(at, int) else Stack(at, self.items)

    def use_extents(self, shapes):
        return (len(self.items),)


@dataclass(frozen=True)
class Concat(Node):
    """The direct sum ⊕ along one index (paper 003 §3: ``f ⊕ vec(f ⊗ f)``): item k at
    position g of ``index`` for g in its piece ``S_k < g <= S_k + n_k`` (S_k: the extents
    of the items before it), read there at its own variable ``v_k = g - S_k``.

    ``parts`` binds ``(v_k, n_k)`` for every item (each item uses only its own), so the
    generic walks (free indices, renaming apart, substitution) need nothing of their own;
    ``vec`` of the model language lowers to it too (a matrix is the direct sum of its
    rows).  A piecewise *select*, never arithmetic: a NaN in one piece stays there."""

    index: Index
    parts: IndexMap
    items: tuple["Expr", ...]

    def __post_init__(self):
        object.__setattr__(self, "parts", as_domain(self.parts))

    @property
    def starts(self) -> tuple[int, ...]:
        """S_k: the position before item k's piece (0 for the first)."""
        out, at = [], 0
        for _, n in self.parts:
            out.append(at)
            at += n
        return tuple(out)

    @property
    def extent(self) -> int:
        return sum(n for _, n in self.parts)

    def children(self):
        return self.items

    def replace_children(self, kids):
        return Concat(self.index, self.parts, tuple(kids))

    def binders(self):
        return self.parts

    def with_binders(self, index):
        return Concat(self.index, index, self.items)

    def index_uses(self):
        return (self.index,)

    def with_index_uses(self, uses):
        return Concat(uses[0], self.parts, self.items)

    def use_extents(self, shapes):
        return (self.extent,)


Expr = Union[Tensor, Const, Delta, Epsilon, Neg, Apply, BinOp, Sum, Reduce, Stack, Concat]

#: The node kinds, for code that must name them all (the verifier, tests).
KINDS: tuple[type, ...] = (Tensor, Const, Delta, Epsilon, Neg, Apply, BinOp, Sum, Reduce, Stack, Concat)


# ------------------------------------------------------------------ equality, hashing
# The dataclasses' own __eq__ and __hash__ recurse over the tree (too deep for Python
# at the depths the parser accepts): these walk it with an explicit stack, and each
# node keeps its hash once computed.
_SHALLOW: dict[type, tuple[str, ...]] = {}


def _shallow(node: Node) -> tuple:
    """The node's fields other than its children (a number by its IEEE identity:
    ``0`` and ``-0`` differ, NaNs are one value, see :class:`Const`)."""
    if isinstance(node, Const):
        return node._key()
    cls = type(node)
    names = _SHALLOW.get(cls)
    if names is None:
        names = _SHALLOW[cls] = tuple(f.name for f in dataclasses.fields(node)  # type: ignore[arg-type]
                                      if not _holds_children(node, f.name))
    return tuple(getattr(node, name) for name in names)


def _holds_children(node: Node, name: str) -> bool:
    value = getattr(node, name)
    return isinstance(value, Node) or (isinstance(value, tuple) and any(isinstance(v, Node) for v in value)) \
        or (isinstance(value, tuple) and not value and name in _CHILD_FIELDS)


#: Fields that hold children (an empty tuple of them cannot tell by its value).
_CHILD_FIELDS = frozenset({"args", "items", "operands", "children", "body", "arg", "left", "right"})


def _node_hash(self) -> int:
    return cached_bottom_up(self, "_hash", lambda node, kids: hash((type(node).__name__, _shallow(node), tuple(kids))))


def cached_bottom_up(e: Node, key: str, value: Callable[[Any, list], Any]) -> Any:
    """``value(node, its children's values)`` of ``e``, children first, without recursion;
    every node keeps its value under ``key`` once computed (nodes are immutable, and a
    rewritten tree shares its unchanged subtrees: a later walk stops at them)."""
    if key in e.__dict__:
        return e.__dict__[key]
    stack: list[tuple[Node, bool]] = [(e, False)]
    while stack:
        node, visited = stack.pop()
        if key in node.__dict__:
            continue
        kids = node.children()
        if not visited and any(key not in k.__dict__ for k in kids):
            stack.append((node, True))
            stack.extend((k, False) for k in kids)
            continue
        object.__setattr__(node, key, value(node, [k.__dict__[key] for k in kids]))
    return e.__dict__[key]


def _node_eq(self, other) -> bool:
    if self is other:
        return True
    if type(self) is not type(other):
        return NotImplemented
    stack = [(self, other)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        if type(a) is not type(b) or hash(a) != hash(b) or _shallow(a) != _shallow(b):
            return False
        ka, kb = a.children(), b.children()
        if len(ka) != len(kb):
            return False
        stack.extend(zip(ka, kb))
    return True


def _node_getstate(self) -> dict:
    state = dict(self.__dict__)
    state.pop("_hash", None)  # a str's hash differs from one process to the next
    for cached in ("_size", "_free", "_names", "_flops"):  # (cached_bottom_up's: computed again where asked)
        state.pop(cached, None)
    return state


for _cls in (Tensor, Const, Delta, Epsilon, Neg, Apply, BinOp, Sum, Reduce, Stack, Concat):
    _cls.__hash__ = _node_hash  # type: ignore[assignment]
    _cls.__eq__ = _node_eq  # type: ignore[assignment,method-assign]
    _cls.__getstate__ = _node_getstate  # type: ignore[attr-defined,method-assign]

# ------------------------------------------------------------------ traversal
def _node(e) -> Node:
    if not isinstance(e, Node):
        raise TypeError(f"not an EIN expression: {e!r}")
    return e


def children(e: Expr) -> tuple[Expr, ...]:
    """The subexpressions of ``e``, left to right."""
    if not isinstance(e, Node):  # (``_node`` inlined: every walk calls this once a node)
        raise TypeError(f"not an EIN expression: {e!r}")
    return e.children()


def replace_children(e: Expr, kids) -> Expr:
    """``e`` with its children replaced (same node kind, same other fields)."""
    return _node(e).replace_children(tuple(kids))


def map_children(e: Expr, f: Callable[[Expr], Expr]) -> Expr:
    """``e`` with ``f`` applied to each child; ``e`` itself when no child changed."""
    kids = _node(e).children()
    if not kids:
        return e
    new = tuple(f(c) for c in kids)
    if all(a is b for a, b in zip(new, kids)):
        return e
    return e.replace_children(new)


def bottom_up(e: Expr, f: Callable[[Expr], Expr]) -> Expr:
    """``f`` applied to every node, children first (``f`` sees the rewritten children)."""
    return transform(e, None, lambda node, ctx: (node, ctx), lambda node, ctx, inner: f(node))


def transform(e: Expr, context, enter: Callable, leave: Callable) -> Expr:
    """A walk with an explicit stack (expressions as deep as the parser accepts exceed
    Python's recursion limit): ``enter(node, ctx)`` gives ``(node, ctx for its
    children)`` before the children are visited (parents first, left to right);
    ``leave(node, ctx, inner)`` gives the result for ``node`` with its children already
    replaced by theirs (``node`` itself when none changed), ``ctx`` and ``inner`` being
    the context ``enter`` was given and the one it gave."""
    root, inner = enter(e, context)
    stack: list[tuple[Expr, Any, Any, tuple[Expr, ...], list[Expr]]] = [(root, context, inner, children(root), [])]
    while True:
        node, ctx, inner, kids, new = stack[-1]
        if len(new) < len(kids):
            child, child_inner = enter(kids[len(new)], inner)
            stack.append((child, inner, child_inner, children(child), []))
            continue
        stack.pop()
        if kids and any(map(_is_not, new, kids)):
            node = node.replace_children(tuple(new))
        done = leave(node, ctx, inner)
        if not stack:
            return done
        stack[-1][4].append(done)


def binders(e: Expr) -> IndexMap:
    """The index map ``e`` binds over its children (Σ and reductions), else ``()``."""
    if not isinstance(e, Node):
        raise TypeError(f"not an EIN expression: {e!r}")
    return e.binders()


def with_binders(e: Expr, index: IndexMap) -> Expr:
    """``e`` binding ``index`` instead (the body is unchanged: rename uses separately)."""
    return _node(e).with_binders(tuple(index))


def index_uses(e: Expr) -> tuple[Index, ...]:
    """The indices the node itself writes (not its children's): a tensor access's, δ's,
    ε's, a stack's selector."""
    return _node(e).index_uses()


def with_index_uses(e: Expr, uses) -> Expr:
    """``e`` writing ``uses`` instead (as many as :func:`index_uses` gives); a stack
    selected at a fixed position is that item."""
    return _node(e).with_index_uses(tuple(uses))


def use_extents(e: Expr, shapes: dict[str, tuple[int, ...]]) -> tuple[int | None, ...]:
    """The extent each of :func:`index_uses` must range over (None: any extent), given
    the variables' shapes (a tensor access's uses range over its dimensions)."""
    return _node(e).use_extents(shapes)


def nodes(e: Expr) -> Iterator[Expr]:
    """Every node of ``e``, parents before children, left to right."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def size(e: Expr) -> int:
    """The number of expression-tree nodes (004 §5.7.4 measures IR size this way), kept
    on each node (the optimizer's log counts every pass's program)."""
    return cached_bottom_up(_node(e), "_size", lambda node, kids: 1 + sum(kids))


def tensors(e: Expr) -> list[Tensor]:
    """Every tensor access in ``e``, left to right."""
    return [node for node in nodes(e) if isinstance(node, Tensor)]


def rename_tensors(e: Expr, rename: dict[str, str]) -> Expr:
    """``e`` with every access to a variable in ``rename`` reading the new name."""
    def go(node: Expr) -> Expr:
        if isinstance(node, Tensor) and node.name in rename:
            return Tensor(rename[node.name], node.indices)
        return node
    return bottom_up(e, go)


@dataclass(frozen=True)
class Statement:
    """``target[σ] = body``: for every point of σ, the target's component is the body."""

    target: str
    index: IndexMap
    body: Expr

    def __post_init__(self):
        object.__setattr__(self, "index", as_domain(self.index))

    @cached_property  # (computed once: the passes and the scheduler ask per statement)
    def reads(self) -> tuple[str, ...]:
        """The variables the body reads, each once, in order of first use (the args)."""
        return tuple(dict.fromkeys(t.name for t in tensors(self.body)))

    def operator(self) -> tuple[Expr, tuple[str, ...]]:
        """The λ form: the body over parameters ``T0, T1, ...`` and the arguments it is
        applied to, so that ``λ T0 T1 ⟨T0_ik T1_kj⟩`` is one operator wherever it is used."""
        args = self.reads
        rename = {name: f"T{n}" for n, name in enumerate(args)}
        return rename_tensors(self.body, rename), args


#: The qualifier of a variable a pass introduced (semantics/interface.py): never an
#: input, never a result, whatever the program's own qualifiers say.
TEMP = _TEMP


@dataclass(frozen=True)
class Decl:
    name: str
    shape: tuple[int, ...]
    qual: str | None = None
    #: the declared structure (SPEC §4, :mod:`.structure`), None for a dense tensor
    structure: Structure | None = None


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
