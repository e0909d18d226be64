"""Integer index arithmetic of STUR: values at integer points (:func:`evaluate`), affine forms
(:func:`affine`) and the boxes constraints imply (:func:`propagate`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ...ein.structure import COMPARE
from ...errors import error
from . import ast

#: A bound that is not known (an interval end at infinity).
INF = None


@dataclass(frozen=True)
class Lin:
    """Σ coeff·var + const (canonical: no zero coefficients, sorted)."""

    terms: tuple[tuple[str, int], ...]
    const: int

    @staticmethod
    def of(terms: Mapping[str, int], const: int) -> "Lin":
        return Lin(tuple(sorted((v, c) for v, c in terms.items() if c)), int(const))

    def coeff(self, v: str) -> int:
        return dict(self.terms).get(v, 0)

    def plus(self, other: "Lin", scale: int = 1) -> "Lin":
        terms = dict(self.terms)
        for v, c in other.terms:
            terms[v] = terms.get(v, 0) + scale * c
        return Lin.of(terms, self.const + scale * other.const)

    def substitute(self, v: str, by: "Lin") -> "Lin":
        c = self.coeff(v)
        if not c:
            return self
        rest = Lin.of({u: k for u, k in self.terms if u != v}, self.const)
        return rest.plus(by, c)


@dataclass(frozen=True)
class Constraint:
    """``lin >= 0`` (kind ">=") or ``lin = 0`` (kind "=")."""

    lin: Lin
    kind: str


def _trunc_div(a, b):
    """C's integer division (toward zero); a zero divisor gives 0 (no point satisfies a
    condition through it: holds_any masks it, :func:`divisible`)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    return np.where(b == 0, 0, np.where((a < 0) ^ (safe < 0), -q, q))


def evaluate(e: ast.IExpr, env: Mapping[str, object], ranges: dict | None = None):
    """The value of ``e``, each name's value in ``env`` (ints or numpy integer arrays that
    broadcast); error[too-large] where operands reach past 2^62 (int64 would wrap), read from
    intervals of the names' values (``ranges``, once per condition): exact where an operand reads
    no name twice and takes no quotient (whose interval holds divisors never taken), else scanned."""
    return _evaluate(e, env, {} if ranges is None else ranges)[0]


def _evaluate(e: ast.IExpr, env: Mapping[str, object], ranges: dict):
    """(value, its interval (lo, hi), the names it reads: None where one is read twice or a quotient is taken)."""
    if isinstance(e, ast.INum):
        return e.value, (e.value, e.value), frozenset()
    if isinstance(e, ast.IName):
        value = env[e.name]
        if e.name not in ranges:
            grid = np.asarray(value)
            ranges[e.name] = (int(grid.min()), int(grid.max())) if grid.size else (0, 0)
        return value, ranges[e.name], frozenset((e.name,))
    if isinstance(e, ast.INeg):
        value, (lo, hi), names = _evaluate(e.arg, env, ranges)
        return -value, (-hi, -lo), names
    (a, ia, na), (b, ib, nb) = _evaluate(e.left, env, ranges), _evaluate(e.right, env, ranges)
    if e.op != "/":
        ra, rb = (max(-i[0], i[1]) if n is not None else _reach(v) for v, i, n in ((a, ia, na), (b, ib, nb)))
        if (ra * rb if e.op == "*" else ra + rb) > MAX_INDEX_CONSTANT:
            raise error("too-large", f"{text(e)} reaches past 2^62 over its indices; no index or size comes near it",
                        e.span)
    names = na | nb if na is not None and nb is not None and not na & nb else None
    if e.op == "+":
        return a + b, (ia[0] + ib[0], ia[1] + ib[1]), names
    if e.op == "-":
        return a - b, (ia[0] - ib[1], ia[1] - ib[0]), names
    if e.op == "*":
        corners = [x * y for x in ia for y in ib]
        return a * b, (min(corners), max(corners)), names
    result = _trunc_div(a, b)  # the extremes of a/b: a at its ends, b at its ends or ±1 (0 where b may be 0)
    divisors = [y for y in (ib[0], ib[1], -1, 1) if ib[0] <= y <= ib[1] and y]
    quotients = [int(_trunc_div(x, y)) for x in ia for y in divisors] + [0] * (ib[0] <= 0 <= ib[1])  # (b may skip ±1)
    return int(result) if np.ndim(result) == 0 else result, (min(quotients), max(quotients)), None


def _reach(value) -> int:
    return int(np.max(np.abs(value))) if np.size(value) else 0


#: A folded constant or coefficient past this is error[too-large] (loops and C count in int64).
MAX_INDEX_CONSTANT = 2**62


def affine(e: ast.IExpr, values: Mapping[str, int]) -> Lin | None:
    """The affine form of ``e``, names in ``values`` (symbols) replaced by their values
    and every other name a variable; None where ``e`` is not affine."""
    lin = _affine(e, values)
    if lin is not None and max([abs(lin.const)] + [abs(c) for _, c in lin.terms]) > MAX_INDEX_CONSTANT:
        raise error("too-large", f"{text(e)} folds to a number past 2^62; no index or size comes near it", e.span)
    return lin


def _affine(e: ast.IExpr, values: Mapping[str, int]) -> Lin | None:
    if isinstance(e, ast.INum):
        return Lin((), e.value)
    if isinstance(e, ast.IName):
        return Lin((), int(values[e.name])) if e.name in values else Lin(((e.name, 1),), 0)
    if isinstance(e, ast.INeg):
        inner = affine(e.arg, values)
        return None if inner is None else Lin.of({}, 0).plus(inner, -1)
    a, b = affine(e.left, values), affine(e.right, values)
    if a is None or b is None:
        return None
    if e.op == "+":
        return a.plus(b)
    if e.op == "-":
        return a.plus(b, -1)
    if e.op == "*":
        if not a.terms:
            return Lin.of({}, 0).plus(b, a.const)
        if not b.terms:
            return Lin.of({}, 0).plus(a, b.const)
        return None
    if not a.terms and not b.terms and b.const:
        return Lin((), int(_trunc_div(a.const, b.const)))
    return None


def comparisons(cond: ast.Condition) -> tuple[tuple[ast.IExpr, str, ast.IExpr], ...]:
    """A chained comparison as its pairs: ``a <= b < c`` is (a <= b), (b < c)."""
    return tuple((cond.exprs[n], op, cond.exprs[n + 1]) for n, op in enumerate(cond.ops))


def constraint(left: ast.IExpr, op: str, right: ast.IExpr, values: Mapping[str, int]) -> Constraint | None:
    """``left op right`` as a normalised constraint, or None where it is not affine."""
    a, b = affine(left, values), affine(right, values)
    if a is None or b is None:
        return None
    if op == "=":
        return Constraint(b.plus(a, -1), "=")
    lin = b.plus(a, -1) if op in ("<=", "<") else a.plus(b, -1)
    if op in ("<", ">"):
        lin = lin.plus(Lin((), 1), -1)
    return Constraint(lin, ">=")


def holds_any(alternatives, env: Mapping[str, object], shape: tuple[int, ...]) -> np.ndarray:
    """Where in a box of ``shape`` one of the ``alternatives`` holds: each a conjunction of
    ``(left, op, right)`` comparisons of index expressions evaluated in ``env``."""
    mask = np.zeros(shape, dtype=bool)
    ranges: dict = {}  # the names' intervals, once for the condition (evaluate)
    for pairs in alternatives:
        ok = np.ones(shape, dtype=bool)
        for left, op, right in pairs:
            ok &= np.broadcast_to(COMPARE[op](evaluate(left, env, ranges), evaluate(right, env, ranges)) &
                                  divisible(left, env, ranges) & divisible(right, env, ranges), shape)
        mask |= ok
    return mask


def divisible(e: ast.IExpr, env: Mapping[str, object], ranges: dict):
    """Where no divisor in ``e`` is 0: C's division by zero has no value (the tool's loop
    traps), so no condition through it holds (``(j = 6 / i)`` at i = 0 included)."""
    if isinstance(e, ast.INeg):
        return divisible(e.arg, env, ranges)
    if not isinstance(e, ast.IBin):
        return True
    ok = divisible(e.left, env, ranges) & divisible(e.right, env, ranges)
    return ok & (np.asarray(evaluate(e.right, env, ranges)) != 0) if e.op == "/" else ok


# ------------------------------------------------------------------ intervals
Interval = tuple  # (lo | None, hi | None)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def lin_range(lin: Lin, box: Mapping[str, Interval], skip: str | None = None) -> Interval:
    """(lowest, highest) of ``lin`` (without the term of ``skip``) over ``box``."""
    lo: int | None = lin.const
    hi: int | None = lin.const
    for v, c in lin.terms:
        if v == skip:
            continue
        a, b = box.get(v, (INF, INF))
        ends = (a, b) if c > 0 else (b, a)
        lo = None if lo is None or ends[0] is None else lo + c * ends[0]
        hi = None if hi is None or ends[1] is None else hi + c * ends[1]
    return lo, hi


def propagate(constraints, box: Mapping[str, Interval], rounds: int = 64) -> dict[str, Interval]:
    """Narrow ``box`` (variable -> (lo, hi), None for unknown) by the constraints until
    nothing changes (at most ``rounds`` sweeps: enough for any chain a program writes)."""
    box = dict(box)
    for _ in range(rounds):
        changed = False
        for con in constraints:
            for v, c in con.lin.terms:
                rlo, rhi = lin_range(con.lin, box, skip=v)
                lo, hi = box.get(v, (INF, INF))
                new_lo, new_hi = lo, hi
                # c*v + R >= 0  (and, for "=", c*v + R <= 0)
                if c > 0:
                    if rhi is not None:
                        b = _ceil_div(-rhi, c)
                        new_lo = b if lo is None else max(lo, b)
                    if con.kind == "=" and rlo is not None:
                        b = -rlo // c
                        new_hi = b if hi is None else min(hi, b)
                else:
                    if rhi is not None:
                        b = rhi // -c
                        new_hi = b if hi is None else min(hi, b)
                    if con.kind == "=" and rlo is not None:
                        b = _ceil_div(rlo, -c)
                        new_lo = b if lo is None else max(lo, b)
                if (new_lo, new_hi) != (lo, hi):
                    box[v] = (new_lo, new_hi)
                    changed = True
                    if new_lo is not None and new_hi is not None and new_lo > new_hi:
                        return box  # empty: nothing more to learn
        if not changed:
            break
    return box


def rename(e: ast.IExpr, mapping: Mapping[str, str]) -> ast.IExpr:
    if isinstance(e, ast.IName):
        return ast.IName(mapping.get(e.name, e.name), e.span)
    if isinstance(e, ast.INeg):
        return ast.INeg(rename(e.arg, mapping), e.span)
    if isinstance(e, ast.IBin):
        return ast.IBin(e.op, rename(e.left, mapping), rename(e.right, mapping), e.span)
    return e


def text(e: ast.IExpr) -> str:
    """An index expression as STUR writes it (fully parenthesized where nested)."""
    if isinstance(e, ast.INum):
        return str(e.value)
    if isinstance(e, ast.IName):
        return e.name
    if isinstance(e, ast.INeg):
        return f"-{text(e.arg)}"
    left, right = (f"({text(x)})" if isinstance(x, ast.IBin) else text(x) for x in (e.left, e.right))
    return f"{left} {e.op} {right}"


def too_large(elements: int, what: str, span) -> None:
    from ...limits import check_allocation
    check_allocation(elements, 8, what, span)
    if elements > 2**31:
        raise error("too-large", f"{what} has {elements} points; the reference interpreter enumerates at most 2^31",
                    span)


def reciprocal(x):
    """``x^-1`` in STUR: 1/x, and 0 where x is 0 (±0), as StructTensor computes the
    reciprocal of a structural zero (docs/structure.md, "Reciprocals"); ⊥ stays ⊥ and
    1/±inf = ±0.  A number gives a float, an array an array."""
    with np.errstate(all="ignore"):
        a = np.asarray(x)
        q = np.where(a == 0, np.zeros_like(a), np.divide(np.ones_like(a), a, where=a != 0, out=np.zeros_like(a)))
        return float(q) if np.ndim(x) == 0 and not isinstance(x, np.ndarray) else q
