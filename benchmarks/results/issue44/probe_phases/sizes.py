"""The same probe (p0.so: the tree's value kernel, built by run.sh) on images of several sizes in one
process, interleaved round by round: the probe phase's thread CPU time, and its ratio to 256^3's."""
import functools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from probe_bench import library, phases, rounds, scratch  # noqa: E402

lib, _ = library(sys.argv[1])
sizes = [int(s) for s in sys.argv[2].split(",")]
reps = int(sys.argv[3])
n = 1_000_000
cases = {}
for size in sizes:
    rng = np.random.default_rng(4)
    data = rng.standard_normal((size, size, size))
    pts = rng.uniform(1.0, size - 2.0001, size=(n, 3))
    cases[size] = (data, pts, np.array([size] * 3, dtype=np.int64), np.empty(n), scratch(n))
M = np.ascontiguousarray(np.eye(3, 4))
times = rounds({size: functools.partial(phases, lib, pts, data, sz, M, out, work)
                for size, (data, pts, sz, out, work) in cases.items()}, reps)
base = np.array(times[sizes[0]])[:, 1]
for size in sizes:
    v = np.array(times[size])
    r = v[:, 1] / base
    print(f"{size}^3: sort/probe/unpack min ms {np.round(v.min(0) * 1e3, 1)}, probe median {np.median(v[:, 1]) * 1e3:.1f} ms, "
          f"probe / {sizes[0]}^3's paired median {np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})")
print("load", os.getloadavg())
