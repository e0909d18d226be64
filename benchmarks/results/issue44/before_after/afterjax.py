"""What a tensorlang call right after a JAX call pays for: the calling thread's own
rusage across the timed call (user and system CPU time, minor faults, voluntary and
involuntary context switches: RUSAGE_THREAD), beside its thread CPU time, for each
"preceder" (the order shuffled every round), CFD Helmholtz n = 16 with the defaults.
Also with Python's collector off (``--nogc``): a JAX call allocates Python objects, and a
collection the next allocation triggers would be charged to the next call.

    PYTHONPATH=<tree>/src:benchmarks taskset -c N python afterjax.py ROUNDS [--nogc] > out.json
"""

from __future__ import annotations

import gc
import json
import os
import random
import resource
import statistics
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

from tensorlang_bench.contenders import Peers  # noqa: E402
from tensorlang_bench.suites import cfd  # noqa: E402
from tensorlang_bench.suites.common import Context  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
NOGC = "--nogc" in sys.argv

ctx = Context(Peers(1, disabled=("torch",)), 1, False)
case = next(c for c in cfd.cases(ctx) if c.kernel == "helmholtz" and c.size == 16)
inputs = case.make_inputs()
bound = {}
for c in case.contenders:
    if c.name in ("tensorlang[c]", "jax", "numba"):
        b = c.make({k: v.copy() for k, v in inputs.items()})
        for _ in range(3):
            b.call()
        bound[c.name] = b
tl_call, jax_call = bound["tensorlang[c]"].call, bound["jax"].call
gc_counts = []


def jax_then_collect():
    jax_call()
    gc.collect(0)


PRE = {
    "tensorlang": tl_call,
    "jax": jax_call,
    "jax, then gc.collect(0)": jax_then_collect,
    "jax+sleep20ms": lambda: (jax_call(), time.sleep(0.02)),
    "numba": bound["numba"].call,
    "sleep20ms": lambda: time.sleep(0.02),
}
FIELDS = ("ru_utime", "ru_stime", "ru_minflt", "ru_nvcsw", "ru_nivcsw")
res = {k: {"wall": [], "thread": [], **{f: [] for f in FIELDS}, "gc": []} for k in PRE}
if NOGC:
    gc.disable()
for r in range(ROUNDS):
    order = list(PRE)
    random.Random(r).shuffle(order)
    for name in order:
        PRE[name]()
        g0 = sum(s["collections"] for s in gc.get_stats())
        u0 = resource.getrusage(resource.RUSAGE_THREAD)
        c0, w0 = time.thread_time(), time.perf_counter()
        tl_call()
        w1, c1 = time.perf_counter(), time.thread_time()
        u1 = resource.getrusage(resource.RUSAGE_THREAD)
        g1 = sum(s["collections"] for s in gc.get_stats())
        res[name]["wall"].append(w1 - w0)
        res[name]["thread"].append(c1 - c0)
        for f in FIELDS:
            res[name][f].append(getattr(u1, f) - getattr(u0, f))
        res[name]["gc"].append(g1 - g0)
summary = {"rounds": ROUNDS, "nogc": NOGC, "load": os.getloadavg(), "affinity": sorted(os.sched_getaffinity(0)),
           "preceders": {}}
base = statistics.median(res["tensorlang"]["thread"])
for k, v in res.items():
    summary["preceders"][k] = {
        "thread_ms": statistics.median(v["thread"]) * 1e3, "thread_min_ms": min(v["thread"]) * 1e3,
        "ratio": statistics.median(v["thread"]) / base, "wall_ms": statistics.median(v["wall"]) * 1e3,
        "utime_ms": statistics.mean(v["ru_utime"]) * 1e3, "stime_ms": statistics.mean(v["ru_stime"]) * 1e3,
        "minflt": statistics.mean(v["ru_minflt"]), "nvcsw": statistics.mean(v["ru_nvcsw"]),
        "nivcsw": statistics.mean(v["ru_nivcsw"]), "gc_runs": sum(v["gc"]),
        "thread_ms_without_preemption": (statistics.median([t for t, n in zip(v["thread"], v["ru_nivcsw"]) if n == 0])
                                         * 1e3 if any(n == 0 for n in v["ru_nivcsw"]) else None),
        "calls_without_preemption": sum(1 for n in v["ru_nivcsw"] if n == 0),
    }
print(json.dumps(summary, indent=1))
_ = np
