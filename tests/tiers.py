"""The quick tier's share of a parameter grid (docs/architecture.md, "Tests").

``@pytest.mark.parametrize("name", quick_first(CASES, {"a"}))`` runs the case ``a`` in both
tiers and every other case of ``CASES`` only in the full run (marked ``slow``): where the cases
exercise one feature, the quick tier keeps one or two of them and the full run all.  The ids
are the values' own, as a plain list would give them, so a test's id is the same in both tiers."""

from __future__ import annotations

from collections.abc import Collection, Iterable

import pytest


def quick_first(values: Iterable, quick: Collection) -> list:
    """``values`` as parameters, those not in ``quick`` marked slow; ``quick`` must name
    values of the grid (a misspelt one would silently leave the feature to the full run)."""
    values = list(values)
    missing = [q for q in quick if q not in values]
    if missing:
        raise ValueError(f"quick values not in the grid: {missing}")
    return [v if v in quick else pytest.param(v, marks=pytest.mark.slow) for v in values]

