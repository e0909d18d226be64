"""Each contender of CFD Helmholtz timed right after each other contender (and after a
64 MiB write, after a 20 ms sleep), CPU time of the whole process (every thread of it:
XLA runs its work on threads of its own).  Run pinned to one CPU (taskset -c N).

    PYTHONPATH=src:benchmarks python probe2.py ROUNDS [n] [timed,timed,...]
"""
from __future__ import annotations

import os
import resource
import random
import statistics
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

from tensorlang_bench.contenders import Peers  # noqa: E402
from tensorlang_bench.suites import cfd  # noqa: E402
from tensorlang_bench.suites.common import Context  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
N = int(sys.argv[2]) if len(sys.argv) > 2 else 16
TIMED = tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else ("tensorlang[c]", "jax", "numba", "opt_einsum")

ctx = Context(Peers(1), 1, False)
case = next(c for c in cfd.cases(ctx) if c.kernel == "helmholtz" and c.size == N)
inputs = case.make_inputs()
calls = {}
for c in case.contenders:
    if c.name in ("tensorlang[c]", "jax", "numba", "opt_einsum", "torch"):
        b = c.make({k: v.copy() for k, v in inputs.items()})
        for _ in range(3):
            b.call()
        calls[c.name] = b.call
junk = np.empty(8 << 20)
pre = dict(calls)
pre["write 64MiB"] = lambda: junk.fill(1.0)
pre["sleep 20ms"] = lambda: time.sleep(0.02)
pairs = [(t, p) for t in TIMED for p in pre]
res = {pair: [] for pair in pairs}
flt = {pair: [] for pair in pairs}
for r in range(ROUNDS):
    order = list(pairs)
    random.Random(r).shuffle(order)
    for t, p in order:
        pre[p]()
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        c0 = time.process_time()
        calls[t]()
        res[(t, p)].append(time.process_time() - c0)
        flt[(t, p)].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
print(f"helmholtz n={N}, {ROUNDS} rounds, process CPU time, median (min) ms; affinity "
      f"{sorted(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.1f}")
print("timed \\ after".ljust(16) + "".join(p[:12].rjust(16) for p in pre))
for t in TIMED:
    print(t[:15].ljust(16) + "".join(f"{statistics.median(res[(t, p)]) * 1e3:8.2f} ({min(res[(t, p)]) * 1e3:5.2f})" for p in pre))
print("minor page faults of the timed call (median)")
for t in TIMED:
    print(t[:15].ljust(16) + "".join(f"{statistics.median(flt[(t, p)]):16.0f}" for p in pre))
