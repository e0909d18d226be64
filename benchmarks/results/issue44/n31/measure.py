"""Helmholtz (and interpolation) at n = 23..32: the unpadded kernel (the default), pad="auto"
and pad=8 (every buffer padded, plain arrays copied in and out by the call), thread CPU time,
interleaved call by call in one process, the order alternating every round.

    PYTHONPATH=src:benchmarks taskset -c 1 python measure.py helmholtz 23-32 ROUNDS [pads] > out.jsonl
"""
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

import tensorlang as tl
from tensorlang_bench.contenders import c_arrays
from tensorlang_bench.suites.common import CORPUS

kind = sys.argv[1]
lo, hi = (int(x) for x in sys.argv[2].split("-"))
rounds = int(sys.argv[3])
pads = [None if p == "off" else (p if p == "auto" else int(p)) for p in (sys.argv[4] if len(sys.argv) > 4 else "off,auto,8").split(",")]
with threadpool_limits(1):
    for n in range(lo, hi + 1):
        E = max(1, 2**20 // n**3)
        rng = np.random.default_rng(n)
        u = rng.uniform(-1, 1, (E, n, n, n))
        if kind == "helmholtz":
            src = CORPUS.helmholtz_source(n, E)
            inp = {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, (E, n, n, n)), "u": u}
        else:
            src = CORPUS.interpolation_source(n, E)
            inp = {m: rng.uniform(-1, 1, (n, n)) / n for m in "ABC"} | {"u": u}
        ks = {str(p): tl.compile(src, backend="c", threads=1, pad=p) for p in pads}
        args = c_arrays(inp)
        outs = {p: np.empty((E, n, n, n)) for p in ks}
        for p in ks:  # warm-up
            ks[p](out={"v": outs[p]}, **args)
        t: dict = {p: [] for p in ks}
        order = list(ks)
        for r in range(rounds):
            for p in (order if r % 2 else order[::-1]):
                a = time.thread_time()
                ks[p](out={"v": outs[p]}, **args)
                t[p].append(time.thread_time() - a)
        ref = outs[str(pads[0])]
        for p in ks:
            assert np.allclose(outs[p], ref, rtol=1e-12, atol=1e-14), p
        unit = n**4 * E
        rec = {"kind": kind, "n": n, "E": E, "load": os.getloadavg()[0],
               "best_ms": {p: min(v) * 1e3 for p, v in t.items()},
               "median_ms": {p: float(np.median(v)) * 1e3 for p, v in t.items()},
               "ns_per_n4E": {p: min(v) * 1e9 / unit for p, v in t.items()},
               "code_same": {p: ks[p].code("c") == ks[str(pads[0])].code("c") for p in ks},
               "paired": {p: [float(np.median(np.array(t[str(pads[0])]) / np.array(t[p]))),
                              float(np.min(np.array(t[str(pads[0])]) / np.array(t[p]))),
                              float(np.max(np.array(t[str(pads[0])]) / np.array(t[p])))] for p in ks}}
        print(json.dumps(rec), flush=True)
