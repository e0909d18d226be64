"""The ``blas`` suite: the matrix product ``C = A B`` and the trace of a product ``s = tr(A B)``."""

from __future__ import annotations

import numpy as np

from ..contenders import Bound, Contender
from .common import (
    Case, Context, make_rng, missing, peer_jax, peer_numba, peer_numpy_einsum, peer_numpy_matmul,
    peer_opt_einsum, peer_torch, peer_torch_mm, tensorlang_contenders,
)


def _trace_numpy() -> Contender:
    def make(inp):
        A, B = inp["A"], inp["B"]
        cell = [None]

        def call():
            cell[0] = np.trace(A @ B)

        return Bound(call, lambda: np.asarray(cell[0]))

    return Contender("numpy", "peer", make, "np.trace(A @ B): what most users write (2 n^3 flops)")


def _matmul_numba(k, inp):
    A, B = inp["A"], inp["B"]
    out = np.empty((A.shape[0], B.shape[1]))
    return Bound(lambda: k["matmul"](A, B, out), lambda: out)


def _trace_numba(k, inp):
    A, B = inp["A"], inp["B"]
    cell = [None]

    def call():
        cell[0] = k["trace_product"](A, B)

    return Bound(call, lambda: np.asarray(cell[0]))


def cases(ctx: Context) -> list[Case]:
    sizes = (64, 256) if ctx.quick else (64, 256, 1024)
    cases = []
    for n in sizes:
        def inputs(n=n):
            rng = make_rng(n)
            return {"A": rng.uniform(-1, 1, (n, n)), "B": rng.uniform(-1, 1, (n, n))}

        why = f"it materializes A # B, {n**4:.1e} values"
        names = ["A", "B"]
        src = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var C : [{n} {n}]\nC = A # B . [2 3]\n"
        mm = tensorlang_contenders(ctx, src, "C", names, (n, n), n <= 16, why)
        naive = n <= (256 if ctx.quick else 1024)
        mm += [
            peer_numpy_matmul(),
            peer_numpy_einsum("ij,jk->ik", names, (n, n), False) if naive else missing("numpy.einsum", "peer", "too slow"),
            peer_numpy_einsum("ij,jk->ik", names, (n, n), "optimal"),
            peer_opt_einsum(ctx, "ij,jk->ik", names, (n, n)),
            peer_torch_mm(ctx, (n, n)),
            peer_jax(ctx, lambda jnp: jnp.dot, names),
            peer_numba(ctx, _matmul_numba, "hand-written i-k-j loops, @njit"),
        ]
        cases.append(Case("blas", "matmul", f"n={n}", n, 1, 2.0 * n**3, 8.0 * 3 * n * n, inputs,
                          lambda inp: np.tensordot(inp["A"], inp["B"], axes=1), mm, "numpy"))
        src = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var s : []\ns = ((A # B) . [2 3]) . [1 2]\n"
        tr = tensorlang_contenders(ctx, src, "s", names, (), n <= 16, why)
        tr += [
            _trace_numpy(),
            peer_numpy_einsum("ij,ji->", names, (), False),
            peer_numpy_einsum("ij,ji->", names, (), "optimal"),
            peer_opt_einsum(ctx, "ij,ji->", names, ()),
            peer_torch(ctx, lambda torch: (lambda A, B: torch.einsum("ij,ji->", A, B)), names),
            peer_jax(ctx, lambda jnp: (lambda A, B: jnp.einsum("ij,ji->", A, B)), names),
            peer_numba(ctx, _trace_numba, "hand-written loops, @njit"),
        ]
        cases.append(Case("blas", "trace_product", f"n={n}", n, 1, 2.0 * n * n, 8.0 * 2 * n * n, inputs,
                          lambda inp: np.asarray((inp["A"].astype(np.longdouble) * inp["B"].T).sum(), dtype=np.float64),
                          tr, "numpy", error_scale=lambda inp: float(np.abs(inp["A"] * inp["B"].T).sum())))
    return cases
