"""JAX's CFD Helmholtz call alone: where its CPU time goes (the calling thread or XLA's
own threads) and how it spreads.  Run pinned (taskset -c N), XLA_FLAGS as the caller sets.

    PYTHONPATH=src:benchmarks python jaxtime.py CALLS [n]
"""
from __future__ import annotations

import os
import resource
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
from tensorlang_bench.contenders import Peers  # noqa: E402
from tensorlang_bench.suites import cfd  # noqa: E402
from tensorlang_bench.suites.common import Context  # noqa: E402

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
N = int(sys.argv[2]) if len(sys.argv) > 2 else 16
ctx = Context(Peers(1), 1, False)  # Peers(1) adds the bench's XLA flag unless XLA_FLAGS has it
if os.environ.get("NO_FLAG"):
    os.environ["XLA_FLAGS"] = ""
    import jax  # noqa: F401  (imported before Peers can set the flag)
case = next(c for c in cfd.cases(ctx) if c.kernel == "helmholtz" and c.size == N)
inputs = case.make_inputs()
jb = next(c for c in case.contenders if c.name == "jax").make(inputs)
for _ in range(3):
    jb.call()
proc, thr, wall, flt, sys_ = [], [], [], [], []
for _ in range(CALLS):
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    w0, p0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
    jb.call()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    flt.append(ru1.ru_minflt - ru0.ru_minflt)
    sys_.append(ru1.ru_stime - ru0.ru_stime)
    wall.append(time.perf_counter() - w0)
    proc.append(time.process_time() - p0)
    thr.append(time.thread_time() - t0)
med = lambda x: statistics.median(x) * 1e3  # noqa: E731
print(f"XLA_FLAGS={os.environ.get('XLA_FLAGS')!r} threads={len(os.listdir('/proc/self/task'))} "
      f"load {os.getloadavg()[0]:.1f}: process CPU {med(proc):.2f} (min {min(proc) * 1e3:.2f}) ms, "
      f"calling thread {med(thr):.2f} ms, wall {med(wall):.2f} ms, system {med(sys_):.2f} ms, "
      f"minor page faults {statistics.median(flt):.0f} a call")
