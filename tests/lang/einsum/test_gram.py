"""XᵀX in C (targets/c/gram.py), a Gram step of the schedule, behind
``tl.einsum("ni,nj->ij", X, X)``: equal to numpy.einsum up to rounding with NaN, ±inf and
±0 among the inputs, exactly symmetric, and taken only when both operands are one array
object."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tensorlang as tl
from tensorlang import einsum_api
from tensorlang.schedule.steps import GRAM_MAX_M, GRAM_MAX_M3, GRAM_STRIP_TAIL, GramStep
from tensorlang.targets.c import build as c_build, callext, gram

_REAL_WHY_NOT = GramStep.why_not

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None or callext.extension() is None,
                                reason="needs a C compiler and the C call extension")

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])


@pytest.fixture(autouse=True, scope="module")
def _the_kernel_takes_every_size():
    """These tests check the C kernel itself, on any machine: where the compiler does not
    target AVX-512 it would take only small sizes (GramStep.why_not, tested on its own
    below); the column limits stay."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GramStep, "why_not", lambda self, vector_bytes: _REAL_WHY_NOT(self, 64))
        tl.clear_caches()
        yield
    tl.clear_caches()

#: (n, m): block edges in m (8 columns a block, 3 blocks a tile) and panel edges in n
#: (gram.KC rows a panel); a few shapes, so that the compiles are few
SHAPES = [(1, 1), (3, 2), (5, 7), (9, 8), (17, 9), (40, 16), (2, 24), (130, 25), (129, 17), (256, 33), (300, 50),
          (31, 65)]

#: subscripts with one array twice, and the operand's shape for (n, m)
LAYOUTS = {
    "ni,nj->ij": lambda n, m: (n, m),
    "ni,nj->ji": lambda n, m: (n, m),
    "in,jn->ij": lambda n, m: (m, n),
    "abi,abj->ij": lambda n, m: (1, n, m),
    "iab,jab->ji": lambda n, m: (m, n, 1),
}


def _data(rng, shape, specials: int, dtype=np.float64) -> np.ndarray:
    x = rng.uniform(-1, 1, size=shape)
    flat = x.reshape(-1)
    if specials:
        picks = rng.choice(flat.size, size=min(specials, flat.size), replace=False)
        flat[picks] = rng.choice(SPECIAL, size=picks.size)
    if rng.random() < 0.3:  # whole zero rows and columns: ±0 products, 0 · inf
        flat[rng.integers(0, flat.size)] = -0.0
    return x.astype(dtype)


def _agrees(got: np.ndarray, expected: np.ndarray) -> None:
    """Equal up to rounding, NaN where numpy has NaN and inf of numpy's sign where numpy
    has one: a sum of products is non-finite the same way in every order of summation
    (no overflow here: |x| <= 1), so no ⊥/inf latitude is needed."""
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(expected))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-10, atol=1e-12)


def _gram_steps(runner) -> list:
    """The Gram steps of the kernel a cached einsum runner runs."""
    kernel = getattr(runner, "kernel", None)
    compiled = None if kernel is None else kernel.compiled
    return [] if compiled is None or compiled.schedule is None else [
        step for step in compiled.schedule.steps if isinstance(step, GramStep)]


def _is_gram_in_c(subscripts: str, x: np.ndarray, k: int = 2, backend: str = "auto") -> bool:
    key = einsum_api._key(subscripts, (x,) * k, backend) + (False,)
    return bool(_gram_steps(einsum_api._CACHE[key]))


def _strip(m: int) -> bool:
    """Whether the schedule takes ``XᵀX``'s last columns as a strip (GramStep.strip)."""
    return 1 <= m % 8 <= GRAM_STRIP_TAIL


@pytest.mark.parametrize("m, strip", [(13, True), (14, False), (16, False), (9, True)])
def test_the_schedule_decides_the_strip_and_shows_it(m, strip):
    """The strip of ``XᵀX``'s last m mod 8 columns is the schedule's choice, shown by
    ``--emit schedule`` and followed by the C (never for the third moment)."""
    k = tl.compile(f"in var X : [50 {m}]\nout var S : [{m} {m}]\nS[i,j] = sum(r) X[r,i] * X[r,j]\n", backend="numpy")
    steps = [s for s in k._compiled_for("schedule", "c").schedule.steps if isinstance(s, GramStep)]
    if not steps:
        pytest.skip("no Gram step on this machine (no AVX-512: the portable kernel pays only below its limits)")
    assert steps[0].strip is strip == _strip(m)
    assert ("as a strip" in k.ir("schedule")) is strip and ("#define STRIP 1\n" in k.code("c")) is strip


@functools.lru_cache(maxsize=64)
def _compiled(shape: gram.GramShape, portable: bool = False, team: int = -1):
    """``(ffi, function(x, res, work, threads))``: gram.source for ``shape`` alone, the
    tests' way to the portable loops and to threads."""
    text = gram.source(shape, portable, team, "tl_") + (
        "int tl_gram_call(const double *x, double *res, double *work, int threads) "
        "{ return tl_gram(x, res, work, threads); }\n")
    ffi, lib = c_build.build_and_load(text, c_build.require_compiler(),
                                      "int tl_gram_call(const double *, double *, double *, int);")
    return ffi, lib.tl_gram_call


def _kernel(shape: gram.GramShape, x: np.ndarray, portable: bool = False, threads: int = 1,
            team: int = -1) -> np.ndarray:
    """The Gram function of ``shape`` alone (:func:`_compiled`) on ``x`` (``team``: its TEAM)."""
    ffi, function = _compiled(shape, portable, team)
    result = np.empty((shape.m,) * shape.order)
    work = np.empty(shape.work_doubles)
    x = np.ascontiguousarray(x)
    assert function(ffi.from_buffer("double[]", x), ffi.from_buffer("double[]", result),
                    ffi.from_buffer("double[]", work), threads) == 0
    return result


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SHAPES), st.sampled_from(sorted(LAYOUTS)), st.integers(0, 6), st.integers(0, 2 ** 32 - 1))
def test_one_array_twice_matches_numpy_with_nan_inf_and_signed_zeros(shape, subscripts, specials, seed):
    rng = np.random.default_rng(seed)
    x = _data(rng, LAYOUTS[subscripts](*shape), specials)
    expected = np.einsum(subscripts, x, x)
    for _ in range(2):  # the first call compiles and caches, the second is the C caller's hit
        got = tl.einsum(subscripts, x, x)
        _agrees(got, expected)
        np.testing.assert_array_equal(got, got.T)  # the lower triangle is the upper one, mirrored
    assert _is_gram_in_c(subscripts, x)


@pytest.mark.slow
@pytest.mark.parametrize("n, m", [(1, 1), (7, 3), (130, 9), (64, 26), (200, 41)])
@pytest.mark.parametrize("transposed", [False, True])
def test_the_portable_kernel_matches_numpy(n, m, transposed):
    """The version without intrinsics (a compiler that does not target AVX-512)."""
    rng = np.random.default_rng(n * m)
    x = _data(rng, (m, n) if transposed else (n, m), 4)
    got = _kernel(gram.GramShape(n, m, transposed, strip=_strip(m)), x, portable=True)
    _agrees(got, x @ x.T if transposed else np.einsum("ni,nj->ij", x, x))
    np.testing.assert_array_equal(got, got.T)


def test_the_one_input_caller_declines_what_the_kernel_cannot_read():
    """The kernel compiled for one array twice has one input, named twice in its C
    caller's order: the caller takes one array object there and nothing else."""
    x = np.ones((10, 4))
    tl.einsum("ni,nj->ij", x, x)
    runner = einsum_api._CACHE[einsum_api._key("ni,nj->ij", (x, x), "auto") + (False,)]
    assert _gram_steps(runner)
    target = runner.kernel.target  # the C caller's ordered, and the same in Python
    for call in (target.ordered_call(("T0", "T0")), target.ordered_in_python(("T0", "T0"))):
        assert call(x, x.copy()) is None  # two objects for the one input
        assert call(x, x[:]) is None
        assert call(np.asfortranarray(x), np.asfortranarray(x)) is None  # not C-ordered
        assert call(x.astype(np.float32), x.astype(np.float32)) is None  # another dtype
        assert call(np.ones((4, 10)), np.ones((4, 10))) is None  # another shape
        assert call(x) is None  # one array where the order names two
        np.testing.assert_array_equal(call(x, x), np.full((4, 4), 10.0))


@pytest.mark.parametrize("other", [lambda x: x.copy(), lambda x: x[:], lambda x: x[::-1], lambda x: x + 1,
                                   lambda x: x.reshape(x.shape)])
def test_different_arrays_never_take_the_symmetric_route(other):
    """Not the same object: the general route, even for a view of the same memory and
    even after the same shapes were cached with one array twice."""
    rng = np.random.default_rng(5)
    x = _data(rng, (40, 6), 3)
    tl.einsum("ni,nj->ij", x, x)  # the symmetric entry of these shapes first
    y = other(x)
    assert y is not x
    _agrees(tl.einsum("ni,nj->ij", x, y), np.einsum("ni,nj->ij", x, y))
    _agrees(tl.einsum("ni,nj->ij", y, x), np.einsum("ni,nj->ij", y, x))
    key = einsum_api._key("ni,nj->ij", (x, y), "auto")
    if key is not None and key + (False,) in einsum_api._CACHE:
        assert not _gram_steps(einsum_api._CACHE[key + (False,)])


def test_a_fortran_ordered_array_twice_after_a_hit_is_still_right():
    rng = np.random.default_rng(6)
    x = _data(rng, (30, 5), 2)
    tl.einsum("ni,nj->ij", x, x)
    f = np.asfortranarray(_data(rng, (30, 5), 2))
    _agrees(tl.einsum("ni,nj->ij", f, f), np.einsum("ni,nj->ij", f, f))


def test_routes_the_c_kernel_does_not_take_stay_right():
    rng = np.random.default_rng(7)
    x32 = _data(rng, (30, 5), 2, np.float32)  # float32: numpy's SYRK
    got = tl.einsum("ni,nj->ij", x32, x32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(np.einsum("ni,nj->ij", x32, x32)), rtol=1e-5,
                               atol=1e-5)
    x = _data(rng, (4, 6, 3), 2)  # the kept letter in the middle: numpy's SYRK
    _agrees(tl.einsum("aib,ajb->ij", x, x), np.einsum("aib,ajb->ij", x, x))
    assert not _is_gram_in_c("aib,ajb->ij", x)
    wide = _data(rng, (3, GRAM_MAX_M + 1), 2)  # beyond the kernel's limit
    _agrees(tl.einsum("ni,nj->ij", wide, wide), np.einsum("ni,nj->ij", wide, wide))
    assert not _is_gram_in_c("ni,nj->ij", wide)
    v = _data(rng, (9,), 2)  # an outer product of one vector with itself: no sum, a loop nest
    _agrees(tl.einsum("i,j->ij", v, v), np.einsum("i,j->ij", v, v))
    assert not _is_gram_in_c("i,j->ij", v)


#: ``ni,nj,nk->ijk`` and relatives, and the operand's shape for (n, m)
LAYOUTS3 = {
    "ni,nj,nk->ijk": lambda n, m: (n, m),
    "ni,nj,nk->kij": lambda n, m: (n, m),
    "in,jn,kn": lambda n, m: (m, n),
    "abi,abj,abk->jki": lambda n, m: (n, 1, m),
}
SHAPES3 = [(1, 1), (4, 3), (9, 8), (20, 9), (130, 17), (50, 25), (3, 40)]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SHAPES3), st.sampled_from(sorted(LAYOUTS3)), st.integers(0, 6), st.integers(0, 2 ** 32 - 1))
def test_one_array_three_times_matches_numpy_with_nan_inf_and_signed_zeros(shape, subscripts, specials, seed):
    rng = np.random.default_rng(seed)
    x = _data(rng, LAYOUTS3[subscripts](*shape), specials)
    expected = np.einsum(subscripts, x, x, x)
    for _ in range(2):
        got = tl.einsum(subscripts, x, x, x)
        _agrees(got, expected)
        for axes in [(1, 0, 2), (2, 1, 0), (0, 2, 1), (1, 2, 0)]:  # exactly symmetric
            np.testing.assert_array_equal(got, got.transpose(axes))
    assert _is_gram_in_c(subscripts, x, 3)


@pytest.mark.slow
@pytest.mark.parametrize("n, m", [(1, 1), (7, 3), (130, 9), (40, 26)])
@pytest.mark.parametrize("transposed", [False, True])
def test_the_portable_third_moment_kernel_matches_numpy(n, m, transposed):
    rng = np.random.default_rng(n * m + 1)
    x = _data(rng, (m, n) if transposed else (n, m), 4)
    y = x.T if transposed else x
    _agrees(_kernel(gram.GramShape(n, m, transposed, 3), x, portable=True), np.einsum("ni,nj,nk->ijk", y, y, y))


@pytest.mark.slow
def test_three_operands_that_are_not_one_array_are_never_symmetric():
    """The hit table of three or more operands has no identity in its key: no symmetric
    runner may enter it."""
    rng = np.random.default_rng(8)
    x = _data(rng, (30, 4), 2)
    tl.einsum("ni,nj,nk->ijk", x, x, x)
    tl.einsum("ni,nj,nk->ijk", x, x, x)
    assert not any(_gram_steps(r) for r in einsum_api._HITS.values())
    assert _gram_steps(einsum_api._CACHE[einsum_api._key("ni,nj,nk->ijk", (x, x, x), "auto") + (False,)])
    for y, z in [(x.copy(), x), (x, x[:]), (x[::-1], x[::-1]), (x, x.copy())]:
        _agrees(tl.einsum("ni,nj,nk->ijk", x, y, z), np.einsum("ni,nj,nk->ijk", x, y, z))
        _agrees(tl.einsum("ni,nj,nk->ijk", y, z, x), np.einsum("ni,nj,nk->ijk", y, z, x))
    f = np.asfortranarray(x)  # the same shape, another layout, one object three times
    _agrees(tl.einsum("ni,nj,nk->ijk", f, f, f), np.einsum("ni,nj,nk->ijk", f, f, f))
    big = _data(rng, (3, GRAM_MAX_M3 + 1), 0)  # beyond the kernel's limit: the other steps
    _agrees(tl.einsum("ni,nj,nk->ijk", big, big, big), np.einsum("ni,nj,nk->ijk", big, big, big))


@pytest.mark.slow
@pytest.mark.parametrize("order, n, m, transposed", [(2, 300, 37, False), (2, 129, 26, True), (2, 50, 8, False),
                                                     (3, 140, 19, False), (3, 40, 9, True)])
@pytest.mark.parametrize("portable", [False, True])
def test_two_threads_give_the_same_result(order, n, m, transposed, portable):
    """On threads (the threshold forced to 1): the panels' blocks, tiles and strips are
    shared out, and the result is the one thread's, bit for bit (each entry is summed
    by one thread in the same order)."""
    rng = np.random.default_rng(n + m)
    x = _data(rng, (m, n) if transposed else (n, m), 3)
    shape = gram.GramShape(n, m, transposed, order, order == 2 and _strip(m))
    one = _kernel(shape, x, portable, threads=1, team=0)
    two = _kernel(shape, x, portable, threads=2, team=0)
    np.testing.assert_array_equal(two, one)
    y = x.T if transposed else x
    _agrees(two, np.einsum(",".join(f"n{c}" for c in "ijk"[:order]) + "->" + "ijk"[:order],
                                         *(y,) * order))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_a_chosen_back_end_decides_whether_the_c_kernel_runs(backend):
    """backend="numpy" runs no generated C (its caps offer no Gram step: numpy's matmul
    and its loops); backend="c" and "auto" take the C Gram kernel."""
    rng = np.random.default_rng(9)
    x = _data(rng, (60, 7), 3)
    for subscripts, k in [("ni,nj->ij", 2), ("ni,nj,nk->ijk", 3)]:
        _agrees(tl.einsum(subscripts, *(x,) * k, backend=backend), np.einsum(subscripts, *(x,) * k))
        assert _is_gram_in_c(subscripts, x, k, backend) == (backend == "c")


def test_a_third_moment_too_large_for_memory_is_numpys_memory_error():
    """m = 60000 (a 1.7 PB result): numpy.einsum's MemoryError, raised before any work
    (the pairs route once built index arrays of m³/3 integers when its runner was made)."""
    x = np.ones((1, 60000))
    with pytest.raises(MemoryError):
        np.einsum("ni,nj,nk->ijk", x, x, x)
    with pytest.raises(MemoryError):
        tl.einsum("ni,nj,nk->ijk", x, x, x)


@pytest.mark.parametrize("vector_bytes, n, m, order, pays", [
    (64, 20000, 200, 2, True), (64, 1, 1, 3, True),  # AVX-512: the intrinsics tiles, every size
    (32, 100, 10, 2, True), (32, 200, 16, 2, False), (32, 2000, 100, 2, False),  # AVX2: XᵀX small only
    (32, 100, 8, 3, False), (32, 500, 16, 3, True), (32, 300, 32, 3, True), (32, 1000, 40, 3, False),
    (16, 100, 10, 2, True), (16, 2000, 100, 2, False),
])
def test_without_avx512_the_kernel_takes_only_the_sizes_where_it_was_measured_to_win(vector_bytes, n, m, order, pays):
    step = GramStep(0, 1, n, m, False, order, None)  # type: ignore[arg-type]  # (why_not reads no statement)
    assert (_REAL_WHY_NOT(step, vector_bytes) is None) is pays


def test_where_the_kernel_does_not_pay_tl_einsum_takes_the_syrk_route():
    rng = np.random.default_rng(3)
    x = _data(rng, (300, 40), 0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GramStep, "why_not", lambda self, vector_bytes: "not here")
        tl.clear_caches()
        _agrees(tl.einsum("ni,nj->ij", x, x), np.einsum("ni,nj->ij", x, x))
        assert not _is_gram_in_c("ni,nj->ij", x)
        got = tl.einsum("ni,nj->ij", x, x)
        np.testing.assert_array_equal(got, got.T)
    tl.clear_caches()
