"""Pairs of probe libraries (gen.py: before,after per order) timed phase by phase, interleaved round by round:
    SIZE=256 N=1000000 python pairs.py b0.so,a0.so,b1.so,a1.so ROUNDS
prints per library the median phases and per pair the paired ratios before/after of sort, probe, unpack, total."""
import functools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from probe_bench import library, phases, rounds, scratch  # noqa: E402

libs = sys.argv[1].split(",")
reps = int(sys.argv[2])
rng = np.random.default_rng(4)
size = int(os.environ.get("SIZE", "256"))
n = int(os.environ.get("N", "1000000"))
data = rng.standard_normal((size,) * 3)
pts = rng.uniform(1.0, size - 2.0001, size=(n, 3))
sizes = np.array([size] * 3, dtype=np.int64)
M = np.zeros((3, 4))
M[0, 0] = M[1, 1] = M[2, 2] = 1
loaded = []
for name in libs:
    lib, order = library(name)
    loaded.append((name, lib, np.empty(n * 3 ** order), scratch(n)))
times = rounds({name: functools.partial(phases, lib, pts, data, sizes, M, out, work) for name, lib, out, work in loaded}, reps)
res = {name: [np.append(t, t.sum()) for t in ts] for name, ts in times.items()}
for name, v in res.items():
    print(name, "median ms sort/probe/unpack/total:", np.round(np.median(np.array(v), 0)*1e3, 2))
for i in range(0, len(loaded), 2):
    a, b = loaded[i], loaded[i+1]
    same = np.array_equal(a[2], b[2], equal_nan=True) and a[2].tobytes() == b[2].tobytes()
    r = np.array(res[a[0]]) / np.array(res[b[0]])
    print(f"{a[0]}/{b[0]} paired ratio median (min-max) sort {np.median(r[:,0]):.3f} ({r[:,0].min():.2f}-{r[:,0].max():.2f}) probe {np.median(r[:,1]):.3f} ({r[:,1].min():.2f}-{r[:,1].max():.2f}) "
          f"unpack {np.median(r[:,2]):.3f} ({r[:,2].min():.2f}-{r[:,2].max():.2f}) total {np.median(r[:,3]):.3f} ({r[:,3].min():.2f}-{r[:,3].max():.2f}); bit-equal {same}")
print("load", os.getloadavg())
