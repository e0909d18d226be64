"""The ``structure`` suite (paper 003): results whose structure tensorlang infers without
annotations, computed on their unique set and reconstructed.

* ``covariance``: the covariance matrix of linear regression, ``C = XᵀX`` over m rows and
  n features (symmetric: n(n+1)/2 unique entries);
* ``moment3``: the third moment ``M3[i,j,k] = Σ_r F[r,i]·F[r,j]·F[r,k]`` (003's
  self outer product of degree 3: i ≤ j ≤ k, a sixth of the cube);
* ``polyreg2`` / ``polyreg3``: 003 §3's polynomial regression, the features of a row f
  ``x = f ⊕ vec(f⊗f)`` (⊕ ``vec(f⊗f⊗f)`` at degree 3) and their covariance Σ_r x xᵀ;
  peers: batched BLAS on the expanded features (``X.T @ X``, the strongest dense peer),
  the per-row dense computation (Σ_r outer(x_r, x_r)), opt_einsum;
* 003 Table 1's tensor kernels with annotated inputs: ``thp_fixed_j`` (Hadamard product,
  B zero outside the slice j = J), ``ttm_diagonal_plane`` (tensor times matrix, B zero
  outside i = j), ``mttkrp_fixed_i`` (B zero outside the slice i = I).  The peers
  compute densely, as they must without the structure.

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
    found += _polynomial_regression(ctx)
    n3 = (16, 32) if ctx.quick else (32, 64, 96)
    for n in n3:
        found += _table1(ctx, n)
    return found


def _structured(rng, shape, keep):
    values = rng.uniform(-1, 1, shape)
    return np.where(keep(*np.indices(shape)), values, 0.0)


def _table1(ctx: Context, n: int) -> list[Case]:
    """THP, TTM and MTTKRP of 003 Table 1 at n (cubes n³, matrices n×n)."""
    cases = []
    J = n // 2

    def thp_inputs(n=n):
        rng = make_rng(3 * n)
        return {"B": _structured(rng, (n, n, n), lambda i, j, k: j == J), "C": rng.uniform(-1, 1, (n, n, n))}

    src = (f"in var B : [{n} {n} {n}] where i2 = {J + 1}\nin var C : [{n} {n} {n}]\nout var A : [{n} {n} {n}]\n"
           "A[i,j,k] = B[i,j,k] * C[i,j,k]\n")
    contenders = tensorlang_contenders(ctx, src, "A", ["B", "C"], (n, n, n), n <= 16, "too slow")
    contenders += [_hadamard_numpy(), peer_numpy_einsum("ijk,ijk->ijk", ["B", "C"], (n, n, n), False)]
    cases.append(Case("structure", "thp_fixed_j", f"n={n}", n, 1, 1.0 * n ** 3, 8.0 * 3 * n ** 3, thp_inputs,
                      lambda inp: inp["B"] * inp["C"], contenders, "numpy"))

    def ttm_inputs(n=n):
        rng = make_rng(5 * n)
        return {"B": _structured(rng, (n, n, n), lambda i, j, l: i == j), "C": rng.uniform(-1, 1, (n, n))}

    src = (f"in var B : [{n} {n} {n}] where i1 = i2\nin var C : [{n} {n}]\nout var A : [{n} {n} {n}]\n"
           "A[i,j,k] = sum(l) B[i,j,l] * C[k,l]\n")
    contenders = tensorlang_contenders(ctx, src, "A", ["B", "C"], (n, n, n), n <= 16, "too slow")
    contenders += [peer_numpy_einsum("ijl,kl->ijk", ["B", "C"], (n, n, n), "optimal"),
                   peer_opt_einsum(ctx, "ijl,kl->ijk", ["B", "C"], (n, n, n))]
    cases.append(Case("structure", "ttm_diagonal_plane", f"n={n}", n, 1, 2.0 * n ** 4, 8.0 * (2 * n ** 3 + n * n),
                      ttm_inputs, lambda inp: np.einsum("ijl,kl->ijk", inp["B"], inp["C"], optimize=True), contenders,
                      "numpy.einsum(optimal)"))

    def mttkrp_inputs(n=n):
        rng = make_rng(7 * n)
        return {"B": _structured(rng, (n, n, n), lambda i, k, l: i == J), "C": rng.uniform(-1, 1, (n, n)),
                "D": rng.uniform(-1, 1, (n, n))}

    src = (f"in var B : [{n} {n} {n}] where i1 = {J + 1}\nin var C : [{n} {n}]\nin var D : [{n} {n}]\n"
           f"out var A : [{n} {n}]\nA[i,j] = sum(k,l) B[i,k,l] * C[k,j] * D[l,j]\n")
    contenders = tensorlang_contenders(ctx, src, "A", ["B", "C", "D"], (n, n), n <= 16, "too slow")
    contenders += [peer_numpy_einsum("ikl,kj,lj->ij", ["B", "C", "D"], (n, n), "optimal"),
                   peer_opt_einsum(ctx, "ikl,kj,lj->ij", ["B", "C", "D"], (n, n))]
    cases.append(Case("structure", "mttkrp_fixed_i", f"n={n}", n, 1, 3.0 * n ** 4, 8.0 * (n ** 3 + 3 * n * n),
                      mttkrp_inputs, lambda inp: np.einsum("ikl,kj,lj->ij", inp["B"], inp["C"], inp["D"], optimize=True),
                      contenders, "numpy.einsum(optimal)"))
    return cases


def _hadamard_numpy() -> Contender:
    def make(inp):
        B, C = inp["B"], inp["C"]
        out = np.empty(B.shape)
        return Bound(lambda: np.multiply(B, C, out=out), lambda: out)

    return Contender("numpy", "peer", make, "B * C, out= buffer")


def _features(F: np.ndarray, degree: int) -> np.ndarray:
    """003 §3's features of every row: f ⊕ vec(f⊗f) (⊕ vec(f⊗f⊗f))."""
    m = F.shape[0]
    parts = [F, np.einsum("ri,rj->rij", F, F).reshape(m, -1)]
    if degree == 3:
        parts.append(np.einsum("ri,rj,rk->rijk", F, F, F).reshape(m, -1))
    return np.concatenate(parts, axis=1)


def _polyreg_blas(degree: int) -> Contender:
    def make(inp):
        F = inp["F"]
        held: list[np.ndarray] = []

        def run():
            X = _features(F, degree)
            held[:] = [X.T @ X]

        return Bound(run, lambda: held[0])

    return Contender("numpy", "peer", make, "features expanded, then X.T @ X (batched BLAS)")


def _polyreg_per_row(degree: int) -> Contender:
    def make(inp):
        F = inp["F"]

        def run():
            X = _features(F, degree)
            out = np.zeros((X.shape[1], X.shape[1]))
            for x in X:
                out += np.outer(x, x)
            held[:] = [out]

        held: list[np.ndarray] = []
        return Bound(run, lambda: held[0])

    return Contender("numpy-per-row", "peer", make, "the per-row dense computation: Σ_r outer(x_r, x_r)")


def _polynomial_regression(ctx: Context) -> list[Case]:
    found = []
    sizes = {2: ((256, 8),) if ctx.quick else ((256, 8), (1024, 16)), 3: ((256, 4),) if ctx.quick else ((256, 4), (1024, 6))}
    for degree, shapes in sizes.items():
        for m, n in shapes:
            k = n + n * n + (n ** 3 if degree == 3 else 0)

            def inputs(m=m, n=n, degree=degree):
                return {"F": make_rng(m * n + degree).uniform(-1, 1, (m, n))}

            src = (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\n"
                   + (f"var H : [{m} {n} {n} {n}]\n" if degree == 3 else "")
                   + f"var X : [{m} {k}]\nout var C : [{k} {k}]\nG[r,i,j] = F[r,i] * F[r,j]\n"
                   + ("H[r,i,j,l] = G[r,i,j] * F[r,l]\nX = concat(F, vec(G), vec(vec(H)))\n" if degree == 3
                      else "X = concat(F, vec(G))\n")
                   + "C[p,q] = sum(r) X[r,p] * X[r,q]\n")
            contenders = tensorlang_contenders(ctx, src, "C", ["F"], (k, k), m * k <= 4096, "too slow")
            contenders += [_polyreg_blas(degree), _polyreg_per_row(degree)]
            found.append(Case("structure", f"polyreg{degree}", f"m={m} n={n}", k, 1, 2.0 * m * k * k,
                              8.0 * (m * n + k * k), inputs,
                              lambda inp, degree=degree: (lambda X: X.T @ X)(_features(inp["F"], degree)),
                              contenders, "numpy"))
    return found
