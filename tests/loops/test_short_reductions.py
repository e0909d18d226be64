"""A reduction loop with a constant trip count below machine.SIMD_REDUCTION_MIN is not
marked simd (loops.parallel.short_reduction): gcc unrolls it whole, where ``omp simd
reduction`` kept a rolled loop (docs/performance.md, "Short reductions without simd").
A longer one (counting the terms of enclosing loops of the same sum), or one whose start is a loop variable, keeps the mark; the C kernels give the
interpreter's values with ⊥, ±inf and ±0 among the inputs, fma on and off."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.loops import ir as loops
from tensorlang.loops.parallel import short_reduction, simd_marks
from tensorlang.machine import SIMD_REDUCTION_MIN

SOURCE = "in var A : [{i} {k}]\nin var B : [{k} {j}]\nout var C : [{i} {j}]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n"
SHORT, LONG = SIMD_REDUCTION_MIN - 1, SIMD_REDUCTION_MIN


def _summed(kernel) -> loops.Loop:
    found = [node for nest in kernel.loop_program.nests for node in loops.walk(nest.body)
             if isinstance(node, loops.Loop) and node.reductions]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("k, simd", [(2, False), (SHORT, False), (LONG, True), (64, True)])
def test_a_short_reduction_is_not_marked_simd(k, simd, tmp_path, capsys):
    source = SOURCE.format(i=3, k=k, j=5)
    summed = _summed(tl.compile(source, backend="numpy", threads=1))
    assert summed.extent == k and summed.simd is simd
    assert ("#pragma omp simd reduction(+:" in tl.compile(source, threads=1).code("c")) is simd
    from tensorlang.cli import main
    program = tmp_path / "mm.tl"
    program.write_text(source)
    assert main(["compile", str(program), "--emit", "loops"]) == 0
    printed = capsys.readouterr().out
    assert f"for k in range({k}) reduce(+: acc1)" in printed
    assert (f"simd for k in range({k})" in printed) is simd


def test_the_rule_counts_the_trip_and_leaves_marked_loops_alone():
    body = (loops.Update("+", "acc", loops.Const(1.0)),)
    assert short_reduction(loops.Loop("k", SHORT, body, reductions=(("+", "acc"),)))
    assert not short_reduction(loops.Loop("k", LONG, body, reductions=(("+", "acc"),)))
    assert short_reduction(loops.Loop("k", LONG, body, reductions=(("+", "acc"),), start=1))  # a peeled first term
    assert not short_reduction(loops.Loop("k", LONG, body, reductions=(("+", "acc"),), start="i"))  # triangular
    assert not short_reduction(loops.Loop("k", 2, body))  # no reduction: an elementwise loop keeps simd
    assert simd_marks(loops.Loop("k", 2, body)).simd
    assert not simd_marks(loops.Loop("k", 2, body, reductions=(("+", "acc"),))).simd
    inner = loops.Loop("k", 8, body, reductions=(("+", "acc"),))  # 8 terms a step of j: 64 in all
    assert simd_marks(loops.Loop("j", 8, (inner,), reductions=(("+", "acc"),))).body[0].simd
    assert not simd_marks(loops.Loop("j", 8, (inner,))).body[0].simd  # an output loop: 8 terms
    marked = loops.Loop("k", 2, body, reductions=(("+", "acc"),), simd=True)  # set by another rewrite
    assert simd_marks(marked) is marked


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 1e30])


@pytest.mark.parametrize("k", [2, SHORT, LONG, 40])
@pytest.mark.parametrize("fma", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_short_and_long_reductions_give_the_interpreters_values(k, fma, dtype):
    source = SOURCE.format(i=6, k=k, j=7)
    rng = np.random.default_rng(k)
    a = rng.choice(SPECIAL, size=(6, k)).astype(dtype)
    b = rng.choice(SPECIAL, size=(k, 7)).astype(dtype)
    a[0] = rng.random(k)  # a row of plain numbers: some outputs are finite
    b[:, 0] = rng.random(k)
    a[1] = -0.0  # -0 * x sums: the sign of a zero sum
    with np.errstate(all="ignore"):
        want = tl.compile(source, backend="interp", dtype=dtype)(A=a, B=b)["C"]
        got = tl.compile(source, threads=1, dtype=dtype, fma=fma)(A=a, B=b)["C"]
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~finite], want[~finite], equal_nan=True)
    assert np.allclose(got[finite], want[finite], rtol=1e-5 if dtype == "float32" else 1e-12)
    assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
