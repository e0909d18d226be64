"""CFD kernels with their fields in L2 (E n^3 = 8192: 64 KiB a field) against the bench's
size (E n^3 = 2^20: 8 MiB a field, streamed from memory): what the generated loops reach
when memory is out of the way.  Best batch of thread CPU time; run pinned (taskset).

    PYTHONPATH=src:benchmarks python incache.py
"""
from __future__ import annotations

import time

import numpy as np

import tensorlang as tl
from tensorlang_bench.suites import cfd

PEAK = 59.0  # GFLOP/s, machine.measure_fma_peak (AVX-512), docs/performance.md


def best(fn, seconds=0.3, batches=15):
    fn()
    inner = 1
    while True:
        t0 = time.thread_time()
        for _ in range(inner):
            fn()
        if time.thread_time() - t0 > seconds / batches:
            break
        inner *= 2
    out = []
    for _ in range(batches):
        t0 = time.thread_time()
        for _ in range(inner):
            fn()
        out.append((time.thread_time() - t0) / inner)
    return min(out)


for kernel in ("interpolation", "helmholtz"):
    for n in (4, 8, 12, 16):
        row = []
        for volume in (8192, 2**20):
            E = max(1, volume // n**3)
            rng = np.random.default_rng(n)
            shape = (E, n, n, n)
            if kernel == "helmholtz":
                k = tl.compile(cfd.helmholtz_source(n, E), backend="c")
                args = {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, shape), "u": rng.uniform(-1, 1, shape)}
                flops = (12.0 * n**4 + n**3) * E
            else:
                k = tl.compile(cfd.interpolation_source(n, E), backend="c")
                args = {x: rng.uniform(-1, 1, (n, n)) / n for x in "ABC"}
                args["u"] = rng.uniform(-1, 1, shape)
                flops = 6.0 * n**4 * E
            out = {"v": np.empty(shape)}
            t = best(lambda k=k, out=out, args=args: k(out=out, **args))
            row.append(f"E={E:6d} {t * 1e3:7.3f} ms {flops / t / 1e9:5.1f} GFLOP/s ({flops / t / 1e9 / PEAK:4.0%})")
        print(f"{kernel:13s} n={n:2d}  in L2: {row[0]}   streamed: {row[1]}", flush=True)
