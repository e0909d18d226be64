"""The same 256^3 samples and points probed from arrays with other strides (planes of py rows
of px samples, the samples at the start of each), in one process, interleaved round by round:
    python pitch.py p0.so 256,256:257,264:260,260 ROUNDS"""
import ctypes
import os
import sys

import numpy as np

lib = ctypes.CDLL(os.path.abspath(sys.argv[1]))
lib.tl_phases.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 7
reps = int(sys.argv[3])
order = int(os.path.basename(sys.argv[1]).split(".")[0][-1])
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
    layouts[spec] = (wide, np.array([size, py, px], dtype=np.int64), np.empty(n * 3 ** order), np.empty(n * 14 + 1000))
del data
times: dict = {k: [] for k in layouts}
for r in range(reps):
    for k in (list(layouts) if r % 2 == 0 else list(layouts)[::-1]):
        wide, sz, out, scratch = layouts[k]
        t = np.zeros(3)
        lib.tl_phases(n, pts.ctypes.data, wide.ctypes.data, sz.ctypes.data, M.ctypes.data, out.ctypes.data,
                      scratch.ctypes.data, t.ctypes.data)
        times[k].append(t.copy())
first = list(layouts)[0]
for k in layouts:
    assert np.array_equal(layouts[k][2], layouts[first][2])
    v = np.array(times[k])
    r = np.array(times[first])[:, 1] / v[:, 1]
    print(f"rows of {k.split(',')[1]}, planes of {k.split(',')[0]} rows: sort/probe/unpack min ms {np.round(v.min(0) * 1e3, 1)}, "
          f"{first}'s probe / this one's, paired median {np.median(r):.2f} ({r.min():.2f}-{r.max():.2f})")
print("load", os.getloadavg())
