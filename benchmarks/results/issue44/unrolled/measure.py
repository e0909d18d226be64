"""Issue 44, the unpadded cliff (docs/performance.md, "Padding and register tiles"): the CFD
kernels at each n, four contenders timed interleaved in one process, one thread (run
pinned: `taskset -c 1`), CPU time of the calling thread, best of REPS: the unpadded
kernel with the unrolled-sum rule switched off ("before"), unpadded, pad="auto" and
pad=8 after.  Usage, from the checkout root: PYTHONPATH=src python
benchmarks/results/issue44/unrolled/measure.py i,h 4,5,...,32 5 > after.jsonl"""
import json
import sys
import time

sys.path[:0] = ["tests", "benchmarks"]
import corpus  # noqa: E402
import numpy as np  # noqa: E402
from tensorlang_bench.machine import measure_fma_peak  # noqa: E402

import tensorlang as tl  # noqa: E402
from tensorlang.loops import microkernel as mk  # noqa: E402

ns = [int(a) for a in sys.argv[2].split(",")]
kinds = sys.argv[1].split(",")
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 15
peak, kind = measure_fma_peak(1, bursts=30)
print(f"# FMA peak 1 thread: {peak:.1f} GFLOP/s ({kind})", flush=True)
new_unrolled, new_split = mk.unrolled_sum, mk.split_rows

def compile_(src, pad, old):
    if old:
        mk.unrolled_sum, mk.split_rows = (lambda *a: False), (lambda r: None)
    try:
        return tl.compile(src, backend="c", threads=1, pad=pad)
    finally:
        mk.unrolled_sum, mk.split_rows = new_unrolled, new_split

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
        calls = []
        for name, pad, old in (("before", None, True), ("off", None, False), ("auto", "auto", False), ("pad8", 8, False)):
            kern = compile_(src, pad, old)
            out = np.empty(shape)
            args = {a: np.ascontiguousarray(v) for a, v in inp.items()}
            def f(kern=kern, out=out, args=args):
                return kern(out={"v": out}, **args)
            f()
            calls.append((name, f, out, kern))
        same_code = calls[0][3].code("c") == calls[1][3].code("c")
        ref = calls[0][2].copy()
        for name, _f, out, _ in calls[1:]:
            assert np.allclose(out, ref, rtol=1e-10, atol=1e-12), (k, n, name)
        best = {c[0]: float("inf") for c in calls}
        for r in range(reps):
            for name, f, _, _ in (calls if r % 2 == 0 else calls[::-1]):
                t0 = time.thread_time()
                f()
                t = time.thread_time() - t0
                best[name] = min(best[name], t)
        el = E * n**3
        line = {"kind": k, "n": n, "E": E, "elements": el, "flops": flops, "same_code": same_code,
                "auto_pad": calls[2][3].pad,
                **{f"{v}_ms": best[v] * 1e3 for v in best},
                **{f"{v}_peak": flops / best[v] / 1e9 / peak for v in best}}
        print(json.dumps(line), flush=True)
