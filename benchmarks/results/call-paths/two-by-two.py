"""The 2x2 `out=` call against numba's, a bare ctypes call and numpy, interleaved in one
process (each round starting at another contender), thread CPU time: the ``small`` suite's
call ``k(out=targets, **args)``, the same call with the keywords written out, the plain call
``k(A=a, B=b)``, the configured caller called directly, numba's ``@njit`` 2x2 product, the
bench's bare ctypes call (pointers taken once) and numpy's ``matmul(out=)``.  One JSON line:
medians (ns per call) of ROUNDS batches of CALLS calls and the median of each round's ratio
to numba's.  Before/after: run it alternately on two trees (``PYTHONPATH=TREE/src``;
docs/performance.md, "The 2×2 call below numba's").
Run: taskset -c 1 python benchmarks/results/call-paths/two-by-two.py LABEL [ROUNDS]"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

import tensorlang as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tensorlang_bench.contenders import bare_c_library  # noqa: E402

CALLS = 2000


def contenders() -> dict:
    rng = np.random.default_rng(0)
    a, b, out = rng.random((2, 2)), rng.random((2, 2)), np.empty((2, 2))
    k = tl.compile("in var A : [2 2]\nin var B : [2 2]\nout var C : [2 2]\nC = A # B . [2 3]\n", backend="c")
    targets, args = {"C": out}, {"A": a, "B": b}
    k(out=targets, **args)  # armed
    caller = k._c_call

    @numba.njit
    def mm2(A, B, O):
        for i in range(2):
            for j in range(2):
                O[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j]

    fn, pointers = bare_c_library().lib.mm2, (a.ctypes.data, b.ctypes.data, out.ctypes.data)
    return {
        "tl_out_kwargs": lambda: k(out=targets, **args), "tl_out_kw": lambda: k(out=targets, A=a, B=b),
        "tl_plain": lambda: k(A=a, B=b), "caller_direct": lambda: caller(args, targets),
        "numba": lambda: mm2(a, b, out), "ctypes_bare": lambda: fn(*pointers),
        "numpy_matmul": lambda: np.matmul(a, b, out=out),
    }


def main(label: str, rounds: int = 41) -> dict:
    found = contenders()
    for call in found.values():
        for _ in range(200):
            call()
    names, times = list(found), {name: [] for name in found}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            call = found[name]
            start = time.thread_time_ns()
            for _ in range(CALLS):
                call()
            times[name].append((time.thread_time_ns() - start) / CALLS)
    row = {"label": label, "load": round(os.getloadavg()[0], 1)}
    row.update({name: round(statistics.median(t), 1) for name, t in times.items()})
    row.update({f"{name}/numba": round(statistics.median(x / y for x, y in zip(t, times["numba"])), 3)
                for name, t in times.items() if name != "numba"})
    print(json.dumps(row), flush=True)
    return row


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "run", int(sys.argv[2]) if len(sys.argv) > 2 else 41)
