"""Issue 44's padding row: the padding suite's fused cases (the interpolation and the
inverse Helmholtz operator, n = 5, 7, 13, 16, 31 on 2^20 points) with the contenders
no padding, pad="auto", pad=W with plain arrays (copied in and out by the call) and,
for the record of auto's choice, the fused loops' locals alone padded to W ("locals=W",
what auto picks below a quarter of L2), all in ONE interleaved run: every round times one
batch of every contender of every case, in an order rotated per round, and a
contender's time is its best batch (another process sharing the core only ever slows a
batch down).  Each batch is timed twice: by the calling thread's CPU time (the time the
kernel ran, which leaves out the time slices another process took on a shared core; the
kernels run on the calling thread, threads=1) and by the wall clock.  Run pinned:

    PYTHONPATH=src:benchmarks taskset -c 1 python benchmarks/results/issue44/pad/table.py OUT.json [ROUNDS]
"""

import dataclasses
import json
import os
import sys
import time

import numpy as np

import tensorlang as tl
from tensorlang import api
from tensorlang.errors import Source
from tensorlang_bench.contenders import Bound, Peers, c_arrays
from tensorlang_bench.machine import blas_threads
from tensorlang_bench.suites import padding
from tensorlang_bench.suites.common import Context

KEEP = ("tensorlang[c]", "tensorlang[c] pad=auto", "tensorlang[c] pad=W")
BATCH_S = 4e-3


def source_of(case) -> str:
    source = padding.CORPUS.interpolation_source if case.kernel == "interpolation" else padding.CORPUS.helmholtz_source
    return source(case.size, case.per)


def locals_only(case, width: int):
    """The fused loops' locals padded to ``width``, the caller's arrays as they are."""
    n, E = case.size, case.per
    options = dataclasses.replace(api.compile_options(backend="c", threads=1), pad_locals=width)
    kernel = api.compile_source(Source(source_of(case)), options=options)

    def make(inp):
        names = ["A", "B", "C", "u"] if case.kernel == "interpolation" else ["S", "D", "u"]
        args, out = c_arrays({k: inp[k] for k in names}), np.empty((E, n, n, n))
        return Bound(lambda: kernel(out={"v": out}, **args), lambda: out)
    return make


def main(out: str, rounds: int) -> None:
    from tensorlang.machine import simd_elements
    from tensorlang.targets.c.build import find_compiler

    width = max(2, simd_elements(find_compiler(), 8))
    ctx = Context(Peers(1), threads=1, fma=False)
    bound, chosen = {}, {}
    with blas_threads(1):
        for case in padding.cases(ctx):
            if case.kernel not in ("interpolation", "helmholtz"):
                continue
            inputs = case.make_inputs()
            expected = case.reference(inputs)
            makers = {c.name: c.make for c in case.contenders if c.name in KEEP}
            makers[f"locals={width}"] = locals_only(case, width)
            for name, make in makers.items():
                b = make({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
                b.call()
                assert np.allclose(b.result(), expected, rtol=1e-9, atol=1e-9), (case.label, name)
                start = time.thread_time()
                b.call()
                one = time.thread_time() - start
                bound[case.kernel, case.label, name] = (b, max(1, int(BATCH_S / max(one, 1e-7))))
            auto = tl.compile(source_of(case), backend="c", pad="auto")
            chosen[f"{case.kernel} | {case.label}"] = {"pad": auto.pad, "locals": auto.auto_pad.locals,
                                                       "why": auto.auto_pad.why}
            print(case.kernel, case.label, "auto:", auto.pad, auto.auto_pad.locals, flush=True)
        keys = list(bound)
        cpu = {k: [] for k in keys}
        wall = {k: [] for k in keys}
        for r in range(rounds):
            shift = (r * 7) % len(keys)
            for key in keys[shift:] + keys[:shift]:
                b, count = bound[key]
                w0, c0 = time.perf_counter(), time.thread_time()
                for _ in range(count):
                    b.call()
                c1, w1 = time.thread_time(), time.perf_counter()
                cpu[key].append((c1 - c0) / count)
                wall[key].append((w1 - w0) / count)
            if r % 20 == 0:
                print("round", r, os.getloadavg(), flush=True)
    found: dict = {}
    for (kernel, label, name) in keys:
        found.setdefault(f"{kernel} | {label}", {})[name] = {
            "cpu_best_s": min(cpu[kernel, label, name]), "cpu_median_s": float(np.median(cpu[kernel, label, name])),
            "wall_best_s": min(wall[kernel, label, name]), "wall_median_s": float(np.median(wall[kernel, label, name]))}
    for key, row in found.items():
        off = row["tensorlang[c]"]["cpu_best_s"]
        print(key, " ".join(f"{n}={v['cpu_best_s'] * 1e3:.2f}ms ({off / v['cpu_best_s']:.2f})" for n, v in row.items()))
    with open(out, "w") as fh:
        json.dump({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rounds": rounds,
                   "load": os.getloadavg(), "width": width, "auto": chosen, "cases": found}, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 101)
