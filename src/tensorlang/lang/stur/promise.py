"""``--check-structure``: the first entry of an input that breaks its U and R facts' promise is
error[structure] (docs/structure.md, "Meaning")."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ...ein.structure import agree
from ...errors import error
from ...semantics.types import CheckedProgram
from . import ast
from .check import Model, fact_masks
from .linear import comparisons, divisible, evaluate, holds_any, reciprocal, rename


def check_promises(checked: CheckedProgram, supplied: Mapping[str, np.ndarray]) -> None:
    model: Model = checked.program
    for name in model.inputs:
        if name in model.uniques and name in supplied and model.shapes[name]:
            _check_tensor(model, name, np.asarray(supplied[name], dtype=np.float64))


def redundancy_pieces(model: Model, name: str, args: tuple[str, ...]):
    """Each product of T:R as (coefficient, conditions on the first half, the second
    half as expressions of the first), or None where a product is not of that form."""
    rule = model.redundancies.get(name)
    if rule is None:
        return ()
    rank = len(args)
    mapping = dict(zip(rule.args[:rank], args))
    primed = rule.args[rank:]
    pieces = []
    for product in rule.products:
        coefficient = 1.0
        conditions = []
        targets: dict[str, ast.IExpr] = {}
        for f in product.factors:
            if isinstance(f, ast.Number):
                coefficient *= reciprocal(f.value) if f.inverse else f.value
                continue
            assert isinstance(f, ast.Condition)
            for left, op, right in comparisons(f):
                left, right = rename(left, mapping), rename(right, mapping)
                names_l, names_r = set(ast.index_names(left)), set(ast.index_names(right))
                if op == "=" and isinstance(left, ast.IName) and left.name in primed and not names_r & set(primed):
                    targets[left.name] = right
                elif op == "=" and isinstance(right, ast.IName) and right.name in primed \
                        and not names_l & set(primed):
                    targets[right.name] = left
                elif (names_l | names_r) & set(primed):
                    return None
                else:
                    conditions.append((left, op, right))
        if set(targets) != set(primed):
            return None
        pieces.append((coefficient, tuple(conditions), tuple(targets[p] for p in primed)))
    return tuple(pieces)


def keep_promise(checked: CheckedProgram, name: str, value: np.ndarray) -> np.ndarray:
    """``value`` made to keep T:U and T:R (``--random-inputs``): its unique entries, the
    redundancy map's copies, zero elsewhere; unchanged where nothing is checkable."""
    model: Model = checked.program
    value = np.asarray(value, dtype=np.float64)
    if name not in model.uniques or not model.shapes[name]:
        return value
    for _ in range(2):  # a copy of a copy reads the first pass's copy
        found = _promised(model, name, value)
        if found is None:
            return value
        inside, expected, _ = found
        value = np.where(inside, value, expected)
    return value


def _promised(model: Model, name: str, value: np.ndarray):
    """(where entries are free, what every other entry must be, where that is a copy), or None where
    the redundancy map is not of the form c * (conditions) * (ip = e) ..."""
    shape = value.shape
    args = tuple(f"_{n}" for n in range(len(shape)))
    grids = [np.arange(n, dtype=np.int64).reshape([1] * a + [n] + [1] * (len(shape) - a - 1)) for a, n in enumerate(shape)]
    env = {**model.values, **dict(zip(args, grids))}
    unique, _, _ = fact_masks(model, name, args, "U")
    inside = holds_any(unique, env, shape)
    dims, _, _ = fact_masks(model, name, args, "D")
    if dims is not None:
        inside |= ~holds_any(dims, env, shape)  # outside the tensor's own dimensions: nothing promised
    expected = np.zeros(shape)
    covered = np.zeros(shape, dtype=bool)
    pieces = redundancy_pieces(model, name, args)
    if pieces is None:
        return None
    with np.errstate(all="ignore"):
        for coefficient, conditions, targets in pieces:
            where = holds_any((conditions,), env, shape) & ~inside & ~covered
            picks = tuple(np.broadcast_to(np.asarray(evaluate(t, env)), shape) for t in targets)
            valid = where.copy()
            for p, n, t in zip(picks, shape, targets):  # (a target through a division by zero names no entry)
                valid &= (p >= 0) & (p < n) & divisible(t, env, {})
            safe = tuple(np.where(valid, p, 0) for p in picks)
            expected = np.where(valid, coefficient * value[safe], expected)
            covered |= valid
    return inside, expected, covered


def _check_tensor(model: Model, name: str, value: np.ndarray) -> None:
    found = _promised(model, name, value)
    if found is None:
        return  # a redundancy map not of the form c * (conditions) * (ip = e) ...: nothing checkable
    inside, expected, covered = found
    same = agree(value, expected)
    bad = ~inside & ~same
    if not bad.any():
        return
    position = tuple(int(p) for p in np.argwhere(bad)[0])
    where_text = f"{name}({', '.join(map(str, position))})"
    why = (f"is a redundant copy by {name}:R and should be {float(expected[position])!r}" if covered[position]
           else f"is outside the unique set {name}:U and should be 0")
    message = f"input {name!r} breaks its structure: {where_text} = {float(value[position])!r} {why}"
    fact = model.uniques[name]
    raise error("structure", message, fact.head_span, "structure promise (003 §3)")

