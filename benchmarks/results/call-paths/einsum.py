"""Per-call cost of ``tl.einsum``'s cached small products by the paths a cache hit may
take, interleaved in one process, each round starting at another path (docs/performance.md,
"Call paths"):

- ``ordered``: the kernel's C caller's ``ordered`` method (``caller.ordered(a, b)``), what
  ``einsum_api._kernel_runner`` takes where the C caller builds;
- ``runner``: the kernel's one call path, ``kernel.Runner.call`` (its C caller armed);
- ``python``: ``CKernel.ordered_in_python``, the same call in Python (each operand checked
  by ``callext.fits``, the one C function through cffi), what a hit takes where the C
  caller cannot be built (no ``Python.h``);
- ``general``: ``kernel.Runner.call`` with no C caller (the general path, as with
  ``$TENSORLANG_NO_CALLEXT=1``).

Each path is swapped into ``tl.einsum``'s hit table, so the times are whole ``tl.einsum``
calls.  Medians of ROUNDS batches of CALLS calls.
Run: nice python benchmarks/results/call-paths/einsum.py [ROUNDS]"""

import statistics
import sys
import time

import numpy as np

import tensorlang as tl
from tensorlang import einsum_api
from tensorlang import kernel as kernel_module

RESULT = einsum_api.RESULT

CASES = [("ij,jk->ik", [(2, 2), (2, 2)]), ("ij,jk->ik", [(8, 8), (8, 8)]), ("i,i->", [(16,), (16,)]),
         ("ij,jk,kl->il", [(3, 4), (4, 2), (2, 5)])]
CALLS = 1000


def paths(kernel, n: int, scalar: bool) -> dict:
    """The contenders, each a function of the operands' tuple."""
    names = tuple(f"T{k}" for k in range(n))
    armed = kernel.runner
    general = kernel_module.Runner(kernel)  # never armed: the general path

    def through(runner):
        call = runner.call

        def run(ops):
            value = call(dict(zip(names, ops)), None)[RESULT]
            return value[()] if scalar else value
        return run
    ordered = kernel.target.ordered_call(names, kernel.threads)
    found = {"ordered": (lambda ops: ordered(*ops)), "runner": through(armed)}
    python = kernel.target.ordered_in_python(names, kernel.threads)
    if python is not None:
        found["python"] = lambda ops: python(*ops)
    found["general"] = through(general)
    return found


def install(subscripts: str, ops: list, run) -> None:
    """Let ``tl.einsum(subscripts, *ops)``'s hit run ``run``."""
    einsum_api._HITS[einsum_api._hit_key((subscripts, *ops))] = lambda *ops: run(ops)


def per_call(subscripts: str, ops: list) -> float:
    start = time.perf_counter()
    for _ in range(CALLS):
        tl.einsum(subscripts, *ops)
    return (time.perf_counter() - start) / CALLS


def main(rounds: int = 21) -> None:
    rng = np.random.default_rng(0)
    print(f"{'einsum':14} {'shapes':24}" + "".join(f"{p:>9}" for p in ("ordered", "runner", "python", "general"))
          + "   (median us per call; runner/ordered, general/python)")
    for subscripts, shapes in CASES:
        ops = [rng.random(s) for s in shapes]
        want = np.einsum(subscripts, *ops)
        tl.clear_caches()
        tl.einsum(subscripts, *ops)
        (runner,) = einsum_api._CACHE.values()  # (the one entry)
        kernel = runner.kernel
        kernel(**{f"T{k}": o for k, o in enumerate(ops)})  # arms its C caller
        assert kernel.runner.c_call is not None
        found = paths(kernel, len(ops), scalar=not want.shape)
        times: dict[str, list[float]] = {p: [] for p in found}
        order = list(found)
        for r in range(rounds):
            for p in order[r % len(order):] + order[:r % len(order)]:
                install(subscripts, ops, found[p])
                np.testing.assert_allclose(tl.einsum(subscripts, *ops), want, rtol=1e-12)
                times[p].append(per_call(subscripts, ops))
        med = {p: statistics.median(t) * 1e6 for p, t in times.items()}
        cols = "".join(f"{med[p]:9.2f}" if p in med else f"{'-':>9}" for p in ("ordered", "runner", "python", "general"))
        ratio = f"{med['runner'] / med['ordered']:5.2f}  " + (f"{med['general'] / med['python']:5.2f}" if "python" in med else "-")
        print(f"{subscripts:14} {str(shapes):24}{cols}   {ratio}")
    tl.clear_caches()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
