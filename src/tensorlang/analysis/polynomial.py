"""Polynomials in the symbolic sizes, for costs that hold at every size.

``tensorlang analyze`` without ``--param`` reports a program's flops and bytes as
polynomials in its symbols (``2*E*n^4 + E*n^3``).  The cost model only multiplies and
adds extents (:mod:`.cost`), so a polynomial with integer coefficients over the symbols
is all it needs: this class is that and nothing more (a computer algebra system would
be a large dependency for two operations and a printer).
"""

from __future__ import annotations

from typing import Union

#: A monomial: (symbol, power) pairs sorted by symbol; () is the constant monomial.
Monomial = tuple[tuple[str, int], ...]


class Poly:
    """A polynomial with integer coefficients; immutable."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Monomial, int] | None = None):
        self.terms: dict[Monomial, int] = {m: c for m, c in (terms or {}).items() if c}

    @staticmethod
    def symbol(name: str) -> "Poly":
        return Poly({((name, 1),): 1})

    @staticmethod
    def constant(value: int) -> "Poly":
        return Poly({(): value})

    def __add__(self, other: "Poly | int") -> "Poly":
        other = _lift(other)
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms.get(m, 0) + c
        return Poly(terms)

    __radd__ = __add__

    def __mul__(self, other: "Poly | int") -> "Poly":
        other = _lift(other)
        terms: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = _times(m1, m2)
                terms[m] = terms.get(m, 0) + c1 * c2
        return Poly(terms)

    __rmul__ = __mul__

    def __eq__(self, other) -> bool:
        if isinstance(other, int):
            other = Poly.constant(other)
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(frozenset(self.terms.items()))

    def evaluate(self, values: dict[str, int]) -> int:
        total = 0
        for m, c in self.terms.items():
            term = c
            for name, power in m:
                term *= values[name] ** power
            total += term
        return total

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        order = sorted(self.terms, key=lambda m: (-sum(p for _, p in m), m))
        parts = []
        for m in order:
            c = self.terms[m]
            factors = [f"{name}^{power}" if power > 1 else name for name, power in m]
            if c != 1 or not factors:
                factors.insert(0, str(c))
            parts.append("*".join(factors))
        return " + ".join(parts).replace("+ -", "- ")

    __repr__ = __str__


def _lift(value: Union[Poly, int]) -> Poly:
    return value if isinstance(value, Poly) else Poly.constant(value)


def _times(a: Monomial, b: Monomial) -> Monomial:
    powers = dict(a)
    for name, power in b:
        powers[name] = powers.get(name, 0) + power
    return tuple(sorted(powers.items()))
