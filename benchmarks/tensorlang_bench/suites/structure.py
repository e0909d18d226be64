"""The ``structure`` suite (paper 003): results whose structure tensorlang infers without
annotations, computed on their unique set and reconstructed.

* ``covariance``: the covariance matrix of linear regression, ``C = XᵀX`` over m rows and
  n features (symmetric: n(n+1)/2 unique entries);
* ``moment3``: the third moment ``M3[i,j,k] = Σ_r F[r,i]·F[r,j]·F[r,k]`` (003's
  self outer product of degree 3: i ≤ j ≤ k, a sixth of the cube).

Peers: numpy (``X.T @ X``, BLAS: the strongest dense peer for the covariance), numpy
einsum with the optimal path, opt_einsum.  Flops are counted for the dense computation
(2 m n² and 3 m n³ per the per-row products), so that the rate shows the saving.
"""

from __future__ import annotations

import numpy as np

from ..contenders import Bound, Contender
from .common import Case, Context, make_rng, peer_numpy_einsum, peer_opt_einsum, tensorlang_contenders


def _gram_numpy() -> Contender:
    def make(inp):
        X = inp["X"]
        out = np.empty((X.shape[1], X.shape[1]))
        return Bound(lambda: np.matmul(X.T, X, out=out), lambda: out)

    return Contender("numpy", "peer", make, "X.T @ X (BLAS gemm), out= buffer")


def cases(ctx: Context) -> list[Case]:
    found = []
    shapes = ((256, 16), (1024, 32)) if ctx.quick else ((256, 16), (4096, 32), (16384, 64))
    for m, n in shapes:
        def inputs(m=m, n=n):
            return {"X": make_rng(m * n).uniform(-1, 1, (m, n))}

        src = f"in var X : [{m} {n}]\nout var C : [{n} {n}]\nC[j,k] = sum(i) X[i,j] * X[i,k]\n"
        contenders = tensorlang_contenders(ctx, src, "C", ["X"], (n, n), m * n <= 4096, "too slow")
        contenders += [_gram_numpy(), peer_numpy_einsum("ij,ik->jk", ["X", "X"], (n, n), "optimal"),
                       peer_opt_einsum(ctx, "ij,ik->jk", ["X", "X"], (n, n))]
        found.append(Case("structure", "covariance", f"m={m} n={n}", n, 1, 2.0 * m * n * n, 8.0 * (m * n + n * n),
                          inputs, lambda inp: inp["X"].T @ inp["X"], contenders, "numpy"))
    sizes = ((64, 8), (256, 16)) if ctx.quick else ((256, 16), (1024, 24), (4096, 32))
    for m, n in sizes:
        def inputs3(m=m, n=n):
            return {"F": make_rng(m + n).uniform(-1, 1, (m, n))}

        src = f"in var F : [{m} {n}]\nout var M3 : [{n} {n} {n}]\nM3[i,j,k] = sum(r) F[r,i] * F[r,j] * F[r,k]\n"
        contenders = tensorlang_contenders(ctx, src, "M3", ["F"], (n, n, n), m * n <= 1024, "too slow")
        contenders += [peer_numpy_einsum("ri,rj,rk->ijk", ["F"] * 3, (n, n, n), "optimal"),
                       peer_opt_einsum(ctx, "ri,rj,rk->ijk", ["F"] * 3, (n, n, n))]
        found.append(Case("structure", "moment3", f"m={m} n={n}", n, 1, 3.0 * m * n ** 3, 8.0 * (m * n + n ** 3),
                          inputs3, lambda inp: np.einsum("ri,rj,rk->ijk", inp["F"], inp["F"], inp["F"], optimize=True),
                          contenders, "numpy.einsum(optimal)"))
    return found
