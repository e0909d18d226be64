"""Per-call cost of a compiled kernel's one call path (``kernel.Runner.call``): with its C
caller (targets/c/callext.py) and without it (every call on the general path, as where
the extension cannot be built: no Python.h), interleaved in one process, each round
starting at the other.  Medians of ROUNDS batches of CALLS calls (docs/performance.md,
"Call paths").
Run: taskset -c 1 python benchmarks/results/call-paths/run.py"""

import statistics
import time

import numpy as np

import tensorlang as tl

MM = "in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var C : [{n} {n}]\nC = A # B . [[2 3]]\n"
CHAIN = "in var A : [8 8]\nin var B : [8 8]\nin var C : [8 8]\nout var D : [8 8]\nD = A # B # C . [[2 3] [4 5]]\n"
SCALE = "in var s : []\nin var x : [1000]\nout var y : [1000]\ny = s * x\n"
RNG = np.random.default_rng(0)
#: name: (program, inputs, out= targets or None)
CASES = {
    "2x2 matmul": (MM.format(n=2), {"A": RNG.random((2, 2)), "B": RNG.random((2, 2))}, None),
    "2x2 matmul out=": (MM.format(n=2), {"A": RNG.random((2, 2)), "B": RNG.random((2, 2))}, {"C": np.empty((2, 2))}),
    "8x8 chain": (CHAIN, {k: RNG.random((8, 8)) for k in "ABC"}, None),
    "32x32 matmul": (MM.format(n=32), {"A": RNG.random((32, 32)), "B": RNG.random((32, 32))}, None),
    "s * x[1000], s=2.0": (SCALE, {"s": 2.0, "x": RNG.random(1000)}, None),
    "s * x[1000], 0-d s": (SCALE, {"s": np.array(2.0), "x": RNG.random(1000)}, None),
}
ROUNDS, CALLS = 21, 1000


def per_call(kernel, arrays: dict, out) -> float:
    start = time.perf_counter()
    for _ in range(CALLS):
        kernel(**arrays, out=out)
    return (time.perf_counter() - start) / CALLS


def main() -> None:
    print(f"{'kernel':20} {'C caller':>10} {'general':>10} {'ratio':>7}   (median us per call)")
    for name, (source, arrays, out) in CASES.items():
        kernel = tl.compile(source, backend="c")
        kernel(**arrays, out=out)  # checks the store's size and arms the runner
        caller = kernel.runner.c_call
        found: dict[bool, list[float]] = {True: [], False: []}
        for r in range(ROUNDS):
            for with_caller in ((True, False) if r % 2 else (False, True)):
                kernel.runner.c_call = kernel._c_call = caller if with_caller else None
                found[with_caller].append(per_call(kernel, arrays, out))
        kernel.runner.c_call = kernel._c_call = caller
        fast, general = statistics.median(found[True]), statistics.median(found[False])
        print(f"{name:20} {fast * 1e6:10.2f} {general * 1e6:10.2f} {general / fast:6.1f}x", flush=True)


if __name__ == "__main__":
    main()
