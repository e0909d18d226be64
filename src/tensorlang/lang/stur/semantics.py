"""The reference semantics of STUR: docs/structure.md, "Meaning (the reference interpreter)"."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...semantics import progress
from ...semantics.interface import initial_store
from ...semantics.types import CheckedProgram
from .check import Model, Term, prepare
from .linear import error, holds_any, reciprocal, too_large


def run(checked: CheckedProgram, supplied: Mapping[str, np.ndarray], dtype=np.float64) -> dict[str, np.ndarray]:
    dtype = np.dtype(dtype)
    model: Model = checked.program
    model.require_values()
    store = initial_store(checked.context.shapes, checked.interface.roles, supplied, dtype)
    with np.errstate(all="ignore"):  # ⊥ and ±inf are values here, not warnings
        for rule in progress.statements(model.order):
            out, touched = np.full(model.shapes[rule.name], -0.0, dtype=dtype), np.zeros(model.shapes[rule.name], bool)
            for product in rule.products:  # -0 + x is x: a lone product keeps its zero's sign; no product's +0
                touched[add_term(out, prepare(model, rule, product), store, dtype, model.values)] = True
            store[rule.name] = np.where(touched, out, dtype.type(0))
    return store


def add_term(out: np.ndarray, term: Term, store: Mapping[str, np.ndarray], dtype, values: Mapping[str, int]) -> Any:
    """out[h] += the term's sum over its other variables (its box, where its masks hold); the h it reaches."""
    if any(lo > hi for lo, hi in term.box.values()):
        return np.zeros(out.shape, dtype=bool)
    if len(term.variables) > 64 or any(len(a.args) > 63 for a in term.accesses):  # numpy's axes and index arrays
        raise error("too-large", f"a product of {term.rule.name!r} has {len(term.variables)} variables; the reference interpreter "
                    "evaluates at most 64, 63 in one access (numpy's limits; the compiled targets take more)", term.product.span)
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
    value = np.where(mask, value, dtype.type(-0.0))  # (-0 + x is x: a sum of -0 terms is -0, one of nothing +0)
    head = term.rule.args
    summed = tuple(axis for axis, v in enumerate(term.variables) if v not in head)
    accessed = {v for access in term.accesses for v in access.args}  # (a variable only a mask names is no sum)
    total = np.where(mask.any(axis=summed), value.sum(axis=summed, initial=dtype.type(-0.0)), dtype.type(0))  # (numpy's: +0)
    if any(term.variables[axis] in accessed for axis in summed):
        total = total + dtype.type(0)  # (a sum starts at +0, as compiled)
    kept = [v for v in term.variables if v in head]
    total = np.transpose(total, [kept.index(h) for h in head]) if head else total
    out[(region := tuple(slice(term.box[h][0], term.box[h][1] + 1) for h in head))] += total
    return region
