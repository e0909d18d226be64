"""Per-call cost of the call paths of a compiled kernel (docs/internals/performance-history.md,
"Call paths"): the C caller, the generated Python fast path (unpadded kernels only: the
padded one is deleted) and the general path, interleaved in one process.
Run: python benchmarks/results/call-paths/run.py"""

import time

import numpy as np

import tensorlang as tl

CHAIN = "in var A : [8 8]\nin var B : [8 8]\nin var C : [8 8]\nout var D : [8 8]\nD = A # B # C . [[2 3] [4 5]]\n"
CASES = {
    "2x2 matmul": ("in var A : [2 2]\nin var B : [2 2]\nout var C : [2 2]\nC = A # B . [[2 3]]\n",
                   {"A": (2, 2), "B": (2, 2)}, None),
    "scale 1000": ("in var x : [1000]\nout var y : [1000]\ny = 2 * x\n", {"x": (1000,)}, None),
    "8x8 chain": (CHAIN, {"A": (8, 8), "B": (8, 8), "C": (8, 8)}, None),
    "pad=4 5x5": (CHAIN.replace("8", "5"), {"A": (5, 5), "B": (5, 5), "C": (5, 5)}, 4),
}


def best_seconds(kernel, arrays: dict, calls: int = 2000, batches: int = 7) -> float:
    best = float("inf")
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            kernel(**arrays)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    for name, (source, shapes, pad) in CASES.items():
        arrays = {k: rng.random(s) for k, s in shapes.items()}
        kernel = tl.compile(source, backend="c", pad=pad)
        kernel(**arrays)
        caller, fast = kernel._c_call, kernel._fast
        found: dict[str, list[float]] = {}
        for _ in range(3):  # the paths interleaved
            kernel._c_call, kernel._fast = caller, fast
            found.setdefault("C caller", []).append(best_seconds(kernel, arrays))
            kernel._c_call = None
            if fast is not None:  # a padded kernel has none: it would time the general path again
                found.setdefault("generated Python", []).append(best_seconds(kernel, arrays))
            kernel._fast = None
            found.setdefault("general path", []).append(best_seconds(kernel, arrays))
        kernel._c_call, kernel._fast = caller, fast
        print(f"{name:12} " + "  ".join(f"{path}: " + (f"{min(found[path]) * 1e6:6.2f} us" if path in found else "  none  ")
                                        for path in ("C caller", "generated Python", "general path")))


if __name__ == "__main__":
    main()
