"""Who competes: tensorlang's back ends, the peers a user would pick instead, baselines.

Peers are optional.  Each is imported on first use; a missing one is skipped with a note
that says how to install it, never an error.  Thread counts are fixed for all of them
before the first import (``configure_threads``): BLAS and OpenMP through threadpoolctl,
torch and numba through their own calls, JAX through ``XLA_FLAGS`` (which XLA reads
once, at import, so it must be set before ``import jax``).

A contender is a factory: given a case's inputs it returns a :class:`Bound` — a
zero-argument ``call`` that runs the kernel once, a ``result`` that reads what the last
call produced (as a float64-comparable numpy array), and a ``reset`` that restores the
initial state of in-place kernels so that the correctness check sees fresh inputs.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import tensorlang as tl

PEER_HELP = {
    "opt_einsum": "pip install opt_einsum",
    "torch": "pip install torch==2.13.0  (the local CPU build; not a dependency of tensorlang)",
    "jax": "pip install -e '.[bench]'  (jax, CPU)",
    "numba": "pip install -e '.[bench]'",
}


@dataclass
class Bound:
    """A contender ready to run on one case's inputs."""

    call: Callable[[], object]
    result: Callable[[], np.ndarray]
    reset: Callable[[], None] = lambda: None
    #: the generated C of a tensorlang[c] kernel (runner: a thread pair whose two builds
    #: are the same C is told apart from one where threads changed the code)
    code: str | None = None


@dataclass
class Contender:
    """``make(inputs) -> Bound``; ``family`` is tensorlang, peer or baseline."""

    name: str
    family: str
    make: Callable[[dict], Bound] | None
    note: str = ""


class Peers:
    """Lazy, optional imports of the peer libraries, with a note for each missing one.

    ``disabled`` names peers to treat as missing (tests use it, and so does
    ``tensorlang bench --without``).
    """

    def __init__(self, threads: int = 1, disabled=()):
        self.threads = threads
        self.disabled = set(disabled)
        self._modules: dict[str, object | None] = {}
        self.notes: dict[str, str] = {}

    def get(self, name: str):
        """The module, or None (and a note in ``self.notes``) when it is not available."""
        if name in self._modules:
            return self._modules[name]
        module = None
        if name in self.disabled:
            self.notes[name] = f"{name}: disabled for this run"
        else:
            try:
                module = self._import(name)
            except Exception as exc:  # noqa: BLE001 - a broken install is "missing" too
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                self.notes[name] = f"{name}: not available ({detail}); install: {PEER_HELP.get(name, 'pip install ' + name)}"
        self._modules[name] = module
        return module

    def _import(self, name: str):
        if name == "jax":
            # XLA reads its flags once, at import: one thread means one thread for Eigen too.
            if "jax" not in importlib.sys.modules and self.threads == 1:
                os.environ["XLA_FLAGS"] = xla_flags(os.environ.get("XLA_FLAGS", ""), self.threads)
            jax = importlib.import_module("jax")
            jax.config.update("jax_enable_x64", True)
            importlib.import_module("jax.numpy")
            return jax
        if name == "torch":
            torch = importlib.import_module("torch")
            torch.set_num_threads(self.threads)
            return torch
        if name == "numba":
            numba = importlib.import_module("numba")
            numba.set_num_threads(min(self.threads, numba.config.NUMBA_NUM_THREADS))
            return numba
        return importlib.import_module(name)

    def apply_threads(self) -> None:
        """Set torch's and numba's thread counts again: measuring the limits with other
        counts (threadpoolctl restoring OpenMP) may have changed them."""
        torch, numba = self._modules.get("torch"), self._modules.get("numba")
        if torch is not None:
            torch.set_num_threads(self.threads)
        if numba is not None:
            numba.set_num_threads(min(self.threads, numba.config.NUMBA_NUM_THREADS))

    def versions(self) -> dict[str, str | None]:
        out = {}
        for name in ("opt_einsum", "torch", "jax", "numba"):
            mod = self.get(name)
            out[name] = getattr(mod, "__version__", "?") if mod is not None else None
        return out


def xla_flags(existing: str, threads: int) -> str:
    """``XLA_FLAGS`` for a run on ``threads`` threads.  XLA has one real knob,
    ``--xla_cpu_multi_thread_eigen=false`` (one thread for Eigen's matrix products); it
    aborts on an unknown ``--xla_`` flag and silently ignores words without ``--`` (so
    ``intra_op_parallelism_threads=1``, a TensorFlow session option, would do nothing).
    Its other pools are held to the run's CPUs by the affinity pinning of the runner."""
    flag = "--xla_cpu_multi_thread_eigen=false"
    if threads != 1 or flag in existing.split():
        return existing
    return (existing + " " + flag).strip()


def configure_threads(threads: int) -> None:
    """Environment for libraries not imported yet (OpenMP, MKL, numba's pool size).

    The run's thread count overrides whatever the caller's environment says: every
    contender gets ``threads`` threads, or the comparison is not fair.  Every OpenMP
    runtime in the process waits passively (``OMP_WAIT_POLICY=passive``, unless the
    caller chose a policy; tensorlang's kernels use it anyway, targets/c/build.py): torch's
    own libgomp otherwise keeps its idle threads spinning after each call, on the core the
    next contender in the round is timed on (measured: tensorlang's CFD kernel at n = 12
    ran 1.71x faster on two threads than on one, 0.96x right after a torch call)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    if "GOMP_SPINCOUNT" not in os.environ:
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    os.environ.setdefault("NUMBA_NUM_THREADS", str(max(threads, os.cpu_count() or 1)))


# ------------------------------------------------------------------ tensorlang
def tensorlang_backends() -> tuple[str, ...]:
    """Every back end this installation has, read at run time: a new one joins by itself."""
    return tuple(tl.available_backends())


def tensorlang_contender(source: str, backend: str, bind: Callable[[object, dict], Bound], note: str = "",
                         threads: int = 1, fma: bool | None = None) -> Contender:
    """A tensorlang kernel compiled from ``source`` for ``backend`` with ``threads``
    threads (explicit: the C back end would otherwise take OpenMP's default, however the
    environment sets it); ``bind`` makes the call.  ``fma``: None compiles with the
    default (fused multiply-adds on), False with ``fma=False`` (each product rounded:
    named ``tensorlang[c] no fma``), True with ``fma=True`` (``tensorlang[c] fma``)."""

    def make(inputs: dict) -> Bound:
        extra = {} if fma is None else {"fma": fma}
        kernel = tl.compile(source, backend=backend, threads=threads, **extra)
        return with_code(bind(kernel, inputs), kernel, backend)

    suffix = {None: "", True: " fma", False: " no fma"}[fma]
    return Contender(f"tensorlang[{backend}]{suffix}", "tensorlang", make, note)


def with_code(bound: Bound, kernel, backend: str) -> Bound:
    """``bound`` with ``kernel``'s generated C attached (C back end only)."""
    if backend == "c":
        bound.code = kernel.code("c")
    return bound


def c_arrays(inputs: dict) -> dict:
    """Inputs as a compiled kernel's fast call path takes them: C-contiguous float64
    ndarrays that own their memory, 0-d arrays for scalars.  (A numpy scalar such as
    ``np.float64(2.0)`` is accepted too, but sends the C back end down its general, slower,
    validating path.)  Arrays that already qualify are passed as they are, not copied, so
    an in-place ``x`` stays the caller's array."""
    out = {}
    for name, value in inputs.items():
        if (value.__class__ is np.ndarray and value.dtype == np.float64 and value.flags.c_contiguous
                and value.base is None):
            out[name] = value
        else:
            out[name] = np.array(value, dtype=np.float64, order="C", copy=True)
    return out


# ------------------------------------------------------------------ bare ctypes baseline
_C_SOURCE = """
void mm2(const double *a, const double *b, double *c) {
    c[0] = a[0] * b[0] + a[1] * b[2];
    c[1] = a[0] * b[1] + a[1] * b[3];
    c[2] = a[2] * b[0] + a[3] * b[2];
    c[3] = a[2] * b[1] + a[3] * b[3];
}
"""


@dataclass
class CLib:
    """A shared library compiled at bench time, or the reason it could not be."""

    lib: object | None
    note: str = ""
    _dir: object = field(default=None, repr=False)


_clib_cache: list[CLib] = []


def bare_c_library() -> CLib:
    """Compile the trivial ``mm2`` function with ``cc`` into a temporary directory (once)."""
    if _clib_cache:
        return _clib_cache[0]
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        clib = CLib(None, "no C compiler (cc) found; the bare ctypes baseline is skipped")
    else:
        tmp = tempfile.TemporaryDirectory(prefix="tensorlang-bench-")
        src, lib = os.path.join(tmp.name, "mm2.c"), os.path.join(tmp.name, "libmm2.so")
        with open(src, "w") as fh:
            fh.write(_C_SOURCE)
        command = shlex.split(compiler) + ["-O2", "-shared", "-fPIC", src, "-o", lib]  # CC may be "ccache gcc"
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
            failure = f"{compiler} failed: {proc.stderr.strip()[:200]}" if proc.returncode != 0 else ""
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:  # no such program, a hung compiler
            failure = f"cannot run the C compiler {compiler!r} ({type(exc).__name__}: {exc})"
        if failure:
            clib = CLib(None, failure + "; the bare ctypes baseline is skipped", tmp)
        else:
            try:
                handle = ctypes.CDLL(lib)
            except OSError as exc:
                clib = CLib(None, f"cannot load the compiled baseline ({exc}); the bare ctypes baseline is skipped", tmp)
            else:
                handle.mm2.argtypes = [ctypes.c_void_p] * 3
                handle.mm2.restype = None
                clib = CLib(handle, f"compiled with {compiler} -O2", tmp)
    _clib_cache.append(clib)
    return clib
