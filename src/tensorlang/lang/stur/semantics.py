"""The reference semantics of STUR: docs/structure.md, "Meaning (the reference interpreter)"."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ...semantics import progress
from ...semantics.interface import initial_store
from ...semantics.types import CheckedProgram
from .check import Model, Term, prepare
from .linear import holds_any, reciprocal, too_large


def run(checked: CheckedProgram, supplied: Mapping[str, np.ndarray], dtype=np.float64) -> dict[str, np.ndarray]:
    dtype = np.dtype(dtype)
    model: Model = checked.program
    model.require_values()
    store = initial_store(checked.context.shapes, checked.interface.roles, supplied, dtype)
    with np.errstate(all="ignore"):  # ⊥ and ±inf are values here, not warnings
        for rule in progress.statements(model.order):
            out = np.zeros(model.shapes[rule.name], dtype=dtype)
            for product in rule.products:
                add_term(out, prepare(model, rule, product), store, dtype, model.values)
            store[rule.name] = out
    return store


def add_term(out: np.ndarray, term: Term, store: Mapping[str, np.ndarray], dtype, values: Mapping[str, int]) -> None:
    """out[h] += the term's sum over its other variables (its box, where its masks hold)."""
    if any(lo > hi for lo, hi in term.box.values()):
        return
    shape = tuple(hi - lo + 1 for lo, hi in (term.box[v] for v in term.variables))
    too_large(int(np.prod(shape, dtype=object)), f"a product of {term.rule.name!r}", term.product.span)
    grids = {v: np.arange(lo, hi + 1, dtype=np.int64).reshape([1] * axis + [n] + [1] * (len(shape) - axis - 1))
             for axis, (v, n) in enumerate(zip(term.variables, shape)) for lo, hi in (term.box[v],)}
    env = {**values, **grids}
    mask = np.ones(shape, dtype=bool)  # where in the term's box every mask holds
    for alternatives in term.masks:
        mask &= holds_any(alternatives, env, shape)
    value = np.full(shape, term.coefficient, dtype=dtype)
    for access in term.accesses:
        array = store[access.name]
        picked = array[tuple(grids[a] for a in access.args)] if access.args else array[()]
        if access.inverse:
            picked = reciprocal(picked)
        value = value * picked
    value = np.where(mask, value, dtype.type(0))
    head = term.rule.args
    summed = tuple(axis for axis, v in enumerate(term.variables) if v not in head)
    total = value.sum(axis=summed) if summed else value
    kept = [v for v in term.variables if v in head]
    total = np.transpose(total, [kept.index(h) for h in head]) if head else total
    region = tuple(slice(term.box[h][0], term.box[h][1] + 1) for h in head)
    out[region] += total
