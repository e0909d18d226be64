"""The ``small`` suite: per-call overhead, a 2x2 matrix product, with bare ctypes calls
of the same product in C as baselines."""

from __future__ import annotations

import numpy as np

from ..contenders import Bound, Contender, bare_c_library
from .common import (
    Case, Context, make_rng, missing, peer_jax, peer_numba, peer_numpy_einsum, peer_numpy_matmul,
    peer_opt_einsum, peer_torch_mm, tensorlang_contenders,
)


def _ctypes_mm2() -> list[Contender]:
    clib = bare_c_library()
    if clib.lib is None:
        return [missing("ctypes (bare call)", "baseline", clib.note)]

    def bare(inp):
        A, B = inp["A"], inp["B"]
        out = np.empty((2, 2))
        fn, pa, pb, pc = clib.lib.mm2, A.ctypes.data, B.ctypes.data, out.ctypes.data
        keep = (A, B, out)  # the raw pointers are only valid while these arrays live

        def call():
            fn(pa, pb, pc)
            return keep

        return Bound(call, lambda: out)

    def with_pointers(inp):
        A, B = inp["A"], inp["B"]
        out = np.empty((2, 2))
        fn = clib.lib.mm2
        return Bound(lambda: fn(A.ctypes.data, B.ctypes.data, out.ctypes.data), lambda: out)

    return [
        Contender("ctypes (bare call)", "baseline", bare,
                  f"a 2x2 product in C ({clib.note}) called through ctypes; pointers taken once, before timing"),
        Contender("ctypes (+ arr.ctypes.data)", "baseline", with_pointers,
                  "the same call, taking the three pointers from the arrays on every call"),
    ]


def _mm2_numba(k, inp):
    A, B = inp["A"], inp["B"]
    out = np.empty((2, 2))
    return Bound(lambda: k["mm2"](A, B, out), lambda: out)


def cases(ctx: Context) -> list[Case]:
    names = ["A", "B"]
    src = "in var A : [2 2]\nin var B : [2 2]\nout var C : [2 2]\nC = A # B . [2 3]\n"
    contenders = tensorlang_contenders(ctx, src, "C", names, (2, 2), True, "")
    contenders += _ctypes_mm2()
    contenders += [
        peer_numpy_matmul(),
        peer_numpy_einsum("ij,jk->ik", names, (2, 2), False),
        peer_opt_einsum(ctx, "ij,jk->ik", names, (2, 2)),
        peer_torch_mm(ctx, (2, 2)),
        peer_jax(ctx, lambda jnp: jnp.dot, names),
        peer_numba(ctx, _mm2_numba, "hand-written, @njit"),
    ]

    def inputs():
        rng = make_rng(2)
        return {"A": rng.uniform(-1, 1, (2, 2)), "B": rng.uniform(-1, 1, (2, 2))}

    return [Case("small", "matmul_2x2", "2x2", 2, 1, 16.0, 8.0 * 12, inputs,
                 lambda inp: np.tensordot(inp["A"], inp["B"], axes=1), contenders, "numpy.einsum")]
