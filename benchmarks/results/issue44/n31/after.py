"""The rule of this change against the one before, in one process: each kernel compiled with
schedule.fusion.FUSION_PAST_L2 = 1 (the rule before: no group past the whole L2) and = 4 (now),
under the machine's caches or TENSORLANG_CACHE_SIZES (which moves only the schedule's budget),
thread CPU time, interleaved call by call, the order alternating every round.

    PYTHONPATH=src:benchmarks taskset -c 1 python after.py ROUNDS kind:n[:l2] ...   (kind: helmholtz, interpolation, ax)
"""
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

import tensorlang as tl
from tensorlang import machine
from tensorlang.schedule import fusion
from tensorlang_bench.contenders import c_arrays
from tensorlang_bench.suites.common import CORPUS

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../")
rounds = int(sys.argv[1])


def program(kind, n, E, rng):
    u = rng.uniform(-1, 1, (E, n, n, n))
    if kind == "helmholtz":
        return CORPUS.helmholtz_source(n, E), {"S": rng.uniform(-1, 1, (n, n)) / n,
                                                "D": rng.uniform(0.5, 1.5, (E, n, n, n)), "u": u}, "v", None
    if kind == "interpolation":
        return CORPUS.interpolation_source(n, E), {m: rng.uniform(-1, 1, (n, n)) / n for m in "ABC"} | {"u": u}, "v", None
    return (os.path.join(ROOT, "examples/users/ax_operator.tl"),
            {"D": rng.uniform(-1, 1, (n, n)) / n, "u": u, "G": rng.uniform(0.5, 1.5, (E, 6, n, n, n))}, "w", {"n": n, "E": E})


with threadpool_limits(1):
    for arg in sys.argv[2:]:
        kind, n, *l2 = arg.split(":")
        n = int(n)
        E = max(1, 2**20 // n**3)
        src, inp, out, params = program(kind, n, E, np.random.default_rng(n))
        if l2:
            os.environ["TENSORLANG_CACHE_SIZES"] = f"l1=32K,l2={l2[0]}"
        machine.cache_sizes.cache_clear()
        ks, ws = {}, {}
        for k in (1, 4):
            fusion.FUSION_PAST_L2 = k
            ks[k] = tl.compile(src, backend="c", threads=1, params=params)
            ws[k] = [f.working_set for f in dict.fromkeys(s.fusion for s in ks[k].schedule.steps if getattr(s, "fusion", None))]
        os.environ.pop("TENSORLANG_CACHE_SIZES", None)
        machine.cache_sizes.cache_clear()
        args = c_arrays(inp)
        outs = {k: np.empty(inp["u"].shape) for k in ks}
        for k in ks:
            ks[k](out={out: outs[k]}, **args)
        t: dict = {k: [] for k in ks}
        for r in range(rounds):
            for k in ((1, 4) if r % 2 else (4, 1)):
                a = time.thread_time()
                ks[k](out={out: outs[k]}, **args)
                t[k].append(time.thread_time() - a)
        assert np.allclose(outs[1], outs[4], rtol=1e-10, atol=1e-12)
        q = np.array(t[1]) / np.array(t[4])
        print(json.dumps({"case": arg, "E": E, "load": os.getloadavg()[0], "working_sets": ws,
                          "best_ms": {k: min(v) * 1e3 for k, v in t.items()},
                          "before_over_after": [float(np.median(q)), float(q.min()), float(q.max())]}), flush=True)
