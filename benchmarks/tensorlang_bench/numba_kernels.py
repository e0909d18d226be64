"""Hand-written loops for numba, the peer that stands for "I wrote it myself in loops".

Each kernel is the loop nest a careful programmer writes: the sum-factorized form for
the Kronecker products (three passes of n^4 work, not the naive n^6), unit-stride inner
loops, results written into caller-owned arrays.  Parallel versions (``prange`` over the
outermost loop: elements, rows) are compiled when the run uses more than one thread.

Compiled lazily, on first use, because importing numba and compiling take seconds.
"""

from __future__ import annotations

import numpy as np

_compiled: dict[bool, dict] = {}


def kernels(numba, parallel: bool) -> dict:
    """name -> compiled function, for one value of ``parallel`` (cached)."""
    if parallel in _compiled:
        return _compiled[parallel]
    jit = numba.njit(parallel=parallel, fastmath=False, cache=False)
    inner = numba.njit(fastmath=False, cache=False)
    prange = numba.prange

    @inner
    def apply3(A, B, C, x, y, t1, t2):
        """y = (A ⊗ B ⊗ C) x for one element: y[i,j,k] = Σ A[i,l] B[j,m] C[k,q] x[l,m,q]."""
        n = x.shape[0]
        for l in range(n):
            for m in range(n):
                for k in range(n):
                    s = 0.0
                    for q in range(n):
                        s += C[k, q] * x[l, m, q]
                    t1[l, m, k] = s
        for l in range(n):
            for j in range(n):
                for k in range(n):
                    t2[l, j, k] = 0.0
                for m in range(n):
                    b = B[j, m]
                    for k in range(n):
                        t2[l, j, k] += b * t1[l, m, k]
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    y[i, j, k] = 0.0
            for l in range(n):
                a = A[i, l]
                for j in range(n):
                    for k in range(n):
                        y[i, j, k] += a * t2[l, j, k]

    @jit
    def interpolation(A, B, C, u, v):
        E, n = u.shape[0], u.shape[1]
        for e in prange(E):
            t1 = np.empty((n, n, n))
            t2 = np.empty((n, n, n))
            apply3(A, B, C, u[e], v[e], t1, t2)

    @jit
    def helmholtz(S, St, D, u, v):
        E, n = u.shape[0], u.shape[1]
        for e in prange(E):
            t1 = np.empty((n, n, n))
            t2 = np.empty((n, n, n))
            t = np.empty((n, n, n))
            apply3(St, St, St, u[e], t, t1, t2)
            De = D[e]
            for i in range(n):
                for j in range(n):
                    for k in range(n):
                        t[i, j, k] *= De[i, j, k]
            apply3(S, S, S, t, v[e], t1, t2)

    @jit
    def scale(x, s):
        for i in prange(x.shape[0]):
            x[i] *= s

    @jit
    def multiply(x, v):
        for i in prange(x.shape[0]):
            x[i] *= v[i]

    @jit
    def lincomb(x, u, v, s1, s2, s3):
        for i in prange(x.shape[0]):
            x[i] = s1 * x[i] + s2 * u[i] + s3 * v[i]

    @jit
    def matvec_mul(U, v, x):
        for i in prange(x.shape[0]):
            s = 0.0
            for j in range(v.shape[0]):
                s += U[i, j] * v[j]
            x[i] *= s

    @jit
    def matmul(A, B, C):
        n, m = A.shape[0], B.shape[1]
        for i in prange(n):
            for j in range(m):
                C[i, j] = 0.0
            for k in range(A.shape[1]):
                a = A[i, k]
                for j in range(m):
                    C[i, j] += a * B[k, j]

    @jit
    def trace_product(A, B):
        s = 0.0
        for i in prange(A.shape[0]):
            for j in range(A.shape[1]):
                s += A[i, j] * B[j, i]
        return s

    @inner
    def mm2(A, B, C):
        C[0, 0] = A[0, 0] * B[0, 0] + A[0, 1] * B[1, 0]
        C[0, 1] = A[0, 0] * B[0, 1] + A[0, 1] * B[1, 1]
        C[1, 0] = A[1, 0] * B[0, 0] + A[1, 1] * B[1, 0]
        C[1, 1] = A[1, 0] * B[0, 1] + A[1, 1] * B[1, 1]

    _compiled[parallel] = dict(
        interpolation=interpolation,
        helmholtz=helmholtz,
        scale=scale,
        multiply=multiply,
        lincomb=lincomb,
        matvec_mul=matvec_mul,
        matmul=matmul,
        trace_product=trace_product,
        mm2=mm2,
    )
    return _compiled[parallel]
