"""The AST of STUR programs (003 §4, Fig. 5; docs/structure.md, "STUR in one page"): frozen
nodes, each with the span of its text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ...errors import Span

#: Fact kinds a head may carry: dimensions, unique set, redundancy map.
KINDS = {"D": "dimensions", "U": "unique set", "R": "redundancy map"}


# ------------------------------------------------------------------ index expressions
@dataclass(frozen=True)
class IName:
    """An index variable or a symbol (which one is the checker's business)."""

    name: str
    span: Span


@dataclass(frozen=True)
class INum:
    value: int
    span: Span


@dataclass(frozen=True)
class INeg:
    arg: "IExpr"
    span: Span


@dataclass(frozen=True)
class IBin:
    """``+ - *`` and ``/``, integer division truncating toward zero (C's, as in the
    tool's generated code)."""

    op: str
    left: "IExpr"
    right: "IExpr"
    span: Span


IExpr = Union[IName, INum, INeg, IBin]


# ------------------------------------------------------------------ factors
@dataclass(frozen=True)
class Access:
    """``T(i, j)``, or ``T^-1(i, j)`` (``inverse``: 1 / T(i, j)); ``N^-1()`` with N a
    symbol reads the symbol's value."""

    name: str
    args: tuple[str, ...]
    inverse: bool
    span: Span
    arg_spans: tuple[Span, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Number:
    value: float
    inverse: bool
    span: Span


@dataclass(frozen=True)
class Condition:
    """A chained comparison ``(e0 op1 e1 op2 e2 ...)``: 1 where every link holds, else the point
    is not in the rule's iteration set."""

    exprs: tuple[IExpr, ...]
    ops: tuple[str, ...]
    span: Span


Factor = Union[Access, Number, Condition]


@dataclass(frozen=True)
class Product:
    factors: tuple[Factor, ...]
    span: Span


@dataclass(frozen=True)
class Rule:
    """``name(args) := products[0] + products[1] + ...``; ``kind`` is None for a
    computation, else "D", "U" or "R" (a fact about ``name``)."""

    name: str
    kind: str | None
    args: tuple[str, ...]
    products: tuple[Product, ...]
    span: Span
    head_span: Span
    preprocess: bool = False


@dataclass(frozen=True)
class Program:
    """A STUR file: ``symbols``, ``outputs`` (empty: every computed tensor outside the preprocessing
    block), ``iters`` (loop orders), its rules in order, and ``params`` (``--param``)."""

    symbols: tuple[str, ...]
    outputs: tuple[str, ...]
    iters: tuple[tuple[str, tuple[str, ...]], ...]
    rules: tuple[Rule, ...]
    params: tuple[tuple[str, int], ...] = ()
    spans: tuple[tuple[str, Span], ...] = field(default=(), compare=False)  # header names -> span

    @property
    def computations(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.kind is None)


def index_names(e: IExpr) -> tuple[str, ...]:
    """The names an index expression mentions, each once, in order."""
    if isinstance(e, IName):
        return (e.name,)
    if isinstance(e, INum):
        return ()
    if isinstance(e, INeg):
        return index_names(e.arg)
    return tuple(dict.fromkeys(index_names(e.left) + index_names(e.right)))
