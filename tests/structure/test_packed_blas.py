"""A packed structured product as one BLAS call from generated C: the block product of a
packed statement (loops/structure.py ``packed_product``: ``C[p,q] = Σ_r X'[r,p] X'[r,q]``
over the packed unique features) is SYRK for the Gram product (the upper triangle, all
the reconstruction reads) and GEMM for a full product, from steps.PACKED_BLAS_WORK
multiply-adds on (the ``packed-blas`` loop rewrite, loops/pipeline.py ``blas_routine``;
targets/c/blascall.py ``packed_call`` spells the call); smaller ones, and every one
where no BLAS is found, keep the 8×8 block loops.  Results against the reference
interpreter with ⊥, ±inf and ±0 among the inputs (docs/structure.md: the same rules as a
BLAS step), in each calling convention the discovery can hand a kernel, both dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from targets.test_c_blas import KINDS, SPECIALS, _assert_same, using
from tensorlang.loops.ir import BlasProduct, Loop
from tensorlang.loops.pipeline import blas_routine
from tensorlang.loops.structure import PackedProduct, packed_product
from tensorlang.schedule import steps
from tensorlang.machine import blas
from tensorlang.targets.c import blascall
from tensorlang.targets.c import build as c_build
from c_source import generate
from tensorlang.targets.c.codegen import PACKED_BLAS_MARK

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")


def _poly2(m: int, n: int) -> str:
    k = n + n * n
    return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\nvar X : [{m} {k}]\nout var C : [{k} {k}]\n"
            "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n")


def _transposed(m: int, n: int) -> str:
    """The features stored one per row (X' read [p, r]): SYRK without its transpose."""
    k = n + n * n
    return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\nvar X : [{m} {k}]\nvar XT : [{k} {m}]\n"
            f"out var C : [{k} {k}]\nG[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nXT[p,r] = X[r,p]\n"
            "C[p,q] = sum(r) XT[p,r] * XT[q,r]\n")


def _two_sets(m: int, n: int) -> str:
    """Two different feature sets: not symmetric, the product is full (GEMM)."""
    k = n + n * n
    return (f"in var F : [{m} {n}]\nin var E : [{m} {n}]\nvar G : [{m} {n} {n}]\nvar H : [{m} {n} {n}]\n"
            f"var X : [{m} {k}]\nvar Y : [{m} {k}]\nout var C : [{k} {k}]\n"
            "G[r,i,j] = F[r,i] * F[r,j]\nH[r,i,j] = E[r,i] * E[r,j]\nX = concat(F, vec(G))\nY = concat(E, vec(H))\n"
            "C[p,q] = sum(r) X[r,p] * Y[r,q]\n")


PROGRAMS = {"Gram product (syrk)": (_poly2, "tl_syrk(1,"), "features as rows (syrk)": (_transposed, "tl_syrk(0,"),
            "two feature sets (gemm)": (_two_sets, "tl_gemm(1, 0,")}


@pytest.fixture
def low_threshold(monkeypatch):
    """Every packed product large enough for BLAS."""
    monkeypatch.setattr(steps, "PACKED_BLAS_WORK", 1)


def _calls(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if line.strip().startswith(("if (tl_syrk(", "if (tl_gemm("))]


def _inputs(kernel, rng, dtype, specials: bool) -> dict:
    roles = kernel.roles()
    found = {}
    for name, shape in kernel.shapes.items():
        if roles[name] != "in":
            continue
        value = rng.uniform(-1.5, 1.5, shape)
        if specials:
            flat = value.reshape(-1)
            spots = rng.choice(flat.size, size=2 * len(SPECIALS), replace=False)
            flat[spots] = SPECIALS * 2
        found[name] = value.astype(dtype)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("program", PROGRAMS)
def test_a_packed_product_calls_blas_and_matches_the_interpreter(program, kind, dtype, low_threshold):
    make, call = PROGRAMS[program]
    text = make(40, 4)
    with using(kind, dtype):
        kernel = tl.compile(text, backend="c", dtype=dtype)
    with using(None):
        loops = tl.compile(text, backend="c", dtype=dtype)
    source = kernel.target.source
    calls = _calls(source)
    assert len(calls) == 1 and calls[0].startswith(f"if ({call}"), calls
    assert PACKED_BLAS_MARK in source and "tl_set_blas" in source
    assert PACKED_BLAS_MARK not in loops.target.source and "tl_set_blas" not in loops.target.source
    assert "/* accumulators */" in loops.target.source  # the fallback: the 8x8 block loops
    reference = tl.compile(text, backend="interp", dtype=dtype)
    rtol = 1e-12 if dtype == "float64" else 1e-4
    rng = np.random.default_rng(abs(hash((program, kind, dtype))) % 2**32)
    for round_ in range(3):
        inputs = _inputs(kernel, rng, dtype, specials=round_ > 0)
        want = reference(**inputs)
        _assert_same(kernel(**inputs), want, rtol)
        _assert_same(loops(**inputs), want, rtol)


@pytest.mark.slow
def test_a_large_product_calls_blas_and_a_small_one_keeps_the_loops():
    if blas.find("float64") is None:
        pytest.skip(f"no BLAS here ({blas.why_not()})")
    large = tl.compile(_poly2(3000, 8), backend="c")  # 21 triangular 8x8 blocks x 3000 rows: 4 M multiply-adds
    small = tl.compile(_poly2(64, 4), backend="c")  # 3 blocks x 64 rows
    nest = next(n for n in large.loop_program.nests if n.statement.target == "C")
    product = next(n.product for n in nest.body if isinstance(n, BlasProduct))  # the packed-blas rewrite's
    assert product.is_gram and product.upper and product.loop_work >= steps.PACKED_BLAS_WORK
    # X's producer writes it packed (loops.structure.pack_in_producer), so SYRK reads X's
    # own buffer (v1) and nothing is on the heap (test_packed_heap: a failing call frees it)
    assert _calls(large.target.source) == ["if (tl_syrk(1, 48LL, 3000LL, v1, 48LL, v13, 48LL) != 0) return -1;"]
    assert large.target._only is not None  # one C function: tl_kernel, as with BLAS steps
    assert _calls(small.target.source) == [] and "tl_set_blas" not in small.target.source
    # its two loop steps (X, then the covariance) are one C function too, with no BLAS
    assert small.target._only is not None and "int tl_kernel(" in small.target.source
    assert "/* accumulators */" in small.target.source
    for k, m, n in ((large, 3000, 8), (small, 64, 4)):
        F = np.random.default_rng(m).uniform(-1, 1, (m, n))
        X = np.concatenate([F, np.einsum("ri,rj->rij", F, F).reshape(m, -1)], axis=1)
        np.testing.assert_allclose(k(F=F)["C"], X.T @ X, rtol=1e-12, atol=1e-12)


def test_without_blas_the_product_keeps_the_loops(monkeypatch, low_threshold):
    monkeypatch.setenv("TENSORLANG_NO_C_BLAS", "1")
    blas.clear()
    try:
        kernel = tl.compile(_poly2(40, 4), backend="c")
    finally:
        monkeypatch.delenv("TENSORLANG_NO_C_BLAS")
        blas.clear()
    assert _calls(kernel.target.source) == [] and "/* accumulators */" in kernel.target.source
    inputs = _inputs(kernel, np.random.default_rng(5), "float64", specials=True)
    _assert_same(kernel(**inputs), tl.compile(_poly2(40, 4), backend="interp")(**inputs), 1e-12)


def test_a_kernel_without_blas_steps_has_no_packed_blas_call_either(low_threshold):
    """``blas=False`` (a schedule of loops only, as the sanitizer driver builds it): the
    source calls no BLAS at all, the packed product stays loops."""
    if blas.find("float64") is None:
        pytest.skip(f"no BLAS here ({blas.why_not()})")
    program = tl.compile(_poly2(40, 4), backend="c").ein
    assert len(_calls(generate(program, "float64").source)) == 1
    assert _calls(generate(program, "float64", blas=False).source) == []


def test_a_scaled_product_is_not_a_packed_product(low_threshold):
    """``2 * X[r,p] * X[r,q]`` has a third factor: not a plain product, the loops stay."""
    text = _poly2(40, 4).replace("sum(r) X[r,p]", "sum(r) 2 * X[r,p]")
    kernel = tl.compile(text, backend="c")
    assert _calls(kernel.target.source) == []
    inputs = _inputs(kernel, np.random.default_rng(6), "float64", specials=True)
    _assert_same(kernel(**inputs), tl.compile(text, backend="interp")(**inputs), 1e-12)


def test_the_rewrite_takes_what_blas_computes_and_nothing_else():
    """loops.pipeline.blas_routine decides (the ``packed-blas`` loop rewrite),
    blascall.packed_call only spells the call."""
    storage = {1: (40, 16), 2: (40, 16), 3: (16, 16)}
    big = 1 << 40
    syrk = PackedProduct(3, 1, 1, 16, 16, 40, True, True, True)
    assert syrk.is_gram and syrk.loop_work == 3 * 64 * 40
    saved = steps.PACKED_BLAS_WORK
    try:
        steps.PACKED_BLAS_WORK = syrk.loop_work
        found = blas_routine(syrk, storage, big)
        assert found == ("syrk", (16, 16, 16), 256)
        zero, call = blascall.packed_call(BlasProduct(syrk, *found, Loop("p", 2, ())))
        assert zero == "memset(v3, 0, (size_t)256LL * sizeof(real));"  # the local target may hold NaN
        assert call == "tl_syrk(1, 16LL, 40LL, v1, 16LL, v3, 16LL)"
        assert blas_routine(syrk, storage, 39) is None  # 40 rows: beyond the BLAS's integers
        steps.PACKED_BLAS_WORK = syrk.loop_work + 1
        assert blas_routine(syrk, storage, big) is None  # below the threshold
        steps.PACKED_BLAS_WORK = 1
        gemm = PackedProduct(3, 1, 2, 16, 16, 40, True, True, False)
        found = blas_routine(gemm, storage, big)
        assert found is not None and found[0] == "gemm"
        assert (blascall.packed_call(BlasProduct(gemm, *found, Loop("p", 2, ())))[1]
                == "tl_gemm(1, 0, 16LL, 16LL, 40LL, v1, 16LL, v2, 16LL, v3)")
        # triangular with two operands: GEMM would do twice the loops' work
        assert blas_routine(PackedProduct(3, 1, 2, 16, 16, 40, True, True, True), storage, big) is None
        assert blas_routine(syrk, {1: (39, 16), 2: (40, 16), 3: (16, 16)}, big) is None  # too short
        assert blas_routine(syrk, {1: (40, 16), 2: (40, 16)}, big) is None  # the target's shape unknown
    finally:
        steps.PACKED_BLAS_WORK = saved


@pytest.mark.slow
def test_the_packed_blas_rewrite_is_named_and_skipping_it_keeps_the_loops():
    """``packed-blas`` is a loop rewrite (``--emit loops`` shows its node and lists it);
    skipped, the product is its block loops again, with the same values."""
    if blas.find("float64") is None:
        pytest.skip(f"no BLAS here ({blas.why_not()})")
    text = _poly2(3000, 8)
    kernel = tl.compile(text, backend="c")
    skipped = tl.compile(text + "\n", backend="c", skip_passes=("packed-blas",))
    assert "packed-blas" in kernel.loop_program.rewrites and "packed-blas" not in skipped.loop_program.rewrites
    nest = next(n for n in kernel.loop_program.nests if n.statement.target == "C")
    assert "packed-blas" in nest.rewrites
    (node,) = [n for n in nest.body if isinstance(n, BlasProduct)]
    assert node.routine == "syrk" and packed_product(node.loop) == node.product
    assert "blas syrk: " in kernel.ir("loops") and "blas syrk: " not in skipped.ir("loops")
    assert _calls(skipped.target.source) == [] and PACKED_BLAS_MARK not in skipped.target.source
    # the rewrite skipped, the printer prints the block loops (it has no fallback of its own)
    assert "/* accumulators */" in skipped.target.source and "tl_set_blas" not in skipped.target.source
    F = np.random.default_rng(3).uniform(-1, 1, (3000, 8))
    np.testing.assert_allclose(skipped(F=F)["C"], kernel(F=F)["C"], rtol=1e-12, atol=1e-12)
