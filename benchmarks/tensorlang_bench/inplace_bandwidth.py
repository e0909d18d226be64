"""002 §6.1's in-place kernels against the STREAM-style update with as many streams.

``python -m tensorlang_bench.inplace_bandwidth [N ...]`` (from ``benchmarks/``) times, in
one process and interleaved (round-robin, so a burst of load from elsewhere hits all of
them alike; in a fresh random order every round, each contender runs once untimed, then
:data:`BURST` timed calls),
on one thread:

* the matching references, STREAM-style C loops (:data:`.machine.STREAM_C`, built with
  tensorlang's compiler and flags) on the same N: ``a = s*a`` (1 read stream, one write:
  16 B per element), ``a = a*b`` (2 reads: 24 B), ``a = s1*a + s2*b + s3*c`` (3 reads: 32 B);
* tensorlang's C kernels ``x = s*x``, ``x = x*v``, ``x = s1*x + s2*u + s3*v`` called in
  place (``k(x=x, ..., out={"x": x})``), numpy ``out=`` ufuncs and numba loops beside them;

and prints each kernel's GB/s as a fraction of its matching reference's (the "update"
bandwidth for its pattern).  The bench's ``inplace`` suite uses the same matching
(``Case.streams``), measured on arrays larger than the caches; this script measures
at each N, so a kernel that fits a cache level is compared with a reference in it too.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def _references(n: int):
    """The STREAM-style C updates of :mod:`.machine` on arrays of n elements."""
    from .machine import update_kernels

    a, b, c = np.full(n, 1.0), np.ones(n), np.full(n, 0.5)
    whole = slice(0, n)
    return {f"update{reads}": ((lambda work=work: work(whole)), per)
            for reads, (work, per) in update_kernels(a, b, c).items()}


SOURCES = {
    "scale": ("in var s : []\ninout var x : [{n}]\nx = s * x\n", 1, 16),
    "multiply": ("in var v : [{n}]\ninout var x : [{n}]\nx = x * v\n", 2, 24),
    "lincomb": ("in var s1 : []\nin var s2 : []\nin var s3 : []\nin var u : [{n}]\nin var v : [{n}]\n"
                "inout var x : [{n}]\nx = s1 * x + s2 * u + s3 * v\n", 3, 32),
}


def _contenders(n: int):
    import tensorlang as tl

    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, n)
    u, v = rng.uniform(0.5, 1.5, n), 1.0 + rng.uniform(-1e-9, 1e-9, n)
    s = np.array(1.0 + 1e-12)
    found = {}
    for kind, (source, reads, nbytes) in SOURCES.items():
        k = tl.compile(source.format(n=n), backend="c", threads=1)
        args = {"scale": dict(s=s), "multiply": dict(v=v),
                "lincomb": dict(s1=np.array(1.0), s2=np.array(0.0), s3=np.array(0.0), u=u, v=v)}[kind]
        found[f"tensorlang {kind}"] = ((lambda k=k, args=args: k(x=x, out={"x": x}, **args)), nbytes, reads)
    tmp = np.empty_like(x)

    def np_lincomb():
        np.multiply(x, 1.0, out=x)
        np.multiply(u, 0.0, out=tmp)
        np.add(x, tmp, out=x)
        np.multiply(v, 0.0, out=tmp)
        np.add(x, tmp, out=x)

    found["numpy out= scale"] = ((lambda: np.multiply(x, s, out=x)), 16, 1)
    found["numpy out= multiply"] = ((lambda: np.multiply(x, v, out=x)), 24, 2)
    found["numpy out= lincomb"] = (np_lincomb, 32, 3)
    try:
        import numba

        from .numba_kernels import kernels

        nk = kernels(numba, False)
        sf = float(s)
        found["numba scale"] = ((lambda: nk["scale"](x, sf)), 16, 1)
        found["numba multiply"] = ((lambda: nk["multiply"](x, v)), 24, 2)
        found["numba lincomb"] = ((lambda: nk["lincomb"](x, u, v, 1.0, 0.0, 0.0)), 32, 3)
    except ImportError:
        pass
    return found


#: timed calls per contender and round, after one untimed call: contenders touch
#: different arrays, so without it each would start from the previous one's cache state
#: (at N = 1e6, 8 MB per array, that alone moved the ratios by up to 50%)
BURST = 3


def measure(n: int, rounds: int) -> dict[str, tuple[float, int, int]]:
    """name -> (median seconds, bytes per element, read streams)."""
    refs = _references(n)
    entries = {name: (f, b, int(name[-1])) for name, (f, b) in refs.items()}
    entries.update(_contenders(n))
    samples: dict[str, list[float]] = {name: [] for name in entries}
    for f, _, _ in entries.values():  # warm-up: pages touched, code compiled
        f()
        f()
    order = list(entries)
    shuffle = np.random.default_rng(1).permutation
    for _ in range(rounds):
        for name in (order[k] for k in shuffle(len(order))):  # a fresh order every round
            f = entries[name][0]
            f()  # untimed: its own arrays back in whatever cache level they fit
            for _ in range(BURST):
                start = time.perf_counter()
                f()
                samples[name].append(time.perf_counter() - start)
    return {name: (float(np.median(samples[name])), b, r) for name, (f, b, r) in entries.items()}


def main(argv: list[str]) -> None:
    from threadpoolctl import threadpool_limits

    sizes = [int(float(a)) for a in argv] or [10**6, 10**7]
    with threadpool_limits(1):
        for n in sizes:
            rounds = 60 if n <= 10**6 else 12
            found = measure(n, rounds)
            ref = {r: n * b / found[f"update{r}"][0] / 1e9 for r, b in ((1, 16), (2, 24), (3, 32))}
            print(f"N = {n:.0e}: update GB/s (reads 1/2/3): " + " / ".join(f"{ref[r]:.2f}" for r in (1, 2, 3)))
            for name, (t, b, r) in found.items():
                if name.startswith("update"):
                    continue
                gbs = n * b / t / 1e9
                print(f"  {name:<22} {t * 1e6:9.1f} us  {gbs:6.2f} GB/s  {gbs / ref[r]:6.1%} of update{r}")


if __name__ == "__main__":
    main(sys.argv[1:])
