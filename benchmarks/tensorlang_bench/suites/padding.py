"""The ``padding`` suite (paper 000 §4): odd extents with and without padded buffers.

Each case runs one kernel on the C back end three ways:

* ``tensorlang[c]``: no padding (the default; the schedule may use BLAS steps);
* ``tensorlang[c] pad=auto``: what a user gets from ``pad="auto"``: the fused loops'
  locals or every buffer padded to the SIMD width where that removes vector remainders
  and pays, else the unpadded kernel (schedule.padding.auto_pad; docs/c-backend.md,
  "What auto chooses");
* ``tensorlang[c] pad=W``: every buffer padded to the SIMD width W whatever it costs
  (``pad=W`` given explicitly), inputs passed as plain arrays, so each call copies them
  into padded buffers;
* ``tensorlang[c] pad=W, padded inputs``: the same kernel with inputs made by
  ``tl.padded_empty``, which it reads in place (no copy);
* ``tensorlang[c] pad=W, padded in+out``: inputs and the ``out=`` buffer made by
  ``tl.padded_empty``: the result is written into the caller's padded buffer (no copy
  either way).

Kernels: the CFD interpolation ``v = (A⊗B⊗C) u`` and the inverse Helmholtz operator on E
elements of size n^3 (n = 5, 7, 13, 16, 25, 31: rows with a remainder of an 8-lane vector,
and 16 without; 25 has a sum longer than gcc unrolls by itself, the cliff of
docs/performance.md, "Padding and register tiles"), and the in-place kernels of 002 on an [N N] matrix ``x`` (``x = s*x``, ``x = x*v``
with v : [N N], ``x = ((U # w) . [2 3]) * x`` with a row scale): N = 7, 13, 31, 129.
Results are checked against numpy references.  Every tensorlang contender writes its
result into an ``out=`` buffer (a padded kernel copies it out of its padded buffer, which
it keeps between calls); ``x`` is passed as an input and its result lands in the buffer.
"""

from __future__ import annotations

import numpy as np

from ..contenders import Bound, Contender, c_arrays
from .common import CORPUS, Case, Context, make_rng, missing, peer_numpy_einsum

INTERP_SUBS = "il,jm,kn,elmn->eijk"
#: the extents of the fused cases (the interpolation, the Helmholtz operator) on 2^20 points
FUSED_NS = (5, 7, 13, 16, 25, 31)

#: the notes under each case: no padding against pad="auto" and against pad=W three ways
PADDING_RATIOS = [("tensorlang[c]", "tensorlang[c] pad=auto", "pad=auto", None),
                  ("tensorlang[c]", "tensorlang[c] pad=W", "padding (pad=W)", None),
                  ("tensorlang[c]", "tensorlang[c] pad=W, padded inputs", "pad=W, padded inputs", None),
                  ("tensorlang[c]", "tensorlang[c] pad=W, padded in+out", "pad=W, padded in+out", None)]


def _padded_contenders(ctx: Context, source: str, names, interp_ok: bool = False, result: str = "x",
                       shape=None) -> list[Contender]:
    import tensorlang as tl

    def variant(pad, padded_inputs: bool, backend: str = "c", padded_out: bool = False):
        def make(inp):
            kernel = tl.compile(source, backend=backend, threads=ctx.threads, pad=pad)
            if padded_inputs:
                args = {}
                for n in names:
                    value = np.asarray(inp[n], dtype=np.float64)
                    if value.ndim:
                        args[n] = tl.padded_empty(value.shape, kernel.pad)
                        args[n][...] = value
                    else:
                        args[n] = value
            else:
                args = c_arrays({n: inp[n] for n in names})
            out_shape = shape if shape is not None else np.shape(inp[result])
            out = tl.padded_empty(out_shape, kernel.pad) if padded_out else np.empty(out_shape)
            targets = {result: out}  # results land in an out= buffer, as in the cfd suite
            return Bound(lambda: kernel(out=targets, **args), lambda: out)
        return make

    found = []
    for backend in ctx.backends:  # every back end unpadded (numpy and interp ignore pad)
        if backend == "interp" and not interp_ok:
            found.append(missing("tensorlang[interp]", "tensorlang", "the reference interpreter is for tiny sizes"))
        else:
            found.append(Contender(f"tensorlang[{backend}]", "tensorlang", variant(None, False, backend), "no padding"))
    if "c" not in ctx.backends:
        return found
    from tensorlang.machine import simd_elements
    from tensorlang.targets.c.build import find_compiler

    width = max(2, simd_elements(find_compiler(), 8))
    return found + [
        Contender("tensorlang[c] pad=auto", "tensorlang", variant("auto", False),
                  "pad='auto': the SIMD width where it removes remainders at no other cost, else no padding"),
        Contender("tensorlang[c] pad=W", "tensorlang", variant(width, False),
                  f"buffers padded to the SIMD width W = {width}; inputs copied into padded buffers per call"),
        Contender("tensorlang[c] pad=W, padded inputs", "tensorlang", variant(width, True),
                  "inputs from tl.padded_empty: read in place"),
        Contender("tensorlang[c] pad=W, padded in+out", "tensorlang", variant(width, True, padded_out=True),
                  "inputs and the out= buffer from tl.padded_empty: no copy in or out"),
    ]


def _interpolation_cases(ctx: Context) -> list[Case]:
    ns = (7, 13) if ctx.quick else FUSED_NS
    volume = 2**12 if ctx.quick else 2**20
    cases = []
    for n in ns:
        E = max(1, volume // n**3)
        shape = (E, n, n, n)

        def inputs(n=n, shape=shape):
            rng = make_rng(n)
            return {"A": rng.uniform(-1, 1, (n, n)) / n, "B": rng.uniform(-1, 1, (n, n)) / n,
                    "C": rng.uniform(-1, 1, (n, n)) / n, "u": rng.uniform(-1, 1, shape)}

        names = ["A", "B", "C", "u"]
        contenders = _padded_contenders(ctx, CORPUS.interpolation_source(n, E), names, result="v", shape=shape)
        contenders.append(peer_numpy_einsum(INTERP_SUBS, names, shape, "optimal"))
        cases.append(Case(
            "padding", "interpolation", f"n={n} E={E}", n, E,
            flops=6.0 * n**4 * E, bytes=8.0 * (2 * E * n**3 + 3 * n * n),
            make_inputs=inputs, reference=lambda inp: CORPUS.kron3(inp["A"], inp["B"], inp["C"], inp["u"]),
            contenders=contenders, baseline="numpy.einsum(optimal)",
            ratios=PADDING_RATIOS,
        ))
    return cases


def _helmholtz_cases(ctx: Context) -> list[Case]:
    """The inverse Helmholtz operator (two fused chains of three contractions and a
    pointwise product) at extents that leave remainders of an 8-lane vector."""
    ns = (7,) if ctx.quick else FUSED_NS
    volume = 2**12 if ctx.quick else 2**20
    cases = []
    for n in ns:
        E = max(1, volume // n**3)
        shape = (E, n, n, n)

        def inputs(n=n, shape=shape):
            rng = make_rng(n)
            return {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, shape),
                    "u": rng.uniform(-1, 1, shape)}

        names = ["S", "D", "u"]
        cases.append(Case(
            "padding", "helmholtz", f"n={n} E={E}", n, E,
            flops=(12.0 * n**4 + n**3) * E, bytes=8.0 * (3 * E * n**3 + n * n),
            make_inputs=inputs, reference=CORPUS.helmholtz_reference,
            contenders=_padded_contenders(ctx, CORPUS.helmholtz_source(n, E), names, result="v", shape=shape),
            baseline="tensorlang[c]", ratios=PADDING_RATIOS,
        ))
    return cases


def _inplace_source(kind: str, N: int) -> tuple[str, list[str]]:
    head = f"inout var x : [{N} {N}]\n"
    if kind == "scale":
        return f"in var s : []\n{head}x = s * x\n", ["s", "x"]
    if kind == "multiply":
        return f"in var v : [{N} {N}]\n{head}x = x * v\n", ["v", "x"]
    return (f"in var U : [{N} {N}]\nin var w : [{N}]\n{head}x[i,j] = (sum(k) U[i,k] * w[k]) * x[i,j]\n",
            ["U", "w", "x"])


def _inplace_cases(ctx: Context) -> list[Case]:
    sizes = (7, 31) if ctx.quick else (7, 13, 31, 129)
    cases = []
    for kind in ("scale", "multiply", "matvec_mul"):
        for N in sizes:
            source, names = _inplace_source(kind, N)

            def inputs(kind=kind, N=N):
                rng = make_rng(N)
                x = rng.uniform(0.5, 1.5, (N, N))
                if kind == "scale":
                    return {"s": np.float64(1.5), "x": x}
                if kind == "multiply":
                    return {"v": rng.uniform(0.5, 1.5, (N, N)), "x": x}
                return {"U": rng.uniform(0, 1, (N, N)), "w": rng.uniform(0, 1, N), "x": x}

            def reference(inp, kind=kind):
                if kind == "scale":
                    return inp["s"] * inp["x"]
                if kind == "multiply":
                    return inp["x"] * inp["v"]
                return (inp["U"] @ inp["w"])[:, None] * inp["x"]

            flops = {"scale": 1.0 * N * N, "multiply": 1.0 * N * N, "matvec_mul": 3.0 * N * N}[kind]
            nbytes = {"scale": 16.0, "multiply": 24.0, "matvec_mul": 24.0}[kind] * N * N
            cases.append(Case(
                "padding", kind, f"[{N} {N}]", N, 1, flops=flops, bytes=nbytes,
                make_inputs=inputs, reference=reference,
                contenders=[*_padded_contenders(ctx, source, names, N <= 13), _numpy_inplace(kind)],
                baseline="numpy",
                ratios=PADDING_RATIOS,
            ))
    return cases


def _numpy_inplace(kind: str) -> Contender:
    def make(inp):
        x = np.array(inp["x"])
        out = np.empty_like(x)
        if kind == "scale":
            s = inp["s"]
            call = lambda: np.multiply(x, s, out=out)  # noqa: E731
        elif kind == "multiply":
            v = inp["v"]
            call = lambda: np.multiply(x, v, out=out)  # noqa: E731
        else:
            U, w = inp["U"], inp["w"]
            tmp = np.empty(x.shape[0])

            def call():
                np.matmul(U, w, out=tmp)
                np.multiply(tmp[:, None], x, out=out)
        return Bound(call, lambda: out)

    return Contender("numpy", "peer", make, "ufuncs / matmul with out= into a result array")


def cases(ctx: Context) -> list[Case]:
    return _interpolation_cases(ctx) + _helmholtz_cases(ctx) + _inplace_cases(ctx)
