"""Per-call cost of small calls, every path a small call takes, interleaved in one process
(each round starting at another contender; docs/performance.md, "Call paths"): a 2x2 `.tl`
matrix product with an ``out=`` target (the ``small`` suite's call) and without, ``s * x``
with a Python number for ``s``, ``tl.einsum``'s cache hits of two operands, one array
twice, a scalar result, three operands and one array three times, a contract expression,
and numpy's ``matmul`` and a numba ``@njit`` 2x2 product (where numba is installed) as
peers.  One JSON line of medians (ns per call) of ROUNDS batches of CALLS calls.

Before/after: run it alternately on two trees (``PYTHONPATH=TREE/src``), with and without
``TENSORLANG_NO_CALLEXT=1``, and compare the medians and the ratios to numba.
Run: nice python benchmarks/results/call-paths/small-calls.py LABEL [ROUNDS]"""

import json
import os
import statistics
import sys
import time

import numpy as np

import tensorlang as tl

CALLS = 1000


def contenders() -> dict:
    rng = np.random.default_rng(0)
    a, b, x, y, q = rng.random((2, 2)), rng.random((2, 2)), rng.random(16), rng.random(16), rng.random((4, 4))
    chain = [rng.random(s) for s in ((3, 4), (4, 2), (2, 5))]
    out, xs = np.empty((2, 2)), rng.random(1000)
    k = tl.compile("in var A : [2 2]\nin var B : [2 2]\nout var C : [2 2]\nC = A # B . [2 3]\n", backend="c")
    s = tl.compile("in var s : []\nin var x : [1000]\nout var y : [1000]\ny = s * x\n", backend="c")
    targets, expr = {"C": out}, tl.contract_expression("ij,jk->ik", (2, 2), (2, 2))
    found = {
        "tl_2x2_out": lambda: k(out=targets, A=a, B=b), "tl_2x2": lambda: k(A=a, B=b),
        "tl_sx_num": lambda: s(s=2.0, x=xs), "einsum_2x2": lambda: tl.einsum("ij,jk->ik", a, b),
        "einsum_aa": lambda: tl.einsum("ij,kj->ik", a, a), "einsum_dot16": lambda: tl.einsum("i,i->", x, y),
        "einsum_chain3": lambda: tl.einsum("ij,jk,kl->il", *chain),
        "einsum_same3": lambda: tl.einsum("ij,jk,kl->il", q, q, q), "expr_2x2": lambda: expr(a, b),
        "numpy_matmul": lambda: np.matmul(a, b, out=out),
    }
    try:
        import numba
    except ImportError:
        return found

    @numba.njit
    def mm2(A, B, O):
        for i in range(2):
            for j in range(2):
                O[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j]
    found["numba_mm2"] = lambda: mm2(a, b, out)
    return found


def main(label: str, rounds: int = 21) -> dict:
    found = contenders()
    for call in found.values():  # compiled, cached and armed before timing
        for _ in range(3):
            call()
    times: dict[str, list[float]] = {name: [] for name in found}
    names = list(found)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            call = found[name]
            start = time.perf_counter_ns()
            for _ in range(CALLS):
                call()
            times[name].append((time.perf_counter_ns() - start) / CALLS)
    row = {"label": label, "noext": os.environ.get("TENSORLANG_NO_CALLEXT", ""), "load": os.getloadavg()[0],
           **{name: round(statistics.median(t), 1) for name, t in times.items()}}
    print(json.dumps(row))
    return row


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "run", int(sys.argv[2]) if len(sys.argv) > 2 else 21)
