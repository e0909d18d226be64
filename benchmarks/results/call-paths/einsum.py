"""Per-call cost of ``tl.einsum``'s cached small products without the C caller (as where
the CPython extension cannot be built: no ``Python.h``), by the two Python paths a cache
hit may take: the runner that calls the kernel's one C function with no checks
(``einsum_api._direct_runner``: the cache key has fixed shapes, dtypes and layouts) and
the kernel's one call path (``kernel.Runner.call``, here its general path, which checks
every input), interleaved in one process (docs/performance.md, "Call paths").
Run: python benchmarks/results/call-paths/einsum.py [ROUNDS]"""

import sys
import time

import numpy as np

import tensorlang as tl
from tensorlang import einsum_api
from tensorlang.targets.c import callext
from tensorlang.targets.c.runtime import CKernel

CASES = [("ij,jk->ik", [(2, 2), (2, 2)]), ("ij,jk->ik", [(8, 8), (8, 8)]), ("ij,j->i", [(4, 4), (4,)]),
         ("i,i->", [(16,), (16,)]), ("bij,bjk->bik", [(10, 3, 3), (10, 3, 3)]),
         ("ij,jk,kl->il", [(3, 4), (4, 2), (2, 5)])]


def best_seconds(subscripts: str, ops: list, calls: int = 3000, batches: int = 5) -> float:
    best = float("inf")
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            tl.einsum(subscripts, *ops)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main(rounds: int = 9) -> None:
    ordered, direct, caller = CKernel.ordered_call, CKernel.direct_call, callext.caller
    CKernel.ordered_call = lambda self, order, threads=0: None  # no C caller
    callext.caller = lambda *args, **kwargs: None  # (the kernels' own neither)
    rng = np.random.default_rng(0)
    try:
        for subscripts, shapes in CASES:
            ops = [rng.random(s) for s in shapes]
            want = np.einsum(subscripts, *ops)
            found: dict[str, list[float]] = {"direct": [], "general": []}
            for _ in range(rounds):  # the two paths interleaved
                for path in found:
                    CKernel.direct_call = direct if path == "direct" else (lambda self: None)
                    einsum_api.clear_cache()  # the next call compiles (from the disk cache) and remembers
                    np.testing.assert_allclose(tl.einsum(subscripts, *ops), want, rtol=1e-12)
                    found[path].append(best_seconds(subscripts, ops))
            d, f = (min(found[path]) * 1e6 for path in found)
            print(f"{subscripts:14} {str(shapes):26} direct {d:6.2f} us   general {f:6.2f} us   ratio {f / d:4.2f}")
    finally:
        CKernel.ordered_call, CKernel.direct_call, callext.caller = ordered, direct, caller
        einsum_api.clear_cache()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
