"""The same probe (p0.so: the tree's value kernel, built by run.sh) on images of several sizes in one
process, interleaved round by round: the probe phase's thread CPU time, and its ratio to 256^3's."""
import ctypes
import os
import sys

import numpy as np
lib = ctypes.CDLL(os.path.abspath(sys.argv[1]))
sizes = [int(s) for s in sys.argv[2].split(",")]
reps = int(sys.argv[3])
lib.tl_phases.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 7
n = 1_000_000
cases = {}
for size in sizes:
    rng = np.random.default_rng(4)
    data = rng.standard_normal((size, size, size))
    pts = rng.uniform(1.0, size - 2.0001, size=(n, 3))
    cases[size] = (data, pts, np.array([size] * 3, dtype=np.int64), np.eye(3, 4), np.empty(n), np.empty(n * 14 + 1000))
M = np.ascontiguousarray(np.eye(3, 4))
times = {s: [] for s in sizes}
for r in range(reps):
    for size in (sizes if r % 2 == 0 else sizes[::-1]):
        data, pts, sz, _, out, scratch = cases[size]
        t = np.zeros(3)
        lib.tl_phases(n, pts.ctypes.data, data.ctypes.data, sz.ctypes.data, M.ctypes.data, out.ctypes.data, scratch.ctypes.data, t.ctypes.data)
        times[size].append(t.copy())
base = np.array(times[sizes[0]])[:, 1]
for size in sizes:
    v = np.array(times[size])
    r = v[:, 1] / base
    print(f"{size}^3: sort/probe/unpack min ms {np.round(v.min(0) * 1e3, 1)}, probe median {np.median(v[:, 1]) * 1e3:.1f} ms, "
          f"probe / {sizes[0]}^3's paired median {np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})")
print("load", os.getloadavg())
