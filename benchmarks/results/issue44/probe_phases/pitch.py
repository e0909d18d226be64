"""The same 256^3 samples and points probed from arrays with other strides (planes of py rows
of px samples, the samples at the start of each), in one process, interleaved round by round:
    python pitch.py p0.so 256,256:257,264:260,260 ROUNDS"""
import functools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from probe_bench import library, phases, rounds, scratch  # noqa: E402

lib, order = library(sys.argv[1])
reps = int(sys.argv[3])
n, size = 1_000_000, 256
rng = np.random.default_rng(4)
data = rng.standard_normal((size, size, size))
pts = rng.uniform(1.0, size - 2.0001, size=(n, 3))
M = np.ascontiguousarray(np.eye(3, 4))
layouts = {}
for spec in sys.argv[2].split(":"):
    py, px = map(int, spec.split(","))
    wide = np.zeros((size, py, px))
    wide[:, :size, :size] = data
    layouts[spec] = (wide, np.array([size, py, px], dtype=np.int64), np.empty(n * 3 ** order), scratch(n))
del data
times = rounds({k: functools.partial(phases, lib, pts, wide, sz, M, out, work)
                for k, (wide, sz, out, work) in layouts.items()}, reps)
first = list(layouts)[0]
for k in layouts:
    assert np.array_equal(layouts[k][2], layouts[first][2])
    v = np.array(times[k])
    r = np.array(times[first])[:, 1] / v[:, 1]
    print(f"rows of {k.split(',')[1]}, planes of {k.split(',')[0]} rows: sort/probe/unpack min ms {np.round(v.min(0) * 1e3, 1)}, "
          f"{first}'s probe / this one's, paired median {np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})")
print("load", os.getloadavg())
