"""Typing of TeIL programs: the rules of paper 001 Figure 8 (and Figure 12), by name
(docs/teil.md, "Typing and semantics"; an operator in Core-TeIL's form is typed by its Core rule)."""

from __future__ import annotations

import functools
from typing import Mapping

from ...errors import error
from ...semantics.sizes import Sym
from ...semantics.types import MAX_RANK, CheckedProgram, Context, check_statements, show
from ..tl.typecheck import ok_stmt
from . import ast
from .ast import Shape, full_params

#: The name 001 gives each operator's typing rule.
RULES = {"add": "T-Add", "mul": "T-Mul", "prod": "T-Prod", "red+": "T-Red+", "red*": "T-Red*",
         "redmax": "T-Redmax", "redmin": "T-Redmin", "transp": "T-Transp", "diag": "T-Diag",
         "expa": "T-Expa", "proj": "T-Proj", "contr": "T-Diag"}


def rule_of(e: ast.Op) -> str:
    return RULES[e.op] + ("^core" if e.core else "")


def type_of(expr: ast.Expr, shapes: Mapping[str, Shape] | Context, types: dict[int, Shape] | None = None) -> Shape:
    """Γ ⊢ e : ī (Figure 8).  Raises TensorLangError naming the rule whose premise fails.
    ``types``, if given, receives the type of every subexpression, keyed by ``id``."""
    if isinstance(shapes, Context):
        shapes = shapes.shapes
    found: dict[int, Shape] = {} if types is None else types

    def t(e: ast.Expr) -> Shape:
        if isinstance(e, ast.Var):  # T-Var
            if e.name not in shapes:
                raise error("undeclared", f"{e.name!r} is not allocated", e.span, "T-Var")
            shape = shapes[e.name]
        elif isinstance(e, ast.Paren):  # T-Paren
            shape = t(e.expr)
        else:
            shape = op_type(e, [t(a) for a in e.args])
        found[id(e)] = shape
        return shape

    return t(expr)


def _dim(e: ast.Op, n: int, value: int, rank: int, what: str, extra: int = 0) -> None:
    """A dimension argument must name a dimension of the operand (1..rank+extra)."""
    top = rank + extra
    if not 1 <= value <= top:
        allowed = f"1..{top}" if top else "none: the operand is a scalar"
        raise error("dim-range", f"{e.op} {what} {value}, but the operand has rank {rank} (allowed: {allowed})",
                    e.param_span(n), rule_of(e))


def op_type(e: ast.Op, operands: list[Shape]) -> Shape:
    """The type of ``e`` given its operands' types: one rule of Figure 8 per operator;
    a type of more than :data:`MAX_RANK` dimensions is error[too-large]."""
    shape = _op_type(e, operands)
    if len(shape) > MAX_RANK:
        raise error("too-large", f"{e.op} gives a tensor of {len(shape)} dimensions; at most {MAX_RANK} "
                    "(numpy's limit) are supported", e.span, rule_of(e))
    return shape


def _op_type(e: ast.Op, operands: list[Shape]) -> Shape:
    rule = rule_of(e)
    if e.op == "add":  # T-Add: equal types
        a, b = operands
        if a != b:
            raise error("shape", f"add needs operands of equal type, got {show(a)} and {show(b)}", e.span, rule)
        return a
    if e.op == "mul":  # T-SMul: a scalar first; T-Mul: equal types
        a, b = operands
        if a == ():
            return b
        if a != b:
            hint = "; a scalar must be the first operand (T-SMul)" if b == () else " (or a scalar first operand, T-SMul)"
            raise error("shape", f"mul needs operands of equal type{hint}, got {show(a)} and {show(b)}", e.span, rule)
        return a
    if e.op == "prod":  # T-Prod: the types concatenate
        return operands[0] + operands[1]
    (shape,) = operands
    rank = len(shape)
    p = full_params(e)
    if e.op in ast.REDUCTIONS:  # T-Red+: dimension i disappears
        _dim(e, 0, p[0], rank, "reduces dimension")
        return shape[: p[0] - 1] + shape[p[0]:]
    if e.op == "transp":  # T-Transp: extents i0 and i1 swap
        for n, d in enumerate(p):
            _dim(e, min(n, len(e.params) - 1), d, rank, "swaps dimension")
        out = list(shape)
        out[p[0] - 1], out[p[1] - 1] = out[p[1] - 1], out[p[0] - 1]
        return tuple(out)
    if e.op in ("diag", "contr"):  # T-Diag (contr i0 i1 e := red+ i0 (diag i0 i1 e))
        i0, i1 = p
        if e.core and rank < 2:
            raise error("dim-range", f"diag needs an operand of rank 2 at least, got {show(shape)}", e.head_span, rule)
        for n, d in enumerate(p):
            _dim(e, n, d, rank, "names dimension")
        if i0 >= i1:
            raise error("dim-range",
                        f"{e.op} {i0} {i1}: the first dimension must come before the second (write {e.op} {i1} {i0})"
                        if i0 > i1 else f"{e.op} needs two different dimensions, got {i0} twice", e.head_span, rule)
        if shape[i0 - 1] != shape[i1 - 1]:
            raise error("shape", f"{e.op} {i0} {i1}: dimensions {i0} and {i1} of {show(shape)} have different extents "
                        f"{shape[i0 - 1]} and {shape[i1 - 1]}", e.head_span, rule)
        diag = shape[: i1 - 1] + shape[i1:]
        return diag[: i0 - 1] + diag[i0:] if e.op == "contr" else diag
    if e.op == "expa":  # T-Expa: a dimension of extent n inserted at position i
        i, n = p
        _dim(e, 0, i, rank, "inserts at position", extra=1)
        if n < 1:
            raise error("shape", f"expa: the new dimension's extent must be positive, got {n}",
                        e.param_span(len(e.params) - 1), rule)
        return shape[: i - 1] + (n,) + shape[i - 1:]
    if e.op == "proj":  # T-Proj: the slice m of dimension i, which disappears
        i, m = p
        _dim(e, 0, i, rank, "projects dimension")
        if m < 1 or not isinstance(shape[i - 1], Sym) and m > shape[i - 1]:  # a symbol: checked once bound
            raise error("dim-range", f"proj {i} {m}: position {m} is outside dimension {i} of {show(shape)}, which "
                        f"has extent {shape[i - 1]}", e.param_span(len(e.params) - 1), rule)
        return shape[: i - 1] + shape[i:]
    raise TypeError(f"not a TeIL operator: {e.op!r}")  # pragma: no cover


# ------------------------------------------------------------------ programs
def check_program(program: ast.Program) -> CheckedProgram:
    """OK-Prog: Γ_allocs from the allocations, then OK-Seq / OK-Stmt for every statement,
    and the uninit analysis of qualified programs, as the model language does it (the
    model language's s-var is 001's allocation rule here).

    One diagnostic per statement at most; all are raised together."""
    ok = functools.partial(ok_stmt, right=lambda stmt, gamma: type_of(stmt.expr, gamma), rule="OK-Stmt",
                           declared="allocated")
    return check_statements(program, [], ok, ast.variables_read, declaration_rule="alloc (001 §3.2)")


def expression_types(stmt: ast.Assign, gamma: Context) -> dict[int, Shape]:
    """type_Γ of every subexpression of a checked statement, keyed by ``id`` (for lowering
    and evaluation, which need ``rank_Γ`` of operands)."""
    types: dict[int, Shape] = {}
    type_of(stmt.expr, gamma, types)
    return types

