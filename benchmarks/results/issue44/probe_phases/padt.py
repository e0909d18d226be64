"""Off against every buffer padded to 8 (pad=8, plain arrays copied by the call), thread CPU
time, interleaved round by round:  python padt.py helmholtz:31,interpolation:25 ROUNDS"""
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../"))
import tensorlang as tl  # noqa: E402
from tensorlang_bench.contenders import c_arrays  # noqa: E402
from tensorlang_bench.suites.common import CORPUS  # noqa: E402

cases = []
for arg in sys.argv[1].split(","):
    kind, n = arg.split(":")[0], int(arg.split(":")[1])
    E = max(1, 2**20 // n**3)
    rng = np.random.default_rng(n)
    u = rng.uniform(-1, 1, (E, n, n, n))
    if kind == "helmholtz":
        src = CORPUS.helmholtz_source(n, E)
        inp = {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, (E, n, n, n)), "u": u}
    else:
        src = CORPUS.interpolation_source(n, E)
        inp = {m: rng.uniform(-1, 1, (n, n)) / n for m in "ABC"} | {"u": u}
    kernels = {p: tl.compile(src, backend="c", threads=1, pad=p) for p in (None, 8)}
    cases.append((f"{kind} {n}", kernels, inp, (E, n, n, n)))
with threadpool_limits(1):
    for name, kernels, inp, shape in cases:
        args = c_arrays(inp)
        outs = {p: np.empty(shape) for p in kernels}
        t: dict = {p: [] for p in kernels}
        for r in range(int(sys.argv[2])):
            for p in (list(kernels) if r % 2 else list(kernels)[::-1]):
                a = time.thread_time()
                kernels[p](out={"v": outs[p]}, **args)
                t[p].append(time.thread_time() - a)
        assert np.allclose(outs[None], outs[8])
        ratio = np.array(t[None]) / np.array(t[8])
        print(name, {p: round(min(v) * 1e3, 2) for p, v in t.items()}, "off/pad8 median", round(float(np.median(ratio)), 3),
              "range", round(ratio.min(), 2), round(ratio.max(), 2), os.getloadavg()[0])
