"""The benchmark suites: kernels, sizes, flop and byte counts, references, contenders.

Counting conventions (docs/performance.md repeats them):

* flops are those of the best known algorithm, not of the naive loop nest: the Kronecker
  products ``(A⊗B⊗C) u`` are counted sum-factorized (three n^4 passes, 2 flops per
  multiply-add: 6 n^4 per element), a matrix product 2 n^3, ``tr(AB)`` 2 n^2;
* bytes are the compulsory traffic to memory: every input read once, every result
  written once (an in-place ``x`` is read and written), small matrices included;
  the write-allocate read is not counted (STREAM's convention).

Every case has a float64 reference computed independently of the contenders (numpy
``tensordot`` chains, or ``longdouble`` arithmetic for elementwise kernels), and every
contender's result is checked against it before it is timed.

Each suite function takes a :class:`Context` and returns its cases; building a case is
cheap (inputs are made only when the runner reaches it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import numba_kernels
from .contenders import (Bound, Contender, Peers, bare_c_library, c_arrays, tensorlang_backends,
                          tensorlang_contender)


@dataclass
class Context:
    peers: Peers
    threads: int = 1
    quick: bool = False
    backends: tuple[str, ...] = field(default_factory=tensorlang_backends)


@dataclass
class Case:
    suite: str
    kernel: str
    label: str
    size: int  # the x axis of the plots: n for cfd, N or n otherwise
    per: int  # time per element divides by this (E for cfd, 1 otherwise)
    flops: float
    bytes: float
    make_inputs: Callable[[], dict]
    reference: Callable[[dict], np.ndarray]
    contenders: list[Contender]
    baseline: str  # the contender the speedup plots divide by
    tolerance: float = 1e-9
    notes: list[str] = field(default_factory=list)
    # what errors are measured against (default: the reference's largest magnitude); a
    # reduction whose terms cancel needs the size of its terms, Σ|term|, instead: a correct
    # float64 sum is off by about eps Σ|term|, which can be far more than eps |sum|
    error_scale: Callable[[dict], float] | None = None


def _rng(seed: int = 0):
    return np.random.default_rng(seed)


def _missing(name: str, family: str, note: str) -> Contender:
    return Contender(name, family, None, note)


# ------------------------------------------------------------------ peers, generic
def _numpy_einsum(subs, names, out_shape, optimize) -> Contender:
    label = "numpy.einsum(optimal)" if optimize else "numpy.einsum"

    def make(inp):
        ops = [inp[n] for n in names]
        out = np.empty(out_shape)
        return Bound(lambda: np.einsum(subs, *ops, out=out, optimize=optimize), lambda: out)

    return Contender(label, "peer", make, "out= buffer; optimize='optimal' finds the path on every call" if optimize else "out= buffer")


def _opt_einsum(ctx, subs, names, out_shape) -> Contender:
    oe = ctx.peers.get("opt_einsum")
    if oe is None:
        return _missing("opt_einsum", "peer", ctx.peers.notes["opt_einsum"])

    def make(inp):
        ops = [inp[n] for n in names]
        expr = oe.contract_expression(subs, *[o.shape for o in ops], optimize="optimal")
        out = np.empty(out_shape)
        if out.ndim == 0:  # opt_einsum's out= needs an array result
            cell = [None]

            def call():
                cell[0] = expr(*ops)

            return Bound(call, lambda: np.asarray(cell[0]))
        return Bound(lambda: expr(*ops, out=out), lambda: out)

    return Contender("opt_einsum", "peer", make, "contract_expression built once; out= buffer")


def _torch(ctx, fn_of_torch, names, note="torch.from_numpy inputs (no copy)") -> Contender:
    torch = ctx.peers.get("torch")
    if torch is None:
        return _missing("torch", "peer", ctx.peers.notes["torch"])

    def make(inp):
        ops = [torch.from_numpy(np.ascontiguousarray(inp[n])) for n in names]
        fn = fn_of_torch(torch)
        cell = [None]

        def call():
            cell[0] = fn(*ops)

        return Bound(call, lambda: cell[0].numpy())

    return Contender("torch", "peer", make, note)


def _torch_mm(ctx, shape) -> Contender:
    """``torch.mm(A, B, out=C)``: torch's product takes an ``out=`` buffer, so it gets one,
    as numpy's ``matmul`` and tensorlang do (torch.einsum has none)."""
    torch = ctx.peers.get("torch")
    if torch is None:
        return _missing("torch", "peer", ctx.peers.notes["torch"])

    def make(inp):
        A, B = (torch.from_numpy(np.ascontiguousarray(inp[n])) for n in ("A", "B"))
        out = np.empty(shape)
        C = torch.from_numpy(out)
        return Bound(lambda: torch.mm(A, B, out=C), lambda: out)

    return Contender("torch", "peer", make, "torch.mm with out= (from_numpy views, no copy)")


def _jax(ctx, fn_of_jnp, names, note="jax.jit; inputs already on the device; result awaited") -> Contender:
    jax = ctx.peers.get("jax")
    if jax is None:
        return _missing("jax", "peer", ctx.peers.notes["jax"])

    def make(inp):
        import jax.numpy as jnp

        f = jax.jit(fn_of_jnp(jnp))
        ops = [jax.device_put(inp[n]) for n in names]
        cell = [None]

        def call():
            cell[0] = f(*ops).block_until_ready()

        return Bound(call, lambda: np.asarray(cell[0]))

    return Contender("jax", "peer", make, note)


def _numba(ctx, bind: Callable[[dict, dict], Bound], note="hand-written loops, @njit") -> Contender:
    numba = ctx.peers.get("numba")
    if numba is None:
        return _missing("numba", "peer", ctx.peers.notes["numba"])

    def make(inp):
        return bind(numba_kernels.kernels(numba, ctx.threads > 1), inp)

    return Contender("numba", "peer", make, note + (" (prange)" if ctx.threads > 1 else ""))


def _tensorlang(ctx, source: str, outname: str, names, out_shape, interp_ok: bool, interp_why: str) -> list[Contender]:
    """One contender per tensorlang back end; results land in an ``out=`` buffer."""

    def bind(kernel, inp):
        out = np.empty(out_shape)
        args = c_arrays({n: inp[n] for n in names})
        targets = {outname: out}  # built once, as a caller in a loop would
        return Bound(lambda: kernel(out=targets, **args), lambda: out)

    result = []
    for backend in ctx.backends:
        if backend == "interp" and not interp_ok:
            result.append(_missing("tensorlang[interp]", "tensorlang", f"reference interpreter skipped: {interp_why}"))
        else:
            result.append(tensorlang_contender(source, backend, bind, "out= buffer", ctx.threads))
    return result


def _tensorlang_inplace(ctx, source: str, names, interp_ok: bool, interp_why: str) -> list[Contender]:
    """In-place kernels: ``x`` is both the input and the ``out=`` target (SPEC section 7)."""

    def bind(kernel, inp):
        st = _State(inp)
        args = c_arrays({n: st[n] for n in names})
        assert args["x"] is st["x"]  # the in-place idiom: x's own input is its out= target
        targets = {"x": st["x"]}
        return Bound(lambda: kernel(out=targets, **args), lambda: st["x"], st.reset)

    result = []
    for backend in ctx.backends:
        if backend == "interp" and not interp_ok:
            result.append(_missing("tensorlang[interp]", "tensorlang", f"reference interpreter skipped: {interp_why}"))
        else:
            result.append(tensorlang_contender(source, backend, bind, "x passed as input and in out= (in place)",
                                               ctx.threads))
    return result


class _State(dict):
    """A contender's own copy of the in-place operand ``x``; ``reset`` restores it."""

    def __init__(self, inputs: dict):
        super().__init__(inputs)
        self._x0 = inputs["x"]
        self["x"] = inputs["x"].copy()

    def reset(self):
        np.copyto(self["x"], self._x0)


# ------------------------------------------------------------------ cfd
INTERP_SUBS = "il,jm,kn,elmn->eijk"


def _decl_cfd(n, E):
    return f"[{E} {n} {n} {n}]"


def interpolation_source(n: int, E: int) -> str:
    return (
        f"// v = (A ⊗ B ⊗ C) u on each of {E} elements, written naively in the model language\n"
        f"// (one O(E n^6) statement; the optimizer makes it three O(E n^4) matrix products)\n"
        f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nin var C : [{n} {n}]\n"
        f"in var u : {_decl_cfd(n, E)}\nout var v : {_decl_cfd(n, E)}\n"
        "v = u # A # B # C . [[2 6] [3 8] [4 10]]\n"
    )


def helmholtz_source(n: int, E: int) -> str:
    return (
        f"// inverse Helmholtz on each of {E} elements: t = (Sᵀ⊗Sᵀ⊗Sᵀ) u, r = D ⊙ t, v = (S⊗S⊗S) r\n"
        f"in var S : [{n} {n}]\nin var D : {_decl_cfd(n, E)}\nin var u : {_decl_cfd(n, E)}\n"
        f"out var v : {_decl_cfd(n, E)}\nvar t : {_decl_cfd(n, E)}\nvar r : {_decl_cfd(n, E)}\n"
        "t = u # S # S # S . [[2 5] [3 7] [4 9]]\n"
        "r = D * t\n"
        "v = r # S # S # S . [[2 6] [3 8] [4 10]]\n"
    )


def _kron3(A, B, C, u):
    """Independent reference: three tensordot passes, v[e] = (A⊗B⊗C) u[e]."""
    t = np.tensordot(u, C, axes=([3], [1]))  # e l m k
    t = np.tensordot(t, B, axes=([2], [1]))  # e l k j
    t = np.tensordot(t, A, axes=([1], [1]))  # e k j i
    return np.ascontiguousarray(t.transpose(0, 3, 2, 1))


def _naive_ok(E, n, quick):
    work = E * n**6
    limit = 2e7 if quick else 2e8
    return work <= limit, f"its O(E n^6) loop ({work:.1e} multiply-adds) would take seconds per call"


def cfd(ctx: Context) -> list[Case]:
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
            rng = _rng(n)
            return {"A": rng.uniform(-1, 1, (n, n)) / n, "B": rng.uniform(-1, 1, (n, n)) / n,
                    "C": rng.uniform(-1, 1, (n, n)) / n, "u": rng.uniform(-1, 1, shape)}

        names = ["A", "B", "C", "u"]
        contenders = _tensorlang(ctx, interpolation_source(n, E), "v", names, shape, small_interp, why)
        contenders.append(_numpy_einsum(INTERP_SUBS, names, shape, False) if naive else
                          _missing("numpy.einsum", "peer", f"optimize=False skipped: {naive_why}"))
        contenders += [
            _numpy_einsum(INTERP_SUBS, names, shape, "optimal"),
            _opt_einsum(ctx, INTERP_SUBS, names, shape),
            _torch(ctx, lambda torch: (lambda *a: torch.einsum(INTERP_SUBS, *a)), names),
            _jax(ctx, lambda jnp: (lambda *a: jnp.einsum(INTERP_SUBS, *a, optimize="optimal")), names),
            _numba(ctx, _numba_interpolation),
        ]
        cases.append(Case(
            "cfd", "interpolation", f"n={n} E={E}", n, E,
            flops=6.0 * n**4 * E, bytes=8.0 * (2 * E * n**3 + 3 * n * n),
            make_inputs=inputs_interp,
            reference=lambda inp: _kron3(inp["A"], inp["B"], inp["C"], inp["u"]),
            contenders=contenders, baseline="numpy.einsum(optimal)",
        ))

        def inputs_helm(n=n, shape=shape):
            rng = _rng(100 + n)
            return {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, shape), "u": rng.uniform(-1, 1, shape)}

        hnames = ["S", "D", "u"]
        contenders = _tensorlang(ctx, helmholtz_source(n, E), "v", hnames, shape, small_interp, why)
        contenders.append(_numpy_helmholtz(shape, False) if naive else
                          _missing("numpy.einsum", "peer", f"optimize=False skipped: {naive_why}"))
        contenders += [
            _numpy_helmholtz(shape, "optimal"),
            _opt_einsum_helmholtz(ctx, shape),
            _torch(ctx, _torch_helmholtz, hnames),
            _jax(ctx, _jax_helmholtz, hnames),
            _numba(ctx, _numba_helmholtz),
        ]
        cases.append(Case(
            "cfd", "helmholtz", f"n={n} E={E}", n, E,
            flops=(12.0 * n**4 + n**3) * E, bytes=8.0 * (3 * E * n**3 + n * n),
            make_inputs=inputs_helm, reference=_helmholtz_reference,
            contenders=contenders, baseline="numpy.einsum(optimal)",
        ))
    return cases


HELM_T = "li,mj,nk,elmn->eijk"  # (Sᵀ⊗Sᵀ⊗Sᵀ) u


def _helmholtz_reference(inp):
    S, D, u = inp["S"], inp["D"], inp["u"]
    t = _kron3(S.T, S.T, S.T, u)
    return _kron3(S, S, S, D * t)


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
        return _missing("opt_einsum", "peer", ctx.peers.notes["opt_einsum"])

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


# ------------------------------------------------------------------ inplace (paper 002 §6)
def _inplace_source(kind: str, N: int) -> tuple[str, list[str]]:
    if kind == "scale":
        return f"in var s : []\ninout var x : [{N}]\nx = s * x\n", ["s", "x"]
    if kind == "multiply":
        return f"in var v : [{N}]\ninout var x : [{N}]\nx = x * v\n", ["v", "x"]
    if kind == "lincomb":
        return (f"in var s1 : []\nin var s2 : []\nin var s3 : []\nin var u : [{N}]\nin var v : [{N}]\n"
                f"inout var x : [{N}]\nx = s1 * x + s2 * u + s3 * v\n"), ["s1", "s2", "s3", "u", "v", "x"]
    if kind == "matvec_mul":
        return f"in var U : [{N} {N}]\nin var v : [{N}]\ninout var x : [{N}]\nx = ((U # v) . [2 3]) * x\n", ["U", "v", "x"]
    raise ValueError(kind)


def _inplace_inputs(kind: str, N: int) -> dict:
    """Values near 1 keep repeated in-place updates from overflowing or going subnormal,
    yet far enough from 1 (about 1e-6) that a contender that leaves ``x`` unchanged is off
    by a thousand times the tolerance and is caught (with ``s = 1 + 1e-9`` it would pass)."""
    rng = _rng(N)
    x = rng.uniform(0.5, 1.5, N)
    near_one = lambda: 1.0 + rng.uniform(-1e-6, 1e-6, N)  # noqa: E731
    if kind == "scale":
        return {"s": np.float64(1.0 + 1e-6), "x": x}
    if kind == "multiply":
        return {"v": near_one(), "x": x}
    if kind == "lincomb":
        return {"s1": np.float64(0.5), "s2": np.float64(0.25), "s3": np.float64(0.25),
                "u": rng.uniform(0.5, 1.5, N), "v": rng.uniform(0.5, 1.5, N), "x": x}
    U = rng.uniform(0.0, 1.0, (N, N))
    U /= U.sum(axis=1, keepdims=True)  # rows sum to 1, so U v is near 1
    return {"U": U, "v": near_one() + 1e-6, "x": x}  # U v = 1 + 1e-6 ± 1e-6: not a no-op


def _inplace_reference(kind: str):
    def ref(inp):
        L = np.longdouble
        x = inp["x"].astype(L)
        if kind == "scale":
            r = L(inp["s"]) * x
        elif kind == "multiply":
            r = x * inp["v"].astype(L)
        elif kind == "lincomb":
            r = L(inp["s1"]) * x + L(inp["s2"]) * inp["u"].astype(L) + L(inp["s3"]) * inp["v"].astype(L)
        else:
            r = (inp["U"].astype(L) * inp["v"].astype(L)).sum(axis=1) * x
        return r.astype(np.float64)

    return ref


def _numpy_inplace(kind: str) -> Contender:
    def make(inp):
        st = _State(inp)
        x = st["x"]
        tmp = np.empty_like(x)
        if kind == "scale":
            s = inp["s"]
            call = lambda: np.multiply(x, s, out=x)  # noqa: E731
        elif kind == "multiply":
            v = inp["v"]
            call = lambda: np.multiply(x, v, out=x)  # noqa: E731
        elif kind == "lincomb":
            s1, s2, s3, u, v = (inp[k] for k in ("s1", "s2", "s3", "u", "v"))

            def call():
                np.multiply(x, s1, out=x)
                np.multiply(u, s2, out=tmp)
                np.add(x, tmp, out=x)
                np.multiply(v, s3, out=tmp)
                np.add(x, tmp, out=x)
        else:
            U, v = inp["U"], inp["v"]

            def call():
                np.matmul(U, v, out=tmp)
                np.multiply(x, tmp, out=x)

        return Bound(call, lambda: x, st.reset)

    return Contender("numpy", "peer", make, "ufuncs / matmul with out= (in place, one scratch vector)")


def _torch_inplace(ctx, kind: str) -> Contender:
    torch = ctx.peers.get("torch")
    if torch is None:
        return _missing("torch", "peer", ctx.peers.notes["torch"])

    def make(inp):
        st = _State(inp)
        t = {k: (torch.from_numpy(v) if isinstance(v, np.ndarray) and v.ndim else float(v)) for k, v in st.items()}
        x = t["x"]
        if kind == "scale":
            call = lambda: x.mul_(t["s"])  # noqa: E731
        elif kind == "multiply":
            call = lambda: x.mul_(t["v"])  # noqa: E731
        elif kind == "lincomb":
            call = lambda: x.mul_(t["s1"]).add_(t["u"], alpha=t["s2"]).add_(t["v"], alpha=t["s3"])  # noqa: E731
        else:
            tmp = torch.empty(x.shape, dtype=x.dtype)  # one scratch vector, as numpy's peer has

            def call():
                torch.mv(t["U"], t["v"], out=tmp)
                x.mul_(tmp)
        return Bound(call, lambda: st["x"], st.reset)

    return Contender("torch", "peer", make, "in-place tensor methods (mul_, add_; mv with out=) on from_numpy views")


def _jax_inplace(ctx, kind: str) -> Contender:
    jax = ctx.peers.get("jax")
    if jax is None:
        return _missing("jax", "peer", ctx.peers.notes["jax"])

    def make(inp):
        import jax.numpy as jnp

        fns = {
            "scale": lambda s, x: s * x,
            "multiply": lambda v, x: x * v,
            "lincomb": lambda s1, s2, s3, u, v, x: s1 * x + s2 * u + s3 * v,
            "matvec_mul": lambda U, v, x: jnp.dot(U, v) * x,
        }
        f = jax.jit(fns[kind])
        _, names = _inplace_source(kind, 1)
        args = [jax.device_put(inp[n]) for n in names[:-1]]
        x0 = jax.device_put(inp["x"])
        cell = [x0]

        def call():
            cell[0] = f(*args, cell[0]).block_until_ready()

        def reset():
            cell[0] = x0

        return Bound(call, lambda: np.asarray(cell[0]), reset)

    return Contender("jax", "peer", make, "jax.jit, functional: each call makes a new x (arrays are immutable)")


def _numba_inplace(ctx, kind: str) -> Contender:
    def bind(k, inp):
        st = _State(inp)
        x = st["x"]
        if kind == "scale":
            s = float(inp["s"])
            call = lambda: k["scale"](x, s)  # noqa: E731
        elif kind == "multiply":
            call = lambda: k["multiply"](x, inp["v"])  # noqa: E731
        elif kind == "lincomb":
            s1, s2, s3 = (float(inp[k_]) for k_ in ("s1", "s2", "s3"))
            call = lambda: k["lincomb"](x, inp["u"], inp["v"], s1, s2, s3)  # noqa: E731
        else:
            call = lambda: k["matvec_mul"](inp["U"], inp["v"], x)  # noqa: E731
        return Bound(call, lambda: x, st.reset)

    return _numba(ctx, bind, "hand-written in-place loop, @njit")


def inplace(ctx: Context) -> list[Case]:
    vector_sizes = (10**4, 10**6) if ctx.quick else (10**4, 10**5, 10**6, 10**7)
    matrix_sizes = (100, 1000) if ctx.quick else (100, 300, 1000, 3000)
    counts = {  # flops per element, bytes per element (x read and written)
        "scale": (1, 16), "multiply": (1, 24), "lincomb": (5, 32),
    }
    cases = []
    for kind in ("scale", "multiply", "lincomb", "matvec_mul"):
        for N in (matrix_sizes if kind == "matvec_mul" else vector_sizes):
            source, names = _inplace_source(kind, N)
            if kind == "matvec_mul":
                flops, nbytes = 2.0 * N * N + N, 8.0 * (N * N + 3 * N)
                interp_ok, why = N <= 100, f"it materializes U # v, {N**3:.1e} values"
            else:
                f, b = counts[kind]
                flops, nbytes = float(f * N), float(b * N)
                interp_ok, why = N <= 10**4, "the reference interpreter is for tiny sizes"
            contenders = _tensorlang_inplace(ctx, source, names, interp_ok, why)
            contenders += [_numpy_inplace(kind), _torch_inplace(ctx, kind), _jax_inplace(ctx, kind), _numba_inplace(ctx, kind)]
            cases.append(Case(
                "inplace", kind, f"N={N:.0e}".replace("e+0", "e"), N, 1, flops, nbytes,
                make_inputs=lambda kind=kind, N=N: _inplace_inputs(kind, N),
                reference=_inplace_reference(kind), contenders=contenders, baseline="numpy",
            ))
    return cases


# ------------------------------------------------------------------ blas
def _matmul_numpy() -> Contender:
    def make(inp):
        out = np.empty((inp["A"].shape[0], inp["B"].shape[1]))
        A, B = inp["A"], inp["B"]
        return Bound(lambda: np.matmul(A, B, out=out), lambda: out)

    return Contender("numpy", "peer", make, "A @ B (BLAS), out= buffer")


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


def blas(ctx: Context) -> list[Case]:
    sizes = (64, 256) if ctx.quick else (64, 256, 1024)
    cases = []
    for n in sizes:
        def inputs(n=n):
            rng = _rng(n)
            return {"A": rng.uniform(-1, 1, (n, n)), "B": rng.uniform(-1, 1, (n, n))}

        why = f"it materializes A # B, {n**4:.1e} values"
        names = ["A", "B"]
        src = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var C : [{n} {n}]\nC = A # B . [2 3]\n"
        mm = _tensorlang(ctx, src, "C", names, (n, n), n <= 16, why)
        naive = n <= (256 if ctx.quick else 1024)
        mm += [
            _matmul_numpy(),
            _numpy_einsum("ij,jk->ik", names, (n, n), False) if naive else _missing("numpy.einsum", "peer", "too slow"),
            _numpy_einsum("ij,jk->ik", names, (n, n), "optimal"),
            _opt_einsum(ctx, "ij,jk->ik", names, (n, n)),
            _torch_mm(ctx, (n, n)),
            _jax(ctx, lambda jnp: jnp.dot, names),
            _numba(ctx, _matmul_numba, "hand-written i-k-j loops, @njit"),
        ]
        cases.append(Case("blas", "matmul", f"n={n}", n, 1, 2.0 * n**3, 8.0 * 3 * n * n, inputs,
                          lambda inp: np.tensordot(inp["A"], inp["B"], axes=1), mm, "numpy"))
        src = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var s : []\ns = ((A # B) . [2 3]) . [1 2]\n"
        tr = _tensorlang(ctx, src, "s", names, (), n <= 16, why)
        tr += [
            _trace_numpy(),
            _numpy_einsum("ij,ji->", names, (), False),
            _numpy_einsum("ij,ji->", names, (), "optimal"),
            _opt_einsum(ctx, "ij,ji->", names, ()),
            _torch(ctx, lambda torch: (lambda A, B: torch.einsum("ij,ji->", A, B)), names),
            _jax(ctx, lambda jnp: (lambda A, B: jnp.einsum("ij,ji->", A, B)), names),
            _numba(ctx, _trace_numba, "hand-written loops, @njit"),
        ]
        cases.append(Case("blas", "trace_product", f"n={n}", n, 1, 2.0 * n * n, 8.0 * 2 * n * n, inputs,
                          lambda inp: np.asarray((inp["A"].astype(np.longdouble) * inp["B"].T).sum(), dtype=np.float64),
                          tr, "numpy", error_scale=lambda inp: float(np.abs(inp["A"] * inp["B"].T).sum())))
    return cases


# ------------------------------------------------------------------ small
def _ctypes_mm2() -> list[Contender]:
    clib = bare_c_library()
    if clib.lib is None:
        return [_missing("ctypes (bare call)", "baseline", clib.note)]

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


def small(ctx: Context) -> list[Case]:
    names = ["A", "B"]
    src = "in var A : [2 2]\nin var B : [2 2]\nout var C : [2 2]\nC = A # B . [2 3]\n"
    contenders = _tensorlang(ctx, src, "C", names, (2, 2), True, "")
    contenders += _ctypes_mm2()
    contenders += [
        _matmul_numpy(),
        _numpy_einsum("ij,jk->ik", names, (2, 2), False),
        _opt_einsum(ctx, "ij,jk->ik", names, (2, 2)),
        _torch_mm(ctx, (2, 2)),
        _jax(ctx, lambda jnp: jnp.dot, names),
        _numba(ctx, _mm2_numba, "hand-written, @njit"),
    ]

    def inputs():
        rng = _rng(2)
        return {"A": rng.uniform(-1, 1, (2, 2)), "B": rng.uniform(-1, 1, (2, 2))}

    return [Case("small", "matmul_2x2", "2x2", 2, 1, 16.0, 8.0 * 12, inputs,
                 lambda inp: np.tensordot(inp["A"], inp["B"], axes=1), contenders, "numpy.einsum")]


SUITES: dict[str, Callable[[Context], list[Case]]] = {"cfd": cfd, "inplace": inplace, "blas": blas, "small": small}
