# ruff: noqa: B023, E402 -- the lambdas are timed within the iteration that makes them; imports after the thread setting
"""Issue 44 rows (perf44): before/after against the peers, interleaved in one run.

before: the same process's kernel with the change switched off (loop rewrites rows/strips
skipped, GemmStep.why_not as before); after: the committed compiler.  Wall-clock medians of
15 rounds (each a batch of calls), peers and both kernels in turn, taskset -c 1, one thread.
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
import tensorlang as tl
from tensorlang.schedule import steps
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


def before(src):
    saved = steps.GemmStep.why_not
    steps.GemmStep.why_not = steps._BlasStep.why_not
    try:
        return tl.compile(src, backend="c", threads=1, skip_passes=("rows", "strips"))
    finally:
        steps.GemmStep.why_not = saved


rows = []


def report(case, r, nbytes, peers):
    best = min(peers, key=lambda p: r[p])
    for k in ("tl before", "tl after"):
        print(
            f"{case:22s} {k:10s} {r[k] * 1e6:10.2f} us  vs best peer ({best} {r[best] * 1e6:.2f} us): {r[best] / r[k]:.2f}x  {nbytes / r[k] / 1e9:.1f} GB/s"
        )
    print(
        f"{case:22s} after/before {r['tl before'] / r['tl after']:.2f}x  peers: "
        + ", ".join(f"{p} {r[p] * 1e6:.2f}" for p in peers)
    )
    rows.append({"case": case, **{k: v for k, v in r.items()}, "best_peer": best, "bytes": nbytes})


for n in (100, 300, 1000, 3000):
    rng = np.random.default_rng(n)
    U = rng.uniform(0, 1, (n, n))
    U /= U.sum(1, keepdims=True)
    v = 1 + rng.uniform(-1e-6, 1e-6, n) + 1e-6
    x0 = rng.uniform(0.5, 1.5, n)
    src = f"in var U : [{n} {n}]\nin var v : [{n}]\ninout var x : [{n}]\nx = ((U # v) . [2 3]) * x\n"
    kb, ka = before(src), tl.compile(src, backend="c", threads=1)
    xs = {k: x0.copy() for k in ("b", "a", "np", "nb", "t")}
    ref = (U @ v) * x0
    assert np.allclose(ka(U=U, v=v, x=x0)["x"], ref, rtol=1e-13) and np.allclose(
        kb(U=U, v=v, x=x0)["x"], ref, rtol=1e-13
    )
    tmp = np.empty(n)
    tU, tv, tx, ttmp = (
        torch.from_numpy(U),
        torch.from_numpy(v),
        torch.from_numpy(xs["t"]),
        torch.empty(n, dtype=torch.float64),
    )
    jf = jax.jit(lambda U, v, x: jnp.dot(U, v) * x)
    jU, jv = jax.device_put(U), jax.device_put(v)
    cell = [jax.device_put(x0)]

    def np_call():
        np.matmul(U, v, out=tmp)
        np.multiply(xs["np"], tmp, out=xs["np"])

    def t_call():
        torch.mv(tU, tv, out=ttmp)
        tx.mul_(ttmp)

    def j_call():
        cell[0] = jf(jU, jv, cell[0]).block_until_ready()

    fns = {
        "numpy": np_call,
        "torch": t_call,
        "jax": j_call,
        "numba": lambda: NK["matvec_mul"](U, v, xs["nb"]),
        "tl before": lambda: kb(out={"x": xs["b"]}, U=U, v=v, x=xs["b"]),
        "tl after": lambda: ka(out={"x": xs["a"]}, U=U, v=v, x=xs["a"]),
    }
    report(
        f"matvec_mul N={n}",
        bench(fns, max(3, int(3e6 / n / n))),
        8.0 * (n * n + 3 * n),
        ["numpy", "torch", "jax", "numba"],
    )

for n in (64, 256, 1024):
    rng = np.random.default_rng(n)
    A = rng.uniform(-1, 1, (n, n))
    B = rng.uniform(-1, 1, (n, n))
    src = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var s : []\ns = ((A # B) . [2 3]) . [1 2]\n"
    kb, ka = before(src), tl.compile(src, backend="c", threads=1)
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
    report(
        f"trace_product n={n}",
        bench(fns, max(3, int(2e6 / n / n))),
        16.0 * n * n,
        ["numpy.einsum", "torch", "jax", "numba"],
    )

for N in (31, 129):
    rng = np.random.default_rng(N)
    x = rng.uniform(0.5, 1.5, (N, N))
    vv = rng.uniform(0.5, 1.5, (N, N))
    s = np.array(1.5)
    for kind in ("scale", "multiply"):
        src = (
            f"in var s : []\ninout var x : [{N} {N}]\nx = s * x\n"
            if kind == "scale"
            else f"in var v : [{N} {N}]\ninout var x : [{N} {N}]\nx = x * v\n"
        )
        k = tl.compile(src, backend="c", threads=1, pad="auto")
        args = {"s": s} if kind == "scale" else {"v": vv}
        out, xi, nout = np.empty_like(x), x.copy(), np.empty_like(x)
        other = s if kind == "scale" else vv
        fns = {
            "numpy": lambda: np.multiply(x, other, out=nout),
            "tl before": lambda: k(
                out={"x": out}, x=x, **args
            ),  # the bench's call: out= another array (copy, then in place)
            "tl after": lambda: k(out={"x": xi}, x=xi, **args),
        }  # the in-place idiom: no copy (what a fix would reach, and more)
        report(
            f"padding {kind} [{N} {N}]",
            bench(fns, 2000 if N == 129 else 20000),
            (16.0 if kind == "scale" else 24.0) * N * N,
            ["numpy"],
        )
json.dump(rows, open(sys.argv[1] if len(sys.argv) > 1 else "measure.json", "w"), indent=1)
