"""The reference interpreter, the oracle, never optimized: paper 000's evaluation
transcribed (Figures 10-12), each case naming its equation (docs/language.md, "Values and
evaluation" and "The reference interpreter")."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ... import limits
from ...ein.index import position
from ...errors import error
from ...semantics import progress
from ...semantics.interface import initial_store
from ...semantics.types import CheckedProgram, Context
from ...semantics.values import FUNCTIONS, REDUCTIONS, arithmetic, epsilon_sign
from . import ast
from .typecheck import sum_extents

Store = dict[str, np.ndarray]

#: numpy arrays have at most this many dimensions; index form uses one per index in scope.
MAX_INDEX_VARIABLES = 32


def run(checked: CheckedProgram, supplied: Mapping[str, np.ndarray], dtype=np.float64) -> Store:
    """ev-prog / ev-seq: execute the statements in order and return the final store."""
    dtype = np.dtype(dtype)
    store = initial_store(checked.context.shapes, checked.interface.roles, supplied, dtype)
    for stmt in progress.statements(checked.program.stmts):
        store = ev_stmt(stmt, store, checked.context, dtype)
    return store


def ev_stmt(stmt: ast.Assign, store: Store, gamma: Context, dtype: np.dtype) -> Store:
    """ev-stmt: r_i = eval(e_i) for every multi-index i of x, *then* μ{x_i ↦ r_i}.

    The right side is evaluated completely into a fresh array before the store changes,
    so ``x = (y # x) . [2 3]`` reads the old x everywhere.
    """
    with np.errstate(all="ignore"):  # ⊥ and ±inf are values here (an overflowing product, inf - inf in a sum)
        if isinstance(stmt, ast.IndexAssign):
            scope = [(ref.variable, n) for ref, n in zip(stmt.indices, gamma[stmt.target])]  # checked: variables
            value = np.broadcast_to(evaluate_index(stmt.expr, store, scope, gamma.shapes, dtype), gamma[stmt.target])
        else:
            value = evaluate(stmt.expr, store, dtype)
    r = np.array(value, dtype=dtype, order="C", copy=True)
    assert r.shape == gamma[stmt.target], "ok-stmt guarantees the shape"
    return {**store, stmt.target: r}


def evaluate(e: ast.Expr, store: Mapping[str, np.ndarray], dtype: np.dtype = np.dtype(np.float64)) -> np.ndarray:
    """eval_{Γ,μ}(e) of 000 Figure 12, for all multi-indices of e's type at once."""

    def ev(e: ast.Expr) -> np.ndarray:
        if isinstance(e, ast.Var):
            # (7)  eval(x_i) = μ(x_i)
            return store[e.name]
        if isinstance(e, ast.Number):
            return np.asarray(e.value, dtype=dtype)
        if isinstance(e, ast.Paren):
            # (8)  eval((e)_i) = eval(e_i)
            return ev(e.expr)
        if isinstance(e, ast.Outer):
            a, b = ev(e.left), ev(e.right)
            limits.check_allocation(a.size * b.size, dtype.itemsize, "the outer product", e.span)
            # (9)  eval((e1 # e2)_{i j}) = eval(e1_i) · eval(e2_j)
            return np.multiply.outer(a, b)
        if isinstance(e, ast.Transpose):
            a = ev(e.expr)
            m, n = e.pair.first, e.pair.second
            # (10) eval((e ^ [m n])_{..i_m..i_n..}) = eval(e_{..i_n..i_m..})
            return np.swapaxes(a, m - 1, n - 1)
        if isinstance(e, ast.Contract):
            return contract(ev(e.expr), [(p.first, p.second) for p in e.pairs])
        if isinstance(e, ast.Neg):
            return -ev(e.expr)
        if isinstance(e, ast.Call):
            return FUNCTIONS[e.fn](ev(e.arg))
        if isinstance(e, ast.Binary):
            # (12)-(18) eval((e1 op e2)_i) = eval(e1_i) op eval(e2_i);
            # t-smul / t-sdiv: a scalar operand is the same value at every i.
            return arithmetic(e.op, ev(e.left), ev(e.right))
        if isinstance(e, ast.Stack):
            # t-stack: eval([e1 ... en]_{s i}) = eval(e_s i); each item is copied into its
            # own slice, so nothing (a NaN, an inf) crosses from one item into another
            items = [ev(item) for item in e.items]
            limits.check_allocation(len(items) * items[0].size, dtype.itemsize, "the stack", e.span)
            return np.stack(items)
        if isinstance(e, ast.Concat):
            # t-concat: eval(concat(e1, e2)_{α p}) = eval(e1_{α p}) for p <= n1, else eval(e2_{α p-n1})
            items = [ev(item) for item in e.items]
            limits.check_allocation(sum(item.size for item in items), dtype.itemsize, "the concat", e.span)
            return np.concatenate(items, axis=-1)
        if isinstance(e, ast.Vec):
            # t-vec: eval(vec(e)_{α p}) = eval(e_{α i j}) with p = (i-1)·n + j
            a = ev(e.expr)
            return a.reshape(a.shape[:-2] + (a.shape[-2] * a.shape[-1],))
        raise TypeError(f"not an expression: {e!r}")  # pragma: no cover

    return ev(e)


def contract(a: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """(11) eval((e . [m n])_{i without m, n}) = Σ_{l=1}^{t_m} eval(e_{.. l .. l ..}).

    A group of pairs names dimensions of ``a`` before any is removed; summing over one
    pair at a time gives the same value, so each pair is traced in turn while the
    positions of the dimensions still to be contracted are kept up to date.
    """
    # position[d] = current axis of original dimension d, None once it is contracted
    position: list[int | None] = list(range(a.ndim))
    for m, n in pairs:
        i, j = position[m - 1], position[n - 1]
        if i is None or j is None:  # t-contr-group: the pairs of a group are disjoint
            raise ValueError(f"dimension {m if i is None else n} is contracted twice")
        a = np.trace(a, axis1=i, axis2=j)
        for d, p in enumerate(position):
            if p is not None:
                position[d] = p - (p > i) - (p > j)
        position[m - 1] = position[n - 1] = None
    return a


# ------------------------------------------------------------------ index form (004 section 4)
def evaluate_index(e: ast.Expr, store, scope: list[tuple[str, int]], shapes, dtype: np.dtype) -> np.ndarray:
    """The EIN operator λ⟨e⟩_σ of 004 §4: the value of ``e`` at every point of the index
    space ``scope`` (the left indices, then the indices of enclosing sums, in order).

    The result has one axis per scope index; an axis the value does not depend on has
    length 1 and broadcasts.  Sums add over their axes, each of its full extent.
    """
    rank = len(scope)
    if rank > MAX_INDEX_VARIABLES:
        raise error("too-large",
                    f"the reference interpreter evaluates at most {MAX_INDEX_VARIABLES} index variables at once "
                    f"(numpy's limit on dimensions); this expression has {rank} in scope", e.span)
    axis = {name: a for a, (name, _) in enumerate(scope)}

    def values(name: str) -> np.ndarray:
        """The 1-based values of an index variable, laid along its own axis."""
        a = axis[name]
        return np.arange(1, scope[a][1] + 1).reshape([1] * a + [scope[a][1]] + [1] * (rank - a - 1))

    def point(ref: ast.IndexRef):
        """The 0-based positions an index takes at every point of the scope: a variable's
        along its own axis, a fixed position as a number, an affine index Σ c·v + offset
        over its variables' axes (the type checker keeps it inside the dimension)."""
        return position(ref.value, values) - 1

    def spread(value) -> np.ndarray:
        value = np.asarray(value)
        return value.reshape(value.shape if value.ndim == rank else [1] * rank)

    def ev(e: ast.Expr) -> np.ndarray:
        if isinstance(e, ast.Access):
            # T_α: the component of T at the indices' current values
            return spread(store[e.name][tuple(point(ref) for ref in e.indices)])
        if isinstance(e, ast.Var):
            return spread(store[e.name])
        if isinstance(e, ast.Number):
            return spread(np.asarray(e.value, dtype=dtype))
        if isinstance(e, ast.Delta):
            # δ_ij = 1 if i = j else 0
            return spread(np.asarray(point(e.first) == point(e.second), dtype=dtype))
        if isinstance(e, ast.Epsilon):
            # ε_{x1..xn} = Π_{a<b} sgn(x_b - x_a): ±1 on permutations, 0 on repeats
            return spread(np.asarray(epsilon_sign([point(ref) for ref in e.indices]), dtype=dtype))
        if isinstance(e, (ast.Sum, ast.Reduce)):
            # Σ_{k ≤ n} e: evaluate over the scope extended by k, then add along k;
            # prod(k), max(k), min(k) combine along k with *, max, min instead
            extents = sum_extents(e, shapes)
            inner = scope + [(ref.variable, n) for ref, n in zip(e.indices, extents)]
            body = evaluate_index(e.body, store, inner, shapes, dtype)
            # every reduced axis at its full extent, also where the body does not depend on it
            terms = np.broadcast_shapes(body.shape, (1,) * rank + tuple(extents))
            word = e.op if isinstance(e, ast.Reduce) else "sum"
            limits.check_allocation(math.prod(terms), dtype.itemsize, f"the {word} reduction", e.span)
            op = REDUCTIONS[ast.REDUCTIONS[e.op] if isinstance(e, ast.Reduce) else "+"].ufunc
            return op.reduce(np.broadcast_to(body, terms), axis=tuple(range(rank, len(inner))))
        if isinstance(e, ast.Paren):
            return ev(e.expr)
        if isinstance(e, ast.Neg):
            return -ev(e.expr)
        if isinstance(e, ast.Call):
            return FUNCTIONS[e.fn](ev(e.arg))
        if isinstance(e, ast.Binary):
            a, b = ev(e.left), ev(e.right)
            limits.check_allocation(int(np.prod(np.broadcast_shapes(a.shape, b.shape))), dtype.itemsize,
                                    f"the operands of '{e.op}'", e.span)
            return arithmetic(e.op, a, b)
        if isinstance(e, ast.Stack):
            # [e1, ..., en][i] = e_i: each point takes the value of exactly one item
            # (a selection, never arithmetic, so a NaN in one item stays in its slice)
            if e.index is None:  # the type checker rejects an index-form stack without its index
                raise TypeError(f"an index-form stack needs its index: {e!r}")
            items = [ev(item) for item in e.items]
            shape = np.broadcast_shapes(*(item.shape for item in items), np.shape(point(e.index)))
            limits.check_allocation(math.prod(shape), dtype.itemsize, "the stack", e.span)
            position = np.broadcast_to(point(e.index), shape)
            value = np.array(np.broadcast_to(items[0], shape), dtype=dtype)
            for s, item in enumerate(items[1:], start=1):
                value = np.where(position == s, item, value)
            return value
        if isinstance(e, ast.Concat):
            # concat(a:n1 => e1, b:n2 => e2)[p] = e1 at a = p where p <= n1, else e2 at b = p - n1
            # (a selection: each point takes one item's value)
            if e.index is None:  # the type checker rejects an index-form concat without its index
                raise TypeError(f"an index-form concat needs its index: {e!r}")
            at = np.asarray(point(e.index))
            value = np.zeros([1] * rank, dtype=dtype)
            start = 0
            for ref, piece in zip(e.parts, e.items):
                n = ref.extent or 0
                got = evaluate_index(piece, store, scope + [(ref.variable, n)], shapes, dtype)
                shape = np.broadcast_shapes(got.shape[:-1], at.shape, value.shape)
                limits.check_allocation(math.prod(shape) * n, dtype.itemsize, "the concat", e.span)
                local = np.broadcast_to(np.clip(at - start, 0, n - 1), shape)[..., None]
                picked: np.ndarray = np.take_along_axis(np.broadcast_to(got, shape + (got.shape[-1],)),
                                                        np.minimum(local, got.shape[-1] - 1), axis=-1)[..., 0]
                value = np.where((at >= start) & (at < start + n), picked, value)
                start += n
            return value
        raise TypeError(f"not an index-form expression: {e!r}")  # pragma: no cover

    return ev(e)
