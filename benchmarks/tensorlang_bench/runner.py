"""Run suites: check every contender, time the correct ones interleaved, compute metrics.

For each case the runner

1. makes the inputs and the float64 reference;
2. builds each contender (compiling it: tensorlang, numba, jax), runs it once to warm
   up, restores its state, runs it once more and compares the result with the reference:
   a contender whose result is off by more than the case's tolerance is reported as
   ``wrong`` and not timed; one that raises is ``error``; one whose library is missing is
   ``skipped``, with the note that says why — nobody is dropped silently.  Each contender
   gets the same inputs; one that writes into them is an ``error`` and the inputs are
   restored before the next one runs;
3. times the correct ones interleaved (``timing.time_interleaved``), resetting in-place
   state before every batch, outside the clock; a contender whose single call already
   exceeds half the case's time budget is timed alone, a few calls, each from the reset
   state; one that raises while being timed becomes an ``error`` (``while timing: …``);
4. turns times into GFLOP/s, GB/s, the fraction of the machine's limit (the roofline
   bound: the larger of flops/peak and bytes/bandwidth, for the thread count used) and
   the ratio to the best peer (best peer time / this time: above 1 is faster).
"""

from __future__ import annotations

import datetime
import sys
import time
from typing import Iterable

import numpy as np

import tensorlang as tl

from . import machine, suites as suites_mod
from .contenders import Peers, configure_threads
from .timing import Plan, summarize, time_interleaved, time_paired

FAMILY_ORDER = {"tensorlang": 0, "baseline": 1, "peer": 2}


class _Progress:
    """A rich progress bar when rich is installed, one line per case otherwise."""

    def __init__(self, total: int, enabled: bool):
        self.enabled = enabled
        self._rich = None
        if not enabled:
            return
        try:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        except ImportError:
            return
        self._rich = Progress(
            TextColumn("[bold]{task.description:<44}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=None, transient=False,
        )
        self._task = self._rich.add_task("benchmarks", total=total)

    def __enter__(self):
        if self._rich is not None:
            self._rich.__enter__()
        return self

    def __exit__(self, *exc):
        if self._rich is not None:
            self._rich.__exit__(*exc)
        return False

    def describe(self, text: str) -> None:
        if self._rich is not None:
            self._rich.update(self._task, description=text[:44])

    def advance(self, text: str) -> None:
        if self._rich is not None:
            self._rich.advance(self._task)
        elif self.enabled:
            print(f"  done {text}", file=sys.stderr, flush=True)


def relative_error(result, reference, scale: float | None = None) -> float:
    """max |result - reference| / scale, where scale defaults to max |reference|; inf for a
    wrong shape or non-finite values."""
    r = np.asarray(result, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)
    if r.shape != ref.shape:
        return float("inf")
    if not np.all(np.isfinite(r)):
        return float("inf")
    if scale is None:
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    diff = float(np.max(np.abs(r - ref))) if ref.size else 0.0
    return diff / scale if scale > 0 else diff


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _restore(inputs: dict, pristine: dict) -> list[str]:
    """Put back any input a contender wrote into; the names of those it had changed."""
    changed = []
    for name, value in pristine.items():
        current = inputs[name]
        if not np.array_equal(np.asarray(current), value, equal_nan=True):
            changed.append(name)
            if isinstance(current, np.ndarray) and current.flags.writeable:
                np.copyto(current, value)
            else:
                inputs[name] = value.copy()
    return changed


def run_case(case, plan: Plan, limits: dict[int, machine.Limits], threads: int, progress=None) -> dict:
    """Check, time and measure every contender of one case; a JSON-ready record."""
    inputs = case.make_inputs()
    reference = case.reference(inputs)
    scale = case.error_scale(inputs) if getattr(case, "error_scale", None) is not None else None
    pristine = {k: np.array(v, copy=True) for k, v in inputs.items()}
    records, timed, slow = [], {}, {}
    for c in case.contenders:
        rec = {"name": c.name, "family": c.family, "note": c.note, "status": "ok"}
        records.append(rec)
        if c.make is None:
            rec["status"] = "skipped"
            continue
        if progress is not None:
            progress.describe(f"{case.suite} {case.kernel} {case.label}: {c.name}")
        try:
            bound = c.make(dict(inputs))
            bound.call()  # warm-up: compiles numba and jax, fills caches
            bound.reset()
            start = time.perf_counter()
            bound.call()
            one = time.perf_counter() - start
            err = relative_error(bound.result(), reference, scale)
        except Exception as exc:  # noqa: BLE001 - a contender failing is a result, not a crash
            rec["status"], rec["error"] = "error", _short(exc)
            _restore(inputs, pristine)
            continue
        clobbered = _restore(inputs, pristine)
        if clobbered:  # the next contenders must see the same inputs as this one did
            rec["status"] = "error"
            rec["error"] = f"it overwrote its input(s) {', '.join(clobbered)}; restored, not timed"
            continue
        rec["relative_error"] = err
        if not err <= case.tolerance:
            rec["status"] = "wrong"
            continue
        if one > plan.budget_s / 2:
            slow[c.name] = bound
        else:
            timed[c.name] = bound
    failed: dict[str, BaseException] = {}
    stats = time_interleaved({name: b.call for name, b in timed.items()}, plan,
                             resets={name: b.reset for name, b in timed.items()}, failed=failed)
    for name, bound in slow.items():
        samples = []
        try:
            for _ in range(plan.min_rounds):
                bound.reset()  # outside the clock: every call starts from the same state
                start = time.perf_counter()
                bound.call()
                samples.append(time.perf_counter() - start)
        except Exception as exc:  # noqa: BLE001 - reported, like a failure before timing
            failed[name] = exc
            continue
        stats[name] = summarize(samples)
    pair = [name for name in ("tensorlang[c] 1 thread", "tensorlang[c]") if name in stats and name in timed]
    if len(pair) == 2:  # the thread comparison once more, by itself (see THREADS_PAUSE_S)
        time.sleep(THREADS_PAUSE_S)
        alone = time_interleaved({name: timed[name].call for name in pair}, pair_plan(plan),
                                 resets={name: timed[name].reset for name in pair}, failed=failed)
        same = timed[pair[0]].code is not None and timed[pair[0]].code == timed[pair[1]].code
        for rec in records:
            if rec["name"] in alone:
                rec["alone_median_s"] = alone[rec["name"]].median
            if rec["name"] in pair:  # no parallel loop: threads=1 and threads=N built the same C
                rec["same_code_both_thread_counts"] = same
    for a, b in case.pairs:  # (a, b) compared batch beside batch, by themselves (timing.time_paired)
        if a in timed and b in timed and a not in failed and b not in failed:
            paired = time_paired(timed[a].call, timed[b].call, pair_plan(plan))
            next(rec for rec in records if rec["name"] == b)["paired"] = {"against": a, **paired.as_dict()}
    for rec in records:
        if rec["name"] in failed:  # it passed the check, then raised while being timed
            rec["status"], rec["error"] = "error", "while timing: " + _short(failed[rec["name"]])
    clobbered = _restore(inputs, pristine)
    if clobbered:
        case.notes.append(f"input(s) {', '.join(clobbered)} changed while timing (a contender wrote into them)")
    lim = limits[threads]
    matching = lim.update_for(case.streams) if case.streams is not None and hasattr(lim, "update_for") else None
    peak, bw = getattr(lim, "peak_gflops", lim.gemm_gflops) * 1e9, (matching or lim.bandwidth_gbs) * 1e9
    t_compute, t_memory = case.flops / peak, case.bytes / bw
    bound_kind = "memory" if t_memory >= t_compute else "compute"
    t_limit = max(t_compute, t_memory)
    for rec in records:
        s = stats.get(rec["name"])
        if s is None:
            continue
        rec.update(s.as_dict())
        if rec["name"] in slow:
            rec["note"] = (rec["note"] + "; " if rec["note"] else "") + "slow: timed alone, not interleaved"
        rec["per_element_s"] = s.median / case.per
        rec["GFLOPps"] = case.flops / s.median / 1e9
        rec["GBps"] = case.bytes / s.median / 1e9
        rec["fraction_of_limit"] = t_limit / s.median
    peers = [r for r in records if r["family"] == "peer" and "median_s" in r]
    best = min(peers, key=lambda r: r["median_s"]) if peers else None
    base = next((r for r in records if r["family"] == "baseline" and "median_s" in r), None)
    for rec in records:
        if "median_s" not in rec:
            continue
        if best is not None:
            rec["ratio_to_best_peer"] = best["median_s"] / rec["median_s"]
        if base is not None:
            rec["above_baseline_s"] = rec["median_s"] - base["median_s"]
    medians = {rec["name"]: rec["median_s"] for rec in records if "median_s" in rec}
    for slower, faster, what, paper in getattr(case, "ratios", ()):
        if slower in medians and faster in medians:
            ours = medians[slower] / medians[faster]
            case.notes.append(f"{what}: {ours:.2f}x here ({slower} / {faster})"
                              + (f", {paper:.2f}x in the paper" if paper is not None else ""))
    return {
        "suite": case.suite, "kernel": case.kernel, "label": case.label, "size": case.size, "per": case.per,
        "flops": case.flops, "bytes": case.bytes, "threads": threads, "bound": bound_kind,
        "limit_s": t_limit, "best_peer": best["name"] if best else None,
        "baseline": base["name"] if base else None, "speedup_base": case.baseline,
        "tolerance": case.tolerance, "notes": case.notes, "contenders": records,
    }


#: In a multi-threaded run, tensorlang[c] with threads=1 and with the run's threads are
#: timed again in turns by themselves, after this pause: in the peers' round-robin the
#: idle threads of a peer's pool (numba's, torch's) still spin on the second core when
#: tensorlang's turn comes, and its run-time check then runs one thread (measured: the CFD
#: kernel at n = 12 ran 1.71x faster on two threads alone, 1.15x right after a numba
#: parallel call).  The report's thread comparison uses these times.
THREADS_PAUSE_S = 0.3
#: ... in batches of at least this long (and after PAIR_WARMUP calls each): in batches of
#: the round-robin's 2 ms (4 calls of a 0.5 ms kernel) every other batch starts on the
#: other kernel's cache state, and the 2-thread kernel's measured choice (docs/c-backend.md,
#: "Threads") kept to one thread: measured, the CFD interpolation at n = 4 ran 1.00x
#: faster on two threads called in turns call by call, 1.67x called alone.
PAIR_BATCH_S = 0.02
PAIR_WARMUP = 20


def pair_plan(plan: Plan) -> Plan:
    """The timing plan of the thread pair: the run's, with longer batches and warm-up."""
    return Plan(warmup=max(plan.warmup, PAIR_WARMUP), rounds=plan.rounds, min_rounds=plan.min_rounds,
                min_batch_s=max(plan.min_batch_s, PAIR_BATCH_S), budget_s=plan.budget_s)


def run(
    suite_names: Iterable[str],
    quick: bool = False,
    threads: int | Iterable[int] = 1,
    disabled=(),
    progress: bool = True,
    plan: Plan | None = None,
    limits: dict[int, machine.Limits] | None = None,
    command: str = "",
    fma: bool = False,
) -> dict:
    """Run the named suites; the whole result as a JSON-ready dict (``fma``: every suite
    also times tensorlang's C kernels compiled with ``fma=True``).

    ``threads`` may list several counts (``(1, 2)``): the suites then run once per
    count, the first count's run is the result's tables, and ``thread_runs`` holds every
    count's cases, which the report compares in one table (report.threads_markdown)."""
    counts = [threads] if isinstance(threads, int) else list(dict.fromkeys(threads))
    if not counts:
        raise ValueError("no thread count")
    suite_names = list(suite_names)
    if limits is None:
        limits = machine.measure_limits(sorted({1, 2, *counts}), quick)
    runs = [_run_at(suite_names, quick, count, disabled, progress, plan, limits, command, fma) for count in counts]
    results = runs[0]
    if len(counts) > 1:
        results["thread_counts"] = counts
        results["thread_runs"] = {str(count): r["cases"] for count, r in zip(counts, runs)}
        results["seconds"] = sum(r["seconds"] for r in runs)
    return results


def _run_at(
    suite_names: list[str],
    quick: bool,
    threads: int,
    disabled,
    progress: bool,
    plan: Plan | None,
    limits: dict[int, machine.Limits] | None,
    command: str,
    fma: bool = False,
) -> dict:
    """One run of the suites with ``threads`` threads for every contender."""
    configure_threads(threads)
    peers = Peers(threads, disabled)
    versions = {"tensorlang": _tensorlang_version(), "numpy": np.__version__, **peers.versions()}
    started = datetime.datetime.now(datetime.timezone.utc)
    info = machine.describe(versions)
    if limits is None:
        limits = machine.measure_limits(sorted({1, 2, threads}), quick)
    plan = plan or (Plan.quick() if quick else Plan())
    ctx = suites_mod.Context(peers, threads, quick, fma=fma)
    cases = [case for name in suite_names for case in suites_mod.SUITES[name](ctx)]
    results = []
    with machine.blas_threads(threads), machine.pinned_cpus(threads) as pinned, _Progress(len(cases), progress) as bar:
        peers.apply_threads()
        settings = thread_settings(peers, threads)
        settings["cpu affinity"] = pinned.cpus if pinned.cpus is not None else "not pinned (no sched_setaffinity)"
        for case in cases:
            results.append(run_case(case, plan, limits, threads, bar))
            bar.advance(f"{case.suite} {case.kernel} {case.label}")
    finished = datetime.datetime.now(datetime.timezone.utc)
    try:
        import os

        load_after = os.getloadavg()
    except OSError:  # pragma: no cover
        load_after = None
    return {
        "format": "tensorlang-bench/1",
        "command": command,
        "started": started.isoformat(timespec="seconds"),
        "seconds": (finished - started).total_seconds(),
        "quick": quick,
        "threads": threads,
        "suites": suite_names,
        "backends": list(ctx.backends),
        "machine": info.as_dict(),
        "load_average_after": load_after,
        "limits": {str(t): lim.as_dict() for t, lim in limits.items()},
        "plan": plan.__dict__,
        "missing_peers": dict(peers.notes),
        "thread_settings": settings,
        "cases": results,
    }


def _tensorlang_version() -> str:
    return tl.__version__


def thread_settings(peers: Peers, threads: int) -> dict:
    """What each library was told to use, as it reports it (for the record)."""
    import os

    out: dict[str, object] = {"requested": threads, "tensorlang": f"tl.compile(threads={threads})"}
    try:
        from threadpoolctl import threadpool_info

        out["BLAS/OpenMP pools"] = sorted({f"{i['internal_api']}={i['num_threads']}" for i in threadpool_info()})
    except ImportError:
        out["BLAS/OpenMP pools"] = "unknown (threadpoolctl not installed): BLAS threads not pinned"
    torch = peers._modules.get("torch")
    if torch is not None:
        out["torch"] = torch.get_num_threads()
    numba = peers._modules.get("numba")
    if numba is not None:
        out["numba"] = numba.get_num_threads()
    if peers._modules.get("jax") is not None:
        out["jax"] = os.environ.get("XLA_FLAGS") or "XLA default (all cores)"
    return out
