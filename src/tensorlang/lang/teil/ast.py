"""The abstract syntax of TeIL (paper 001, Figure 5): one node class, :class:`Op`, for every operator;
Core-TeIL's forms are the same operators with fewer integer arguments (:func:`full_params`, docs/teil.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ...errors import Span
from ..tl.ast import Shape, span_field, nodes as tl_nodes

#: Operators taking two operand expressions and no integer arguments.
BINARY = ("add", "mul", "prod")
#: The reductions and the EIN reduction operator each one is (``+`` is EIN's Sum).
REDUCTIONS = {"red+": "+", "red*": "*", "redmax": "max", "redmin": "min"}

#: How many integer arguments each operator takes in full TeIL (001 Figure 5) ...
FULL_ARITY = {"add": 0, "mul": 0, "prod": 0, "red+": 1, "red*": 1, "redmax": 1, "redmin": 1,
              "transp": 2, "diag": 2, "expa": 2, "proj": 2, "contr": 2}
#: ... and in Core-TeIL (001 Figure 12), where an operator acts on the first dimension(s)
#: and transp swaps dimensions i and i+1.  contr is full-TeIL notation (001 eq. (6)).
CORE_ARITY = {"red+": 0, "red*": 0, "redmax": 0, "redmin": 0, "transp": 1, "diag": 0, "expa": 1, "proj": 1}

#: Words that cannot name a variable.
RESERVED = frozenset({"alloc", "in", "out", "inout", *BINARY, "redmax", "redmin", "transp", "diag", "expa",
                      "proj", "contr"})


@dataclass(frozen=True)
class Var:
    """A variable ``x`` (T-Var)."""

    name: str
    span: Span | None = span_field()


@dataclass(frozen=True)
class Paren:
    """``( e )`` (T-Paren); kept so that printing gives back what was written."""

    expr: "Expr"
    span: Span | None = span_field()


@dataclass(frozen=True)
class Op:
    """``op i1 .. ik e1 .. em``: an operator, its integer arguments, its operands.

    ``head_span`` covers the operator word and its integer arguments (where errors about
    the arguments point); ``param_spans`` locate each integer argument.
    """

    op: str
    params: tuple[int, ...]
    args: tuple["Expr", ...]
    span: Span | None = span_field()
    head_span: Span | None = span_field()
    param_spans: tuple[Span, ...] | None = span_field()

    @property
    def core(self) -> bool:
        """True when written in Core-TeIL's form (fewer integer arguments than full TeIL)."""
        return self.op in CORE_ARITY and len(self.params) == CORE_ARITY[self.op] != FULL_ARITY[self.op]

    def param_span(self, n: int) -> Span | None:
        if self.param_spans and n < len(self.param_spans):
            return self.param_spans[n]
        return self.head_span


Expr = Union[Var, Paren, Op]


def full_params(e: Op) -> tuple[int, ...]:
    """The full-TeIL integer arguments of an operator (001 Figure 12 against Figure 8):
    Core ``transp i`` is ``transp i (i+1)``, ``red+`` is ``red+ 1``, ``diag`` is
    ``diag 1 2``, ``expa n`` is ``expa 1 n`` and ``proj m`` is ``proj 1 m``."""
    if not e.core:
        return e.params
    if e.op == "transp":
        return (e.params[0], e.params[0] + 1)
    if e.op in REDUCTIONS:
        return (1,)
    if e.op == "diag":
        return (1, 2)
    return (1, e.params[0])  # expa n, proj m


# ---------------------------------------------------------------- program
@dataclass(frozen=True)
class Alloc:
    """``[qual] alloc x : [n1 .. nk]``.  Named ``Decl``'s fields so that the shared context
    and the kernel treat it like a model-language declaration."""

    name: str
    shape: Shape
    qual: str | None = None
    span: Span | None = span_field()
    name_span: Span | None = span_field()


@dataclass(frozen=True)
class Assign:
    """``x = e`` (OK-Stmt, St-Stmt)."""

    target: str
    expr: Expr
    span: Span | None = span_field()
    target_span: Span | None = span_field()


@dataclass(frozen=True)
class Program:
    """``alloc* stmt*`` (OK-Prog).  ``decls`` are the allocations."""

    decls: tuple[Alloc, ...]
    stmts: tuple[Assign, ...]
    lang: str = "teil"

    @property
    def qualified(self) -> bool:
        return any(d.qual is not None for d in self.decls)


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Var):
        return ()
    if isinstance(e, Paren):
        return (e.expr,)
    if isinstance(e, Op):
        return e.args
    raise TypeError(f"not a TeIL expression: {e!r}")


def variables_read(e: Expr) -> list[Var]:
    """Every variable occurrence in ``e``, in source order."""
    return [node for node in tl_nodes(e, children) if isinstance(node, Var)]


def operators(e: Expr):
    """Every operator node in ``e``, outermost first."""
    return (node for node in tl_nodes(e, children) if isinstance(node, Op))
