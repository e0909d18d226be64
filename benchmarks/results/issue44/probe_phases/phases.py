"""Time a probe library's three phases (tl_sort, tl_probe_points, tl_unpack: thread CPU time)
on 10^6 uniform random points in a SIZE^3 image, libraries interleaved round by round.

    SIZE=256 [SC=0.02] [PRE=block|zyx|morton] python phases.py p0.so,q0.so ROUNDS

SC scales the world-to-index map (0.02: every point in a 6^3-cell region, the rows hot);
PITCH=py,px probes the same samples laid out with rows of px and planes of py rows;
PRE sorts the points in Python first (they are then coherent and probed in the given order).
A library's name ends in its derivative order (p0.so, a345_1.so)."""
import functools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from probe_bench import library, phases, rounds, scratch  # noqa: E402

libs = sys.argv[1].split(",")
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
rng = np.random.default_rng(4)
size = int(os.environ.get("SIZE", "256"))
data = rng.standard_normal((size, size, size))
pts = rng.uniform(1.0, size - 2.0001, size=(1_000_000, 3))
n = len(pts)
PRE = os.environ.get("PRE", "")
if PRE:
    c = np.floor(pts).astype(np.int64)
    blk = (c[:, 0] >> 4) * 4096 + (c[:, 1] >> 4) * 64 + (c[:, 2] >> 4)
    if PRE == "block":
        order = np.argsort(blk, kind="stable")
    elif PRE == "zyx":
        order = np.lexsort((c[:, 2], c[:, 1], c[:, 0], blk))
    else:  # morton
        code = np.zeros(n, dtype=np.int64)
        for b in range(8):
            for a in range(3):
                code |= ((c[:, a] >> b) & 1) << (3 * b + (2 - a))
        order = np.argsort(code, kind="stable")
    pts = np.ascontiguousarray(pts[order])
sizes = np.array([size] * 3, dtype=np.int64)
PITCH = os.environ.get("PITCH")  # "py,px": the same samples in an array of size x py x px (other strides)
if PITCH:
    py, px = map(int, PITCH.split(","))
    wide = np.zeros((size, py, px))
    wide[:, :size, :size] = data
    data, sizes = wide, np.array([size, py, px], dtype=np.int64)
SC = float(os.environ.get("SC", "1"))
M = np.zeros((3, 4))
M[0, 0] = M[1, 1] = M[2, 2] = SC
M[:, 3] = 0.0 if SC == 1 else 1.5
loaded = []
for name in libs:
    lib, order = library(name)
    loaded.append((name, lib, np.empty(n * 3 ** order), scratch(n)))
res = rounds({name: functools.partial(phases, lib, pts, data, sizes, M, out, work) for name, lib, out, work in loaded}, reps)
outs = {name: out for name, _, out, _ in loaded} if reps else {}
for name, v in res.items():
    v = np.array(v)
    print(name, "min ms sort/probe/unpack:", np.round(v.min(0) * 1e3, 2), "median:", np.round(np.median(v, 0) * 1e3, 2))
names = list(outs)
for a in names[1:]:
    if outs[a].shape == outs[names[0]].shape:
        print(a, "vs", names[0], "max abs diff", np.max(np.abs(outs[a] - outs[names[0]])))
print("load", os.getloadavg())
base = np.array(res[names[0]])[:, 1]
for name in names[1:]:
    r = base / np.array(res[name])[:, 1]
    print(f"{names[0]} / {name} probe-phase paired ratio median {np.median(r):.3f} range {r.min():.2f}-{r.max():.2f}")
