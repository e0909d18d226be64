"""The ``inplace`` suite (paper 002 §6): ``x = s*x``, ``x = x*v``, ``x = s1*x + s2*u + s3*v``,
``x = (U v) * x``, each contender updating ``x`` in place.

002 §6.1 compares each kernel written in place with the same kernel writing a temporary
and copying it back (its Fig. 10a/12a): ``tensorlang[c] with copy`` is that program
(``xtmp = s * x; x = xtmp``, compiled without the optimizer, which would fuse it back),
and each case's notes give our in-place speedup over it beside the paper's (1.86x,
2.01x, 1.70x at N = 10^6).  The peers: numpy ufuncs with ``out=`` (in place) and plain
numpy expressions (``x[...] = s * x``: a temporary, then a copy).  The "% of limit"
column is each kernel's bytes/s as a fraction of the measured in-place update with as
many read streams (``Case.streams``: scale 1, multiply 2, lincomb 3; machine.py measures
``a = s*a``, ``a = a*b`` and ``a = s1*a + s2*b + s3*c`` in the same run).
Threads: run the suite with ``--threads 1`` and ``--threads 2`` for time against N on
each (``threads=2`` makes every statement an OpenMP loop, 002 §7).
"""

from __future__ import annotations

import numpy as np

from ..contenders import Bound, Contender, c_arrays, tensorlang_contender, with_code
from .common import Case, Context, make_rng, missing, peer_numba


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
            result.append(missing("tensorlang[interp]", "tensorlang", f"reference interpreter skipped: {interp_why}"))
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


#: 002 §6.1: in place over "temporary, then copy back", N = 10^6, any number of cores.
PAPER_SPEEDUP = {"scale": 1.86, "multiply": 2.01, "lincomb": 1.70}


def _copy_source(kind: str, N: int) -> str:
    """002 Fig. 10a/12a: the kernel into a temporary, then copied back into x."""
    source, _ = _inplace_source(kind, N)
    head, stmt = source.rstrip("\n").rsplit("\n", 1)
    right = stmt.split(" = ", 1)[1]
    return f"{head}\nvar xtmp : [{N}]\nxtmp = {right}\nx = xtmp\n"


def _tensorlang_copy(ctx, kind: str, N: int, names) -> Contender:
    import tensorlang as tl

    source = _copy_source(kind, N)

    def make(inp):
        kernel = tl.compile(source, backend="c", threads=ctx.threads, opt=False)
        st = _State(inp)
        args = c_arrays({n: st[n] for n in names})
        targets = {"x": st["x"]}
        return Bound(lambda: kernel(out=targets, **args), lambda: st["x"], st.reset)

    if "c" not in ctx.backends:
        return missing("tensorlang[c] with copy", "tensorlang", "no C back end")
    return Contender("tensorlang[c] with copy", "tensorlang", make,
                     "002 Fig. 10a: xtmp = ...; x = xtmp (opt=False keeps the copy)")


def _tensorlang_one_thread(ctx, source: str, names) -> Contender:
    """In a run with two or more threads: the same in-place kernel on one thread, so one
    run gives time against N for both (002 §7; ``threads=2`` forces OpenMP on every
    statement, ``threads=1`` leaves it to the machine's measured threshold)."""
    import tensorlang as tl

    def make(inp):
        kernel = tl.compile(source, backend="c", threads=1)
        st = _State(inp)
        args = c_arrays({n: st[n] for n in names})
        targets = {"x": st["x"]}
        return with_code(Bound(lambda: kernel(out=targets, **args), lambda: st["x"], st.reset), kernel, "c")

    return Contender("tensorlang[c] 1 thread", "tensorlang", make, "threads=1 in a multi-threaded run")


def _numpy_expression(kind: str) -> Contender:
    def make(inp):
        st = _State(inp)
        x = st["x"]
        if kind == "scale":
            s = inp["s"]
            call = lambda: np.copyto(x, s * x)  # noqa: E731
        elif kind == "multiply":
            v = inp["v"]
            call = lambda: np.copyto(x, x * v)  # noqa: E731
        elif kind == "lincomb":
            s1, s2, s3, u, v = (inp[k] for k in ("s1", "s2", "s3", "u", "v"))
            call = lambda: np.copyto(x, s1 * x + s2 * u + s3 * v)  # noqa: E731
        else:
            U, v = inp["U"], inp["v"]
            call = lambda: np.copyto(x, (U @ v) * x)  # noqa: E731
        return Bound(call, lambda: x, st.reset)

    return Contender("numpy expression", "peer", make, "x[...] = expression: temporaries, then a copy")


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
    rng = make_rng(N)
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
        return missing("torch", "peer", ctx.peers.notes["torch"])

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
        return missing("jax", "peer", ctx.peers.notes["jax"])

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

    return peer_numba(ctx, bind, "hand-written in-place loop, @njit")


def cases(ctx: Context) -> list[Case]:
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
            ratios = []
            if kind in PAPER_SPEEDUP:
                contenders.append(_tensorlang_copy(ctx, kind, N, names))
                ratios.append(("tensorlang[c] with copy", "tensorlang[c]",
                               "002 §6.1 in place over copy", PAPER_SPEEDUP[kind]))
            if ctx.threads >= 2 and "c" in ctx.backends:
                contenders.append(_tensorlang_one_thread(ctx, source, names))
                ratios.append(("tensorlang[c] 1 thread", "tensorlang[c]", f"002 §7: {ctx.threads} threads over 1", None))
            contenders += [_numpy_inplace(kind), _numpy_expression(kind), _torch_inplace(ctx, kind),
                           _jax_inplace(ctx, kind), _numba_inplace(ctx, kind)]
            cases.append(Case(
                "inplace", kind, f"N={N:.0e}".replace("e+0", "e"), N, 1, flops, nbytes,
                make_inputs=lambda kind=kind, N=N: _inplace_inputs(kind, N),
                reference=_inplace_reference(kind), contenders=contenders, baseline="numpy",
                ratios=ratios, streams={"scale": 1, "multiply": 2, "lincomb": 3}.get(kind),
            ))
    return cases
