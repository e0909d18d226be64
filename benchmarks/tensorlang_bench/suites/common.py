"""What every suite uses: :class:`Context`, :class:`Case`, and the contenders that several
suites share (each peer's generic call, tensorlang's back ends with an ``out=`` buffer)."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable

import numpy as np

from .. import numba_kernels
from ..contenders import Bound, Contender, Peers, c_arrays, tensorlang_backends, tensorlang_contender


@dataclass
class Context:
    peers: Peers
    threads: int = 1
    quick: bool = False
    backends: tuple[str, ...] = field(default_factory=tensorlang_backends)
    #: ``bench --fma``: every suite also times the C kernels compiled with ``fma=True``
    fma: bool = False


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
    #: (slower contender, faster contender, what, a paper's value or None): after the run
    #: a note gives the measured ratio of their median times beside the paper's
    ratios: list[tuple[str, str, str, float | None]] = field(default_factory=list)
    #: (a, b): after the round-robin, a and b timed again by themselves, batch beside batch,
    #: and b's time over a's reported as the median of the rounds' ratios (timing.time_paired)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    # what errors are measured against (default: the reference's largest magnitude); a
    # reduction whose terms cancel needs the size of its terms, Σ|term|, instead: a correct
    # float64 sum is off by about eps Σ|term|, which can be far more than eps |sum|
    error_scale: Callable[[dict], float] | None = None
    #: an in-place kernel: the arrays it reads (the updated one included) and so the
    #: STREAM-style update its "% of limit" is measured against (machine.Limits.update_for)
    streams: int | None = None


def _load_corpus() -> ModuleType:
    """tests/corpus.py of the checkout this harness belongs to: the named programs and
    numpy references the tests check every back end on (the bench runs from a checkout)."""
    name = "tensorlang_corpus"
    if name in sys.modules:
        return sys.modules[name]
    # the checkout this file is in; else (an installed wheel) the checkout it runs from
    candidates = [Path(__file__).resolve().parents[3] / "tests" / "corpus.py", Path.cwd() / "tests" / "corpus.py"]
    path = next((p for p in candidates if p.is_file()), candidates[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ImportError(f"the test corpus {path} is missing: run `tensorlang bench` from a tensorlang checkout")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The shared corpus (tests/corpus.py).
CORPUS = _load_corpus()


def make_rng(seed: int = 0):
    return np.random.default_rng(seed)


def missing(name: str, family: str, note: str) -> Contender:
    return Contender(name, family, None, note)


# ------------------------------------------------------------------ peers, generic
def peer_numpy_einsum(subs, names, out_shape, optimize) -> Contender:
    label = "numpy.einsum(optimal)" if optimize else "numpy.einsum"

    def make(inp):
        ops = [inp[n] for n in names]
        out = np.empty(out_shape)
        return Bound(lambda: np.einsum(subs, *ops, out=out, optimize=optimize), lambda: out)

    return Contender(label, "peer", make, "out= buffer; optimize='optimal' finds the path on every call" if optimize else "out= buffer")


def peer_opt_einsum(ctx, subs, names, out_shape) -> Contender:
    oe = ctx.peers.get("opt_einsum")
    if oe is None:
        return missing("opt_einsum", "peer", ctx.peers.notes["opt_einsum"])

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


def peer_torch(ctx, fn_of_torch, names, note="torch.from_numpy inputs (no copy)") -> Contender:
    torch = ctx.peers.get("torch")
    if torch is None:
        return missing("torch", "peer", ctx.peers.notes["torch"])

    def make(inp):
        ops = [torch.from_numpy(np.ascontiguousarray(inp[n])) for n in names]
        fn = fn_of_torch(torch)
        cell = [None]

        def call():
            cell[0] = fn(*ops)

        return Bound(call, lambda: cell[0].numpy())

    return Contender("torch", "peer", make, note)


def peer_torch_mm(ctx, shape) -> Contender:
    """``torch.mm(A, B, out=C)``: torch's product takes an ``out=`` buffer, so it gets one,
    as numpy's ``matmul`` and tensorlang do (torch.einsum has none)."""
    torch = ctx.peers.get("torch")
    if torch is None:
        return missing("torch", "peer", ctx.peers.notes["torch"])

    def make(inp):
        A, B = (torch.from_numpy(np.ascontiguousarray(inp[n])) for n in ("A", "B"))
        out = np.empty(shape)
        C = torch.from_numpy(out)
        return Bound(lambda: torch.mm(A, B, out=C), lambda: out)

    return Contender("torch", "peer", make, "torch.mm with out= (from_numpy views, no copy)")


def peer_jax(ctx, fn_of_jnp, names, note="jax.jit; inputs already on the device; result awaited") -> Contender:
    jax = ctx.peers.get("jax")
    if jax is None:
        return missing("jax", "peer", ctx.peers.notes["jax"])

    def make(inp):
        import jax.numpy as jnp

        f = jax.jit(fn_of_jnp(jnp))
        ops = [jax.device_put(inp[n]) for n in names]
        cell = [None]

        def call():
            cell[0] = f(*ops).block_until_ready()

        return Bound(call, lambda: np.asarray(cell[0]))

    return Contender("jax", "peer", make, note)


def peer_numba(ctx, bind: Callable[[dict, dict], Bound], note="hand-written loops, @njit") -> Contender:
    numba = ctx.peers.get("numba")
    if numba is None:
        return missing("numba", "peer", ctx.peers.notes["numba"])

    def make(inp):
        return bind(numba_kernels.kernels(numba, ctx.threads > 1), inp)

    return Contender("numba", "peer", make, note + (" (prange)" if ctx.threads > 1 else ""))


def tensorlang_contenders(ctx, source: str, outname: str, names, out_shape, interp_ok: bool, interp_why: str,
                          fma: bool = False) -> list[Contender]:
    """One contender per tensorlang back end (compiled with the defaults a user gets:
    fused multiply-adds on); results land in an ``out=`` buffer.  With ``fma`` (or
    ``bench --fma``), also ``tensorlang[c] no fma``: the C kernel compiled with
    ``fma=False`` (every product rounded on its own, docs/optimizer.md)."""

    def bind(kernel, inp):
        out = np.empty(out_shape)
        args = c_arrays({n: inp[n] for n in names})
        targets = {outname: out}  # built once, as a caller in a loop would
        return Bound(lambda: kernel(out=targets, **args), lambda: out)

    result = []
    for backend in ctx.backends:
        if backend == "interp" and not interp_ok:
            result.append(missing("tensorlang[interp]", "tensorlang", f"reference interpreter skipped: {interp_why}"))
        else:
            result.append(tensorlang_contender(source, backend, bind, "out= buffer", ctx.threads))
        if backend == "c" and (fma or ctx.fma):
            result.append(tensorlang_contender(source, "c", bind, "out= buffer; fma=False", ctx.threads, fma=False))
    if ctx.threads >= 2 and "c" in ctx.backends:  # interleaved with the N-thread kernel: do threads hurt?
        one = tensorlang_contender(source, "c", bind, "out= buffer; threads=1 in a multi-threaded run", 1)
        result.append(Contender("tensorlang[c] 1 thread", "tensorlang", one.make, one.note))
    return result


def peer_numpy_matmul() -> Contender:
    def make(inp):
        out = np.empty((inp["A"].shape[0], inp["B"].shape[1]))
        A, B = inp["A"], inp["B"]
        return Bound(lambda: np.matmul(A, B, out=out), lambda: out)

    return Contender("numpy", "peer", make, "A @ B (BLAS), out= buffer")
