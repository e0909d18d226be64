# ruff: noqa: B023, E402 -- the lambdas are timed within the iteration that makes them; imports after the thread setting
"""Issue 44 (perf44): an inout input read by the C function (no copy into out=), and the
strips' prefetch, before/after against the peers, interleaved in one run.

before: the same process's kernel with the change switched off: the inout input copied
into the target by the C function and then run in place (codegen.input_reads made to
answer None: the two passes of the old call paths), the loop rewrite ``prefetch``
skipped; after: the committed compiler.  Wall-clock medians of 15 rounds (each a batch
of calls), the contenders in turn (order reversed every other round), one thread; run
under ``taskset -c 1``.
"""

import json
import os
import sys
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numba
import torch
import jax
import jax.numpy as jnp

torch.set_num_threads(1)
jax.config.update("jax_enable_x64", True)
import tensorlang as tl
from tensorlang.targets.c import codegen
from tensorlang_bench.numba_kernels import kernels

NK = kernels(numba, False)


def bench(fns, reps, rounds=15):
    res = {k: [] for k in fns}
    for r in range(rounds):
        order = list(fns.items()) if r % 2 == 0 else list(fns.items())[::-1]
        for k, f in order:
            f()
            t = time.perf_counter()
            for _ in range(reps):
                f()
            res[k].append((time.perf_counter() - t) / reps)
    return {k: float(np.median(v)) for k, v in res.items()}


rows = []


def report(case, r, nbytes, peers):
    best = min(peers, key=lambda p: r[p])
    for k in [k for k in r if k.startswith("tl")]:
        print(f"{case:26s} {k:16s} {r[k] * 1e6:10.2f} us  vs best peer ({best} {r[best] * 1e6:.2f} us): "
              f"{r[best] / r[k]:.2f}x  {nbytes / r[k] / 1e9:.1f} GB/s")
    print(f"{case:26s} after/before {r['tl before'] / r['tl after']:.2f}x  peers: "
          + ", ".join(f"{p} {r[p] * 1e6:.2f}" for p in peers), flush=True)
    rows.append({"case": case, **r, "best_peer": best, "bytes": nbytes})


def copying(src, **options):
    """The kernel as the old call paths ran it: the input copied into the target, then in place."""
    saved = codegen.input_reads
    codegen.input_reads = lambda nests, slot: None
    try:
        k = tl.compile(src, backend="c", threads=1, **options)
    finally:
        codegen.input_reads = saved
    assert "memcpy(v" in k.target.source
    return k


for N in (31, 129):
    rng = np.random.default_rng(N)
    x = rng.uniform(0.5, 1.5, (N, N))
    vv = rng.uniform(0.5, 1.5, (N, N))
    s = np.array(1.5)
    for kind in ("scale", "multiply"):
        src = (f"in var s : []\ninout var x : [{N} {N}]\nx = s * x\n" if kind == "scale"
               else f"in var v : [{N} {N}]\ninout var x : [{N} {N}]\nx = x * v\n")
        kb, ka = copying(src, pad="auto"), tl.compile(src, backend="c", threads=1, pad="auto")
        assert "_in[" in ka.target.source
        args = {"s": s} if kind == "scale" else {"v": vv}
        other = s if kind == "scale" else vv
        want = x * other
        ob, oa, xi, nout, tout = (np.empty_like(x) for _ in range(5))
        for k, o in ((kb, ob), (ka, oa)):
            assert np.array_equal(k(out={"x": o}, x=x, **args)["x"], want)
        xi[...] = x
        tx, tother, tres = torch.from_numpy(x), torch.from_numpy(np.asarray(other)), torch.from_numpy(tout)
        jf = jax.jit(lambda a, b: a * b)
        jx, jo = jax.device_put(x), jax.device_put(np.asarray(other))
        xnb, ones = x.copy().reshape(-1), np.ones(N * N)  # numba's kernels run in place (x *= s): values kept
        fns = {
            "numpy": lambda: np.multiply(x, other, out=nout),
            "torch": lambda: torch.mul(tx, tother, out=tres),
            "jax": lambda: jf(jx, jo).block_until_ready(),
            "numba": (lambda: NK["scale"](xnb, 1.0)) if kind == "scale" else (lambda: NK["multiply"](xnb, ones)),
            # the bench's call: out= another array than the input
            "tl before": lambda: kb(out={"x": ob}, x=x, **args),
            "tl after": lambda: ka(out={"x": oa}, x=x, **args),
            "tl in place": lambda: ka(out={"x": xi}, x=xi, **args),
        }
        report(f"padding {kind} [{N} {N}]", bench(fns, 2000 if N == 129 else 20000),
               (16.0 if kind == "scale" else 24.0) * N * N, ["numpy", "torch", "jax", "numba"])

for n in (256, 1024, 2048):
    rng = np.random.default_rng(n)
    A = rng.uniform(-1, 1, (n, n))
    B = rng.uniform(-1, 1, (n, n))
    src = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var s : []\ns = ((A # B) . [2 3]) . [1 2]\n"
    kb = tl.compile(src, backend="c", threads=1, skip_passes=("prefetch",))
    ka = tl.compile(src, backend="c", threads=1)
    print(f"trace_product n={n}: prefetch in the after kernel: {'__builtin_prefetch' in ka.target.source}")
    ref = float((A.astype(np.longdouble) * B.T).sum())
    for k in (ka, kb):
        assert abs(float(k(A=A, B=B)["s"]) - ref) < 1e-9 * float(np.abs(A * B.T).sum())
    tA, tB = torch.from_numpy(A), torch.from_numpy(B)
    jA, jB = jax.device_put(A), jax.device_put(B)
    jf = jax.jit(lambda A, B: jnp.einsum("ij,ji->", A, B))
    fns = {
        "numpy.einsum": lambda: np.einsum("ij,ji->", A, B),
        "torch": lambda: torch.einsum("ij,ji->", tA, tB),
        "jax": lambda: jf(jA, jB).block_until_ready(),
        "numba": lambda: NK["trace_product"](A, B),
        "tl before": lambda: kb(A=A, B=B),
        "tl after": lambda: ka(A=A, B=B),
    }
    report(f"trace_product n={n}", bench(fns, max(3, int(2e6 / n / n))), 16.0 * n * n,
           ["numpy.einsum", "torch", "jax", "numba"])
print("load average", os.getloadavg())
json.dump({"load": os.getloadavg(), "rows": rows}, open(sys.argv[1] if len(sys.argv) > 1 else "measure.json", "w"), indent=1)
