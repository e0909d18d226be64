"""A reduction over an index its body does not depend on (`prod(k:N) x[i]`).

No compiled target iterates over such an index: a sum is N·x, a product x^N (computed as
a power, semantics.values.powers), max and min are x.  The reference interpreter still
computes every term (it is the paper's meaning, transcribed) and is bounded before it
starts by the memory budget.  Each target is compared with the reference strictly (⊥
positions, the sign of zero, infinities) on inputs where a power is exact, with the
optimizer on and off (off, the target's own lowering does it), in float64 and float32.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.semantics.values import power
from tensorlang.targets.c import build as c_build
from tiers import quick_first

#: ⊥, both zeros, both infinities, and numbers whose small powers are exact
SPECIAL = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0])
TARGETS = ["numpy"] + (["c"] if c_build.find_compiler() is not None else [])

PROGRAM = """
in var x : [{n}]
out var y : [{n}]
y[i] = {op}(k:{N}) x[i]
"""

#: the ignored index beside one the body uses
MIXED = """
in var A : [{n} 2]
out var y : [{n}]
y[i] = {op}(j, k:{N}) A[i,j]
"""


def same(a, b) -> bool:
    """Equal as IEEE values: ⊥ at the same entries, zeros of the same sign."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("opt", [True, False], ids=["opt", "no-opt"])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("N", quick_first([1, 2, 3, 7], {2, 3}))  # an even and an odd count; two C builds a case
def test_targets_agree_with_the_reference_strictly(op, N, target, opt, dtype):
    for text, inputs in [(PROGRAM, {"x": SPECIAL}),
                         (MIXED, {"A": np.stack([SPECIAL, np.roll(SPECIAL, 3)], axis=1)})]:
        src = text.format(n=len(SPECIAL), op=op, N=N)
        expected = tl.compile(src, backend="interp", dtype=dtype)(**inputs)["y"]
        got = tl.compile(src, backend=target, dtype=dtype, opt=opt)(**inputs)["y"]
        assert same(got, expected), (src, got, expected)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("N", [2**40, 2**40 + 1, 2**61 + 1])
def test_a_huge_ignored_index_is_a_power_not_a_loop(target, N):
    """2^40 iterations would take hours; the power takes microseconds.  The sign follows N's
    parity exactly, also where N is too large for a float to hold (2^61 + 1)."""
    x = np.array([1.0, -1.0, -0.0, 0.0, np.nan, np.inf, -np.inf, 1 + 2**-52, -(1 - 2**-53)])
    for opt in (True, False):
        kernel = tl.compile(PROGRAM.format(n=len(x), op="prod", N=N), backend=target, opt=opt)
        start = time.perf_counter()
        got = kernel(x=x)["y"]
        assert time.perf_counter() - start < 2.0
        assert same(got, [power(v, N) for v in x]), (N, opt, got)
        for op, want in [("max", x), ("min", x), ("sum", x * float(N) + 0.0)]:  # a Σ starts from +0
            assert same(tl.compile(PROGRAM.format(n=len(x), op=op, N=N), backend=target, opt=opt)(x=x)["y"], want)


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_the_reference_is_bounded_before_it_starts(op, monkeypatch):
    """The interpreter computes every term: past the memory budget it refuses at once."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**20))
    kernel = tl.compile(PROGRAM.format(n=3, op=op, N=2**40), backend="interp")
    start = time.perf_counter()
    with pytest.raises(TensorLangError) as caught:
        kernel(x=np.ones(3))
    assert caught.value.code == "too-large" and time.perf_counter() - start < 1.0
    assert f"the {op} reduction needs" in caught.value.message, caught.value.message  # named, not "the summation"


@pytest.mark.skipif("c" not in TARGETS, reason="no C compiler")
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("N", quick_first([1, 2, 7, 2**40 + 1], {2, 2**40 + 1}))  # four C builds a case
def test_the_padded_c_target_agrees_with_the_reference(op, N):
    """``pad=8`` (rows padded to 8 elements) computes the same values as the reference
    for a reduction over an index its body ignores: alone and beside an index it uses.
    The reference cannot run 2^40 + 1 terms: there the values are the power's."""
    for text, inputs in [(PROGRAM, {"x": SPECIAL}),
                         (MIXED, {"A": np.stack([SPECIAL, np.roll(SPECIAL, 3)], axis=1)})]:
        src = text.format(n=len(SPECIAL), op=op, N=N)
        if N < 2**40:
            expected = tl.compile(src, backend="interp")(**inputs)["y"]
        else:
            expected = tl.compile(src, backend="numpy")(**inputs)["y"]
        for opt in (True, False):
            got = tl.compile(src, backend="c", pad=8, opt=opt)(**inputs)["y"]
            assert same(got, expected), (src, opt, got, expected)


@pytest.mark.parametrize("target", TARGETS)
def test_dask_runs_the_power_chunk_by_chunk(target):
    """The Dask target runs a compiled target's kernel per chunk: the same values as one call."""
    pytest.importorskip("dask.array")
    src = "in var X : [N 3]\nout var Y : [N 3]\nout var s : [3]\n" \
          "Y[r,i] = prod(k:1099511627777) X[r,i]\ns[i] = sum(r) max(k:1099511627777) X[r,i]\n"
    X = np.resize(SPECIAL, (8, 3))
    kernel = tl.compile(src, backend=target)
    whole = kernel(X=X)
    chunked = kernel.dask(X=X, chunks=2)
    assert same(np.asarray(chunked["Y"]), whole["Y"]) and same(whole["Y"], [[power(v, 2**40 + 1) for v in row] for row in X])
    assert same(np.asarray(chunked["s"]), whole["s"])
