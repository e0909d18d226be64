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
