"""tl.contract_expression runs what tl.einsum runs for the same call (issue 43): one
compiled kernel, shared with the einsum cache, and a call path with less in front of it.
Speed itself is measured by `tensorlang bench einsum` (its table "contract_expression
against tl.einsum"), not here."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import einsum_api


@pytest.fixture(autouse=True)
def _fresh_cache():
    tl.clear_caches()
    yield
    tl.clear_caches()


def _data(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def _entry(subscripts, arrays):
    return einsum_api._CACHE.get(einsum_api._key(subscripts, tuple(arrays), "auto") + (False,))


def test_the_expression_and_einsum_share_one_compiled_kernel():
    a, b, c = _data((2, 3)), _data((3, 4)), _data((4, 5))
    expr = tl.contract_expression("ij,jk,kl->il", a.shape, b.shape, c.shape)
    entry = _entry("ij,jk,kl->il", (a, b, c))
    assert entry is not None and expr._runner is entry  # built once, into the einsum cache
    entries = einsum_api.cache_info()["entries"]
    np.testing.assert_allclose(tl.einsum("ij,jk,kl->il", a, b, c), expr(a, b, c), rtol=1e-14)
    assert einsum_api.cache_info()["entries"] == entries  # tl.einsum compiled nothing new


def test_an_expression_takes_the_kernel_einsum_compiled_first():
    x = _data((40, 6))
    tl.einsum("ni,nj->ij", x, x)  # one array twice: the einsum cache's one-input kernel
    first = _entry("ni,nj->ij", (x, x))
    expr = tl.contract_expression("ni,nj->ij", x.shape, x.shape)
    assert expr._same is first
    np.testing.assert_allclose(expr(x, x), x.T @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("subscripts, k", [("ni,nj->ij", 2), ("ni,nj,nk->ijk", 3)])
def test_one_array_and_several_arrays_of_one_shape(subscripts, k):
    """The one-array kernel is tried when the first two arrays are one object, and
    declines unless all are: (x, x, y) must not be read as x three times."""
    x, y = _data((30, 4), 1), _data((30, 4), 2)
    expr = tl.contract_expression(subscripts, *(x.shape,) * k)
    for arrays in [(x,) * k, (x, y, x)[:k], (x, x, y)[:k], (y, x, x)[:k], (x,) * (k - 1) + (x.copy(),)]:
        np.testing.assert_allclose(expr(*arrays), np.einsum(subscripts, *arrays), rtol=1e-12, atol=1e-12)


def test_calls_the_c_callers_decline_take_the_general_path():
    a, b = _data((3, 4)), _data((4, 5))
    expr = tl.contract_expression("ij,jk->ik", a.shape, b.shape)
    expected = a @ b
    for args in [(np.asfortranarray(a), b), (a.astype(np.float32), b), (a.tolist(), b), (a[:, ::1], b)]:
        np.testing.assert_allclose(expr(*args), np.einsum("ij,jk->ik", *args), rtol=1e-12)
    out = np.empty((3, 5))
    assert expr(a, b, out=out) is out and np.allclose(out, expected)
    np.testing.assert_allclose(expr(a, b, backend="numpy"), expected, rtol=1e-12)
    with pytest.raises(tl.EinsumError, match="takes 2 array"):
        expr(a)
    with pytest.raises(tl.EinsumError, match="built for shapes"):
        expr(a, np.ones((4, 6)))


def test_an_expression_with_constants_is_not_the_plain_calls_kernel():
    b = _data((3, 4))
    expr = tl.contract_expression("ij,jk->ik", (2, 3), b, constants=[1])
    a = _data((2, 3))
    np.testing.assert_allclose(expr(a), a @ b, rtol=1e-12)
    with pytest.raises(tl.EinsumError, match="takes 1 array"):
        expr(a, b)


def test_the_bench_report_sets_the_expression_beside_einsum():
    from tensorlang_bench import report
    from tensorlang_bench.suites import einsum as suite

    def rec(name, median, q1, q3):
        return {"name": name, "family": "tensorlang", "median_s": median, "q1_s": q1, "q3_s": q3}

    cases = [{"kernel": "mm", "label": "i=2", "contenders": [rec("tensorlang[c]", 2e-6, 1.9e-6, 2.1e-6),
                                                             rec(suite.EXPRESSION, 1e-6, 0.9e-6, 1.1e-6)]},
             {"kernel": "gram", "label": "n=9", "contenders": [rec("tensorlang[c]", 1e-3, 0.9e-3, 1.1e-3),
                                                               rec(suite.EXPRESSION, 1.05e-3, 1e-3, 1.2e-3)]},
             {"kernel": "chain", "label": "i=3", "contenders": [rec("tensorlang[c]", 1e-6, 0.9e-6, 1.1e-6),
                                                                rec(suite.EXPRESSION, 3e-6, 2e-6, 4e-6)]}]
    lines = report.expression_markdown({"cases": cases})
    assert suite.EXPRESSION == report.EXPRESSION
    rows = [line for line in lines if line.startswith("| mm") or line.startswith("| gram") or line.startswith("| chain")]
    assert rows[0].endswith("| 0.5 | – | – |  |") and rows[1].endswith("| 1.05 | – | – |  |")  # within the spread: no flag
    assert rows[2].endswith("| 3 | – | – | slower |")
    assert report.expression_markdown({"cases": cases[:0]}) == []
    # timed again as a pair: the rounds' median ratio and its quartiles decide
    cases[0]["contenders"][1]["paired"] = {"ratio": 0.4, "q1": 0.35, "q3": 0.45, "a_median_s": 2e-6,
                                           "b_median_s": 0.8e-6, "cpu_ratio": 0.41}
    cases[1]["contenders"][1]["paired"] = {"ratio": 1.02, "q1": 0.97, "q3": 1.05, "a_median_s": 1e-3,
                                           "b_median_s": 1.02e-3}
    cases[2]["contenders"][1]["paired"] = {"ratio": 1.3, "q1": 1.1, "q3": 1.5, "a_median_s": 1e-6,
                                           "b_median_s": 1.3e-6}
    rows = [line for line in report.expression_markdown({"cases": cases}) if line.startswith("| ") and "---" not in line][1:]
    assert rows[0] == "| mm | i=2 | 2 µs | 800 ns | 0.4 | 0.35–0.45 | 0.41 |  |"
    assert rows[1].endswith("| 1.02 | 0.97–1.05 | – |  |")  # slower in fewer than three rounds of four
    assert rows[2].endswith("| 1.3 | 1.1–1.5 | – | slower |")


def test_a_pair_is_timed_batch_beside_batch_with_one_call_count():
    """timing.time_paired: the same number of calls in both batches of a round, the order
    alternating, and the ratio the median of the rounds' ratios (a fake clock: a call of a
    costs 1, of b 2)."""
    from tensorlang_bench import timing

    now = [0.0]
    calls = {"a": 0, "b": 0}
    log: list[str] = []

    def make(name, cost):
        def fn():
            calls[name] += 1
            log.append(name)
            now[0] += cost
        return fn
    plan = timing.Plan(warmup=1, rounds=9, min_rounds=3, min_batch_s=4.0, budget_s=1e9)
    paired = timing.time_paired(make("a", 1.0), make("b", 2.0), plan, clock=lambda: now[0], cpu_clock=lambda: now[0])
    assert paired.ratio == 2.0 and paired.q1 == paired.q3 == 2.0 and paired.cpu_ratio == 2.0
    assert paired.a.inner == paired.b.inner == 4 and paired.a.samples == paired.b.samples == 9
    assert paired.as_dict()["ratio"] == 2.0
    timed = log[-9 * 8:]  # the rounds: a's batch first, then b's first, in turn
    assert [timed[r * 8] for r in range(9)] == ["a", "b"] * 4 + ["a"]


def test_an_expression_and_einsum_share_their_kernel_across_threads():
    """One expression and tl.einsum on its shapes, called from many threads at once: one
    compiled kernel and C caller (its work buffers per call), every result right."""
    from concurrent.futures import ThreadPoolExecutor

    x = _data((300, 12), 5)
    y = _data((300, 12), 6)
    expr = tl.contract_expression("ni,nj->ij", x.shape, x.shape)
    expected = {"xx": x.T @ x, "xy": x.T @ y}

    def job(n):
        a, b, key = (x, x, "xx") if n % 2 else (x, y, "xy")
        got = expr(a, b) if n % 3 else tl.einsum("ni,nj->ij", a, b)
        return np.allclose(got, expected[key], rtol=1e-12, atol=1e-12)
    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(job, range(400)))


def test_a_misspelt_keyword_of_an_expression_call_is_an_error_with_a_hint():
    a, b = _data((2, 3)), _data((3, 4))
    expr = tl.contract_expression("ij,jk->ik", a.shape, b.shape)
    with pytest.raises(tl.ArgumentError, match=r"unexpected keyword argument 'bakend' \(did you mean backend\?"):
        expr(a, b, bakend="numpy")
    with pytest.raises(TypeError):  # (an ArgumentError is a TypeError too, as Python's own would be)
        expr(a, b, outt=None)
    assert list(inspect.signature(expr).parameters) == ["arrays", "out", "backend", "evaluate_constants"]
    np.testing.assert_allclose(expr(a, b, evaluate_constants=True), a @ b, rtol=1e-12)


def test_an_unknown_back_end_is_an_error_when_the_expression_is_built_not_a_silent_numpy_run():
    with pytest.raises(tl.TensorLangError, match=r"error\[backend\]: unknown back end 'cuda'"):
        tl.contract_expression("ij,jk->ik", (2, 3), (3, 4), backend="cuda")
    expr = tl.contract_expression("ij,jk->ik", (2, 3), (3, 4))
    with pytest.raises(tl.TensorLangError, match=r"unknown back end 'nunpy'"):
        expr(_data((2, 3)), _data((3, 4)), backend="nunpy")


def test_dask_operands_go_to_their_own_einsum_and_stay_lazy():
    """numpy.einsum hands a call with dask arrays to dask (NEP 18): so does tl.einsum, and
    so does an expression, instead of computing the whole result in memory."""
    da = pytest.importorskip("dask.array")
    x = da.from_array(_data((6, 4)), chunks=(3, 4))
    lazy = tl.einsum("ni,nj->ij", x, x)
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), np.einsum("ni,nj->ij", x.compute(), x.compute()), rtol=1e-12)
    expr = tl.contract_expression("ni,nj->ij", x.shape, x.shape)
    assert isinstance(expr(x, x), da.Array)
    assert isinstance(tl.einsum("ni,nj->ij", x.compute(), x.compute()), np.ndarray)
