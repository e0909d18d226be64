"""What a value is and what the operations on values mean, defined once for every evaluator, pass
and target (docs/architecture.md, "The packages"): ⊥ is NaN; controlled division (000 Definition 8):
0 / b = 0 for every number b, 0 included, a / 0 as IEEE for a ≠ 0, 0 / ⊥ is ⊥; :data:`FUNCTIONS`,
:data:`REDUCTIONS` and :func:`epsilon_sign`."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

def controlled_division(a, b):
    """000 Definition 8: a / b, except 0 / b = 0 for every number b (also b = 0).

    ⊥ stays ⊥: 0 / ⊥ = ⊥ (Definition 4 applies before Definition 8).  Works on numpy
    arrays and on numbers (a number comes back as a 0-d array)."""
    with np.errstate(all="ignore"):
        q = np.asarray(np.asarray(a) / b)
        zero = (np.asarray(a) == 0) & ~np.isnan(b)
        return np.where(zero, np.zeros_like(q), q)


def arithmetic(op: str, a, b):
    """a op b for op in + - * /, elementwise, / being controlled division."""
    with np.errstate(all="ignore"):
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return controlled_division(a, b)
    raise ValueError(f"not an arithmetic operator: {op!r}")


def fold(op: str, a: float, b: float) -> float:
    """``a op b`` on two numbers, exactly as the evaluators compute it."""
    return float(arithmetic(op, np.float64(a), np.float64(b)))


def power(a: float, n: int) -> float:
    """``a`` multiplied by itself ``n`` times (a product over ``n`` equal values), in IEEE
    arithmetic as the evaluators compute it: an overflow is ±inf, never OverflowError
    (Python's ``float ** int`` raises it), and the sign follows the parity of ``n`` even
    where ``n`` is too large for a float to hold exactly."""
    a, n = float(a), int(n)
    try:
        magnitude = abs(a) ** n  # C's pow, as before: the same digits wherever it did not fail
    except OverflowError:
        magnitude = math.inf
    negative = math.copysign(1.0, a) < 0 and n % 2 == 1
    return -magnitude if negative else magnitude


def powers(a, n: int) -> np.ndarray:
    """:func:`power` elementwise, in ``a``'s dtype: ``pow(|a|, n)`` (n as that dtype's
    float, inf past its range), negative where ``a``'s sign bit is set and ``n`` is odd.
    What a product over ``n`` ≥ 1 equal values is on every compiled target (the C target
    prints the same, :func:`power_exponent`): ⊥ stays ⊥, (-0)^n is -0 for odd n and +0
    for even n, (±inf)^n likewise; only the rounding differs from ``n - 1`` multiplications."""
    a = np.asarray(a)
    with np.errstate(all="ignore"):
        magnitude = np.power(np.abs(a), a.dtype.type(power_exponent(n)))
        return np.copysign(magnitude, a) if n % 2 else magnitude


def power_exponent(n: int) -> float:
    """The count ``n`` as the float exponent of a power (inf where no float holds it)."""
    try:
        return float(n)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Function:
    """An elementwise function: its name in programs, the numpy ufunc that evaluates it,
    the C function that computes it (``f`` appended for float), and whether f(0) = 0."""

    name: str
    ufunc: np.ufunc
    c_name: str
    zero_preserving: bool

    def __call__(self, x):
        with np.errstate(all="ignore"):
            return self.ufunc(x)


#: The elementwise functions of SPEC section 1, by name.
FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        Function("sqrt", np.sqrt, "sqrt", True),
        Function("exp", np.exp, "exp", False),
        Function("log", np.log, "log", False),
        Function("sin", np.sin, "sin", True),
        Function("cos", np.cos, "cos", False),
        Function("tanh", np.tanh, "tanh", True),
        Function("abs", np.abs, "fabs", True),
    )
}

#: Their names, in the order SPEC section 1 lists them.
FUNCTION_NAMES: tuple[str, ...] = tuple(FUNCTIONS)

#: numpy's ufuncs that are operators, by name, each with the Python operator method that
#: writes it: the one table of the builder's expressions and the tensor fields, whose
#: ``__array_ufunc__`` turn ``np.add(a, e)`` and ``np.negative(F)`` into their own operators.
UFUNC_OPERATORS = {"add": "__add__", "subtract": "__sub__", "multiply": "__mul__", "divide": "__truediv__",
                   "matmul": "__matmul__", "negative": "__neg__", "positive": "__pos__", "power": "__pow__"}


def ufunc_meaning(ufunc, method: str, inputs, kwargs) -> str | None:
    """What numpy's ``ufunc.method(*inputs, **kwargs)`` is in the language: an operator
    method's name (``"__add__"``), a function's of :data:`FUNCTIONS` (``"sqrt"``), or None."""
    if method != "__call__" or kwargs or len(inputs) != getattr(ufunc, "nin", None):
        return None
    return UFUNC_OPERATORS.get(getattr(ufunc, "__name__", "")) or \
        next((f.name for f in FUNCTIONS.values() if f.ufunc is ufunc), None)


@dataclass(frozen=True)
class Reduction:
    """A reduction operator of EIN: ``op`` as EIN writes it, the ufunc whose ``reduce``
    folds it, its identity element (what an empty reduction gives) and the word index
    form writes it with (``sum(k)``, ``prod(k)``, ``max(k)``, ``min(k)``)."""

    op: str
    ufunc: np.ufunc
    identity: float
    word: str


#: The reduction operators, by EIN operator (``+`` is Σ).
REDUCTIONS: dict[str, Reduction] = {
    r.op: r
    for r in (
        Reduction("+", np.add, 0.0, "sum"),
        Reduction("*", np.multiply, 1.0, "prod"),
        Reduction("max", np.maximum, -math.inf, "max"),
        Reduction("min", np.minimum, math.inf, "min"),
    )
}

#: The index-form word of each reduction, mapped to its EIN operator (``prod`` -> ``*``).
REDUCTION_WORDS: dict[str, str] = {r.word: r.op for r in REDUCTIONS.values()}

#: The ranks a Levi-Civita symbol may have (its every index ranges over this many values).
EPSILON_RANKS = (2, 3)


def epsilon_pairs(n: int) -> tuple[tuple[int, int], ...]:
    """The index pairs (a, b), a < b, whose sign differences make up ε of rank n."""
    return tuple(itertools.combinations(range(n), 2))


def epsilon_sign(xs):
    """ε_{x1..xn} = Π_{a<b} sgn(x_b − x_a): the sign of the permutation where the x are
    one, 0 where two are equal.  The x may be numbers or numpy arrays (any base: only
    their order matters)."""
    sign = 1
    for a, b in epsilon_pairs(len(xs)):
        sign = sign * np.sign(np.asarray(xs[b]) - np.asarray(xs[a]))
    return sign


def levi_civita(n: int) -> np.ndarray:
    """ε with n indices as an n-dimensional table of extent n."""
    return np.asarray(epsilon_sign(np.indices((n,) * n)), dtype=np.float64)
