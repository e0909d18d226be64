"""x = x * v in place at N = 1e4..1e7: tensorlang's C kernel against numpy.multiply(x, v, out=x),
interleaved batch by batch in one process (order alternating), one thread; wall clock and the
thread's CPU time per call, best and median over rounds.

    PYTHONPATH=src:benchmarks taskset -c 1 python measure.py ROUNDS [N ...]
"""
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

import tensorlang as tl
from tensorlang_bench.contenders import c_arrays

rounds = int(sys.argv[1])
Ns = [int(float(a)) for a in sys.argv[2:]] or [10**4, 10**5, 10**6, 10**7]
with threadpool_limits(1):
    for N in Ns:
        rng = np.random.default_rng(N)
        x0 = rng.uniform(0.5, 1.5, N)
        v = 1.0 + rng.uniform(-1e-6, 1e-6, N)
        k = tl.compile(f"in var v : [{N}]\ninout var x : [{N}]\nx = x * v\n", backend="c", threads=1)
        xs = {"tl": x0.copy(), "numpy": x0.copy()}
        args = c_arrays({"v": v, "x": xs["tl"]})
        calls = {"tl": lambda k=k, args=args, xs=xs: k(out={"x": xs["tl"]}, **args),
                 "numpy": lambda xs=xs, v=v: np.multiply(xs["numpy"], v, out=xs["numpy"])}
        reps = max(1, int(2e-3 / (N * 1e-9 + 1e-7)))  # batches of about 2 ms
        for c in calls.values():
            c()
        wall = {c: [] for c in calls}
        cpu = {c: [] for c in calls}
        for r in range(rounds):
            for c in (list(calls) if r % 2 else list(calls)[::-1]):
                f = calls[c]
                a, b = time.perf_counter(), time.thread_time()
                for _ in range(reps):
                    f()
                cpu[c].append((time.thread_time() - b) / reps)
                wall[c].append((time.perf_counter() - a) / reps)
        assert np.allclose(xs["tl"], xs["numpy"], rtol=1e-12)
        w = np.array(wall["numpy"]) / np.array(wall["tl"])
        q = np.array(cpu["numpy"]) / np.array(cpu["tl"])
        print(json.dumps({"N": N, "reps": reps, "load": os.getloadavg()[0],
                          "wall_best_us": {c: min(v) * 1e6 for c, v in wall.items()},
                          "wall_median_us": {c: float(np.median(v)) * 1e6 for c, v in wall.items()},
                          "cpu_median_us": {c: float(np.median(v)) * 1e6 for c, v in cpu.items()},
                          "numpy_over_tl_wall": [float(np.median(w)), float(w.min()), float(w.max())],
                          "numpy_over_tl_cpu": [float(np.median(q)), float(q.min()), float(q.max())]}), flush=True)
