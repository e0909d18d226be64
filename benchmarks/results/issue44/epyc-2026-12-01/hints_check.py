"""main with the AMD rule (default here) against TENSORLANG_HINT_MIN_SLAB=0, through tl.compile, one process."""

import os
import random
import statistics
import sys
import time
import numpy as np

sys.path.insert(0, "/work/main/tests")
import corpus
import tensorlang as tl
from tensorlang import machine

rng = np.random.default_rng(0)
for kind in ("interp", "helm"):
    for n in (4, 5, 6, 7, 8, 16):
        E = max(1, 2**20 // n**3)
        src = (
            corpus.interpolation_source if kind == "interp" else corpus.helmholtz_source
        )(n, E)
        ks = {}
        for label, val in (("rule", None), ("every slab", "0")):
            if val is None:
                os.environ.pop("TENSORLANG_HINT_MIN_SLAB", None)
            else:
                os.environ["TENSORLANG_HINT_MIN_SLAB"] = val
            machine.cache_sizes.cache_clear()
            ks[label] = tl.compile(src + "\n" * (1 + (val is not None)), threads=1)
        if kind == "interp":
            inp = dict(
                A=rng.standard_normal((n, n)),
                B=rng.standard_normal((n, n)),
                C=rng.standard_normal((n, n)),
                u=rng.standard_normal((E, n, n, n)),
            )
        else:
            inp = dict(
                S=rng.uniform(-1, 1, (n, n)) / n,
                D=rng.uniform(0.5, 1.5, (E, n, n, n)),
                u=rng.uniform(-1, 1, (E, n, n, n)),
            )
        out = {"v": np.empty((E, n, n, n))}
        res = {}
        for l, k in ks.items():
            k(**inp, out=out)
            res[l] = out["v"].copy()
        same = np.array_equal(res["rule"], res["every slab"])
        t = {l: [] for l in ks}
        for _r in range(25):
            o = list(ks)
            random.shuffle(o)
            for l in o:
                c0 = time.thread_time()
                for _ in range(3):
                    ks[l](**inp, out=out)
                t[l].append((time.thread_time() - c0) / 3)
        a, b = statistics.median(t["rule"]), statistics.median(t["every slab"])
        print(
            f"{kind} n={n} same={same} rule {a * 1e3:.3f} ms  every slab {b * 1e3:.3f} ms  every/rule {b / a:.3f}",
            flush=True,
        )
print("load", os.getloadavg())
