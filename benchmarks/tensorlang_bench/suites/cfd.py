"""The ``cfd`` suite: interpolation ``v = (A⊗B⊗C) u`` and the inverse Helmholtz operator on
E elements of size n^3 (n = 4..16), E n^3 about constant.  tensorlang's C kernel runs
twice: as compiled by default (fused multiply-adds on) and with ``fma=False``
(``tensorlang[c] no fma``: every product rounded on its own, docs/optimizer.md)."""

from __future__ import annotations

import numpy as np

from ..contenders import Bound, Contender
from .common import (
    CORPUS, Case, Context, make_rng, missing, peer_jax, peer_numba, peer_numpy_einsum, peer_opt_einsum,
    peer_torch, tensorlang_contenders,
)


INTERP_SUBS = "il,jm,kn,elmn->eijk"


# The programs and their references are the test corpus's (tests/corpus.py), so the
# kernels timed here are exactly the ones the tests check on every back end.
interpolation_source = CORPUS.interpolation_source
helmholtz_source = CORPUS.helmholtz_source
kron3 = CORPUS.kron3
helmholtz_reference = CORPUS.helmholtz_reference


def _naive_ok(E, n, quick):
    work = E * n**6
    limit = 2e7 if quick else 2e8
    return work <= limit, f"its O(E n^6) loop ({work:.1e} multiply-adds) would take seconds per call"


def cases(ctx: Context) -> list[Case]:
    ns = (4, 8, 12, 16)
    volume = 2**14 if ctx.quick else 2**20  # E n^3 about constant: 128 KiB / 8 MiB per field
    cases = []
    for n in ns:
        E = max(1, volume // n**3)
        shape = (E, n, n, n)
        small_interp = E * n**6 <= 3e5
        why = f"it materializes E n^6 = {E * n**6:.1e} values"
        naive, naive_why = _naive_ok(E, n, ctx.quick)

        def inputs_interp(n=n, shape=shape):
            rng = make_rng(n)
            return {"A": rng.uniform(-1, 1, (n, n)) / n, "B": rng.uniform(-1, 1, (n, n)) / n,
                    "C": rng.uniform(-1, 1, (n, n)) / n, "u": rng.uniform(-1, 1, shape)}

        names = ["A", "B", "C", "u"]
        contenders = tensorlang_contenders(ctx, interpolation_source(n, E), "v", names, shape, small_interp, why, fma=True)
        contenders.append(peer_numpy_einsum(INTERP_SUBS, names, shape, False) if naive else
                          missing("numpy.einsum", "peer", f"optimize=False skipped: {naive_why}"))
        contenders += [
            peer_numpy_einsum(INTERP_SUBS, names, shape, "optimal"),
            peer_opt_einsum(ctx, INTERP_SUBS, names, shape),
            peer_torch(ctx, lambda torch: (lambda *a: torch.einsum(INTERP_SUBS, *a)), names),
            peer_jax(ctx, lambda jnp: (lambda *a: jnp.einsum(INTERP_SUBS, *a, optimize="optimal")), names),
            peer_numba(ctx, _numba_interpolation),
        ]
        cases.append(Case(
            "cfd", "interpolation", f"n={n} E={E}", n, E,
            flops=6.0 * n**4 * E, bytes=8.0 * (2 * E * n**3 + 3 * n * n),
            make_inputs=inputs_interp,
            reference=lambda inp: kron3(inp["A"], inp["B"], inp["C"], inp["u"]),
            contenders=contenders, baseline="numpy.einsum(optimal)",
        ))

        def inputs_helm(n=n, shape=shape):
            rng = make_rng(100 + n)
            return {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, shape), "u": rng.uniform(-1, 1, shape)}

        hnames = ["S", "D", "u"]
        contenders = tensorlang_contenders(ctx, helmholtz_source(n, E), "v", hnames, shape, small_interp, why, fma=True)
        contenders.append(_numpy_helmholtz(shape, False) if naive else
                          missing("numpy.einsum", "peer", f"optimize=False skipped: {naive_why}"))
        contenders += [
            _numpy_helmholtz(shape, "optimal"),
            _opt_einsum_helmholtz(ctx, shape),
            peer_torch(ctx, _torch_helmholtz, hnames),
            peer_jax(ctx, _jax_helmholtz, hnames),
            peer_numba(ctx, _numba_helmholtz),
        ]
        cases.append(Case(
            "cfd", "helmholtz", f"n={n} E={E}", n, E,
            flops=(12.0 * n**4 + n**3) * E, bytes=8.0 * (3 * E * n**3 + n * n),
            make_inputs=inputs_helm, reference=helmholtz_reference,
            contenders=contenders, baseline="numpy.einsum(optimal)",
        ))
    return cases


HELM_T = "li,mj,nk,elmn->eijk"  # (Sᵀ⊗Sᵀ⊗Sᵀ) u


def _numpy_helmholtz(shape, optimize) -> Contender:
    def make(inp):
        S, D, u = inp["S"], inp["D"], inp["u"]
        t, v = np.empty(shape), np.empty(shape)

        def call():
            np.einsum(HELM_T, S, S, S, u, out=t, optimize=optimize)
            np.multiply(D, t, out=t)
            np.einsum(INTERP_SUBS, S, S, S, t, out=v, optimize=optimize)

        return Bound(call, lambda: v)

    return Contender("numpy.einsum(optimal)" if optimize else "numpy.einsum", "peer", make, "two einsums and a multiply, out= buffers")


def _opt_einsum_helmholtz(ctx, shape) -> Contender:
    oe = ctx.peers.get("opt_einsum")
    if oe is None:
        return missing("opt_einsum", "peer", ctx.peers.notes["opt_einsum"])

    def make(inp):
        S, D, u = inp["S"], inp["D"], inp["u"]
        n = S.shape[0]
        e1 = oe.contract_expression(HELM_T, (n, n), (n, n), (n, n), shape, optimize="optimal")
        e2 = oe.contract_expression(INTERP_SUBS, (n, n), (n, n), (n, n), shape, optimize="optimal")
        t, v = np.empty(shape), np.empty(shape)

        def call():
            e1(S, S, S, u, out=t)
            np.multiply(D, t, out=t)
            e2(S, S, S, t, out=v)

        return Bound(call, lambda: v)

    return Contender("opt_einsum", "peer", make, "two contract_expressions and a multiply, out= buffers")


def _torch_helmholtz(torch):
    def f(S, D, u):
        return torch.einsum(INTERP_SUBS, S, S, S, D * torch.einsum(HELM_T, S, S, S, u))

    return f


def _jax_helmholtz(jnp):
    def f(S, D, u):
        t = jnp.einsum(HELM_T, S, S, S, u, optimize="optimal")
        return jnp.einsum(INTERP_SUBS, S, S, S, D * t, optimize="optimal")

    return f


def _numba_interpolation(k, inp):
    out = np.empty(inp["u"].shape)
    A, B, C, u = inp["A"], inp["B"], inp["C"], inp["u"]
    return Bound(lambda: k["interpolation"](A, B, C, u, out), lambda: out)


def _numba_helmholtz(k, inp):
    out = np.empty(inp["u"].shape)
    S, D, u = inp["S"], inp["D"], inp["u"]
    St = np.ascontiguousarray(S.T)
    return Bound(lambda: k["helmholtz"](S, St, D, u, out), lambda: out)
