# ruff: noqa: E731, E702 -- a measurement script
"""The other bench kernels the rows rewrite takes: before (rows off) / after, interleaved, CPU time."""

import time
import numpy as np
from tensorlang.loops import jam
from tensorlang_bench.contenders import Peers
from tensorlang_bench.suites import padding
from tensorlang_bench.suites.common import Context

orig = jam._rows
hit = [False]


def spy(loop):
    r = orig(loop)
    hit[0] |= r is not None
    return r


ctx = Context(Peers(disabled=("torch", "jax", "numba", "opt_einsum")), backends=("c",))
want = {
    ("interpolation", "n=31 E=35"),
    ("helmholtz", "n=25 E=67"),
    ("helmholtz", "n=31 E=35"),
    ("matvec_mul", "[13 13]"),
    ("matvec_mul", "[31 31]"),
    ("matvec_mul", "[129 129]"),
}
for case in padding.cases(ctx):
    if (case.kernel, case.label) not in want:
        continue
    inputs = case.make_inputs()
    for c in case.contenders:
        if c.family != "tensorlang" or "interp" in c.name:
            continue
        hit[0] = False
        jam._rows = spy
        after = c.make(inputs)
        if not hit[0]:
            continue
        jam._rows = lambda loop: None
        before = c.make(inputs)
        jam._rows = orig
        ref = case.reference(inputs)
        for b in (before, after):
            b.reset()
            b.call()
            assert np.allclose(b.result(), ref, rtol=1e-10, atol=1e-12)
        t0 = time.process_time()
        after.call()
        one = time.process_time() - t0
        reps = max(1, int(0.02 / max(one, 1e-7)))
        res = {"before": [], "after": []}
        for r in range(11):
            for name, b in (("before", before), ("after", after)) if r % 2 else (("after", after), ("before", before)):
                t = time.process_time()
                for _ in range(reps):
                    b.call()
                res[name].append((time.process_time() - t) / reps)
        mb, ma = np.median(res["before"]), np.median(res["after"])
        print(
            f"{case.kernel} {case.label} {c.name}: before {mb * 1e6:.2f} us after {ma * 1e6:.2f} us  after/before speedup {mb / ma:.2f}x"
        )
