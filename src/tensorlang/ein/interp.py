"""The EIN evaluator: what an EIN program means, computed directly (the oracle for passes).

Each statement is evaluated over its whole index space at once, one numpy axis per index
variable in scope, with the arithmetic as a parameter (:class:`Values`); docs/ein.md
("The core") says how."""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Mapping

import numpy as np

from .. import limits
from ..semantics.values import FUNCTIONS, REDUCTIONS, arithmetic, epsilon_sign
from . import ir
from .index import position as index_position

Value = Any  # a float64 array for :class:`Values`; whatever a domain makes of one


class Values:
    """The plain domain: a value is a float64 array."""

    def exact(self, array: np.ndarray) -> Value:
        """An exactly known array (an input, a number, δ, ε) as a value."""
        return array

    def each(self, value: Value, f: Callable[[np.ndarray], np.ndarray]) -> Value:
        """``f`` (a reshaping, an indexing, a broadcast) applied to every array of ``value``."""
        return f(value)

    def choose(self, mask: np.ndarray, a: Value, b: Value) -> Value:
        """``a`` where ``mask``, else ``b`` (a selection: no arithmetic)."""
        return np.where(mask, a, b)

    def neg(self, a: Value) -> Value:
        return -a

    def apply(self, fn: str, a: Value) -> Value:
        return FUNCTIONS[fn](a)

    def binop(self, op: str, a: Value, b: Value) -> Value:
        return arithmetic(op, a, b)

    def reduce(self, op: str, a: Value) -> Value:
        """Combine along the last axis with the reduction ``op`` (``+`` is Σ)."""
        with np.errstate(all="ignore"):
            return REDUCTIONS[op].ufunc.reduce(a, axis=-1)


VALUES = Values()


class Bounded(Values):
    """The reference arithmetic on (value, bound) pairs, bounds in units of eps (``tl.testing``)."""

    def exact(self, array):
        return array, np.zeros(np.shape(array))

    def each(self, pair, f):
        return f(pair[0]), f(pair[1])

    def choose(self, mask, a, b):
        return np.where(mask, a[0], b[0]), np.where(mask, a[1], b[1])

    def neg(self, a):
        return -a[0], a[1]

    def apply(self, fn, a):
        v, e = a
        with np.errstate(all="ignore"):
            r = FUNCTIONS[fn](v)
            slope = {"abs": 1.0, "sin": 1.0, "cos": 1.0, "tanh": 1.0, "exp": np.abs(r),
                     "sqrt": 0.5 / np.abs(r), "log": 1.0 / np.abs(v)}.get(fn, np.abs(r) + 1.0)
            return r, slope * e + np.abs(r) + 1.0

    def binop(self, op, a, b):
        (x, ex), (y, ey) = a, b
        with np.errstate(all="ignore"):
            v = arithmetic(op, x, y)  # controlled division included
            if op in "+-":
                return v, ex + ey + np.abs(v)
            if op == "*":
                return v, np.abs(x) * ey + ex * np.abs(y) + np.abs(v)
            return v, np.where(x == 0, 0.0, ex / np.abs(y) + np.abs(x) * ey / (y * y)) + np.abs(v)

    def reduce(self, op, a):
        v, b = a
        with np.errstate(all="ignore"):
            if op == "+":  # any order of summation: n terms, each rounding at most the partial sums
                return v.sum(axis=-1), b.sum(axis=-1) + v.shape[-1] * np.abs(v).sum(axis=-1)
            if op in ("max", "min"):
                pick = np.maximum if op == "max" else np.minimum
                return pick.reduce(v, axis=-1), b.max(axis=-1)
            value, bound = v[..., 0], b[..., 0]
            for t in range(1, v.shape[-1]):
                value, bound = self.binop("*", (value, bound), (v[..., t], b[..., t]))
            return value, bound


def run(program: ir.Program, inputs: Mapping[str, np.ndarray], domain: Values = VALUES) -> dict[str, Value]:
    """The store after running ``program`` from ``inputs`` (every declared variable)."""
    store: dict[str, Value] = {}
    for d in program.decls:
        given = d.name in inputs
        array = np.asarray(inputs[d.name], dtype=np.float64) if given else np.full(d.shape, np.nan)
        store[d.name] = domain.exact(array)
    for s in program.statements:
        value = evaluate(s.body, list(s.index), store, domain)
        shape = tuple(n for _, n in s.index)
        store = {**store, s.target: domain.each(value, functools.partial(_broadcast, shape=shape))}
    return store


def _broadcast(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A fresh array of ``shape`` holding ``a`` broadcast."""
    return np.broadcast_to(a, shape).copy()


class At:
    """Where an expression is evaluated: the scope (one axis per index variable, in
    order), the store and the value domain."""

    def __init__(self, scope: list[tuple[str, int]], store: Mapping[str, Value], domain: Values):
        self.scope, self.store, self.domain = scope, store, domain
        self.rank = len(scope)
        self.axis = {name: a for a, (name, _) in enumerate(scope)}

    def coords(self, i: ir.Index):
        """The 0-based values an index takes, laid along its variables' axes (a position
        is a number; an affine index Σ c·v + offset is computed over 1-based values)."""
        if isinstance(i, int):
            return i - 1
        if not isinstance(i, str):
            return index_position(i, lambda v: self.coords(v) + 1) - 1
        a, n = self.axis[i], self.scope[self.axis[i]][1]
        return np.arange(n).reshape([1] * a + [n] + [1] * (self.rank - a - 1))

    def spread(self, array) -> np.ndarray:
        array = np.asarray(array, dtype=np.float64)
        return array if array.ndim == self.rank else array.reshape([1] * self.rank)

    def ev(self, e: ir.Expr, extra: list[tuple[str, int]] | None = None) -> Value:
        """``e`` here, or over the scope extended by ``extra`` index variables."""
        return evaluate(e, self.scope + extra if extra else self.scope, self.store, self.domain)


def _tensor(e: ir.Tensor, at: At) -> Value:
    picks = tuple(at.coords(i) for i in e.indices)
    return at.domain.each(at.store[e.name], lambda a: at.spread(a[picks]))


def _reduction(e: ir.Sum | ir.Reduce, at: At) -> Value:
    """The body over the scope extended by the reduced indices, every reduced axis at its
    full extent (also where the body does not depend on it), folded as one axis."""
    body = at.ev(e.body, list(e.index))
    extents = (1,) * at.rank + tuple(n for _, n in e.index)

    def terms(a: np.ndarray) -> np.ndarray:
        full = np.broadcast_shapes(a.shape, extents)
        limits.check_allocation(math.prod(full), a.itemsize, "a reduction of the EIN evaluator")
        return np.broadcast_to(a, full).reshape(full[:at.rank] + (-1,))

    return at.domain.reduce(e.op if isinstance(e, ir.Reduce) else "+", at.domain.each(body, terms))


def _stack(e: ir.Stack, at: At) -> Value:
    """[e1, ..., en][i] = e_i: each point takes exactly one item's value."""
    position = at.coords(e.index)
    value = at.domain.exact(at.spread(0.0))
    for s, item in enumerate(e.items):
        value = at.domain.choose(position == s, at.ev(item), value)
    return value


def _concat(e: ir.Concat, at: At) -> Value:
    """The direct sum: each point takes exactly one item's value, item k read at its own
    variable g - S_k (clipped into range where the point is another item's)."""
    position = at.coords(e.index)
    value = at.domain.exact(at.spread(0.0))
    for (name, n), start, item in zip(e.parts, e.starts, e.items):
        local = np.clip(np.asarray(position) - start, 0, n - 1)
        inner = at.ev(item, [(name, n)])
        picked = at.domain.each(inner, functools.partial(_pick_last, local=local, rank=at.rank, n=n))
        value = at.domain.choose((position >= start) & (position < start + n), picked, value)
    return value


#: How each node kind evaluates (a new node kind adds its entry: tests/test_architecture.py
#: checks that every kind of ein/ir.py has one).
EVALUATE: dict[type, Callable[[Any, At], Value]] = {
    ir.Tensor: _tensor,
    ir.Const: lambda e, at: at.domain.exact(at.spread(e.value)),
    ir.Delta: lambda e, at: at.domain.exact(at.spread(np.equal(at.coords(e.first), at.coords(e.second)))),
    ir.Epsilon: lambda e, at: at.domain.exact(at.spread(epsilon_sign([at.coords(i) for i in e.indices]))),
    ir.Neg: lambda e, at: at.domain.neg(at.ev(e.arg)),
    ir.Apply: lambda e, at: at.domain.apply(e.fn, at.ev(e.arg)),
    ir.BinOp: lambda e, at: at.domain.binop(e.op, at.ev(e.left), at.ev(e.right)),
    ir.Sum: _reduction,
    ir.Reduce: _reduction,
    ir.Stack: _stack,
    ir.Concat: _concat,
}


def evaluate(e: ir.Expr, scope: list[tuple[str, int]], store: Mapping[str, Value],
             domain: Values = VALUES) -> Value:
    """The value of ``e`` at every point of ``scope`` (one axis per index variable)."""
    rule = EVALUATE.get(type(e))
    if rule is None:
        raise TypeError(f"not an EIN expression: {e!r}")
    return rule(e, At(scope, store, domain))


def _pick_last(a: np.ndarray, local, rank: int, n: int) -> np.ndarray:
    """``a`` (rank + 1 axes, the last an item's own variable of extent n) read at the
    0-based positions ``local`` (laid along the first rank axes) of its last axis."""
    a = np.asarray(a)
    a = a if a.ndim == rank + 1 else a.reshape([1] * (rank + 1))
    if a.shape[-1] == 1:
        return a[..., 0]
    shape = np.broadcast_shapes(a.shape[:-1], np.shape(local))
    picks = np.broadcast_to(np.asarray(local), shape)[..., None]
    return np.take_along_axis(np.broadcast_to(a, shape + (n,)), picks, axis=-1)[..., 0]


def reference(program: ir.Program, roles: Mapping[str, Any]) -> Callable[[Mapping[str, np.ndarray], Any], dict]:
    """The reference semantics of a program that starts as EIN: ``reference(supplied,
    dtype)`` is the final store of :func:`run` from the initial store the roles give
    (semantics/interface.py), in ``dtype``."""
    from ..semantics.interface import initial_store

    shapes = {d.name: d.shape for d in program.decls}

    def run_reference(supplied: Mapping[str, np.ndarray], dtype) -> dict:
        store = run(program, initial_store(shapes, roles, supplied, dtype))
        return {name: np.asarray(value, dtype=dtype) for name, value in store.items()}

    return run_reference
