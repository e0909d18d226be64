"""The benchmark harness (benchmarks/tensorlang_bench): statistics, the correctness gate,
writers, missing peers, the suites' kernels and the ``tensorlang bench`` command.

No test asserts a timing: the machine is shared and CI never judges speed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlang.cli import main
from tensorlang_bench import report, runner, suites, timing, usable_cpus
from tensorlang_bench.contenders import Bound, Contender, Peers, tensorlang_backends
from tensorlang_bench.machine import Limits

LIMITS = {1: Limits(1, 10.0, 12.0, 40.0, 64, 1024, 14.0), 2: Limits(2, 15.0, 18.0, 80.0, 64, 1024, 21.0)}


@pytest.fixture(autouse=True)
def _keep_thread_environment(monkeypatch):
    """A bench run sets OMP_NUM_THREADS & co. for its process; keep other tests' settings."""
    import os

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        if var in os.environ:
            monkeypatch.setenv(var, os.environ[var])
        else:  # recorded as absent, so that teardown removes what a run set
            monkeypatch.setenv(var, "")
            monkeypatch.delenv(var)
FAST = timing.Plan(warmup=1, rounds=5, min_rounds=3, min_batch_s=1e-5, budget_s=0.05)


# ------------------------------------------------------------------ timing
@given(st.lists(st.floats(min_value=1e-9, max_value=10.0), min_size=1, max_size=60))
def test_summarize_matches_numpy_percentiles(data):
    s = timing.summarize(data, inner=4)
    assert s.median == pytest.approx(float(np.median(data)), rel=1e-12)
    assert s.q1 == pytest.approx(float(np.percentile(data, 25)), rel=1e-9)
    assert s.q3 == pytest.approx(float(np.percentile(data, 75)), rel=1e-9)
    assert s.minimum == min(data) and s.samples == len(data) and s.inner == 4
    assert s.q1 <= s.median <= s.q3


def test_summarize_rejects_empty():
    with pytest.raises(ValueError):
        timing.summarize([])


class FakeClock:
    """A clock that only moves when a fake kernel 'runs'."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_calibrate_batches_short_calls():
    clock = FakeClock()

    def fn():
        clock.now += 1e-6

    inner, one = timing.calibrate(fn, 1e-3, clock)
    assert inner * 1e-6 >= 1e-3 and inner == 1024
    assert one == pytest.approx(1e-6)


def test_interleaved_medians_order_and_outliers():
    clock = FakeClock()
    order: list[str] = []
    calls = {"a": 0}

    def make(name, cost, spike_every=0):
        def fn():
            order.append(name)
            calls.setdefault(name, 0)
            calls[name] += 1
            clock.now += cost * (100 if spike_every and calls[name] % spike_every == 0 else 1)

        return fn

    plan = timing.Plan(warmup=1, rounds=7, min_rounds=3, min_batch_s=0.0, budget_s=1e9)
    stats = timing.time_interleaved({"a": make("a", 2e-3), "b": make("b", 5e-3, spike_every=9)}, plan, clock)
    assert stats["a"].median == pytest.approx(2e-3)
    assert stats["b"].median == pytest.approx(5e-3)  # one spoiled sample does not move the median
    assert stats["b"].samples == 7
    timed = order[-28:]  # the rounds, after warm-up and calibration: each batch an untimed call, then one timed
    assert all(timed[2 * k] == timed[2 * k + 1] for k in range(14))
    assert [timed[4 * r] for r in range(7)] == ["a", "b", "a", "b", "a", "b", "a"]  # rotated each round


def test_a_batch_starts_warm_after_another_contenders_batch():
    """A call right after another contender's runs cold (50x here): the untimed call
    before each batch (Plan.warm_each) keeps it out of the samples; without it every
    sample of a one-call batch is the cold one."""
    clock = FakeClock()
    last: list[str] = [""]

    def make(name):
        def fn():
            clock.now += 1e-3 * (50 if last[0] != name else 1)
            last[0] = name
        return fn

    fns = {"a": make("a"), "b": make("b")}
    warm = timing.Plan(warmup=1, rounds=5, min_rounds=5, min_batch_s=0.0, budget_s=1e9)
    assert all(st.median == pytest.approx(1e-3) for st in timing.time_interleaved(fns, warm, clock).values())
    cold = timing.Plan(warmup=1, rounds=5, min_rounds=5, min_batch_s=0.0, budget_s=1e9, warm_each=0)
    assert all(st.median == pytest.approx(50e-3) for st in timing.time_interleaved(fns, cold, clock).values())


def test_round_order_varies_first_and_predecessor():
    names = [f"c{i}" for i in range(8)]
    orders = [timing.round_order(names, r) for r in range(16)]
    assert all(sorted(o) == names for o in orders)  # every contender once a round
    firsts = [o[0] for o in orders]
    assert all(firsts.count(name) == 2 for name in names)  # each first equally often
    for name in names:  # the contender run just before it is not always the same one
        before = {o[o.index(name) - 1] for o in orders if o.index(name) > 0}
        assert len(before) >= 3, (name, before)
    assert timing.round_order(["a", "b"], 0) == ["a", "b"] and timing.round_order(["a", "b"], 1) == ["b", "a"]
    assert timing.round_order([], 3) == [] and timing.round_order(["x"], 5) == ["x"]
    # an order merely rotated (the earlier rule) keeps one neighbour: c0 follows c7 in 7 rounds of 8
    rotated = [names[r % 8:] + names[:r % 8] for r in range(8)]
    assert {o[o.index("c0") - 1] for o in rotated if o.index("c0") > 0} == {"c7"}


def test_interleaved_budget_cuts_rounds_but_not_below_minimum():
    clock = FakeClock()

    def slow():
        clock.now += 1.0

    plan = timing.Plan(warmup=0, rounds=50, min_rounds=4, min_batch_s=0.0, budget_s=2.0)
    assert timing.time_interleaved({"slow": slow}, plan, clock)["slow"].samples == 4


# ------------------------------------------------------------------ correctness gate
_SIX = np.arange(6.0).reshape(2, 3)


def _case(contenders, reference=_SIX):
    return suites.Case(
        "test", "copy", "n=6", 6, 1, flops=6.0, bytes=96.0,
        make_inputs=lambda: {"x": reference.copy()}, reference=lambda inp: inp["x"].copy(),
        contenders=contenders, baseline="right",
    )


def _copy_contender(name, family="peer", offset=0.0):
    def make(inp):
        out = np.empty_like(inp["x"])
        return Bound(lambda: np.add(inp["x"], offset, out=out), lambda: out)

    return Contender(name, family, make, "")


def test_wrong_contender_is_flagged_and_not_timed():
    case = _case([_copy_contender("right"), _copy_contender("wrong", offset=1e-3), _copy_contender("tl", "tensorlang")])
    rec = runner.run_case(case, FAST, LIMITS, threads=1)
    by = {r["name"]: r for r in rec["contenders"]}
    assert by["wrong"]["status"] == "wrong" and "median_s" not in by["wrong"]
    assert by["wrong"]["relative_error"] == pytest.approx(1e-3 / 5)
    assert by["right"]["status"] == "ok" and by["right"]["median_s"] > 0
    assert by["right"]["relative_error"] == 0.0
    assert rec["best_peer"] == "right" and by["right"]["ratio_to_best_peer"] == 1.0
    assert by["tl"]["ratio_to_best_peer"] == pytest.approx(by["right"]["median_s"] / by["tl"]["median_s"])
    for key in ("GFLOPps", "GBps", "fraction_of_limit", "per_element_s"):
        assert by["right"][key] > 0


def test_wrong_shape_nan_and_raising_contenders_are_reported():
    def bad_shape(inp):
        return Bound(lambda: None, lambda: np.zeros(6))

    def nan(inp):
        return Bound(lambda: None, lambda: np.full((2, 3), np.nan))

    def boom(inp):
        raise RuntimeError("cannot compile\nsecond line")

    case = _case([Contender("shape", "peer", bad_shape), Contender("nan", "peer", nan),
                  Contender("boom", "peer", boom), Contender("absent", "peer", None, "absent: not installed")])
    by = {r["name"]: r for r in runner.run_case(case, FAST, LIMITS, threads=1)["contenders"]}
    assert by["shape"]["status"] == "wrong" and by["nan"]["status"] == "wrong"
    assert by["boom"]["status"] == "error" and by["boom"]["error"] == "RuntimeError: cannot compile"
    assert by["absent"]["status"] == "skipped" and by["absent"]["note"] == "absent: not installed"


def test_inplace_contender_is_checked_on_fresh_state():
    """Warm-up mutates x; reset() must restore it before the checked call."""

    def make(inp):
        x = inp["x"].copy()
        x0 = x.copy()
        return Bound(lambda: np.multiply(x, 2.0, out=x), lambda: x, lambda: np.copyto(x, x0))

    case = suites.Case("t", "scale", "n", 3, 1, 3.0, 48.0, lambda: {"x": np.array([1.0, 2.0, 3.0])},
                       lambda inp: 2 * inp["x"], [Contender("numpy", "peer", make)], "numpy")
    rec = runner.run_case(case, FAST, LIMITS, threads=1)
    assert rec["contenders"][0]["status"] == "ok"


def test_relative_error():
    ref = np.array([1.0, -4.0])
    assert runner.relative_error(ref, ref) == 0.0
    assert runner.relative_error(np.array([1.0, -3.0]), ref) == pytest.approx(0.25)
    assert runner.relative_error(np.array([1.0]), ref) == float("inf")
    assert runner.relative_error(np.array([np.inf, 0.0]), ref) == float("inf")


# ------------------------------------------------------------------ missing peers
def test_disabled_and_missing_peers_are_skipped_with_a_note(monkeypatch):
    import importlib

    real = importlib.import_module

    def fake_import(name, *a, **k):
        if name == "opt_einsum":
            raise ImportError("No module named 'opt_einsum'")
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    peers = Peers(threads=1, disabled={"torch", "jax", "numba"})
    assert peers.get("torch") is None and "disabled" in peers.notes["torch"]
    assert peers.get("opt_einsum") is None and "pip install opt_einsum" in peers.notes["opt_einsum"]
    ctx = suites.Context(peers, threads=1, quick=True)
    case = suites.small.cases(ctx)[0]
    by = {c.name: c for c in case.contenders}
    for name in ("torch", "jax", "numba", "opt_einsum"):
        assert by[name].make is None and by[name].note == peers.notes[name]
    rec = runner.run_case(case, FAST, LIMITS, threads=1)
    statuses = {r["name"]: r["status"] for r in rec["contenders"]}
    assert statuses["torch"] == "skipped" and statuses["numpy"] == "ok"


def test_every_tensorlang_backend_is_a_contender():
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba"}), quick=True)
    assert ctx.backends == tensorlang_backends()
    for name, suite in suites.SUITES.items():
        for case in suite(ctx):
            names = [c.name for c in case.contenders if c.family == "tensorlang"
                     and not c.name.endswith((" with copy", " 1 thread", " pad=auto", " pad=W", " padded inputs",
                                              " padded in+out", " no fma", " contract_expression"))]
            assert names == [f"tensorlang[{b}]" for b in ctx.backends], (name, case.label)
            # fused multiply-adds are the default (issue 44): the cfd suite also times fma=False
            fma = [c.name for c in case.contenders if c.name == "tensorlang[c] no fma"]
            assert fma == (["tensorlang[c] no fma"] if name == "cfd" and "c" in ctx.backends else []), (name, case.label)
            assert case.flops > 0 and case.bytes > 0
            assert case.baseline in [c.name for c in case.contenders]
    every = suites.Context(Peers(disabled={"torch", "jax", "numba"}), quick=True, fma=True)  # bench --fma
    if "c" in every.backends:
        assert "tensorlang[c] no fma" in [c.name for c in suites.small.cases(every)[0].contenders]
    fake = suites.Context(Peers(disabled={"torch", "jax", "numba"}), quick=True, backends=("numpy", "future"))
    assert [c.name for c in suites.small.cases(fake)[0].contenders][:2] == ["tensorlang[numpy]", "tensorlang[future]"]


# ------------------------------------------------------------------ the suites' kernels against their references
@pytest.mark.parametrize("n,E", [(2, 3), (3, 2)])
def test_cfd_sources_match_independent_reference(n, E):
    import tensorlang as tl

    rng = np.random.default_rng(n)
    A, B, C, S = (rng.standard_normal((n, n)) for _ in range(4))
    u, D = rng.standard_normal((E, n, n, n)), rng.standard_normal((E, n, n, n))
    expect = np.einsum("il,jm,kn,elmn->eijk", A, B, C, u)
    assert np.allclose(suites.cfd.kron3(A, B, C, u), expect)
    for backend in ("numpy", "interp"):
        got = tl.compile(suites.cfd.interpolation_source(n, E), backend=backend)(A=A, B=B, C=C, u=u)["v"]
        assert np.allclose(got, expect, rtol=1e-12, atol=1e-12)
        helm = tl.compile(suites.cfd.helmholtz_source(n, E), backend=backend)(S=S, D=D, u=u)["v"]
        t = np.einsum("li,mj,nk,elmn->eijk", S, S, S, u)
        assert np.allclose(helm, np.einsum("il,jm,kn,elmn->eijk", S, S, S, D * t), rtol=1e-12, atol=1e-12)
        assert np.allclose(suites.cfd.helmholtz_reference({"S": S, "D": D, "u": u}), helm)


@pytest.mark.parametrize("kind", ["scale", "multiply", "lincomb", "matvec_mul"])
def test_inplace_sources_and_numpy_peer_match_reference(kind):
    import tensorlang as tl

    source, names = suites.inplace._inplace_source(kind, 7)
    inp = suites.inplace._inplace_inputs(kind, 7)
    ref = suites.inplace._inplace_reference(kind)(inp)
    got = tl.compile(source, backend="interp")(**{n: inp[n] for n in names})["x"]
    assert np.allclose(got, ref, rtol=1e-13)
    bound = suites.inplace._numpy_inplace(kind).make(inp)
    bound.call()
    assert np.allclose(bound.result(), ref, rtol=1e-13)
    bound.reset()
    assert np.array_equal(bound.result(), inp["x"])


def test_pinned_cpus_narrows_every_thread_and_restores():
    import os
    import threading

    from tensorlang_bench.machine import pinned_cpus

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("CPU affinity is Linux-only")
    before = os.sched_getaffinity(0)
    if len(before) < 2:
        pytest.skip(f"needs two CPUs: this process may use {len(before)}")
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        with pinned_cpus(1) as pinned:
            assert pinned.cpus == [min(before)]
            assert os.sched_getaffinity(worker.native_id) == {min(before)}
            assert os.sched_getaffinity(0) == {min(before)}
        assert os.sched_getaffinity(0) == before
        assert os.sched_getaffinity(worker.native_id) == before
    finally:
        stop.set()
        worker.join()


# ------------------------------------------------------------------ writers
def _results(tmp_path):
    case = _case([_copy_contender("right"), _copy_contender("wrong", offset=1.0), _copy_contender("tl", "tensorlang"),
                  Contender("absent", "peer", None, "absent: not installed")])
    rec = runner.run_case(case, FAST, LIMITS, threads=1)
    from tensorlang_bench import machine

    return {
        "format": "tensorlang-bench/1", "command": "tensorlang bench test", "started": "2026-01-01T00:00:00+00:00",
        "seconds": 1.0, "quick": True, "threads": 1, "suites": ["test"], "backends": ["numpy"],
        "machine": machine.describe({"numpy": np.__version__}).as_dict(), "load_average_after": None,
        "limits": {str(t): lim.as_dict() for t, lim in LIMITS.items()}, "plan": FAST.__dict__,
        "missing_peers": {"absent": "absent: not installed"}, "cases": [rec],
    }


def test_json_and_markdown_writers(tmp_path):
    results = _results(tmp_path)
    path = report.write_json(results, tmp_path)
    loaded = json.loads(path.read_text())
    assert loaded["cases"][0]["contenders"][0]["name"] == "right"
    assert loaded["limits"]["1"]["gemm_GFLOPps"] == 40.0
    md = report.write_markdown(results, tmp_path, ["x.png"]).read_text()
    assert "| 1 | 10.0 | 12.0 | 14.0 | – | 40.0 (n=64) |" in md  # no FMA peak in this run: a dash
    assert "| test | copy | n=6 | tl |" in md  # the summary row: best tensorlang against best peer
    assert "**wrong** (relative error 2.0e-01), not timed" in md
    assert "skipped: absent: not installed" in md
    assert "![x.png](x.png)" in md
    rows = [line for line in md.splitlines() if line.startswith("| right |")]
    header = next(line for line in md.splitlines() if line.startswith("| contender |"))
    assert len(rows) == 1 and rows[0].count("|") == header.count("|") == 9  # 8 columns


def test_update_doc_replaces_only_the_generated_part(tmp_path):
    results = _results(tmp_path)
    doc = tmp_path / "docs" / "performance.md"
    doc.parent.mkdir()
    doc.write_text("# Performance\nprose before\n")
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "a.png").write_bytes(b"png")
    report.update_doc(results, doc, tmp_path / "res", ["a.png"])
    first = doc.read_text()
    assert first.startswith("# Performance\nprose before\n") and report.BEGIN in first
    # plots are copied beside the page (a docs site serves nothing outside its folder)
    assert "![a.png](bench/a.png)" in first and (doc.parent / "bench" / "a.png").read_bytes() == b"png"
    assert "| test | copy | n=6 |" in first and "](../res" not in first
    doc.write_text(first + "prose after\n")
    results["started"] = "2027-02-02T00:00:00+00:00"
    report.update_doc(results, doc, tmp_path / "res", [])
    second = doc.read_text()
    assert second.count(report.BEGIN) == 1 and "2027-02-02" in second and "2026-01-01" not in second
    assert second.endswith("prose after\n") and "a.png" not in second


@pytest.mark.slow
def test_plots_are_written_or_skipped_with_a_note(tmp_path):
    results = _results(tmp_path)
    results["suites"] = ["test"]
    plots, note = report.write_plots(results, tmp_path)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert plots == [] and "matplotlib" in note
    else:
        assert plots == ["test_speedup.png", "test_roofline.png"]
        assert all((tmp_path / p).stat().st_size > 1000 for p in plots)


def test_roofline_points_are_the_fastest_correct_contender_of_each_family(tmp_path):
    from tensorlang_bench import roofline

    results = _results(tmp_path)
    case = results["cases"][0]
    (point,) = roofline.roofline_points(results, "test")
    assert point["intensity"] == 6.0 / 96.0
    # "wrong" is a peer with a wrong result: never the best peer, whatever its time
    assert point["peer"] == "right" and point["tensorlang"] == "tl"
    right = next(r for r in case["contenders"] if r["name"] == "right")
    assert point["peer_GFLOPps"] == 6.0 / right["median_s"] / 1e9
    assert roofline.roofline_points(results, "other suite") == []
    case["flops"] = 0.0  # no count, no point: a roofline needs both axes
    assert roofline.roofline_points(results, "test") == []


# ------------------------------------------------------------------ the command
@pytest.mark.slow
def test_cli_bench_quick_small_writes_its_files(tmp_path, capsys):
    out = tmp_path / "res"
    status = main(["bench", "--quick", "small", "--out", str(out), "--without", "torch,jax,numba", "--no-progress"])
    assert status == 0
    data = json.loads((out / "results.json").read_text())
    assert data["suites"] == ["small"] and data["quick"] and data["threads"] == 1
    assert set(data["limits"]) == {"1", "2"}
    recs = {r["name"]: r for r in data["cases"][0]["contenders"]}
    for backend in tensorlang_backends():
        assert recs[f"tensorlang[{backend}]"]["status"] == "ok"
    assert recs["torch"]["status"] == "skipped" and "disabled" in recs["torch"]["note"]
    md = (out / "results.md").read_text()
    assert "## Suite `small`" in md and "matmul_2x2" in md
    printed = capsys.readouterr().out
    assert "Summary" in printed and "results.json" in printed


@pytest.mark.slow
def test_cli_bench_at_two_thread_counts_compares_them_in_one_table(tmp_path, capsys):
    if usable_cpus() < 2:
        pytest.skip(f"needs two CPUs: this process may use {usable_cpus()}")
    out = tmp_path / "res"
    status = main(["bench", "--quick", "small", "--threads", "1,2", "--out", str(out),
                   "--without", "torch,jax,numba,opt_einsum", "--no-progress"])
    assert status == 0
    data = json.loads((out / "results.json").read_text())
    assert data["threads"] == 1 and data["thread_counts"] == [1, 2] and set(data["thread_runs"]) == {"1", "2"}
    assert data["thread_runs"]["2"][0]["threads"] == 2
    md = (out / "results.md").read_text()
    assert "## Threads: 1 against 2" in md and "| small | matmul_2x2 | 2x2 | numpy |" in md
    assert "Threads: 1 against 2" in capsys.readouterr().out


def test_threads_table_flags_a_tensorlang_contender_slower_with_more_threads():
    def case(times):
        return {"suite": "s", "kernel": "k", "label": "n", "contenders": [
            {"name": name, "family": family, "median_s": t} for (name, family), t in times.items()]}

    one = case({("tensorlang[c]", "tensorlang"): 1.0, ("numpy", "peer"): 1.0})
    two = case({("tensorlang[c]", "tensorlang"): 1.2, ("numpy", "peer"): 2.0})
    lines = report.threads_markdown({"thread_counts": [1, 2], "thread_runs": {"1": [one], "2": [two]}})
    rows = {line.split(" | ")[3]: line for line in lines if line.startswith("| s |")}
    assert rows["tensorlang[c]"].endswith("| slower |") and "0.833" in rows["tensorlang[c]"]
    assert rows["numpy"].endswith("|  |")  # a peer is not flagged
    assert report.threads_markdown({"threads": 1}) == []


def test_the_interleaved_thread_comparison_uses_the_times_taken_by_themselves():
    """In the 2-thread run the pair is timed again alone (runner.THREADS_PAUSE_S); the
    table compares those times, not the round-robin's (where a peer's spinning pool
    shared the core)."""
    def case(recs):
        return {"suite": "s", "kernel": "k", "label": "n", "contenders": recs}

    one = case([{"name": "tensorlang[c]", "family": "tensorlang", "median_s": 1.0}])
    two = case([{"name": "tensorlang[c]", "family": "tensorlang", "median_s": 1.0, "alone_median_s": 0.5},
                {"name": "tensorlang[c] 1 thread", "family": "tensorlang", "median_s": 1.0, "alone_median_s": 0.9}])
    lines = report.threads_markdown({"thread_counts": [1, 2], "thread_runs": {"1": [one], "2": [two]}})
    row = next(line for line in lines if line.startswith("| s | k | n | 900 ms"))
    assert "| 500 ms | 1.8 |" in row
    del two["contenders"][0]["alone_median_s"]  # only one of the pair timed alone: the round-robin's
    lines = report.threads_markdown({"thread_counts": [1, 2], "thread_runs": {"1": [one], "2": [two]}})
    assert any(line.startswith("| s | k | n | 1 s | 1 s | 1 |") for line in lines)


@pytest.mark.slow
def test_a_thread_pair_that_built_the_same_c_is_marked_and_its_flag_says_so():
    """Where no statement has work enough for a parallel loop, threads=1 and threads=2
    generate the same C: the pair's time difference is noise, and the table says so."""
    def pair(code_one, code_many):
        def contender(name, code):
            def make(inp):
                out = np.empty_like(inp["x"])
                return Bound(lambda: np.copyto(out, inp["x"]), lambda: out, code=code)
            return Contender(name, "tensorlang", make, "")
        return _case([_copy_contender("right", "baseline"), contender("tensorlang[c]", code_many),
                      contender("tensorlang[c] 1 thread", code_one)])

    def marks(case):
        rec = runner.run_case(case, FAST, LIMITS, threads=2)
        return {r["name"]: r.get("same_code_both_thread_counts") for r in rec["contenders"]}

    assert marks(pair("int f;", "int f;")) == {"right": None, "tensorlang[c]": True, "tensorlang[c] 1 thread": True}
    assert marks(pair("int f;", "#pragma omp parallel for")) == {
        "right": None, "tensorlang[c]": False, "tensorlang[c] 1 thread": False}
    assert marks(pair(None, None))["tensorlang[c]"] is False  # no code to compare: not the same

    def row(same):
        case = {"suite": "s", "kernel": "k", "label": "n", "contenders": [
            {"name": "tensorlang[c]", "family": "tensorlang", "median_s": 1.0, "alone_median_s": 1.2,
             "same_code_both_thread_counts": same},
            {"name": "tensorlang[c] 1 thread", "family": "tensorlang", "median_s": 1.0, "alone_median_s": 1.0}]}
        one = {"suite": "s", "kernel": "k", "label": "n", "contenders": [
            {"name": "tensorlang[c]", "family": "tensorlang", "median_s": 1.0}]}
        lines = report.threads_markdown({"thread_counts": [1, 2], "thread_runs": {"1": [one], "2": [case]}})
        return next(line for line in lines if line.startswith("| s | k | n | 1 s | 1.2 s"))

    assert row(False).endswith("| slower |")
    assert row(True).endswith("| slower, same C (noise) |")


def test_the_thread_pair_is_timed_in_long_batches_after_a_long_warm_up():
    """The pair's own timing (runner.pair_plan) calls each kernel for at least
    PAIR_BATCH_S at a time after PAIR_WARMUP calls, so a 2-thread kernel's measured choice
    of team or one thread sees its own steady state, not the other kernel's caches every
    few calls; the rounds and the budget stay the run's."""
    from tensorlang_bench import runner
    from tensorlang_bench.timing import Plan

    for plan in (Plan(), Plan.quick(), Plan(min_batch_s=0.5, warmup=50)):
        pair = runner.pair_plan(plan)
        assert pair.min_batch_s == max(plan.min_batch_s, runner.PAIR_BATCH_S) >= plan.min_batch_s
        assert pair.warmup == max(plan.warmup, runner.PAIR_WARMUP)
        assert (pair.rounds, pair.min_rounds, pair.budget_s) == (plan.rounds, plan.min_rounds, plan.budget_s)
    assert runner.pair_plan(Plan()).min_batch_s > Plan().min_batch_s  # longer than the round-robin's batches


@pytest.mark.parametrize("argv,message", [
    (["bench", "nosuch"], "unknown suite 'nosuch'"),
    (["bench", "--threads", "1,x"], "--threads must be a positive integer"),
    (["bench", "--threads", "0"], "--threads must be a positive integer"),
    (["bench", "--without", "pandas"], "unknown peer 'pandas'"),
])
def test_cli_bench_bad_arguments(argv, message, tmp_path, capsys):
    assert main(argv + ["--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and message in err and "Traceback" not in err


def test_cli_bench_unwritable_out(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["bench", "small", "--out", str(blocker / "sub")]) == 1
    assert "cannot create output directory" in capsys.readouterr().err


# ------------------------------------------------------------------ a package beside tensorlang (issue 14)
HEAVY = ("matplotlib", "jax", "numba", "torch", "rich", "threadpoolctl")


def _modules_after(code: str) -> list[str]:
    """The top-level names of the modules a fresh interpreter has loaded after ``code``."""
    import subprocess
    import sys

    probe = code + "\nimport sys; print(' '.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.slow
def test_import_tensorlang_loads_no_bench_code():
    loaded = _modules_after("import tensorlang")
    assert not [m for m in loaded if m.split(".")[0] in ("tensorlang_bench",) + HEAVY]


def test_the_command_line_loads_only_the_light_bench_module():
    """``tensorlang`` registers ``bench`` from tensorlang_bench/__init__.py alone: no suite,
    no peer, no plotting library is imported to answer ``tensorlang run``."""
    loaded = _modules_after("import tensorlang.cli; tensorlang.cli.build_parser()")
    assert "tensorlang_bench" in loaded
    assert not [m for m in loaded if m.startswith("tensorlang_bench.") or m.split(".")[0] in HEAVY]


@pytest.mark.parametrize("argv", [["bench", "--help"], ["bench"], ["bench", "small", "--quick", "--out", "x"]])
def test_cli_bench_without_the_bench_package(argv, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "tensorlang_bench", None)  # import tensorlang_bench raises ImportError
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "tensorlang_bench" in err and "pip install -e '.[bench]'" in err
    assert "Traceback" not in err


def test_cli_help_lists_bench_without_the_bench_package(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "tensorlang_bench", None)
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0 and "bench" in capsys.readouterr().out


def test_tensorlang_contenders_are_the_available_backends():
    import tensorlang as tl

    assert tensorlang_backends() == tl.available_backends()


# ------------------------------------------------------------------ review hardening (issue 5)
def test_interleaved_resets_state_before_every_batch_outside_the_clock():
    """In-place kernels overwrite their input: each batch must start from the same state,
    and the reset must not be timed."""
    clock = FakeClock()
    state = {"x": 0}
    seen: list[int] = []

    def fn():
        seen.append(state["x"])
        state["x"] += 1
        clock.now += 1e-3

    def reset():
        state["x"] = 0
        clock.now += 5.0  # a reset that is timed would show in the median

    plan = timing.Plan(warmup=2, rounds=5, min_rounds=5, min_batch_s=3.5e-3, budget_s=1e9)
    stats = timing.time_interleaved({"k": fn}, plan, clock, resets={"k": reset})["k"]
    assert stats.inner == 4 and stats.samples == 5
    assert seen[-25:] == [0, 0, 1, 2, 3] * 5  # every timed batch (after its untimed call) starts from the initial state
    assert stats.median == pytest.approx(1e-3)


def test_contender_raising_while_timed_is_reported_and_others_are_timed():
    calls = {"n": 0}

    def flaky(inp):
        out = np.empty_like(inp["x"])

        def call():
            calls["n"] += 1
            if calls["n"] > 2:  # passes the warm-up and the check, then breaks
                raise FloatingPointError("lost its mind")
            np.copyto(out, inp["x"])

        return Bound(call, lambda: out)

    case = _case([_copy_contender("right"), Contender("flaky", "peer", flaky)])
    by = {r["name"]: r for r in runner.run_case(case, FAST, LIMITS, threads=1)["contenders"]}
    assert by["flaky"]["status"] == "error" and "median_s" not in by["flaky"]
    assert by["flaky"]["error"] == "while timing: FloatingPointError: lost its mind"
    assert by["right"]["status"] == "ok" and by["right"]["median_s"] > 0
    assert by["right"]["ratio_to_best_peer"] == 1.0  # the failed one is no peer to compare with


def test_contender_that_overwrites_its_inputs_is_flagged_and_inputs_restored(tmp_path):
    def clobber(inp):
        out = np.empty_like(inp["x"])

        def call():
            np.copyto(out, inp["x"])
            inp["x"][0, 0] = 99.0  # writes into the shared input

        return Bound(call, lambda: out)

    later = {"n": 0}

    def clobber_later(inp):  # correct when checked, writes into its input while timed
        out = np.empty_like(inp["x"])

        def call():
            later["n"] += 1
            np.copyto(out, inp["x"])
            if later["n"] > 2:
                inp["x"][1, 1] = -1.0

        return Bound(call, lambda: out)

    case = _case([Contender("clobber", "peer", clobber), _copy_contender("right"),
                  Contender("later", "peer", clobber_later)])
    rec = runner.run_case(case, FAST, LIMITS, threads=1)
    by = {r["name"]: r for r in rec["contenders"]}
    assert by["clobber"]["status"] == "error" and "overwrote its input(s) x" in by["clobber"]["error"]
    assert by["right"]["status"] == "ok" and by["right"]["relative_error"] == 0.0  # saw the restored input
    assert rec["notes"] == ["input(s) x changed while timing (a contender wrote into them)"]
    md = "\n".join(report.case_table(rec))
    assert "Note: input(s) x changed while timing" in md


def _fast_path_ready(value) -> bool:
    """What the C back end's C caller takes (src/tensorlang/targets/c/callext.py)."""
    return (value.__class__ is np.ndarray and value.dtype == np.float64 and value.flags.c_contiguous
            and value.base is None)


def test_tensorlang_contenders_get_fast_path_arrays_out_buffers_and_threads(monkeypatch):
    """Scalars as 0-d arrays, C-contiguous float64 inputs, out= targets, x in place, and the
    run's thread count given to tl.compile (not OpenMP's default)."""
    import tensorlang

    compiled = []

    class FakeKernel:
        def __init__(self, source, backend, threads):
            self.threads, self.calls = threads, []
            compiled.append(self)

        def __call__(self, out=None, **arrays):
            self.calls.append((arrays, out))
            return out

        def code(self, stage):
            return f"/* threads={self.threads} */"

    monkeypatch.setattr(tensorlang, "compile", lambda source, backend="auto", threads=None, **k: FakeKernel(source, backend, threads))
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba", "opt_einsum"}), threads=2, quick=True,
                         backends=("c", "numpy"))
    chosen = [suites.cfd.cases(ctx)[0], suites.blas.cases(ctx)[1], suites.small.cases(ctx)[0]]
    chosen += [c for c in suites.inplace.cases(ctx) if c.size in (10**4, 100)]
    assert {c.kernel for c in chosen} >= {"scale", "lincomb", "matvec_mul", "interpolation", "trace_product"}
    for case in chosen:
        inputs = case.make_inputs()
        for contender in case.contenders:
            if contender.family != "tensorlang":
                continue
            bound = contender.make(dict(inputs))
            bound.call()
            kernel = compiled[-1]
            assert kernel.threads == (1 if contender.name.endswith(" 1 thread") else 2), (case.kernel, contender.name)
            arrays, out = kernel.calls[-1]
            assert all(_fast_path_ready(v) for v in arrays.values()), (case.kernel, {k: type(v) for k, v in arrays.items()})
            assert out and all(_fast_path_ready(v) and v.flags.writeable for v in out.values())
            if case.suite == "inplace":
                assert out["x"] is arrays["x"] and out["x"] is not inputs["x"]  # in place, on its own copy


def test_c_backend_contender_takes_the_c_caller(monkeypatch):
    """With the real C back end: the in-place kernels with scalars take the C caller."""
    import tensorlang

    if "c" not in tensorlang_backends():
        pytest.skip("no C back end in this installation")
    kernels = []
    real = tensorlang.compile

    def spy(*a, **k):
        kernels.append(real(*a, **k))
        return kernels[-1]

    monkeypatch.setattr(tensorlang, "compile", spy)
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba", "opt_einsum"}), threads=1, quick=True, backends=("c",))
    source, names = suites.inplace._inplace_source("lincomb", 16)
    inputs = suites.inplace._inplace_inputs("lincomb", 16)
    contender = suites.inplace._tensorlang_inplace(ctx, source, names, True, "")[0]
    bound = contender.make(dict(inputs))
    bound.call()
    assert np.allclose(bound.result(), suites.inplace._inplace_reference("lincomb")(inputs), rtol=1e-13)
    caller = getattr(kernels[-1], "_c_call", None)
    if caller is not None:  # the C call path (targets/c/callext.py) takes the call
        before = caller.calls
        bound.reset()
        bound.call()
        assert caller.calls == before + 1
        return
    fast = getattr(kernels[-1], "_fast", None)
    if fast is None:
        pytest.skip("this C back end has no fast call path")
    bound.reset()
    captured = {}
    monkeypatch.setattr(kernels[-1], "_fast", lambda arrays, out, threads: captured.setdefault("r", fast(arrays, out, threads)))
    bound.call()
    assert captured["r"] is not None  # the fast path did not decline


def test_torch_matrix_product_writes_into_an_out_buffer():
    peers = Peers(threads=1, disabled={"jax", "numba"})
    if peers.get("torch") is None:
        pytest.skip("torch not installed")
    ctx = suites.Context(peers, threads=1, quick=True)
    case = suites.small.cases(ctx)[0]
    torch_c = next(c for c in case.contenders if c.name == "torch")
    inputs = case.make_inputs()
    bound = torch_c.make(dict(inputs))
    bound.call()
    first = bound.result()
    bound.call()
    assert bound.result() is first  # the same caller-owned buffer every call: out=, like numpy's
    assert np.allclose(first, inputs["A"] @ inputs["B"])


def test_configure_threads_overrides_the_environment(monkeypatch):
    from tensorlang_bench.contenders import configure_threads

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    configure_threads(1)
    import os

    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["OPENBLAS_NUM_THREADS"] == "1"


def test_cli_bench_more_threads_than_cpus(tmp_path, capsys):
    from tensorlang_bench import usable_cpus

    assert main(["bench", "small", "--threads", str(usable_cpus() + 1), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "more than the" in err and "Traceback" not in err


def test_cli_bench_results_that_cannot_be_written(tmp_path, capsys, monkeypatch):
    results = _results(tmp_path)
    monkeypatch.setattr(runner, "run", lambda *a, **k: results)  # no timing: a canned run
    out = tmp_path / "res"
    (out / "results.json").mkdir(parents=True)  # a directory where the JSON file goes
    assert main(["bench", "small", "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "cannot write the results" in err and "Traceback" not in err


def test_percentages_keep_small_fractions_visible():
    assert report._pct(2.7e-5) == "0.0027%"
    assert report._pct(0.5) == "50.0%" and report._pct(0.0) == "0.0%" and report._pct(None) == "–"


def test_counted_flops_and_bytes_match_the_hand_derivation():
    """6 E n^4 for sum-factorized interpolation, twice that plus E n^3 for Helmholtz;
    in place: x read and written; 2n^3 for a product, 2n^2 for tr(AB)."""
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba", "opt_einsum"}), quick=True, backends=())
    for case in suites.cfd.cases(ctx):
        n, E = case.size, case.per
        if case.kernel == "interpolation":
            assert (case.flops, case.bytes) == (6 * E * n**4, 8 * (2 * E * n**3 + 3 * n * n))
        else:
            assert (case.flops, case.bytes) == (12 * E * n**4 + E * n**3, 8 * (3 * E * n**3 + n * n))
    expect = {"scale": lambda N: (N, 16 * N), "multiply": lambda N: (N, 24 * N), "lincomb": lambda N: (5 * N, 32 * N),
              "matvec_mul": lambda N: (2 * N * N + N, 8 * (N * N + 3 * N))}
    for case in suites.inplace.cases(ctx):
        assert (case.flops, case.bytes) == expect[case.kernel](case.size)
    for case in suites.blas.cases(ctx):
        n = case.size
        assert (case.flops, case.bytes) == ((2 * n**3, 24 * n * n) if case.kernel == "matmul" else (2 * n * n, 16 * n * n))


@pytest.mark.slow
def test_plots_label_axes_with_units_and_name_every_contender(tmp_path, monkeypatch):
    """Each panel has axis labels (units where there are any); the legend names every
    contender drawn, also one that appears only in a later panel."""
    plt = pytest.importorskip("matplotlib.pyplot")
    results = _results(tmp_path)
    first = results["cases"][0]
    second = json.loads(json.dumps(first))
    second["kernel"], second["size"] = "other", 12
    second["contenders"].append(dict(second["contenders"][0], name="only-here"))
    results["cases"] = [first, second]
    cfd_cases = []
    for size in (4, 8):
        c = json.loads(json.dumps(first))
        c["suite"], c["kernel"], c["size"], c["speedup_base"] = "cfd", "interpolation", size, "right"
        cfd_cases.append(c)
    results["cases"] += cfd_cases
    results["suites"] = ["test", "cfd"]
    figures = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: (figures.append(fig), real_close(fig)))
    plots, _ = report.write_plots(results, tmp_path)
    assert plots == ["test_speedup.png", "cfd_time_per_element.png", "cfd_speedup.png",
                     "test_roofline.png", "cfd_roofline.png"]
    for fig in figures:
        axes = [ax for ax in fig.axes if ax.get_visible()]
        for ax in axes:
            assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        legend = axes[0].get_legend()
        assert legend is not None
        names = {t.get_text() for t in legend.get_texts()}
        if "roofline" in axes[0].get_title():  # one colour per kernel, filled ours, hollow the peer's
            assert {"tensorlang (fastest)", "best peer"} <= names
            assert {c["kernel"] for c in results["cases"] if axes[0].get_title().startswith(c["suite"])} <= names
        else:
            assert {"right", "tl"} <= names
    test_fig = figures[0]
    assert "only-here" in {t.get_text() for t in test_fig.axes[0].get_legend().get_texts()}
    assert "(µs)" in figures[1].axes[0].get_ylabel() and "n (points per direction)" == figures[1].axes[0].get_xlabel()


def test_xla_flags_are_real_flags_only():
    """XLA ignores words without '--' silently: only its real flag may be claimed."""
    from tensorlang_bench.contenders import xla_flags

    assert xla_flags("", 1) == "--xla_cpu_multi_thread_eigen=false"
    assert xla_flags("--xla_dump_to=/tmp/x", 1) == "--xla_dump_to=/tmp/x --xla_cpu_multi_thread_eigen=false"
    assert xla_flags("--xla_cpu_multi_thread_eigen=false", 1) == "--xla_cpu_multi_thread_eigen=false"
    assert xla_flags("", 2) == ""
    assert all(word.startswith("--") for word in xla_flags("", 1).split())


def test_broken_peer_install_is_skipped_with_its_reason(monkeypatch):
    """A peer whose import fails with something other than ImportError (a binary
    mismatch, say) is 'missing' too: a note with the reason, no crash."""
    import importlib

    real = importlib.import_module

    def fake_import(name, *a, **k):
        if name == "torch":
            raise RuntimeError("undefined symbol: _ZN3c10\nmore detail")
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    peers = Peers(threads=1, disabled={"jax", "numba"})
    assert peers.get("torch") is None
    assert "undefined symbol: _ZN3c10" in peers.notes["torch"] and "more detail" not in peers.notes["torch"]
    ctx = suites.Context(peers, threads=1, quick=True)
    rec = runner.run_case(suites.small.cases(ctx)[0], FAST, LIMITS, threads=1)
    by = {r["name"]: r for r in rec["contenders"]}
    assert by["torch"]["status"] == "skipped" and "undefined symbol" in by["torch"]["note"]
    assert by["numpy"]["status"] == "ok"


@pytest.mark.parametrize("cc", ["/nonexistent/bin/cc", "false", "true --not-a-compiler"])
def test_bare_ctypes_baseline_without_a_working_compiler_is_skipped(cc, monkeypatch):
    from tensorlang_bench import contenders

    monkeypatch.setattr(contenders, "_clib_cache", [])
    monkeypatch.setenv("CC", cc)
    clib = contenders.bare_c_library()
    assert clib.lib is None and "baseline is skipped" in clib.note
    (baseline,) = suites.small._ctypes_mm2()
    assert baseline.make is None and baseline.family == "baseline" and baseline.note == clib.note


def test_summary_names_failed_contenders(tmp_path):
    """docs/performance.md quotes only the summary: a wrong or raising contender (a
    tensorlang back end above all) must be visible there, not only in the case tables."""
    results = _results(tmp_path)
    results["cases"][0]["contenders"].append(
        {"name": "tensorlang[c]", "family": "tensorlang", "note": "", "status": "error", "error": "boom"})
    lines = report.summary_markdown(results)
    row = next(line for line in lines if line.startswith("| test | copy |"))
    assert row.endswith("| wrong (wrong), tensorlang[c] (error) |")
    header = next(line for line in lines if line.startswith("| suite |"))
    assert row.count("|") == header.count("|")


def test_bandwidth_limit_includes_the_in_place_update():
    """Copy and triad pay an uncounted write-allocate read; an in-place kernel does not, so
    the limit must include an in-place update or in-place kernels read as >100% of it."""
    from tensorlang_bench import machine

    lim = Limits(1, 10.0, 12.0, 40.0, 64, 1024, 19.0)
    assert lim.bandwidth_gbs == 19.0 and lim.as_dict()["update_GBps"] == 19.0
    assert Limits(1, 10.0, 12.0, 40.0, 64, 1024).bandwidth_gbs == 12.0  # older runs: no update
    values = machine.measure_bandwidth(1, 4096, repeats=1)  # three rates (not judged)
    assert len(values) == 3 and all(v > 0 for v in values)
    old_run = {"machine": machine.describe({}).as_dict(), "limits": {"1": dict(lim.as_dict(), update_GBps=None)}}
    assert "| 1 | 10.0 | 12.0 | – | – | 40.0 (n=64) |" in report.machine_markdown(old_run)


def test_the_compute_roof_is_the_measured_fma_peak_and_the_gemm_rate_without_it():
    """Issue 44: the bound is the core's own FMA peak (a C loop of independent vector
    FMAs), not what OpenBLAS's kernels reach; runs without a compiler (and older runs)
    keep the GEMM rate as the roof."""
    from tensorlang_bench import machine

    assert Limits(1, 10.0, 12.0, 40.0, 64, 1024, 19.0).peak_gflops == 40.0
    lim = Limits(1, 10.0, 12.0, 40.0, 64, 1024, 19.0, {}, 90.0, "AVX-512")
    assert lim.peak_gflops == 90.0 and lim.as_dict()["fma_peak_GFLOPps"] == 90.0
    assert "| 1 | 10.0 | 12.0 | 19.0 | 90.0 (AVX-512) | 40.0 (n=64) |" in report.machine_markdown(
        {"machine": machine.describe({}).as_dict(), "limits": {"1": lim.as_dict()}})
    measured = machine.measure_fma_peak(1, bursts=3, iters=2000)
    if measured is not None:  # a C compiler works: a positive rate on the widest vectors it targets
        gflops, vectors = measured
        assert gflops > 0 and vectors in ("AVX-512", "AVX2", "scalar")


def test_cancelling_reduction_is_judged_against_its_terms():
    """tr(AB) whose terms cancel: a correct float64 sum is off by ~eps Σ|term|, far more than
    eps |tr(AB)|; the gate must not call it wrong, and must still catch a wrong one."""
    n = 64
    A = np.ones((n, n))
    B = np.ones((n, n))
    B[:, ::2] = -1.0
    B[0, 0] = -1.0 + 3e-13  # the exact trace is tiny: the ±1 terms cancel
    inputs = {"A": A, "B": B}
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba", "opt_einsum"}), quick=True, backends=())
    case = next(c for c in suites.blas.cases(ctx) if c.kernel == "trace_product")
    exact = float(case.reference(inputs))
    scale = case.error_scale(inputs)
    assert scale == n * n
    sloppy = exact + 1e-13  # a float64 rounding error's size, next to Σ|term| = 4096
    assert runner.relative_error(np.asarray(sloppy), np.asarray(exact)) > case.tolerance  # judged by |sum|: "wrong"
    assert runner.relative_error(np.asarray(sloppy), np.asarray(exact), scale) <= case.tolerance
    assert runner.relative_error(np.asarray(exact + 1e-3), np.asarray(exact), scale) > case.tolerance


def test_cli_bench_out_directory_without_write_permission(tmp_path, capsys, monkeypatch):
    """(Simulated: as root every directory is writable.)  Checked before anything runs."""
    import tensorlang_bench as bench

    ran = []
    monkeypatch.setattr(runner, "run", lambda *a, **k: ran.append(1))
    monkeypatch.setattr(bench.os, "access", lambda path, mode: False)
    assert main(["bench", "small", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "is not writable" in err and "Traceback" not in err and not ran


def test_inplace_with_copy_and_numpy_expression_contenders_match_the_reference():
    """002 §6.1's "temporary, then copy" variant and numpy's expression peer compute the
    same x as the in-place kernel, and the case asks for the paper's speedup beside ours."""
    import tensorlang as tl

    if "c" not in tl.available_backends():
        pytest.skip("no C back end")
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba"}), quick=True)
    for kind in ("scale", "multiply", "lincomb"):
        source, names = suites.inplace._inplace_source(kind, 9)
        inp = suites.inplace._inplace_inputs(kind, 9)
        ref = suites.inplace._inplace_reference(kind)(inp)
        for contender in (suites.inplace._tensorlang_copy(ctx, kind, 9, names), suites.inplace._numpy_expression(kind)):
            bound = contender.make(inp)
            bound.call()
            assert np.allclose(bound.result(), ref, rtol=1e-13), (kind, contender.name)
        assert "xtmp" in suites.inplace._copy_source(kind, 9)
    case = next(c for c in suites.inplace.cases(ctx) if c.kernel == "multiply")
    assert case.ratios == [("tensorlang[c] with copy", "tensorlang[c]", "002 §6.1 in place over copy", 2.01)]


def test_inplace_inputs_catch_a_contender_that_does_nothing():
    """A kernel that leaves x unchanged must fail the gate by a wide margin."""
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba", "opt_einsum"}), quick=True, backends=())
    for case in suites.inplace.cases(ctx):
        inputs = case.make_inputs()
        untouched = runner.relative_error(inputs["x"], case.reference(inputs))
        assert untouched > 100 * case.tolerance, (case.kernel, case.label, untouched)


def test_an_in_place_kernel_is_measured_against_the_update_with_as_many_read_streams():
    """A kernel that reads k arrays and updates one in place (Case.streams = k) is judged
    against the STREAM-style update of that pattern, not the best of copy/triad/update."""
    from tensorlang_bench import machine

    lim = Limits(1, 10.0, 12.0, 40.0, 64, 1024, 19.0, {1: 18.0, 2: 16.0, 3: 8.0})
    assert lim.update_for(3) == 8.0 and lim.update_for(1) == 18.0 and lim.bandwidth_gbs == 19.0
    assert Limits(1, 10.0, 12.0, 40.0, 64, 1024, 19.0).update_for(1) == 19.0  # older runs
    assert lim.as_dict()["update3_GBps"] == 8.0
    plain = _case([_copy_contender("right")])
    matched = _case([_copy_contender("right")])
    matched.streams = 3
    a = runner.run_case(plain, FAST, {1: lim}, threads=1)["contenders"][0]
    b = runner.run_case(matched, FAST, {1: lim}, threads=1)["contenders"][0]
    # the same bytes against 8 GB/s instead of 19 GB/s: a larger fraction, by their ratio
    ratio = (b["fraction_of_limit"] * b["median_s"]) / (a["fraction_of_limit"] * a["median_s"])  # the limits in time
    assert ratio == pytest.approx(19.0 / 8.0)
    rates = machine.measure_updates(1, 4096, repeats=1)  # the C (or numpy) updates run and agree
    assert sorted(rates) == [1, 2, 3] and all(v > 0 for v in rates.values())


@pytest.mark.slow
def test_the_call_paths_script_runs_both_branches_of_the_runner(capsys):
    """benchmarks/results/call-paths/run.py (the numbers behind "Call paths" in
    docs/performance.md): one line per case, each with the C caller's and the general
    path's time, and the kernels' runners as they were afterwards."""
    import runpy
    from pathlib import Path

    from tensorlang.targets.c import build as c_build

    if c_build.find_compiler() is None:
        pytest.skip("no working C compiler on this machine")
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks/results/call-paths/run.py"))
    seen = []

    def per_call(kernel, arrays, out):
        seen.append(kernel.runner.c_call is not None)
        kernel(**arrays, out=out)
        return 2e-6 if seen[-1] else 3e-6

    script["main"].__globals__.update(per_call=per_call, ROUNDS=2)
    script["main"]()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:]] == [name.split()[0] for name in script["CASES"]]
    assert all(line.split()[-3:] == ["2.00", "3.00", "1.5x"] for line in lines[1:])
    assert len(seen) == 2 * 2 * len(script["CASES"]) and seen.count(True) in (0, len(seen) // 2)


@pytest.mark.slow
def test_the_einsum_call_paths_script_runs_every_path(capsys):
    """benchmarks/results/call-paths/einsum.py: a cache hit of tl.einsum through the C
    caller's ``ordered``, the kernel's ``Runner.call``, ``ordered`` in Python and the general
    path, each checked against numpy.einsum; the einsum cache is empty afterwards and
    tl.einsum computes again."""
    import runpy
    from pathlib import Path

    import tensorlang as tl
    from tensorlang import einsum_api
    from tensorlang.targets.c import build as c_build
    from tensorlang.targets.c import callext

    if c_build.find_compiler() is None or callext.extension() is None:
        pytest.skip("no C caller on this machine")
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks/results/call-paths/einsum.py"))
    script["main"].__globals__["per_call"] = lambda subscripts, ops: 1e-6
    script["main"](2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + len(script["CASES"]) and lines[0].split()[2:6] == ["ordered", "runner", "python", "general"]
    assert all(line.split()[-6:] == ["1.00"] * 6 for line in lines[1:])  # every path ran (and agreed with numpy)
    assert einsum_api.cache_info()["entries"] == 0
    a = np.ones((2, 2))
    assert tl.einsum("ij,jk->ik", a, a).tolist() == [[2.0, 2.0], [2.0, 2.0]]


@pytest.mark.slow
def test_the_small_calls_script_times_every_contender(capsys):
    """benchmarks/results/call-paths/small-calls.py: one JSON line with a median per
    contender, each contender's call giving a result."""
    import runpy
    from pathlib import Path

    from tensorlang.targets.c import build as c_build

    if c_build.find_compiler() is None:
        pytest.skip("no C compiler on this machine")
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks/results/call-paths/small-calls.py"))
    script["main"].__globals__["CALLS"] = 2
    row = script["main"]("smoke", 2)
    assert json.loads(capsys.readouterr().out) == row and row["label"] == "smoke"
    assert {"tl_2x2_out", "einsum_2x2", "einsum_same3", "numpy_matmul"} <= set(row)
    assert all(value > 0 for name, value in row.items() if name not in ("label", "noext", "load"))
