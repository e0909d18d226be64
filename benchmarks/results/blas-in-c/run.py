"""Per-call time of a matrix product C = A B (and y = A x) against numpy, interleaved in
one process: tensorlang with BLAS called from generated C through the C caller (issue 21,
docs/c-backend.md "BLAS steps"), tensorlang with the previous path (numpy.matmul steps in
Python: the BLAS pointer withheld), numpy.matmul and numpy.dot.  One thread everywhere
(threadpoolctl for BLAS, OMP_NUM_THREADS and threads=1 for the kernels).  Each round
times every contender in turn (a batch of calls each, order rotated per round); the
table shows medians over rounds and ratios numpy.matmul / contender (above 1: faster).

    PYTHONPATH=src python benchmarks/results/blas-in-c/run.py [--quick]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import tensorlang as tl  # noqa: E402
from tensorlang.schedule import steps  # noqa: E402
from tensorlang.machine import blas  # noqa: E402

QUICK = "--quick" in sys.argv
SIZES = (2, 8, 32, 64, 128, 1024)


def matmul_source(n: int) -> str:
    return f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var C : [{n} {n}]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n"


def matvec_source(n: int) -> str:
    return f"in var A : [{n} {n}]\nin var x : [{n}]\nout var y : [{n}]\ny[i] = sum(k) A[i,k] * x[k]\n"


def compile_(source: str, c_blas: bool, force_blas: bool = False):
    saved_find, saved_work = blas.find, steps.BLAS_WORK
    if not c_blas:
        blas.find = lambda dtype: None
    if force_blas:
        steps.BLAS_WORK = 1
    try:
        return tl.compile(source, backend="c", threads=1)
    finally:
        blas.find, steps.BLAS_WORK = saved_find, saved_work


def per_call(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def describe(k) -> str:
    t = k.target
    path = "C caller" if k._c_call is not None else ("py fast call" if t.fast_call is not None else "general")
    kinds = "+".join(type(s).__name__.replace("Step", "") for s in t.steps)
    in_c = "BLAS in C" if " in C): " in t.source else ("BLAS in Python" if "numpy.matmul" in t.source else "loops")
    return f"{kinds}, {in_c}, {path}"


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    with threadpool_limits(1):
        for n in SIZES:
            a, b, x = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, n)
            contenders = {
                "numpy.matmul": lambda a=a, b=b: np.matmul(a, b),
                "numpy.dot": lambda a=a, b=b: np.dot(a, b),
            }
            notes = {}
            for label, c_blas, force in (("tensorlang", True, False), ("tensorlang, BLAS steps in Python", False, False),
                                         ("tensorlang, BLAS forced, in C", True, True)):
                k = compile_(matmul_source(n), c_blas, force)
                k(A=a, B=b)  # the first call arms the C caller
                kinds = describe(k)
                if label != "tensorlang" and ("loops" in kinds or any(kinds == v for v in notes.values())):
                    continue  # the same code as a contender already in
                k(A=a, B=b)
                np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b, rtol=1e-10, atol=1e-10 * n)
                contenders[label] = lambda k=k, a=a, b=b: k(A=a, B=b)
                notes[label] = kinds
            contenders["matvec: numpy.dot"] = lambda a=a, x=x: np.dot(a, x)
            for label, force in (("matvec: tensorlang", False), ("matvec: tensorlang, BLAS forced, in C", True)):
                mv = compile_(matvec_source(n), True, force)
                mv(A=a, x=x)
                np.testing.assert_allclose(mv(A=a, x=x)["y"], a @ x, rtol=1e-10, atol=1e-10 * n)
                if force and describe(mv) == notes["matvec: tensorlang"]:
                    continue
                contenders[label] = lambda k=mv, a=a, x=x: k(A=a, x=x)
                notes[label] = describe(mv)
            flops = 2 * n ** 3
            calls = max(1, min(20000, int(2e7 / max(flops, 1)))) if not QUICK else max(1, min(2000, int(2e6 / flops)))
            rounds = 5 if QUICK else 41
            times: dict[str, list[float]] = {name: [] for name in contenders}
            names = list(contenders)
            for r in range(rounds):
                for name in names[r % len(names):] + names[:r % len(names)]:
                    times[name].append(per_call(contenders[name], calls))
            base = statistics.median(times["numpy.matmul"])
            base_mv = statistics.median(times["matvec: numpy.dot"])
            for name in names:
                t = statistics.median(times[name])
                ref = base_mv if name.startswith("matvec") else base
                rows.append((n, name, t, ref / t, notes.get(name, "")))
    print("| n | contender | median per call | numpy / this | what runs |")
    print("| --- | --- | --- | --- | --- |")
    for n, name, t, ratio, note in rows:
        unit = f"{t * 1e6:.3g} µs" if t < 1e-3 else f"{t * 1e3:.3g} ms"
        print(f"| {n} | {name} | {unit} | {ratio:.2f} | {note} |")
    print(f"\nBLAS: {blas.find('float64')}; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
