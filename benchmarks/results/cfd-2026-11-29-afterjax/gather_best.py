"""Is the fields suite's probe bound reachable by a gather?  The bound counts every image
line some point's support touches as read once at the memory's bandwidth.  Timed here,
in turns, thread CPU time, best of ROUNDS: the suite's 64-tap gather (fields.gather: 16
rows of 4 samples a point read and summed, no weights) on 256^3 with 10^6 random points
in the probe's block order (16^3 cells, 512 points ahead prefetched), in full raster
order of the cells (x, then y, then z: 4 image planes, 2 MiB, are the working set, so
each line comes from memory about once), and the image read once from end to end (the
bound's own traffic: the image's 134 MB).  Run pinned (taskset).

    PYTHONPATH=src:benchmarks python gather_best.py [ROUNDS]
"""
from __future__ import annotations

import sys
import time

import numpy as np

from tensorlang_bench.suites import fields

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
size, n = 256, 1_000_000
rng = np.random.default_rng(4)
data = rng.standard_normal((size, size, size))
points = rng.uniform(1.0, size - 2.0001, size=(n, 3))
cell = np.floor(points).astype(np.int64)
raster = np.ascontiguousarray(points[np.lexsort((cell[:, 2], cell[:, 1], cell[:, 0]))])
blocked = np.ascontiguousarray(points[fields.block_order(points, size)])
calls = {
    "random order": fields.gather(data, points, 0)[0],
    "block order, 512 ahead": fields.gather(data, blocked, fields.GATHER_AHEAD)[0],
    "raster order": fields.gather(data, raster, 0)[0],
    "raster order, 512 ahead": fields.gather(data, raster, fields.GATHER_AHEAD)[0],
    "the image read once (sum)": lambda: data.sum(),
}
times = {k: [] for k in calls}
for fn in calls.values():
    fn()
for _ in range(ROUNDS):
    for k, fn in calls.items():
        t0 = time.thread_time()
        fn()
        times[k].append(time.thread_time() - t0)
lines = 8 * size**3 / 64
touched = 64 * lines * -np.expm1(-22 * n / lines)
print(f"256^3, 10^6 points, best (median) of {ROUNDS}, thread CPU ms; the lines the supports touch: "
      f"{touched / 1e6:.0f} MB")
for k, v in times.items():
    print(f"{k:28s} {min(v) * 1e3:8.1f} ({np.median(v) * 1e3:.1f})")
