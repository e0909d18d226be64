"""Issue 44, register tiles for ragged rows (docs/performance.md, "Register tiles for
ragged rows"): the CFD kernels at each n, contenders timed interleaved in one process,
one thread (run pinned: `taskset -c 1`, OMP_NUM_THREADS=1), CPU time of the calling
thread, median and best of REPS: "before" is the unpadded kernel with the ragged tiles
and the split into more than two blocks switched off (the previous session's kernel),
then unpadded, pad="auto" and pad=8 after.  Usage, from the checkout root:
PYTHONPATH=src python benchmarks/results/issue44/ragged/measure.py i,h 7,8,...,32 7 > after.jsonl"""
import json
import os
import statistics
import sys
import time

sys.path[:0] = ["tests", "benchmarks"]
import corpus  # noqa: E402
import numpy as np  # noqa: E402

import tensorlang as tl  # noqa: E402
from tensorlang.loops import microkernel as mk  # noqa: E402

ns = [int(a) for a in sys.argv[2].split(",")]
kinds = sys.argv[1].split(",")
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
contenders = sys.argv[4].split(",") if len(sys.argv) > 4 else ["before", "off", "auto", "pad8"]
new_tile_of, new_split = mk.tile_of, mk.split_rows


def old_tile_of(loop, itemsize):
    found = new_tile_of(loop, itemsize)
    return None if found is None or found.tail(itemsize) else found


def old_split(rows, extent):
    found = new_split(rows, extent)
    return found if found is not None and len(found) == 2 else None


def compile_(src, pad, old):
    if old:
        mk.tile_of, mk.split_rows = old_tile_of, old_split
    try:
        t0 = time.time()
        kern = tl.compile(src, backend="c", threads=1, pad=pad)
        return kern, time.time() - t0
    finally:
        mk.tile_of, mk.split_rows = new_tile_of, new_split


print(f"# load {os.getloadavg()}", flush=True)
for k in kinds:
    for n in ns:
        E = max(1, 2**20 // n**3)
        rng = np.random.default_rng(n)
        shape = (E, n, n, n)
        if k == "i":
            src, flops = corpus.interpolation_source(n, E), 6.0 * n**4 * E
            inp = {"A": rng.uniform(-1, 1, (n, n)) / n, "B": rng.uniform(-1, 1, (n, n)) / n,
                   "C": rng.uniform(-1, 1, (n, n)) / n, "u": rng.uniform(-1, 1, shape)}
        else:
            src, flops = corpus.helmholtz_source(n, E), (12.0 * n**4 + n**3) * E
            inp = {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, shape),
                   "u": rng.uniform(-1, 1, shape)}
        calls, builds = [], {}
        for name, pad, old in (("before", None, True), ("off", None, False), ("auto", "auto", False), ("pad8", 8, False)):
            if name not in contenders:
                continue
            kern, builds[name] = compile_(src, pad, old)
            out = np.empty(shape)
            args = {a: np.ascontiguousarray(v) for a, v in inp.items()}

            def f(kern=kern, out=out, args=args):
                return kern(out={"v": out}, **args)
            f()
            calls.append((name, f, out, kern))
        ref = calls[0][2].copy()
        for name, _f, out, _ in calls[1:]:
            assert np.allclose(out, ref, rtol=1e-10, atol=1e-12), (k, n, name)
        times = {c[0]: [] for c in calls}
        for r in range(reps):
            for name, f, _, _ in (calls if r % 2 == 0 else calls[::-1]):
                t0 = time.thread_time()
                f()
                times[name].append(time.thread_time() - t0)
        el = E * n**3
        codes = {c[0]: c[3].code("c") for c in calls}
        line = {"kind": k, "n": n, "E": E, "elements": el, "flops": flops, "load": os.getloadavg()[0],
                "same_code": codes.get("before") == codes.get("off"),
                "auto_pad": next((c[3].pad for c in calls if c[0] == "auto"), None),
                **{f"{v}_ns": statistics.median(times[v]) / el * 1e9 for v in times},
                **{f"{v}_best_ns": min(times[v]) / el * 1e9 for v in times},
                **{f"{v}_build_s": builds[v] for v in builds}}
        print(json.dumps(line), flush=True)
