"""Separable reconstruction kernels with their derivatives (004 §2.2; Diderot's kernels,
supports and continuities: docs/fields.md, "Kernels").  A kernel h is even and piecewise
polynomial, ``pieces[k]`` on |x| in [k, k+1) (constant term first), so h⁽ᵐ⁾(x) =
sign(x)ᵐ·p⁽ᵐ⁾(|x|); ``continuity`` is k of field#k, ``accuracy`` the degree of the
polynomials it reproduces.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from fractions import Fraction as Q

import numpy as np

from ..errors import closest, error


@dataclass(frozen=True)
class Kernel:
    """An even piecewise-polynomial reconstruction kernel."""

    name: str
    support: int  # the kernel is zero outside (-support/2, support/2)
    continuity: int
    accuracy: int
    pieces: tuple[tuple[float, ...], ...]  # pieces[k]: coefficients on |x| in [k, k+1)

    @property
    def radius(self) -> int:
        """s: the taps for a position in cell n are n+1-s .. n+s."""
        return self.support // 2

    def piece(self, k: int, order: int) -> np.ndarray:
        """The coefficients of the ``order``-th derivative of piece k (constant term first)."""
        c = np.array(self.pieces[k], dtype=np.float64)
        for _ in range(order):
            c = c[1:] * np.arange(1, len(c))
        return c if len(c) else np.zeros(1)

    def __call__(self, x, order: int = 0) -> np.ndarray:
        """h⁽ᵒʳᵈᵉʳ⁾(x), elementwise over an array of arguments."""
        x = np.asarray(x, dtype=np.float64)
        a = np.abs(x)
        out = np.zeros_like(a)
        for k in range(self.radius):
            inside = (a >= k) & (a < k + 1)
            out = np.where(inside, np.polynomial.polynomial.polyval(a, self.piece(k, order)), out)
        if order % 2:
            out = np.where(x < 0, -out, out)
        return out


@lru_cache(maxsize=None)
def tap_segments(kern: Kernel, order: int, digits: int | None = None) -> np.ndarray:
    """Row i-(1-s) for taps i = 1-s .. s: the coefficients (constant first) of h⁽ᵒʳᵈᵉʳ⁾
    as a polynomial of x = f - i on [-i, 1-i) (piece -i of |x|, or piece i-1 mirrored);
    ``digits``: rounded to that many significant digits, as Diderot writes them."""
    s = kern.radius
    rows = []
    for i in range(1 - s, s + 1):
        piece = np.array(kern.pieces[-i if i <= 0 else i - 1], dtype=np.float64)
        signed = piece if i <= 0 else piece * (-1.0) ** np.arange(len(piece))  # h(x) = p(-x)
        for _ in range(order):
            signed = signed[1:] * np.arange(1, len(signed)) if len(signed) > 1 else np.zeros(1)
        if digits is not None:
            signed = np.array([float(f"{c:.{digits}g}") for c in signed])
        rows.append(signed)
    width = max(len(r) for r in rows)
    return np.array([np.pad(r, (0, width - len(r))) for r in rows])


def tap_weights(kern: Kernel, order: int, f: float, digits: int | None = None) -> np.ndarray:
    """h⁽ᵒʳᵈᵉʳ⁾(f - i) for the taps i = 1-s .. s of one fraction f in [0, 1), each tap's
    polynomial evaluated by Horner's rule in x = f - i (:func:`tap_segments`)."""
    c = tap_segments(kern, order, digits)
    x = f - np.arange(1 - kern.radius, kern.radius + 1, dtype=np.float64)
    h = c[:, -1].copy()
    for k in range(c.shape[1] - 2, -1, -1):
        h = c[:, k] + x * h
    return h


def at_integer(kern: Kernel, j: int, order: int) -> float:
    """h⁽ᵒʳᵈᵉʳ⁾ at the integer j as the limit from the right, exact in rationals where the
    one-sided limits differ (docs/fields.md, "Derivatives at integer positions")."""
    right, left = _limit(kern, j, order, +1), _limit(kern, j, order, -1)
    if right == left:
        return float(kern(np.array([float(j)]), order)[0])
    return float(right)


def _limit(kern: Kernel, j: int, order: int, side: int) -> Q:
    """The exact one-sided limit of h⁽ᵒʳᵈᵉʳ⁾ at the integer j (side +1: from the right)."""
    a = abs(j)
    toward_zero = (j > 0 and side < 0) or (j < 0 and side > 0)  # |x| -> a from below
    piece = a - 1 if toward_zero else a
    if piece >= kern.radius or piece < 0:
        return Q(0)
    coefficients = [Q(c).limit_denominator(10**6) for c in kern.pieces[piece]]
    for _ in range(order):
        coefficients = [c * k for k, c in enumerate(coefficients)][1:]
    value = sum((c * Q(a) ** k for k, c in enumerate(coefficients)), Q(0))
    negative = order % 2 and (j < 0 or (j == 0 and side < 0))
    return -value if negative else value


def _f(*cs) -> tuple[float, ...]:
    return tuple(float(Q(c)) for c in cs)


KERNELS: dict[str, Kernel] = {
    k.name: k
    for k in (
        Kernel("tent", 2, 0, 1, (_f(1, -1),)),
        Kernel("c1tent", 2, 1, 1, (_f(1, -1),)),
        Kernel("ctmr", 4, 1, 2, (_f(1, 0, "-5/2", "3/2"), _f(2, -4, "5/2", "-1/2"))),
        Kernel("c2tent", 2, 2, 1, (_f(1, -1),)),
        Kernel("c2ctmr", 4, 2, 2, (_f(1, 0, "-5/2", "3/2"), _f(2, -4, "5/2", "-1/2"))),
        Kernel("bspln3", 4, 2, 1, (_f("2/3", 0, -1, "1/2"), _f("4/3", -2, 1, "-1/6"))),
        # the quintic B-spline: on [k, k+1) a piece of (3-x)^5/120 - 6 (2-x)^5/120 + 15 (1-x)^5/120
        Kernel("bspln5", 6, 4, 1, (
            _f("11/20", 0, "-1/2", 0, "1/4", "-1/12"),
            _f("17/40", "5/8", "-7/4", "5/4", "-3/8", "1/24"),
            _f("81/40", "-27/8", "9/4", "-3/4", "1/8", "-1/120"),
        )),
        Kernel("c4hexic", 6, 4, 3, (
            _f("69/80", 0, "-23/16", 0, "19/16", "-7/12", "1/16"),
            _f("3/160", "35/8", "-341/32", 10, "-147/32", "25/24", "-3/32"),
            _f("1539/160", "-189/8", "747/32", -12, "109/32", "-61/120", "1/32"),
        )),
    )
}


def kernel(name_or_kernel) -> Kernel:
    """The kernel called ``name`` (or a Kernel as it is); error[input] names the known ones."""
    if isinstance(name_or_kernel, Kernel):
        return name_or_kernel
    found = KERNELS.get(name_or_kernel) if isinstance(name_or_kernel, str) else None
    if found is None:
        raise error("input", f"unknown reconstruction kernel {name_or_kernel!r}{closest(name_or_kernel, KERNELS)} "
                             f"(known: {', '.join(KERNELS)})")
    return found
