"""Targets: renderers of the pipeline's stage values, and the runners they build; each
decides nothing and sees no Kernel (docs/architecture.md, "targets/", has the protocol)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import error
from ..loops.parallel import ParallelWork
from ..machine import blas as c_blas
from .c import build as c_build
from . import dask as dask_target
from .c import strands as _c_strands  # noqa: F401 - registers the strand executor (strand_ir.EXECUTORS)
from .c.codegen import print_c
from .c.runtime import CKernel
from .interp import InterpTarget, NumpyTarget
from .numpy.codegen import compile_numpy


@dataclass(frozen=True)
class Caps:
    """What a target's schedule may use and what runs below it (once per compilation)."""

    #: statements that share a batch loop run inside one (loop targets)
    fuse: bool = True
    #: temporaries share buffers (002 §7; the store-by-name targets keep every name)
    reuse: bool = True
    #: BLAS steps allowed at all (tests switch them off to see every statement as loops)
    blas: bool = True
    #: the largest extent BLAS takes where generated C calls it, else None (BLAS from Python)
    blas_int_max: int | None = None
    #: loop nests visit only the support of a structured sum (schedule.plan._sparse_sums)
    supports: bool = False
    #: the target runs the loop IR (the loop stage is built for it)
    loops: bool = False
    #: scalar operations from which a loop runs on threads (loops.parallel)
    parallel_work: ParallelWork | None = None
    #: the vector bytes of the Gram steps the target renders (schedule.steps.GramStep); None: none
    gram: int | None = None
    #: a GEMM over operands out of order (GemmStep.copies) runs as a GEMM; False: an einsum
    #: step (the NumPy target: opt_einsum's path beat the copy, docs/performance.md)
    gemm_copies: bool = True


@dataclass(frozen=True)
class Target:
    """A target: its capabilities, its renderer and its builder (all plain functions)."""

    name: str
    #: ``caps(dtype, pad, blas, parallel_work)``: what its schedule may use on this machine
    caps: Callable[..., Caps]
    #: ``render(program, schedule, loops, caps)``: the code it runs (None: it runs no code)
    render: Callable[..., Any] | None
    #: ``build(code, schedule, roles, options, reference)``: the runner
    build: Callable[..., Any]
    #: the stages the target needs, in pipeline order
    stages: tuple[str, ...]
    #: a target that wraps the others (dask): how it runs a kernel chunk by chunk
    chunked: Callable[..., Any] | None = None


def _c_caps(dtype, pad: int = 1, blas: bool = True, parallel_work: ParallelWork | None = None) -> Caps:
    from ..machine import vector_bytes
    from .c import threshold  # measured on first use (compiles a probe)
    int_max = blas_int_max(dtype, pad)
    gram = vector_bytes(c_build.find_compiler()) if np.dtype(dtype) == np.float64 and pad == 1 else None
    return Caps(blas=blas, blas_int_max=int_max, supports=True, loops=True,
                parallel_work=threshold.parallel_work() if parallel_work is None else parallel_work, gram=gram)


def blas_int_max(dtype, pad: int = 1) -> int | None:
    """The largest extent the BLAS generated C may call takes (:mod:`tensorlang.machine.blas`), or
    None where BLAS steps run in Python: no BLAS found, or padded buffers (views in Python)."""
    found = c_blas.find(dtype) if pad == 1 else None
    return None if found is None else found.int_max


def _wraps_a_kernel(*args, **kwargs):
    raise error("backend", "the dask target runs a compiled kernel chunk by chunk: call k.dask(...) on a kernel "
                           "compiled for another back end (docs/dask.md)")


#: Every target, by name: the back ends a user may name (``backend=``), in the order
#: ``auto`` prefers them, then dask, which wraps a compiled kernel (``k.dask(...)``).
REGISTRY: dict[str, Target] = {
    # C: the schedule and its loop IR printed (.c.codegen), compiled, cached and loaded (.c.runtime.CKernel)
    "c": Target("c", _c_caps, lambda program, schedule, loops, caps: print_c(schedule, loops),
                lambda code, schedule, facts, options, reference=None: CKernel(code, pad=options.pad),
                ("opt", "facts", "schedule", "loops", "code", "build")),
    # NumPy: the schedule's steps as generated Python (.numpy.codegen), defined here and run over a store
    # (by name: no shared buffers)
    "numpy": Target("numpy", lambda dtype, pad, blas, parallel_work: Caps(fuse=False, reuse=False, blas=blas, gemm_copies=False),
                    lambda program, schedule, loops, caps: compile_numpy(program, schedule.dtype, schedule),
                    NumpyTarget.build, ("opt", "facts", "schedule", "code", "build")),
    "interp": Target("interp", lambda *args: Caps(), None, InterpTarget.build, ("build",)),
    "dask": Target("dask", lambda *args: Caps(), None, _wraps_a_kernel, (), chunked=dask_target.run_chunked),
}
#: The back ends a user may name.
KNOWN = tuple(name for name, target in REGISTRY.items() if target.chunked is None)


def available() -> tuple[str, ...]:
    """The targets that work on this machine (``c`` needs a working C compiler)."""
    return KNOWN if c_build.find_compiler() is not None else tuple(name for name in KNOWN if name != "c")


_notified = False


def resolve(name: str) -> str:
    """Map a requested target to one that works here, or raise error[backend]."""
    global _notified
    if not isinstance(name, str) or name not in ("auto", *KNOWN):  # (an array's == is elementwise)
        raise error("backend", f"unknown back end {name!r}; choose one of auto, {', '.join(KNOWN)}")
    if name == "auto":
        if c_build.find_compiler() is not None:
            return "c"
        if not _notified:
            print(f"tensorlang: note: using the numpy back end ({c_build.why_no_compiler()})", file=sys.stderr)
            _notified = True
        return "numpy"
    if name == "c":
        c_build.require_compiler()
    return name
