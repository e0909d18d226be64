"""The benchmark harness (src/tensorlang/bench): statistics, the correctness gate,
writers, missing peers, the suites' kernels and the ``tensorlang bench`` command.

No test asserts a timing: the machine is shared and CI never judges speed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlang.bench import report, runner, suites, timing
from tensorlang.bench.contenders import Bound, Contender, Peers, tensorlang_backends
from tensorlang.bench.machine import Limits
from tensorlang.cli import main

LIMITS = {1: Limits(1, 10.0, 12.0, 40.0, 64, 1024), 2: Limits(2, 15.0, 18.0, 80.0, 64, 1024)}
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
    timed = order[-14:]  # the rounds, after warm-up and calibration
    assert [timed[2 * r] for r in range(7)] == ["a", "b", "a", "b", "a", "b", "a"]  # rotated each round


def test_interleaved_budget_cuts_rounds_but_not_below_minimum():
    clock = FakeClock()

    def slow():
        clock.now += 1.0

    plan = timing.Plan(warmup=0, rounds=50, min_rounds=4, min_batch_s=0.0, budget_s=2.0)
    assert timing.time_interleaved({"slow": slow}, plan, clock)["slow"].samples == 4


# ------------------------------------------------------------------ correctness gate
def _case(contenders, reference=np.arange(6.0).reshape(2, 3)):
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
    case = suites.small(ctx)[0]
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
            names = [c.name for c in case.contenders if c.family == "tensorlang"]
            assert names == [f"tensorlang[{b}]" for b in ctx.backends], (name, case.label)
            assert case.flops > 0 and case.bytes > 0
            assert case.baseline in [c.name for c in case.contenders]
    fake = suites.Context(Peers(disabled={"torch", "jax", "numba"}), quick=True, backends=("numpy", "future"))
    assert [c.name for c in suites.small(fake)[0].contenders][:2] == ["tensorlang[numpy]", "tensorlang[future]"]


# ------------------------------------------------------------------ the suites' kernels against their references
@pytest.mark.parametrize("n,E", [(2, 3), (3, 2)])
def test_cfd_sources_match_independent_reference(n, E):
    import tensorlang as tl

    rng = np.random.default_rng(n)
    A, B, C, S = (rng.standard_normal((n, n)) for _ in range(4))
    u, D = rng.standard_normal((E, n, n, n)), rng.standard_normal((E, n, n, n))
    expect = np.einsum("il,jm,kn,elmn->eijk", A, B, C, u)
    assert np.allclose(suites._kron3(A, B, C, u), expect)
    for backend in ("numpy", "interp"):
        got = tl.compile(suites.interpolation_source(n, E), backend=backend)(A=A, B=B, C=C, u=u)["v"]
        assert np.allclose(got, expect, rtol=1e-12, atol=1e-12)
        helm = tl.compile(suites.helmholtz_source(n, E), backend=backend)(S=S, D=D, u=u)["v"]
        t = np.einsum("li,mj,nk,elmn->eijk", S, S, S, u)
        assert np.allclose(helm, np.einsum("il,jm,kn,elmn->eijk", S, S, S, D * t), rtol=1e-12, atol=1e-12)
        assert np.allclose(suites._helmholtz_reference({"S": S, "D": D, "u": u}), helm)


@pytest.mark.parametrize("kind", ["scale", "multiply", "lincomb", "matvec_mul"])
def test_inplace_sources_and_numpy_peer_match_reference(kind):
    import tensorlang as tl

    source, names = suites._inplace_source(kind, 7)
    inp = suites._inplace_inputs(kind, 7)
    ref = suites._inplace_reference(kind)(inp)
    got = tl.compile(source, backend="interp")(**{n: inp[n] for n in names})["x"]
    assert np.allclose(got, ref, rtol=1e-13)
    bound = suites._numpy_inplace(kind).make(inp)
    bound.call()
    assert np.allclose(bound.result(), ref, rtol=1e-13)
    bound.reset()
    assert np.array_equal(bound.result(), inp["x"])


def test_pinned_cpus_narrows_every_thread_and_restores():
    import os
    import threading

    from tensorlang.bench.machine import pinned_cpus

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("CPU affinity is Linux-only")
    before = os.sched_getaffinity(0)
    if len(before) < 2:
        pytest.skip("needs at least two CPUs")
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
    from tensorlang.bench import machine

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
    assert "| 1 | 10.0 | 12.0 | 40.0 (n=64) |" in md
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
    report.update_doc(results, doc, tmp_path / "res", ["a.png"])
    first = doc.read_text()
    assert first.startswith("# Performance\nprose before\n") and report.BEGIN in first
    assert "![a.png](../res/a.png)" in first and "| test | copy | n=6 |" in first
    doc.write_text(first + "prose after\n")
    results["started"] = "2027-02-02T00:00:00+00:00"
    report.update_doc(results, doc, tmp_path / "res", [])
    second = doc.read_text()
    assert second.count(report.BEGIN) == 1 and "2027-02-02" in second and "2026-01-01" not in second
    assert second.endswith("prose after\n") and "a.png" not in second


def test_plots_are_written_or_skipped_with_a_note(tmp_path):
    results = _results(tmp_path)
    results["suites"] = ["test"]
    plots, note = report.write_plots(results, tmp_path)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert plots == [] and "matplotlib" in note
    else:
        assert plots == ["test_speedup.png"] and (tmp_path / "test_speedup.png").stat().st_size > 1000


# ------------------------------------------------------------------ the command
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


@pytest.mark.parametrize("argv,message", [
    (["bench", "nosuch"], "unknown suite 'nosuch'"),
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
