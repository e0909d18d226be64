"""Issue 44's rows, before (a7520cd) and after (this tree), in one interleaved run.

Every row's cases are the bench suites' own (this checkout's ``benchmarks/tensorlang_bench``
for both trees: the same inputs, peers and contender code; each tree's tensorlang compiles
with its own defaults).  The two trees are different packages, so each is timed in its
own process: ``drive`` runs, round after round and group after group, one worker process
per tree, the trees' order alternating from group to group and from round to round, all
pinned to one CPU.  A worker times its tensorlang contenders and the peers interleaved
(in an order shuffled every inner round, the same shuffles for both trees), each sample a batch of
calls lasting at least ``BATCH_S``, and records per batch the wall time, the process's CPU
time (JAX's work runs on XLA's thread: the process counts it) and the contender run just
before it.  ``limits`` measures the FMA peak (``machine.measure_fma_peak``), the copy /
triad / update bandwidths and the fields gather floors.  ``table`` reads the JSON.

    python measure.py drive OUTDIR ROUNDS            # the whole run (spawns the workers)
    python measure.py worker TREE GROUP ROUND OUT    # one process (PYTHONPATH: a tree's src)
    python measure.py limits OUT
    python measure.py table OUTDIR
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

HERE = Path(__file__).resolve().parent
HARNESS = HERE.parents[2]  # benchmarks/ of this checkout
TREES = {"before": "/work/wt/before44", "after": str(HERE.parents[3])}
CPU = os.environ.get("TL_CPU", "1")
BATCH_S = 0.01

#: group -> (suite, case filter, contender names, inner rounds)
GROUPS = {
    "structure": ("structure", lambda k, label: k in ("moment3", "covariance"),
                  ("tensorlang[c]", "numpy", "opt_einsum"), 15),
    "fields": ("fields", lambda k, label: label.startswith("256^3"),
               ("tensorlang[c]",), 7),
    "padding": ("padding", lambda k, label: True, ("tensorlang[c]", "tensorlang[c] pad=auto"), 11),
    "cfd": ("cfd", lambda k, label: label.startswith("n=16 "),
            ("tensorlang[c]", "tensorlang[c] no fma", "tensorlang[c] fma", "jax", "numba", "opt_einsum"), 25),
    "small": ("small", lambda k, label: True,
              ("tensorlang[c]", "ctypes (bare call)", "numpy", "numba"), 41),
}


def _cases(group: str):
    sys.path.insert(0, str(HARNESS))
    from tensorlang_bench.contenders import Peers, tensorlang_contender
    from tensorlang_bench.suites import cfd, fields, padding, small, structure
    from tensorlang_bench.suites.common import Context

    suite, keep, names, rounds = GROUPS[group]
    if suite == "fields":
        fields.gather_seconds = lambda *a, **k: None  # the floors are measured once, by `limits`
    # peers a group does not time are not imported (jax and torch take seconds to import)
    unused = {"structure": ("jax", "torch", "numba"), "fields": ("jax", "torch", "numba", "opt_einsum"),
              "padding": ("jax", "torch", "numba", "opt_einsum"), "cfd": ("torch",),
              "small": ("jax", "torch", "opt_einsum")}[group]
    ctx = Context(Peers(1, disabled=unused), threads=1, backends=("c",), fma=False)
    module = {"structure": structure, "fields": fields, "padding": padding, "cfd": cfd, "small": small}[suite]
    found = []
    for case in module.cases(ctx):
        if not keep(case.kernel, case.label):
            continue
        contenders = [c for c in case.contenders if c.name in names and c.make is not None]
        if group == "cfd":  # fma=True explicitly: the before tree's default was fma=False
            src = [c for c in case.contenders if c.name == "tensorlang[c]"][0]
            contenders.append(_with_fma(case, src, tensorlang_contender))
        found.append((case, contenders))
    return found, rounds


def _with_fma(case, plain, tensorlang_contender):
    """tensorlang[c] compiled with fma=True: rebuilt from the plain contender's closure."""
    import numpy as np
    from tensorlang_bench.contenders import c_arrays

    from tensorlang_bench.suites import cfd

    n = case.size
    E = case.per
    shape = (E, n, n, n)
    if case.kernel == "interpolation":
        source, names = cfd.interpolation_source(n, E), ["A", "B", "C", "u"]
    else:
        source, names = cfd.helmholtz_source(n, E), ["S", "D", "u"]

    def bind(kernel, inp):
        out = np.empty(shape)
        args = c_arrays({k: inp[k] for k in names})
        targets = {"v": out}
        from tensorlang_bench.contenders import Bound
        return Bound(lambda: kernel(out=targets, **args), lambda: out)

    return tensorlang_contender(source, "c", bind, "fma=True", 1, fma=True)


def worker(tree: str, group: str, rnd: int, out: str) -> None:
    import numpy as np
    import tensorlang

    start_load = os.getloadavg()
    cases, rounds = _cases(group)
    from tensorlang_bench.machine import blas_threads

    made_inputs: dict[int, dict] = {}
    result = {"tree": tree, "group": group, "round": rnd, "tensorlang": tensorlang.__file__,
              "load_start": start_load, "cases": {}}
    with blas_threads(1):
        for case, contenders in cases:
            key = id(case.make_inputs)
            if key not in made_inputs:
                made_inputs.clear()
                made_inputs[key] = case.make_inputs()
            inputs = made_inputs[key]
            bound, errors = {}, {}
            for c in contenders:
                b = c.make({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
                b.reset()
                b.call()
                if case.suite != "fields" or c.name == "scipy.map_coordinates":
                    got = np.asarray(b.result())
                    if case.suite == "fields":  # scipy's value against tensorlang's
                        ref = bound["tensorlang[c]"][0].result() if "tensorlang[c]" in bound else None
                    else:
                        ref = case.reference(inputs)
                    if ref is not None:
                        scale = float(np.max(np.abs(ref))) or 1.0
                        errors[c.name] = float(np.max(np.abs(got - ref))) / scale
                b.reset()
                t0 = time.perf_counter()
                b.call()
                one = time.perf_counter() - t0
                bound[c.name] = (b, max(1, int(BATCH_S / max(one, 1e-8))))
            names = list(bound)
            batches = []
            previous = None
            shuffle = random.Random(f"{group} {case.kernel} {case.label} {rnd}")
            for _ in range(rounds):
                order = list(names)
                shuffle.shuffle(order)  # every contender after every other one, in turn
                for name in order:
                    b, count = bound[name]
                    b.reset()
                    c0, w0 = time.process_time(), time.perf_counter()
                    for _ in range(count):
                        b.call()
                    w1, c1 = time.perf_counter(), time.process_time()
                    batches.append((name, previous, (w1 - w0) / count, (c1 - c0) / count))
                    previous = name
            summary = {}
            for name in names:
                wall = [w for n, _, w, _ in batches if n == name]
                cpu = [c for n, _, _, c in batches if n == name]
                summary[name] = {"best_s": min(wall), "median_s": statistics.median(wall),
                                 "cpu_best_s": min(cpu), "cpu_median_s": statistics.median(cpu),
                                 "inner": bound[name][1], "rel_err": errors.get(name)}
            label = f"{case.kernel} | {case.label}"
            result["cases"][label] = {"flops": case.flops, "bytes": case.bytes, "contenders": summary,
                                      "batches": batches}
            print(tree, group, label, " ".join(f"{n}={v['best_s'] * 1e3:.4g}ms" for n, v in summary.items()),
                  flush=True)
    result["load_end"] = os.getloadavg()
    Path(out).write_text(json.dumps(result))


def limits(out: str) -> None:
    sys.path.insert(0, str(HARNESS))
    import numpy as np
    from tensorlang_bench.machine import measure_bandwidth, measure_fma_peak, measure_updates
    from tensorlang_bench.suites import fields

    found = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load": os.getloadavg()}
    peak = measure_fma_peak(1)
    found["fma_peak_gflops"], found["fma_vectors"] = peak if peak else (None, None)
    copy, triad, update = measure_bandwidth(1, 2**24, 7)
    found.update(copy_gbs=copy, triad_gbs=triad, update_gbs=update,
                 updates_gbs={str(k): v for k, v in measure_updates(1, 2**24, 7).items()})
    rng = np.random.default_rng(4)
    data = rng.standard_normal((256, 256, 256))
    points = rng.uniform(1.0, 256 - 2.0001, size=(1_000_000, 3))
    found["gather_cpu_s"] = fields.gather_seconds(data, points)
    found["load_end"] = os.getloadavg()
    Path(out).write_text(json.dumps(found, indent=1))
    print(json.dumps(found), flush=True)


def _run(args: list[str], tree: str | None, log) -> int:
    env = dict(os.environ)
    src = TREES[tree] if tree else TREES["after"]
    env["PYTHONPATH"] = f"{src}/src:{HARNESS}"
    env["TENSORLANG_CACHE"] = f"/tmp/tlcache-{'before44' if tree == 'before' else 'perf44'}"
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    cmd = ["taskset", "-c", CPU, sys.executable, __file__, *args]
    t0 = time.time()
    rc = subprocess.call(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    log.write(f"# {time.strftime('%H:%M:%S', time.gmtime())} rc={rc} {time.time() - t0:.1f}s {' '.join(args)} "
              f"load={os.getloadavg()[0]:.2f}\n")
    log.flush()
    return rc


def drive(outdir: str, rounds: int, groups: list[str]) -> None:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    deadline = float(os.environ.get("TL_DEADLINE", "inf"))  # epoch seconds: no group starts past it
    with open(out / "log.txt", "a") as log:
        _run(["limits", str(out / "limits-start.json")], None, log)
        for r in range(rounds):
            for i, g in enumerate(groups):
                if time.time() > deadline:
                    log.write(f"# deadline: {g} of round {r} not started\n")
                    continue
                # the trees' order alternates from group to group and, for each group, from round to round
                order = ("before", "after") if (r + i) % 2 == 0 else ("after", "before")
                for tree in order:
                    _run(["worker", tree, g, str(r), str(out / f"{g}-{tree}-{r}.json")], tree, log)
        if time.time() < float(os.environ.get("TL_END", "inf")):  # the limits again, where time is left
            _run(["limits", str(out / "limits-end.json")], None, log)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "worker":
        sys.path.insert(0, str(HARNESS))
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif mode == "limits":
        limits(sys.argv[2])
    elif mode == "drive":
        drive(sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",") if len(sys.argv) > 4 else list(GROUPS))
    elif mode == "table":
        from table import main as table_main  # noqa: E402

        table_main(sys.argv[2])
