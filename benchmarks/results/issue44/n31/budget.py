"""The fused loop against the unfused schedule at the same n: each Helmholtz kernel compiled
under two cache sizes (TENSORLANG_CACHE_SIZES, which only moves the schedule's fusion budget;
the hardware is the same), thread CPU time, interleaved call by call, order alternating.

    PYTHONPATH=src:benchmarks taskset -c 1 python budget.py 31,38,40 ROUNDS l1=48K,l2=1M l1=48K,l2=16M
"""
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

import tensorlang as tl
from tensorlang import machine
from tensorlang_bench.contenders import c_arrays
from tensorlang_bench.suites.common import CORPUS

ns = [int(x) for x in sys.argv[1].split(",")]
rounds = int(sys.argv[2])
sizes = ["sys"] + sys.argv[3:]


def compile_under(src, size):
    if size == "sys":
        os.environ.pop("TENSORLANG_CACHE_SIZES", None)
    else:
        os.environ["TENSORLANG_CACHE_SIZES"] = size
    machine.cache_sizes.cache_clear()
    k = tl.compile(src, backend="c", threads=1)
    sched = k.schedule if not callable(k.schedule) else k.schedule()
    fused = dict.fromkeys(s.fusion for s in sched.steps if getattr(s, "fusion", None))  # (the steps' fused groups, in order)
    os.environ.pop("TENSORLANG_CACHE_SIZES", None)
    machine.cache_sizes.cache_clear()
    return k, [(f.working_set, f.budget) for f in fused]


with threadpool_limits(1):
    for n in ns:
        E = max(1, 2**20 // n**3)
        rng = np.random.default_rng(n)
        src = CORPUS.helmholtz_source(n, E)
        inp = {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, (E, n, n, n)),
               "u": rng.uniform(-1, 1, (E, n, n, n))}
        ks, fus = {}, {}
        for s in sizes:
            ks[s], fus[s] = compile_under(src, s)
        args = c_arrays(inp)
        outs = {p: np.empty((E, n, n, n)) for p in ks}
        for p in ks:
            ks[p](out={"v": outs[p]}, **args)
        t: dict = {p: [] for p in ks}
        order = list(ks)
        for r in range(rounds):
            for p in (order if r % 2 else order[::-1]):
                a = time.thread_time()
                ks[p](out={"v": outs[p]}, **args)
                t[p].append(time.thread_time() - a)
        for p in ks:
            assert np.allclose(outs[p], outs["sys"], rtol=1e-12, atol=1e-14), p
        unit = n**4 * E
        base = np.array(t["sys"])
        print(json.dumps({"n": n, "E": E, "load": os.getloadavg()[0], "fusions": fus,
                          "code_same": {p: ks[p].code("c") == ks["sys"].code("c") for p in ks},
                          "best_ms": {p: min(v) * 1e3 for p, v in t.items()},
                          "ns_per_n4E": {p: min(v) * 1e9 / unit for p, v in t.items()},
                          "sys_over": {p: [float(np.median(base / np.array(v))), float(np.min(base / np.array(v))),
                                           float(np.max(base / np.array(v)))] for p, v in t.items()}}), flush=True)
