"""The one matcher for "a scaled sum of a product", ``scale[Σ_sums ±(f1 * ... * fk)]``,
and its inverse: :func:`monomial` gives the :class:`Monomial` view that fusion,
contraction ordering, the loop lowering and the back ends each judge with their own
predicate, and :func:`product` builds a product back (docs/ein.md, "The core", has what
each field of the view holds)."""

from __future__ import annotations

from dataclasses import dataclass

from ..semantics.values import fold
from . import ir

#: Where the Σ sits in a :attr:`Monomial.scale` (a name no program can declare).
HOLE = ir.Tensor("<sum>", ())


@dataclass(frozen=True)
class Monomial:
    """``scale[Σ_sums ±(f1 * ... * fk)]``: the view :func:`monomial` returns."""

    scale: ir.Expr | None
    sums: ir.IndexMap
    factors: tuple[ir.Expr, ...]
    negations: int
    summand: ir.Expr
    nested: bool
    #: a single factor, perhaps negated, under no Σ and no scale: not a product at all
    lone: bool

    @property
    def sign(self) -> int:
        """The sign the negations inside the product give (the scale's are its own)."""
        return -1 if self.negations % 2 else 1

    def fill(self, value: ir.Expr) -> ir.Expr:
        """The scale applied to ``value`` (what the finished sum is), as written."""
        if self.scale is None:
            return value
        return ir.bottom_up(self.scale, lambda node: value if node == HOLE else node)

    def flat(self) -> tuple[int, tuple[ir.Expr, ...]]:
        """(sign, factors) of everything as one product: the scale's numbers first,
        the sign of every negation, the scale's included."""
        if self.scale is None:
            return self.sign, self.factors
        parts: list[ir.Expr] = []
        met = _flatten(self.scale, parts, [])
        sign = -self.sign if met.negations % 2 else self.sign
        return sign, tuple(f for f in parts if f != HOLE) + self.factors

    def coefficient(self) -> float:
        """The product of every number and sign, as one float (what a client that
        scales a result once, a BLAS call, multiplies by)."""
        sign, factors = self.flat()
        value = float(sign)
        for f in factors:
            if isinstance(f, ir.Const):
                value = fold("*", value, f.value)
        return value


def monomial(e: ir.Expr) -> Monomial:
    """``e`` as a scaled sum of a product (at worst a lone factor); never fails."""
    scale, core = _unwrap(e)
    summed = isinstance(core, ir.Sum)
    sums: list[tuple[str, int]] = []
    while isinstance(core, ir.Sum):
        sums.extend(core.index)
        core = core.body
    factors: list[ir.Expr] = []
    nested = _flatten(core, factors, sums)
    lone = not summed and not nested.sums and len(factors) == 1
    return Monomial(scale, tuple(sums), tuple(factors), nested.negations, core, nested.sums > 0, lone)


def is_constant(e: ir.Expr) -> bool:
    """A number, a negated number (``-2`` reads as ``Neg(2)``) or a product of them."""
    if isinstance(e, ir.Const):
        return True
    if isinstance(e, ir.Neg):
        return is_constant(e.arg)
    if isinstance(e, ir.BinOp) and e.op == "*":
        return is_constant(e.left) and is_constant(e.right)
    return False


def _unwrap(e: ir.Expr) -> tuple[ir.Expr | None, ir.Expr]:
    """(scale with HOLE for the Σ, the Σ) when ``e`` is numbers and negations around a
    Σ (scale None for a bare Σ); (None, e) for any other shape."""
    found = _around(e)
    if found is None:
        return None, e
    scale, core = found
    return (None if scale is HOLE else scale), core


def _around(e: ir.Expr):
    if isinstance(e, ir.Sum):
        return HOLE, e
    if isinstance(e, ir.Neg):
        inner = _around(e.arg)
        return None if inner is None else (ir.Neg(inner[0]), inner[1])
    if isinstance(e, ir.BinOp) and e.op == "*":
        if is_constant(e.left):
            inner = _around(e.right)
            return None if inner is None else (ir.BinOp("*", e.left, inner[0]), inner[1])
        if is_constant(e.right):
            inner = _around(e.left)
            return None if inner is None else (ir.BinOp("*", inner[0], e.right), inner[1])
    return None


@dataclass
class _Met:
    negations: int = 0
    sums: int = 0


def _flatten(e: ir.Expr, factors: list[ir.Expr], sums: list[tuple[str, int]], met: _Met | None = None) -> _Met:
    """Collect the factors of a product (through products, negations and Σ), counting
    the negations and Σ met on the way."""
    met = _Met() if met is None else met
    if isinstance(e, ir.BinOp) and e.op == "*":
        _flatten(e.left, factors, sums, met)
        _flatten(e.right, factors, sums, met)
    elif isinstance(e, ir.Neg):
        met.negations += 1
        _flatten(e.arg, factors, sums, met)
    elif isinstance(e, ir.Sum):
        met.sums += 1
        sums.extend(e.index)
        _flatten(e.body, factors, sums, met)
    else:
        factors.append(e)
    return met


def product(factors) -> ir.Expr:
    """``f1 * f2 * ... * fk`` (left-nested), for k >= 1."""
    factors = list(factors)
    result = factors[0]
    for f in factors[1:]:
        result = ir.BinOp("*", result, f)
    return result
