"""Lowering: the AST of either statement form to EIN (004 §5.1, "Translation"): every
operator as index notation over fresh index variables (docs/ein.md, "Lowering")."""

from __future__ import annotations

from ...ein import ir
from ...ein.index import Domain
from ...ein.names import IndexNames
from ...semantics.types import CheckedProgram, Context
from . import ast
from .structure import structure_of
from .typecheck import sum_extents, type_of

def lower_program(checked: CheckedProgram) -> ir.Program:
    """The EIN program of a checked program: one EIN statement per source statement."""
    gamma = checked.context
    decls = tuple(ir.Decl(d.name, d.shape, d.qual, structure_of(d)) for d in checked.program.decls)
    return ir.Program(decls, tuple(lower_statement(s, gamma) for s in checked.program.stmts))


def lower_statement(stmt: ast.Stmt, gamma: Context) -> ir.Statement:
    shape = gamma[stmt.target]
    if isinstance(stmt, ast.IndexAssign):
        index = Domain(tuple((ref.variable, n) for ref, n in zip(stmt.indices, shape)))  # checked: variables
        return ir.Statement(stmt.target, index, _lower_index_form(stmt.expr, gamma))
    names = IndexNames()
    out = [names.output() for _ in shape]
    body = _Lowering(gamma, names).lower(stmt.expr, list[ir.Index](out))
    return ir.Statement(stmt.target, Domain(tuple(zip(out, shape))), body)


class _Lowering:
    def __init__(self, gamma: Context, names: IndexNames):
        self.gamma = gamma
        self.names = names
        self._shapes: dict[int, tuple[int, ...]] = {}

    def shape(self, e: ast.Expr) -> tuple[int, ...]:
        found = self._shapes.get(id(e))  # (type_of fills in every subexpression's)
        return type_of(e, self.gamma, self._shapes) if found is None else found

    def lower(self, e: ast.Expr, at: list[ir.Index]) -> ir.Expr:
        """The EIN expression for ``e`` whose free indices, dimension by dimension, are
        ``at`` (index variables; inside a vec, fixed positions too)."""
        if isinstance(e, ast.Var):
            return ir.Tensor(e.name, tuple(at))
        if isinstance(e, ast.Number):
            return ir.Const(e.value)
        if isinstance(e, ast.Paren):
            return self.lower(e.expr, at)
        if isinstance(e, ast.Neg):
            return ir.Neg(self.lower(e.expr, at))
        if isinstance(e, ast.Call):
            return ir.Apply(e.fn, self.lower(e.arg, at))
        if isinstance(e, ast.Outer):
            rank = len(self.shape(e.left))
            return ir.BinOp("*", self.lower(e.left, at[:rank]), self.lower(e.right, at[rank:]))
        if isinstance(e, ast.Transpose):
            swapped = list(at)
            m, n = e.pair.first - 1, e.pair.second - 1
            swapped[m], swapped[n] = swapped[n], swapped[m]
            return self.lower(e.expr, swapped)
        if isinstance(e, ast.Contract):
            operand = self.shape(e.expr)
            summed: list[str | None] = [None] * len(operand)  # the Σ variable at each contracted dimension
            bound = []
            for pair in e.pairs:
                k = self.names.summed()
                summed[pair.first - 1] = summed[pair.second - 1] = k
                bound.append((k, operand[pair.first - 1]))
            rest = iter(at)
            inner = [name if name is not None else next(rest) for name in summed]
            return ir.Sum(Domain(tuple(bound)), self.lower(e.expr, inner))
        if isinstance(e, ast.Binary):
            left = self.lower(e.left, [] if self.shape(e.left) == () else at)
            right = self.lower(e.right, [] if self.shape(e.right) == () else at)
            return ir.BinOp(e.op, left, right)
        if isinstance(e, ast.Stack):  # t-stack: the first index picks the item
            if isinstance(at[0], int):
                return self.lower(e.items[at[0] - 1], at[1:])
            return ir.Stack(at[0], tuple(self.lower(item, at[1:]) for item in e.items))
        if isinstance(e, ast.Concat):  # t-concat: the last index picks the item's piece
            extents = [self.shape(item)[-1] for item in e.items]
            last = at[-1]
            if isinstance(last, int):
                for item, n in zip(e.items, extents):
                    if last <= n:
                        return self.lower(item, at[:-1] + [last])
                    last -= n
                raise TypeError(f"position {at[-1]} is past the concat {e!r}")  # pragma: no cover
            parts = [(self.names.summed(), n) for n in extents]
            return ir.Concat(last, tuple(parts), tuple(self.lower(item, at[:-1] + [v])
                                                        for item, (v, _) in zip(e.items, parts)))
        if isinstance(e, ast.Vec):  # t-vec: position p is row (p-1) div n + 1, column (p-1) mod n + 1
            m, n = self.shape(e.expr)[-2:]
            last = at[-1]
            if isinstance(last, int):
                return self.lower(e.expr, at[:-1] + [(last - 1) // n + 1, (last - 1) % n + 1])
            parts = [(self.names.summed(), n) for _ in range(m)]
            return ir.Concat(last, tuple(parts), tuple(self.lower(e.expr, at[:-1] + [row, v])
                                                        for row, (v, _) in enumerate(parts, start=1)))
        raise TypeError(f"not an operator-form expression: {e!r}")  # pragma: no cover


def _lower_index_form(e: ast.Expr, gamma: Context) -> ir.Expr:
    if isinstance(e, ast.Access):
        return ir.Tensor(e.name, tuple(ref.value for ref in e.indices))
    if isinstance(e, ast.Var):
        return ir.Tensor(e.name, ())
    if isinstance(e, ast.Number):
        return ir.Const(e.value)
    if isinstance(e, ast.Delta):
        return ir.Delta(e.first.value, e.second.value)
    if isinstance(e, ast.Epsilon):
        return ir.Epsilon(tuple(ref.value for ref in e.indices))
    if isinstance(e, (ast.Sum, ast.Reduce)):  # sum(k); prod(k), max(k), min(k)
        extents = sum_extents(e, gamma.shapes)
        index = Domain(tuple((ref.variable, n) for ref, n in zip(e.indices, extents)))
        body = _lower_index_form(e.body, gamma)
        return ir.Sum(index, body) if isinstance(e, ast.Sum) else ir.Reduce(ast.REDUCTIONS[e.op], index, body)
    if isinstance(e, ast.Stack):  # [e1, e2][i]; at a fixed position it is that item
        if e.index is None:  # the type checker rejects an index-form stack without its index
            raise TypeError(f"an index-form stack needs its index: {e!r}")
        selector = e.index.value
        if isinstance(selector, int):
            return _lower_index_form(e.items[selector - 1], gamma)
        # ir.Stack.index is annotated str, but an affine selector ([..][i+1]) is stored
        # there too and every consumer handles it (ein/printer, targets/numpy/codegen)
        return ir.Stack(selector, tuple(_lower_index_form(item, gamma) for item in e.items))
    if isinstance(e, ast.Concat):  # concat(a:3 => e1, b:4 => e2)[p]
        if e.index is None:  # the type checker rejects an index-form concat without its index
            raise TypeError(f"an index-form concat needs its index: {e!r}")
        parts = tuple((ref.variable, ref.extent or 0) for ref in e.parts)
        return ir.Concat(e.index.value, parts, tuple(_lower_index_form(item, gamma) for item in e.items))
    if isinstance(e, ast.Paren):
        return _lower_index_form(e.expr, gamma)
    if isinstance(e, ast.Neg):
        return ir.Neg(_lower_index_form(e.expr, gamma))
    if isinstance(e, ast.Call):
        return ir.Apply(e.fn, _lower_index_form(e.arg, gamma))
    if isinstance(e, ast.Binary):
        return ir.BinOp(e.op, _lower_index_form(e.left, gamma), _lower_index_form(e.right, gamma))
    raise TypeError(f"not an index-form expression: {e!r}")  # pragma: no cover
