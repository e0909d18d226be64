"""Why tensorlang's Helmholtz n=16 kernel runs slower right after a JAX call.

One process, pinned by the caller (taskset -c N).  Before every timed tensorlang call one
"preceder" runs (the order shuffled per round); the timed call reports wall time, the
calling thread's CPU time, and the CPU time every *other* thread of the process used
while it ran (read from /proc/self/task/*/stat), so a peer's pool still spinning after
its call shows up there and not in the thread's own time (a thread that ends during the
timed call takes its time with it: "numba on another thread" reads negative there).

    PYTHONPATH=src:benchmarks python probe.py [ROUNDS] [n] [preceder,preceder,...]
"""
from __future__ import annotations

import os
import random
import statistics
import sys
import threading
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
TICK = os.sysconf("SC_CLK_TCK")


def other_threads_cpu() -> float:
    me = str(os.getpid())  # main thread's tid == pid here
    total = 0
    for t in os.listdir("/proc/self/task"):
        if t == me:
            continue
        try:
            with open(f"/proc/self/task/{t}/schedstat") as f:  # ns of CPU, finer than stat's ticks
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total * 1e-9


ctx = Context(Peers(1), 1, False)
case = next(c for c in cfd.cases(ctx) if c.kernel == "helmholtz" and c.size == N)
inputs = case.make_inputs()
bound = {}
for c in case.contenders:
    if c.name in ("tensorlang[c]", "jax", "numba", "opt_einsum", "torch"):
        b = c.make({k: v.copy() for k, v in inputs.items()})
        for _ in range(3):
            b.call()
        bound[c.name] = b
tl_call, jax_call = bound["tensorlang[c]"].call, bound["jax"].call
junk = np.empty(8 << 20)  # 64 MiB reused


def fresh_alloc():  # what a JAX call does to the heap: a new 8 MiB result, the old one freed
    a = np.empty(inputs["u"].shape)
    a.fill(1.0)
    return a


keep = [None]


def on_thread(fn):  # the work handed to another thread while this one waits, as JAX does
    t = threading.Thread(target=fn)
    t.start()
    t.join()


def spin(seconds):  # the CPU kept busy for as long as a peer's call, touching little memory
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def alloc_like_jax():
    keep[0] = fresh_alloc()


PRE = {
    "tensorlang": tl_call,
    "jax": jax_call,
    "jax+sleep20ms": lambda: (jax_call(), time.sleep(0.02)),
    "sleep20ms": lambda: time.sleep(0.02),
    "numba": bound["numba"].call if "numba" in bound else tl_call,
    "opt_einsum": bound["opt_einsum"].call if "opt_einsum" in bound else tl_call,
    "torch": bound["torch"].call if "torch" in bound else tl_call,
    "fresh 8MiB": alloc_like_jax,
    "write 64MiB": lambda: junk.fill(1.0),
    "spin 20ms": lambda: spin(0.02),
    "numba on another thread": lambda: on_thread(bound["numba"].call),
}
if len(sys.argv) > 3:
    PRE = {k: PRE[k] for k in sys.argv[3].split(",")}
res = {k: {"wall": [], "thread": [], "others": [], "process": []} for k in PRE}
for r in range(ROUNDS):
    order = list(PRE)
    random.Random(r).shuffle(order)
    for name in order:
        PRE[name]()
        o0, p0, c0, w0 = other_threads_cpu(), time.process_time(), time.thread_time(), time.perf_counter()
        tl_call()
        w1, c1, p1, o1 = time.perf_counter(), time.thread_time(), time.process_time(), other_threads_cpu()
        res[name]["process"].append(p1 - p0)
        res[name]["wall"].append(w1 - w0)
        res[name]["thread"].append(c1 - c0)
        res[name]["others"].append(o1 - o0)
print(f"helmholtz n={N}, {ROUNDS} rounds, threads in process: {len(os.listdir('/proc/self/task'))}, "
      f"affinity {sorted(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.1f}")
print(f"{'before the timed call':22s} {'wall ms':>9s} {'thread ms':>9s} {'q1-q3 thread':>13s} {'min thr':>8s} {'process':>9s} {'others ms':>9s} {'max oth':>8s}")
for k, v in res.items():
    m = {x: statistics.median(v[x]) * 1e3 for x in v}
    q = statistics.quantiles(v["thread"], n=4)
    print(f"{k:22s} {m['wall']:9.3f} {m['thread']:9.3f} {q[0]*1e3:6.3f}-{q[2]*1e3:6.3f} {min(v['thread']) * 1e3:8.3f} "
          f"{m['process']:9.3f} {m['others']:9.3f} {max(v['others']) * 1e3:8.3f}")
