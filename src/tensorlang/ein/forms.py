"""The shapes of EIN expressions that passes and back ends look for.

``product`` builds ``f1 * f2 * ... * fk``.
"""

from __future__ import annotations

from . import ir


def product(factors) -> ir.Expr:
    """``f1 * f2 * ... * fk`` (left-nested), for k >= 1."""
    factors = list(factors)
    result = factors[0]
    for f in factors[1:]:
        result = ir.BinOp("*", result, f)
    return result
