"""A sum whose summand the declarations make zero on most of its iteration space stays a
loop nest over its support instead of a dense BLAS step (schedule.plan ``visits``, the pipeline's facts by
loops.structure.visited_points): at sizes where the BLAS step would otherwise be taken,
the C schedule picks loops exactly where they visit at most 1/SPARSE_GAIN of the dense
points, and the result equals the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops.structure import visited_points
from tensorlang.schedule import plan as plan_module
from tensorlang.schedule.steps import LoopStep

N = 41  # 41³ = 68921 multiply-adds: past BLAS_WORK, so a dense product is a BLAS step


def _matmul(decl: str, n: int = N) -> str:
    return f"in var B : [{n} {n}] {decl}\nin var C : [{n} {n}]\nout var A : [{n} {n}]\nA[i,j] = sum(k) B[i,k] * C[k,j]\n"


def _mttkrp(decl: str, n: int = 24) -> str:
    return (f"in var B : [{n} {n} {n}] {decl}\nin var C : [{n} {n}]\nin var D : [{n} {n}]\nout var A : [{n} {n}]\n"
            "A[i,j] = sum(k,l) B[i,k,l] * C[k,j] * D[l,j]\n")


#: declarations whose loops visit a small part of the dense points: loops
SPARSE = {
    "diagonal": _matmul("diagonal"),
    "row": _matmul("row(3)"),
    "column": _matmul("col(40)"),
    "mttkrp on a fixed slice": _mttkrp("where i1 = 7"),
    "mttkrp on a diagonal cube": _mttkrp("where i1 = i2, i2 = i3"),
}
#: half the points (a triangle: BLAS is faster on the dense product), and a support
#: the loops cannot state (they would visit every point): BLAS
DENSE = {
    "upper": _matmul("upper"),
    "anti-triangle": _matmul("where i1 + i2 <= 10"),
    "no structure": _matmul(""),
}
#: a band off the diagonal: k = i + offset leaves the first or last rows with nothing to
#: add, so the sum's loop may not simply be replaced by its value (it would read outside
#: B and C): the loops keep a superset (k >= i) or the whole range
BANDS = {f"band {offset:+d} n={n}": _matmul(f"where i2 = i1 + {offset}" if offset > 0 else f"where i1 = i2 + {-offset}", n)
         for offset in (-3, -1, 1, 2) for n in (6, N)}


def _c(source):
    try:
        return tl.compile(source, backend="c")
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


def _sum_steps(k):
    return [s for s in k.schedule.steps if "sum(" in str(getattr(s, "statements", None) or s)]


@pytest.mark.parametrize("name", sorted(SPARSE))
def test_a_sparse_sum_stays_loops_over_its_support(name):
    k = _c(SPARSE[name])
    last = k.schedule.steps[-1]
    assert isinstance(last, LoopStep), last
    assert any("visit" in r and "SPARSE_GAIN" in r for r in last.reasons), last.reasons
    # the numpy target densifies loop steps: it keeps its BLAS step
    numpy_steps = tl.compile(SPARSE[name], backend="numpy").compiled.schedule.steps  # its own, not C's
    assert not isinstance(numpy_steps[-1], LoopStep) or "SPARSE_GAIN" not in " ".join(numpy_steps[-1].reasons)


@pytest.mark.parametrize("name", sorted(DENSE))
def test_a_sum_the_loops_cannot_shrink_enough_stays_blas(name):
    k = _c(DENSE[name])
    assert not isinstance(k.schedule.steps[-1], LoopStep), k.schedule.steps[-1]


def test_visited_points_counts_what_the_restricted_loops_visit():
    k = _c(SPARSE["row"])
    from tensorlang.analysis.structure import infer
    stmt = k.executed.statements[-1]
    found = infer(k.executed, annihilating=False)
    assert visited_points(stmt, found) == (N * N, N ** 3)  # i fixed: j and k remain
    k = _c(DENSE["upper"])
    assert visited_points(k.executed.statements[-1], infer(k.executed, annihilating=False)) == (N * N * 21, N ** 3)
    k = _c(DENSE["no structure"])
    assert visited_points(k.executed.statements[-1], infer(k.executed, annihilating=False)) is None


def test_contraction_ordering_costs_a_sparse_operand_at_its_support():
    """passes/order.py: MTTKRP on a fixed slice costs 3n³ as written and as opt_einsum's
    chain (the dense Khatri-Rao product C[k,j] D[l,j], then the sparse product with B): it
    stays whole, with no n³ temporary; dense, half dense (a triangle: BLAS), or with a
    support the restricted loops would not visit alone, it is split into pairwise steps."""
    from tensorlang.passes.order import sparse_densities

    whole = tl.compile(SPARSE["mttkrp on a fixed slice"], backend="numpy").executed
    assert len(whole.statements) == 1, whole.statements
    assert sparse_densities(whole) == {"B": 1 / 24}
    # dense, half dense, and supports the loops cannot state (a sum of positions) or may
    # keep whole (a band): all costed dense
    for decl in ("", "where i1 <= i2", "where i1 + i2 <= 3", "where i1 = i2 + 3"):
        split = tl.compile(_mttkrp(decl), backend="numpy").executed
        assert len(split.statements) == 2, (decl, split.statements)
        assert sparse_densities(split) == {}


def test_the_threshold_decides(monkeypatch):
    monkeypatch.setattr(plan_module, "SPARSE_GAIN", 10 ** 9)  # no restriction pays: BLAS everywhere
    k = _c(SPARSE["row"].replace("A[i,j]", "A[i , j]"))  # another source: not the cached kernel
    assert not isinstance(k.schedule.steps[-1], LoopStep)


_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5])
_MODERATE = st.one_of(st.floats(1e-3, 100), st.floats(-100, -1e-3))
_FINITE = st.one_of(_MODERATE, st.just(0.0))
_KERNELS: dict = {}


_CASES = {**SPARSE, **BANDS}


def test_a_band_reads_inside_its_operands():
    """Rows the band leaves empty sum nothing: exactly B @ C, where an out-of-bounds read
    would add whatever lies beyond B and C (measured before the fix: 1e-62, NaN)."""
    for name, source in BANDS.items():
        k = _c(source)
        n = k.checked.context.shapes["B"][0]
        mask = {d.name: d.structure for d in k.ein.decls}["B"].unique_mask((n, n))
        rng = np.random.default_rng(1)
        B = np.where(mask, rng.uniform(-2, 2, (n, n)), 0.0)
        C = rng.uniform(-2, 2, (n, n))
        np.testing.assert_allclose(k(B=B, C=C)["A"], B @ C, rtol=1e-13, atol=1e-13, err_msg=name)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(_CASES)), st.data())
def test_support_loops_at_blas_sizes_equal_the_reference(name, data):
    """As tests/structure/test_compressed.py's supports: the structured input carries NaN,
    ±inf and ±0 in its unique set (promised zeros elsewhere), the others stay finite."""
    k = _KERNELS.get(name) or _c(_CASES[name])
    _KERNELS[name] = k
    structures = {d.name: d.structure for d in k.ein.decls}
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    inputs = {}
    for n in k.checked.inputs:
        shape = k.checked.context.shapes[n]
        s = structures.get(n)
        if s is None:
            inputs[n] = rng.uniform(-2, 2, shape)
            continue
        mask = s.unique_mask(shape)
        raw = rng.uniform(-2, 2, shape)
        picks = data.draw(st.lists(_SPECIAL, min_size=1, max_size=6))
        where = np.flatnonzero(mask)
        for value in picks:  # specials at random unique positions
            raw.flat[where[rng.integers(len(where))]] = value
        inputs[n] = np.where(mask, raw, 0.0)
    got = k(**inputs)
    ref = tl.compile(_CASES[name], backend="interp")(**inputs)
    for out, value in got.items():
        expected = ref[out]
        assert np.array_equal(np.isnan(value), np.isnan(expected)), out
        infinite = np.isinf(expected)
        assert np.array_equal(value[infinite], expected[infinite]), out
        finite = np.isfinite(expected)
        assert np.allclose(value[finite], expected[finite], rtol=1e-10, atol=1e-9), out
