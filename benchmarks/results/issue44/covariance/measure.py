"""C = XᵀX: tensorlang's C kernel (the Gram step) against numpy.matmul(X.T, X, out=) (OpenBLAS's
syrk), one thread, interleaved batch by batch in one process (order alternating), thread CPU time
and wall clock per call; median over rounds of the paired ratio numpy / tensorlang.

    PYTHONPATH=src:benchmarks taskset -c 1 python measure.py ROUNDS [m:n ...]
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
shapes = [tuple(int(x) for x in a.split(":")) for a in sys.argv[2:]] or [(256, 16), (4096, 32), (16384, 64)]
with threadpool_limits(1):
    for m, n in shapes:
        X = np.random.default_rng(m * n).uniform(-1, 1, (m, n))
        k = tl.compile(f"in var X : [{m} {n}]\nout var C : [{n} {n}]\nC[j,k] = sum(i) X[i,j] * X[i,k]\n",
                       backend="c", threads=1)
        args = c_arrays({"X": X})
        outs = {"tl": np.empty((n, n)), "numpy": np.empty((n, n))}
        calls = {"tl": lambda k=k, args=args, outs=outs: k(out={"C": outs["tl"]}, **args),
                 "numpy": lambda X=X, outs=outs: np.matmul(X.T, X, out=outs["numpy"])}
        for c in calls.values():
            c()
        t0 = time.perf_counter()
        calls["numpy"]()
        reps = max(1, int(2e-3 / max(time.perf_counter() - t0, 1e-7)))
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
        assert np.allclose(outs["tl"], outs["numpy"], rtol=1e-12, atol=1e-12)
        w = np.array(wall["numpy"]) / np.array(wall["tl"])
        q = np.array(cpu["numpy"]) / np.array(cpu["tl"])
        print(json.dumps({"m": m, "n": n, "reps": reps, "load": os.getloadavg()[0],
                          "wall_best_us": {c: min(v) * 1e6 for c, v in wall.items()},
                          "cpu_best_us": {c: min(v) * 1e6 for c, v in cpu.items()},
                          "numpy_over_tl_wall": [float(np.median(w)), float(w.min()), float(w.max())],
                          "numpy_over_tl_cpu": [float(np.median(q)), float(q.min()), float(q.max())]}), flush=True)
