# ruff: noqa: E402 -- imports after the thread setting
"""The spectral-element Laplacian (examples/users/ax_operator.tl) at the sizes where the
GEMM-aware budget changes its schedule on a 1 MiB L2 (n = 19-22, E = 2^20 // n^3), old rule
(half the L2) against new, as measure.py: alternating calls, best thread CPU time and wall
clock of ROUNDS, one thread, under ``taskset -c 1``."""
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np
import tensorlang as tl
from tensorlang.schedule import plan

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = open(os.path.join(HERE, "..", "..", "..", "..", "examples", "users", "ax_operator.tl")).read()
ROUNDS = int(os.environ.get("ROUNDS", "41"))
real = plan.gemm_splits
rows = []
for n in (18, 19, 20, 22):
    E = 2**20 // n**3
    rng = np.random.default_rng(n)
    inputs = {"D": rng.uniform(-1, 1, (n, n)) / n, "u": rng.uniform(-1, 1, (E, n, n, n)),
              "G": rng.uniform(-1, 1, (E, 6, n, n, n))}
    calls, outs, fused = {}, {}, {}
    for rule in ("old", "new"):
        plan.gemm_splits = real if rule == "new" else (lambda *a: (lambda stmt: True))
        try:
            k = tl.compile(SRC, backend="c", threads=1, params={"n": n, "E": E})
            fused[rule] = sum(1 for s in k.schedule.steps if getattr(s, "fusion", None) is not None)
            out = {"w": np.empty((E, n, n, n))}
            k(out=out, **inputs)
        finally:
            plan.gemm_splits = real
        calls[rule], outs[rule] = (lambda k=k, out=out, inputs=inputs: k(out=out, **inputs)), out["w"]
    wall = {r: float("inf") for r in calls}
    cpu = dict(wall)
    for i in range(ROUNDS):
        for r in (list(calls) if i % 2 == 0 else list(calls)[::-1]):
            t, c = time.perf_counter(), time.thread_time()
            calls[r]()
            cpu[r], wall[r] = min(cpu[r], time.thread_time() - c), min(wall[r], time.perf_counter() - t)
    row = {"n": n, "E": E, "fused": fused, "cpu_ms": {r: round(v * 1e3, 3) for r, v in cpu.items()},
           "ms": {r: round(v * 1e3, 3) for r, v in wall.items()}, "max_diff": float(np.max(np.abs(outs["old"] - outs["new"]))),
           "load": os.getloadavg()[0]}
    rows.append(row)
    print(json.dumps(row), f"old/new cpu {cpu['old'] / cpu['new']:.2f} wall {wall['old'] / wall['new']:.2f}", flush=True)
with open(os.path.join(HERE, os.environ.get("OUT", "ax.json")), "w") as f:
    json.dump(rows, f, indent=1)
