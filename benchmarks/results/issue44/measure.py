"""Issue 44's measurements on a shared machine: the bench suites' own cases and
contenders, timed as the *best* of many short interleaved batches (another process
sharing the core only ever slows a batch down, so the best batch is the one least
disturbed), with the median beside it.  One process per tree: run it with
PYTHONPATH=<tree>/src:<tree>/benchmarks, pinned to one CPU (taskset -c 1), once per
tree and again, alternating, and compare the trees' numbers.

    python measure.py OUT.json cfd small padding
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
import numpy as np  # noqa: E402

from tensorlang_bench.contenders import Peers  # noqa: E402
from tensorlang_bench.machine import blas_threads  # noqa: E402
from tensorlang_bench.suites import blas, cfd, padding, small  # noqa: E402
from tensorlang_bench.suites.common import Context  # noqa: E402

SUITES = {"cfd": cfd, "small": small, "padding": padding, "blas": blas}
BATCH_S, ROUNDS = 2e-3, 41


def time_case(case) -> dict:
    inputs = case.make_inputs()
    bound = {}
    for c in case.contenders:
        if c.make is None or c.name in ("tensorlang[interp]", "tensorlang[numpy]") or "einsum" in c.name and "optimal" not in c.name:
            continue
        try:
            b = c.make({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
            b.reset()
            b.call()
            b.reset()
            start = time.perf_counter()
            b.call()
            one = time.perf_counter() - start
            if one > 1.0:  # a contender that takes seconds is not timed in batches here
                continue
            bound[c.name] = (b, max(1, int(BATCH_S / max(one, 1e-8))))
        except Exception as exc:  # noqa: BLE001
            print("  skip", c.name, type(exc).__name__, exc, file=sys.stderr)
    if not bound:
        return {}
    times = {name: [] for name in bound}
    names = list(bound)
    for r in range(ROUNDS):
        for name in names[r % len(names):] + names[: r % len(names)]:
            b, count = bound[name]
            b.reset()
            start = time.perf_counter()
            for _ in range(count):
                b.call()
            times[name].append((time.perf_counter() - start) / count)
    return {name: {"best_s": min(t), "median_s": float(np.median(t))} for name, t in times.items()}


def main(out: str, suites: list[str]) -> None:
    ctx = Context(Peers(1), threads=1, fma=False)
    found = {}
    with blas_threads(1):
        for suite in suites:
            for case in SUITES[suite].cases(ctx):
                key = f"{suite} | {case.kernel} | {case.label}"
                found[key] = time_case(case)
                if not found[key]:
                    continue
                best = min(found[key].items(), key=lambda kv: kv[1]["best_s"])
                print(key, " ".join(f"{n}={v['best_s'] * 1e6:.3g}us" for n, v in found[key].items()), "->", best[0],
                      flush=True)
    with open(out, "w") as fh:
        json.dump({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load": os.getloadavg(),
                   "cases": found}, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
