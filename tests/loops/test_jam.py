"""Sums along rows several rows at once, and sums reading an operand across its rows in
strips (loops/jam.py): the rewrites take the nests they are for, leave the others, and
compute what the reference does."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.loops import jam


def _matvec(n: int, m: int) -> str:
    return f"in var U : [{n} {m}]\nin var v : [{m}]\ninout var x : [{n}]\nx = ((U # v) . [2 3]) * x\n"


def _trace(n: int) -> str:
    return f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var s : []\ns = ((A # B) . [2 3]) . [1 2]\n"


@pytest.mark.parametrize("n", [4, 7, 17, 300, 301])
@pytest.mark.parametrize("fma", [True, False])
def test_row_sums_run_rows_at_once_and_agree(n, fma):
    k = tl.compile(_matvec(n, 40), backend="c", fma=fma)
    loops = k.ir("loops")
    assert loops.count("reduce(+:") >= jam.ROWS  # ROWS accumulators in one summation loop
    if n % jam.ROWS:
        assert f"range({n // jam.ROWS * jam.ROWS}, {n})" in loops  # the rows left over
    rng = np.random.default_rng(n)
    U, v, x = rng.uniform(-1, 1, (n, 40)), rng.uniform(-1, 1, 40), rng.uniform(-1, 1, n)
    U[n // 2, 3] = np.nan
    want = tl.compile(_matvec(n, 40), backend="numpy")(U=U, v=v, x=x)["x"]
    np.testing.assert_allclose(k(U=U, v=v, x=x)["x"], want, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_short_rows_and_column_sums_keep_their_loops():
    short = tl.compile(_matvec(300, jam.MIN_ROW - 1), backend="c").ir("loops")
    assert "acc1r0" not in short
    column = "in var U : [300 40]\nin var v : [300]\nout var y : [40]\ny[i] = sum(k) U[k,i] * v[k]\n"
    assert "acc1r0" not in tl.compile(column, backend="c").ir("loops")


@pytest.mark.parametrize("n", [8, 16, 23, 64, 67, 256])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_transposed_read_runs_in_strips_and_agrees(n, threads):
    k = tl.compile(_trace(n), backend="c", threads=threads)
    loops = k.ir("loops")
    assert (f"simd for k1 in range({jam.STRIP})" in loops) == (n >= 2 * jam.STRIP)
    rng = np.random.default_rng(n)
    A, B = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))
    want = float((A.astype(np.longdouble) * B.T).sum())
    assert abs(float(k(A=A, B=B)["s"]) - want) <= 1e-12 * float(np.abs(A * B.T).sum())


def test_the_loop_pipeline_can_leave_the_rewrites_out():
    k = tl.compile(_trace(64), backend="c", skip_passes=("strips", "rows"))
    loops = k.ir("loops")
    assert "strips" not in loops.splitlines()[0] and "k1" not in loops
    rng = np.random.default_rng(3)
    A, B = rng.uniform(-1, 1, (64, 64)), rng.uniform(-1, 1, (64, 64))
    assert np.isclose(float(k(A=A, B=B)["s"]), float(np.einsum("ij,ji->", A, B)), rtol=1e-12)


@pytest.mark.parametrize("n", [512, 515, 1024])
def test_strips_over_rows_far_apart_prefetch_ahead_and_agree(n):
    """Rows of ``jam.PREFETCH_ROW_BYTES`` or more: each strip step asks L1 for the line
    ``PREFETCH_AHEAD`` rows further, guarded so no address passes B's end; the rewrite is
    named and can be left out; the value is the same bits with or without it."""
    k = tl.compile(_trace(n), backend="c", threads=1)
    loops = k.ir("loops")
    assert "prefetch" in loops.splitlines()[0] and "prefetch B[" in loops
    source = k.code("c")
    assert source.count("__builtin_prefetch(") == 1
    assert f"(x_a + {jam.PREFETCH_AHEAD}LL) < {n}LL" in source
    without = tl.compile(_trace(n), backend="c", threads=1, skip_passes=("prefetch",))
    assert "__builtin_prefetch(" not in without.code("c")
    rng = np.random.default_rng(n)
    A, B = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))
    assert float(k(A=A, B=B)["s"]) == float(without(A=A, B=B)["s"])


def test_strips_over_rows_close_together_ask_for_nothing():
    n = jam.PREFETCH_ROW_BYTES // 8 - 1  # rows of float64 one element short of the threshold
    assert "__builtin_prefetch(" not in tl.compile(_trace(n), backend="c", threads=1).code("c")
    assert "__builtin_prefetch(" in tl.compile(_trace(n + 1), backend="c", threads=1).code("c")


def test_a_strip_block_and_its_leftover_both_on_threads_compile(monkeypatch):
    """n = 515: the strips' block and the leftover loop share the variable k, and both
    reach the parallel threshold: each has its own run-time team."""
    monkeypatch.setenv("TENSORLANG_PARALLEL_WORK", "1000")
    k = tl.compile(_trace(515), backend="c", threads=2)
    assert k.code("c").count(" = tl_pick(") == 2
    rng = np.random.default_rng(5)
    A, B = rng.uniform(-1, 1, (515, 515)), rng.uniform(-1, 1, (515, 515))
    assert np.isclose(float(k(A=A, B=B)["s"]), float(np.einsum("ij,ji->", A, B)), rtol=1e-12)
