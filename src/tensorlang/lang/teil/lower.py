"""Lowering TeIL to EIN: every TeIL operator is index notation over fresh indices
(docs/teil.md, "Lowering to EIN" and, for reductions over an expanded dimension,
"Decisions where the paper is silent")."""

from __future__ import annotations

from ...ein import ir
from ...ein.index import Domain
from ...ein.names import IndexNames
from ...errors import error
from ...semantics.types import CheckedProgram, Context
from . import ast
from .ast import full_params
from .typecheck import expression_types

#: The most EIN nodes ``red* i (expa i n e)`` may lower to (n copies of e's EIN).
MAX_PRODUCT_NODES = 4096


def lower_program(checked: CheckedProgram) -> ir.Program:
    """The EIN program of a checked TeIL program: one EIN statement per statement."""
    decls = tuple(ir.Decl(d.name, d.shape, d.qual) for d in checked.program.decls)
    return ir.Program(decls, tuple(lower_statement(s, checked.context) for s in checked.program.stmts))


def lower_statement(stmt: ast.Assign, gamma: Context) -> ir.Statement:
    shape = gamma[stmt.target]
    names = IndexNames()
    out = [names.output() for _ in shape]
    body = _Lowering(expression_types(stmt, gamma), names).lower(stmt.expr, out)
    return ir.Statement(stmt.target, Domain(tuple(zip(out, shape))), body)


def _power(body: ir.Expr, n: int) -> ir.Expr:
    """body multiplied n times, as a balanced tree (nested log2(n) deep, not n deep)."""
    if n == 1:
        return body
    return ir.BinOp("*", _power(body, n // 2), _power(body, n - n // 2))


def _uses(e: ir.Expr, name: str) -> bool:
    return any(name in t.indices for t in ir.tensors(e))


class _Lowering:
    def __init__(self, types: dict[int, tuple[int, ...]], names: IndexNames):
        self.types = types
        self.names = names

    def lower(self, e: ast.Expr, at: list) -> ir.Expr:
        """EIN for ``e`` whose dimensions are indexed by ``at`` (names or fixed positions)."""
        if isinstance(e, ast.Var):
            return ir.Tensor(e.name, tuple(at))
        if isinstance(e, ast.Paren):
            return self.lower(e.expr, at)
        p = full_params(e)
        if e.op in ("add", "mul"):
            scalar_first = e.op == "mul" and self.types[id(e.args[0])] == ()
            left = self.lower(e.args[0], [] if scalar_first else at)
            return ir.BinOp("+" if e.op == "add" else "*", left, self.lower(e.args[1], at))
        if e.op == "prod":
            k = len(self.types[id(e.args[0])])
            return ir.BinOp("*", self.lower(e.args[0], at[:k]), self.lower(e.args[1], at[k:]))
        (arg,) = e.args
        if e.op == "contr":  # red+ i0 (diag i0 i1 e)
            i0, i1 = p
            return self.reduce("+", i0, self.types[id(arg)][i0 - 1], at,
                               lambda inner: self.lower(arg, inner[: i1 - 1] + [inner[i0 - 1]] + inner[i1 - 1:]), e)
        if e.op in ast.REDUCTIONS:
            i = p[0]
            return self.reduce(ast.REDUCTIONS[e.op], i, self.types[id(arg)][i - 1], at, lambda inner: self.lower(arg, inner),
                               e)
        if e.op == "transp":
            i0, i1 = p
            inner = list(at)
            inner[i0 - 1], inner[i1 - 1] = at[i1 - 1], at[i0 - 1]
            return self.lower(arg, inner)
        if e.op == "diag":
            i0, i1 = p
            return self.lower(arg, at[: i1 - 1] + [at[i0 - 1]] + at[i1 - 1:])
        if e.op == "expa":
            i, _n = p
            return self.lower(arg, at[: i - 1] + at[i:])
        if e.op == "proj":
            i, m = p
            return self.lower(arg, at[: i - 1] + [m] + at[i - 1:])
        raise TypeError(f"not a TeIL operator: {e.op!r}")  # pragma: no cover

    def reduce(self, op: str, i: int, extent: int, at: list, body_at, e: ast.Op) -> ir.Expr:
        """A reduction at dimension ``i`` of the operand, over a fresh index of ``extent``."""
        k = self.names.summed()
        body = body_at(list(at[: i - 1]) + [k] + list(at[i - 1:]))
        if not _uses(body, k):  # 001 eq. (5) and its analogues
            if op == "+":
                return ir.BinOp("*", ir.Const(float(extent)), body)
            if op in ("max", "min"):
                return body
            if extent * ir.size(body) > MAX_PRODUCT_NODES:
                raise error("too-large",
                            f"{e.op} over an expanded dimension of extent {extent} multiplies {extent} copies of its "
                            f"operand, more than tensorlang lowers ({MAX_PRODUCT_NODES} nodes); use a smaller extent",
                            e.head_span)
            return _power(body, extent)
        if op == "+":
            return ir.Sum(Domain(((k, extent),)), body)
        return ir.Reduce(op, Domain(((k, extent),)), body)
