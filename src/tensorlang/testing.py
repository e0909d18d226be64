"""The reference semantics, usable from outside: is a result what the program means?
(``tl.testing.assert_matches_reference``; docs/api.md, "Testing against the reference")."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from . import api, limits, specialize
from .ein import interp
from .errors import error, pointing_into, signature_checked
from .kernel import Kernel

__all__ = ["assert_matches_reference", "reference"]


def _kernel(program, inputs, params):
    if isinstance(program, specialize.SymbolicKernel):  # complete: a forgotten input is named, not its size
        return program.for_inputs(inputs, complete=True)
    if isinstance(program, Kernel):
        return program
    if isinstance(program, (str, Path)):
        compiled = api.compile(program, backend="interp", params=params)
        return compiled.for_inputs(inputs, complete=True) if isinstance(compiled, specialize.SymbolicKernel) else compiled
    raise error("input", "assert_matches_reference takes a program (text or path), a tl.Kernel or a "
                f"tl.SymbolicKernel, got {type(program).__name__}")


@signature_checked
def reference(program, inputs: Mapping[str, object], *, params: Mapping[str, int] | None = None) -> dict:
    """Each result of the program as (value, rounding bound in units of eps), float64."""
    kernel = _kernel(program, inputs, params)
    # a missing, misspelt or misshapen input is the kernel call's error, not a ⊥ reference
    with pointing_into(kernel.source), np.errstate(over="ignore"):  # (a long double past float64's range: ±inf, quietly)
        arrays = kernel._validate_inputs(kernel._inputs_dict(inputs))
        store = interp.run(kernel.ein, {n: np.asarray(v, dtype=np.float64) for n, v in arrays.items()}, interp.Bounded())
    return {name: store[name] for name in kernel.outputs}


@signature_checked
def assert_matches_reference(program, inputs: Mapping[str, object], result, *, params: Mapping[str, int] | None = None,
                             slack: float = 32.0, fused: bool = False) -> None:
    """Raise AssertionError unless ``result`` (a dict of results, or the one result's
    array) is what ``program`` computes from ``inputs`` by the rules above."""
    if isinstance(slack, bool) or not isinstance(slack, (int, float, np.integer, np.floating)) or not slack >= 0 \
            or not isinstance(fused, (bool, np.bool_)):  # (slack=nan passed every result; fused="no" was true)
        raise error("input", f"slack is a number >= 0 (inf: only ⊥ and infinities checked) and fused a bool, got "
                    f"slack={slack!r:.40}, fused={fused!r:.40}")
    slack = float(slack) if slack <= float(np.finfo(np.float64).max) else np.inf  # (an int past a float's range: no bound)
    expected = reference(program, inputs, params=params)
    if not isinstance(result, Mapping):
        if len(expected) != 1:
            raise error("input", f"the program has {len(expected)} results ({', '.join(expected)}): pass them as a dict")
        result = {next(iter(expected)): result}
    if not result:
        raise error("input", f"no result to check: pass at least one of {', '.join(expected)}")
    if unknown := [n for n in result if n not in expected]:
        raise AssertionError(f"{unknown[0]!r} is no result of the program (results: {', '.join(expected)})")
    for name, got in result.items():
        limits.refuse_masked(got, f"result {name!r}")  # (np.asarray would compare the values under the mask)
        got = np.asarray(got)
        value, bound = expected[name]
        if got.shape != np.shape(value) or got.dtype.kind not in "biuf":  # complex: no imaginary part dropped
            raise AssertionError(f"{name}: {got.dtype} of shape {got.shape}, the reference float64 of shape {np.shape(value)}")
        eps = float(np.finfo(got.dtype).eps) if got.dtype.kind == "f" else float(np.finfo(np.float64).eps)
        got = got.astype(np.float64)
        got = np.where(np.isnan(value) & np.isinf(got), np.nan, got) if fused else got
        _same(name, "undefined (⊥, NaN) entries", np.isnan(got) != np.isnan(value), got, value)
        inf = np.isinf(value) | np.isinf(got)
        _same(name, "infinite entries", inf & (got != value) & ~np.isnan(value), got, value)
        finite = np.isfinite(value) & np.isfinite(got)
        scale = np.abs(value) if eps > np.finfo(np.float64).eps else 0.0
        with np.errstate(invalid="ignore", over="ignore"):  # (slack inf times a bound 0: nan, nothing beyond)
            allowed = slack * eps * (np.abs(bound) + scale) + np.finfo(np.float64).tiny
            beyond = finite & (np.abs(got - value) > allowed)
        _same(name, "finite entries beyond the rounding bound", beyond, got, value, allowed)


def _same(name: str, what: str, bad: np.ndarray, got, value, allowed=None) -> None:
    if not np.any(bad):
        return
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    tail = "" if allowed is None else (f" (differ by {_number(abs(got[where] - value[where]), 3)}, "
                                       f"allowed {_number(np.broadcast_to(allowed, bad.shape)[where], 3)})")
    at = f"{name}[{', '.join(map(str, where))}]" if where else name
    raise AssertionError(f"{name}: {int(np.count_nonzero(bad))} {what}; first at {at}: "
                         f"got {_number(got[where])}, the reference {_number(value[where])}{tail}")


def _number(x, digits: int | None = None) -> str:
    """A number as a user reads it (``nan``, ``-0.0``, ``0.1``; or ``digits`` digits), never ``np.float64(nan)``."""
    x = float(x)
    return repr(x) if digits is None or not np.isfinite(x) or x == 0 else f"{x:.{digits}g}"
