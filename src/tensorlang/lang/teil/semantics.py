"""TeIL's evaluation semantics, transcribed from paper 001 Figure 6 (and Figure 9): the
reference for TeIL, never optimized (docs/teil.md, "Typing and semantics")."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ... import limits
from ...semantics import progress
from ...semantics.interface import initial_store
from ...semantics.values import REDUCTIONS
from ...semantics.types import CheckedProgram, Context
from . import ast
from .ast import Shape, full_params
from .typecheck import expression_types


def _gather(table: np.ndarray, shape: Shape, indices) -> np.ndarray:
    """The table whose entry at each index list ī of ``shape`` is ``table`` at the index
    list ``indices`` gives for ī (each entry of ``indices`` is an open grid over the
    result's index lists or a fixed 0-based number)."""
    value = table[tuple(indices)] if indices else table
    return np.broadcast_to(value, shape)


def denote(e: ast.Expr, mu: Mapping[str, np.ndarray], types: dict[int, Shape], dtype: np.dtype) -> np.ndarray:
    """[[e]] Γ μ, tabulated over type_Γ(e).  ``types`` is type_Γ of every subexpression.
    Operands before operators with an explicit stack, not recursion: an expression may
    be as deep as the parser accepts."""
    values: dict[int, np.ndarray] = {}
    stack: list[tuple[ast.Expr, bool]] = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, ast.Var):  # [[x]] Γ μ ī = μ x ī
            values[id(node)] = mu[node.name]
            continue
        kids = [node.expr] if isinstance(node, ast.Paren) else list(node.args)
        if not ready:
            if not isinstance(node, ast.Paren):  # checked before the operands, as written
                limits.check_allocation(math.prod(types[id(node)]), dtype.itemsize, f"the value of {node.op}", node.span)
            stack.append((node, True))
            stack.extend((k, False) for k in reversed(kids))
            continue
        args = [values.pop(id(k)) for k in kids]
        if isinstance(node, ast.Paren):  # [[(e)]] = [[e]]
            values[id(node)] = args[0]
        else:
            values[id(node)] = _operator(node, args, types, dtype)
    return values[id(e)]


def _operator(e: ast.Op, args: list[np.ndarray], types: dict[int, Shape], dtype: np.dtype) -> np.ndarray:
    """[[e]] from its operands' tables ``args`` (Figure 6's equation for e's operator)."""
    shape = types[id(e)]
    j = list(np.indices(shape, sparse=True)) if shape else []  # the result's index lists ī
    p = full_params(e)
    with np.errstate(all="ignore"):
        if e.op == "add":  # [[add e0 e1]] ī = [[e0]] ī + [[e1]] ī
            return args[0] + args[1]
        if e.op == "mul":
            if types[id(e.args[0])] == ():  # [[e0]] [] · [[e1]] ī   if type(e0) = []
                return args[0][()] * args[1]
            return args[0] * args[1]  # [[e0]] ī · [[e1]] ī
        if e.op == "prod":  # [[prod e0 e1]] (ī0 # ī1) = [[e0]] ī0 · [[e1]] ī1
            k = len(types[id(e.args[0])])
            return _gather(args[0], shape, j[:k]) * _gather(args[1], shape, j[k:])
        (arg,) = args
        if e.op in ast.REDUCTIONS or e.op == "contr":
            if e.op == "contr":  # contr i0 i1 e := red+ i0 (diag i0 i1 e)   (001 eq. (6))
                i0, i1 = p
                inner = types[id(e.args[0])]
                diag_shape = inner[: i1 - 1] + inner[i1:]
                dj = list(np.indices(diag_shape, sparse=True))
                arg = _gather(arg, diag_shape, dj[: i1 - 1] + [dj[i0 - 1]] + dj[i1 - 1:])
                i, fold = i0, REDUCTIONS["+"].ufunc
            else:
                i, fold = p[0], REDUCTIONS[ast.REDUCTIONS[e.op]].ufunc
            n = arg.shape[i - 1]
            # [[red+ i e]] [j1..j_{i-1}, j_i..jk] = Σ_{m=1}^{n} [[e]] [j1..j_{i-1}, m, j_i..jk]
            total = _gather(arg, shape, j[: i - 1] + [0] + j[i - 1:])
            for m in range(1, n):
                total = fold(total, _gather(arg, shape, j[: i - 1] + [m] + j[i - 1:]))
            return np.array(total, dtype=dtype)
        if e.op == "transp":  # [[transp i0 i1 e]] [..j_{i0}..j_{i1}..] = [[e]] [..j_{i1}..j_{i0}..]
            i0, i1 = p
            swapped = list(j)
            swapped[i0 - 1], swapped[i1 - 1] = j[i1 - 1], j[i0 - 1]
            return _gather(arg, shape, swapped)
        if e.op == "diag":  # [[diag i0 i1 e]] [j1..j_{i1-1}, j_{i1}..] = [[e]] [j1..j_{i1-1}, j_{i0}, j_{i1}..]
            i0, i1 = p
            return _gather(arg, shape, j[: i1 - 1] + [j[i0 - 1]] + j[i1 - 1:])
        if e.op == "expa":  # [[expa i n e]] [j1..j_{i-1}, j_i, j_{i+1}..] = [[e]] [j1..j_{i-1}, j_{i+1}..]
            i, _n = p
            return _gather(arg, shape, j[: i - 1] + j[i:])
        if e.op == "proj":  # [[proj i m e]] [j1..j_{i-1}, j_i..] = [[e]] [j1..j_{i-1}, m, j_i..]
            i, m = p
            return _gather(arg, shape, j[: i - 1] + [m - 1] + j[i - 1:])
    raise TypeError(f"not a TeIL operator: {e.op!r}")  # pragma: no cover


def ev_stmt(stmt: ast.Assign, mu: dict[str, np.ndarray], gamma: Context, dtype: np.dtype) -> dict[str, np.ndarray]:
    """St-Stmt: r_k̄ = [[e]] Γ μ k̄ for every k̄ ≤ Γ(x), *then* μ{x ↦ λk̄. r_k̄}."""
    types = expression_types(stmt, gamma)
    value = denote(stmt.expr, mu, types, dtype)
    r = np.array(np.broadcast_to(value, gamma[stmt.target]), dtype=dtype, order="C", copy=True)
    return {**mu, stmt.target: r}


def run(checked: CheckedProgram, supplied: Mapping[str, np.ndarray], dtype=np.float64) -> dict[str, np.ndarray]:
    """Eval-Prog / St-Seq: μ_allocs (supplied values, ⊥ elsewhere), then each statement."""
    dtype = np.dtype(dtype)
    mu = initial_store(checked.context.shapes, checked.interface.roles, supplied, dtype)
    for stmt in progress.statements(checked.program.stmts):
        mu = ev_stmt(stmt, mu, checked.context, dtype)
    return mu
