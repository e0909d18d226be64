"""The abstract syntax of the model language (paper 000, Figure 1, with SPEC section 1): immutable
nodes, each with the :class:`~tensorlang.errors.Span` of its text, which takes no part in equality."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ...ein.index import Affine
from ...errors import Span
from ...semantics.values import FUNCTION_NAMES, REDUCTION_WORDS

def span_field():
    return field(default=None, compare=False, repr=False)


Shape = tuple[int, ...]


# ---------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Var:
    """A variable reference ``x`` (typed by t-var, evaluated by eq. 7)."""

    name: str
    span: Span | None = span_field()


@dataclass(frozen=True)
class Number:
    """A number literal; a scalar of type ``[]``."""

    value: float
    text: str = field(default="", compare=False)
    span: Span | None = span_field()


@dataclass(frozen=True)
class Paren:
    """``( e )`` (t-paren, eq. 8).  Kept so that printing gives back what was written."""

    expr: "Expr"
    span: Span | None = span_field()


@dataclass(frozen=True)
class Neg:
    """Unary minus ``-e`` (an extension: same shape as e)."""

    expr: "Expr"
    span: Span | None = span_field()


@dataclass(frozen=True)
class Outer:
    """Outer product ``e1 # e2`` (t-prod, eq. 9): the shapes concatenate."""

    left: "Expr"
    right: "Expr"
    span: Span | None = span_field()


@dataclass(frozen=True)
class Pair:
    """A pair of 1-based dimension numbers ``[m n]``."""

    first: int
    second: int
    span: Span | None = span_field()


@dataclass(frozen=True)
class Contract:
    """Contraction ``e . [m n]`` (t-contr, eq. 11), or a group ``e . [[m1 n1] [m2 n2] ...]``.

    In a group every pair names dimensions of ``e`` before any of them is removed (002).
    """

    expr: "Expr"
    pairs: tuple[Pair, ...]
    grouped: bool = False
    span: Span | None = span_field()


@dataclass(frozen=True)
class Transpose:
    """Transposition ``e ^ [m n]`` (t-trans, eq. 10): dimensions m and n swap."""

    expr: "Expr"
    pair: Pair
    span: Span | None = span_field()


@dataclass(frozen=True)
class Binary:
    """``e1 op e2`` for op in + - * / (t-elem, t-smul, t-sdiv; eqs. 12-18)."""

    op: str
    left: "Expr"
    right: "Expr"
    span: Span | None = span_field()


@dataclass(frozen=True)
class Call:
    """An elementwise function ``f(e)`` with f in :data:`FUNCTIONS`."""

    fn: str
    arg: "Expr"
    span: Span | None = span_field()


# ---------------------------------------------------------------- index form (SPEC section 3)
@dataclass(frozen=True)
class IndexRef:
    """One index of an access: an index variable (a name), a fixed 1-based position, or
    an affine expression of index variables (``i+1``, ``2*i+a-1``: a computed position,
    bounds-checked, see :mod:`tensorlang.ein.index`).  A reduction's variable may carry
    the extent written for it (``sum(a:3)``) in ``extent``."""

    value: str | int | Affine
    span: Span | None = span_field()
    extent: int | None = None

    @property
    def is_affine(self) -> bool:
        return isinstance(self.value, Affine)

    @property
    def variable(self) -> str:
        """The index variable this index is: a reduction's binder is one by the grammar
        (``binder: NAME``), a left-side index once the type checker has accepted its
        statement.  Anything else is a caller's mistake, not a program's."""
        if not isinstance(self.value, str):
            raise TypeError(f"index {self.value} is not an index variable")
        return self.value


@dataclass(frozen=True)
class Access:
    """``A[i, k]``: a component of a variable, indexed by index variables or positions."""

    name: str
    indices: tuple[IndexRef, ...]
    span: Span | None = span_field()


@dataclass(frozen=True)
class Delta:
    """The Kronecker delta ``delta[i, j]``: 1 where the two indices are equal, else 0."""

    first: IndexRef
    second: IndexRef
    span: Span | None = span_field()


@dataclass(frozen=True)
class Epsilon:
    """The Levi-Civita symbol ``eps[i, j]`` (extent 2) or ``eps[i, j, k]`` (extent 3)."""

    indices: tuple[IndexRef, ...]
    span: Span | None = span_field()


@dataclass(frozen=True)
class Sum:
    """``sum(k, l) body``: Σ over the bound index variables, each over its inferred extent."""

    indices: tuple[IndexRef, ...]
    body: "Expr"
    span: Span | None = span_field()


@dataclass(frozen=True)
class Reduce:
    """``prod(k) body``, ``max(k) body``, ``min(k) body``: a reduction other than Σ over the
    bound index variables (TeIL's red*, redmax, redmin; EIN's ``Reduce``).  ``op`` is the
    word as written, a key of :data:`REDUCTIONS`."""

    op: str
    indices: tuple[IndexRef, ...]
    body: "Expr"
    span: Span | None = span_field()


#: Index-form reduction words other than ``sum`` and the EIN reduction operator each one is.
REDUCTIONS = {word: op for word, op in REDUCTION_WORDS.items() if op != "+"}

@dataclass(frozen=True)
class Stack:
    """Stacking ``[e1, e2, ...]`` (t-stack, CFDlang's ``[e1 e2 ...]``): operands of equal
    type t stacked along a new leading dimension, type ``[len(items)] + t``.

    In index form ``[e1, e2, ...][i]`` is item i (1-based) of the stack: ``index`` is
    then the index variable that selects it; in operator form ``index`` is None."""

    items: tuple["Expr", ...]
    index: IndexRef | None = None
    span: Span | None = span_field()


@dataclass(frozen=True)
class Concat:
    """The direct sum ⊕ (paper 003 §3).  Operator form ``concat(e1, e2, ...)``: operands
    of equal leading extents joined along their last dimension (t-concat: ``[s.. a] ⊕
    [s.. b]`` is ``[s.. a+b]``; for vectors, 003's ⊕).  Index form ``concat(a:3 => e1,
    b:4 => e2)[p]``: at position p, item k at its own variable (``parts[k]``, with the
    item's extent) p - (the extents before it); ``index`` is then p."""

    items: tuple["Expr", ...]
    parts: tuple[IndexRef, ...] = ()
    index: IndexRef | None = None
    span: Span | None = span_field()


@dataclass(frozen=True)
class Vec:
    """``vec(e)`` (paper 003 §3): e's last two dimensions flattened, row-major (t-vec:
    ``[s.. a b]`` is ``[s.. a*b]``; for a matrix, 003's vec).  ``vec(vec(t))`` flattens three."""

    expr: "Expr"
    span: Span | None = span_field()


Expr = Union[Var, Number, Paren, Neg, Outer, Contract, Transpose, Binary, Call, Access, Delta, Epsilon, Sum, Reduce,
             Stack, Concat, Vec]

#: The elementwise functions of SPEC section 1 (their meaning: semantics.values.FUNCTIONS).
FUNCTIONS = FUNCTION_NAMES


# ---------------------------------------------------------------- program
@dataclass(frozen=True)
class Annotation:
    """A structure annotation as written (SPEC §4): ``kind`` is one of symmetric,
    diagonal, upper, lower, zero, row, col (``arg`` its position) or where
    (``conditions``: each a chain ``(indices, operators)``)."""

    kind: str
    arg: int | None = None
    conditions: tuple[tuple[tuple, tuple[str, ...]], ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True)
class Decl:
    """``[qual] var x : [d1 ... dk] [structure]`` (s-var).  ``qual`` is None, 'in', 'out'
    or 'inout'; ``structure`` the annotation, if any."""

    name: str
    shape: Shape
    qual: str | None = None
    span: Span | None = span_field()
    name_span: Span | None = span_field()
    structure: Annotation | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Assign:
    """``x = e`` (ok-stmt, ev-stmt)."""

    target: str
    expr: Expr
    span: Span | None = span_field()
    target_span: Span | None = span_field()


@dataclass(frozen=True)
class IndexAssign:
    """``C[i, j] = e``: for every value of the left indices, C's component is e (EIN)."""

    target: str
    indices: tuple[IndexRef, ...]
    expr: Expr
    span: Span | None = span_field()
    target_span: Span | None = span_field()


Stmt = Union[Assign, IndexAssign]


@dataclass(frozen=True)
class Program:
    """``decl* stmt*``; ``lang`` names the front end that produced it."""

    decls: tuple[Decl, ...]
    stmts: tuple[Stmt, ...]
    lang: str = "tl"

    @property
    def qualified(self) -> bool:
        """True when any declaration carries a qualifier (000 section 5)."""
        return any(d.qual is not None for d in self.decls)


def children(expr: Expr) -> tuple[Expr, ...]:
    """The immediate subexpressions of ``expr``, left to right."""
    if isinstance(expr, (Var, Number, Access, Delta, Epsilon)):
        return ()
    if isinstance(expr, (Sum, Reduce)):
        return (expr.body,)
    if isinstance(expr, (Paren, Neg, Contract, Transpose, Vec)):
        return (expr.expr,)
    if isinstance(expr, (Outer, Binary)):
        return (expr.left, expr.right)
    if isinstance(expr, (Stack, Concat)):
        return tuple(expr.items)
    if isinstance(expr, Call):
        return (expr.arg,)
    raise TypeError(f"not an expression: {expr!r}")


def nodes(expr, children=children):
    """Every node of ``expr``, in source order, outermost first (iteratively: no recursion
    limit); ``children`` gives a node's subexpressions (TeIL's AST walks with its own)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def variables_read(expr: Expr) -> list[Var | Access]:
    """Every variable occurrence in ``expr``, in source order."""
    return [node for node in nodes(expr) if isinstance(node, (Var, Access))]
