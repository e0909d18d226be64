"""The C target as the pipeline sees it: a renderer (the schedule and its loop IR printed
as C, :mod:`.codegen`) and a builder (compiled, cached and loaded: :class:`.runtime.CKernel`)."""

from __future__ import annotations

from ...machine import blas as c_blas
from .codegen import Generated, print_c
from .runtime import CKernel


def blas_int_max(dtype, pad: int = 1) -> int | None:
    """The largest extent the BLAS generated C may call takes (:mod:`tensorlang.machine.blas`), or
    None where BLAS steps run in Python: no BLAS found, or padded buffers (views in Python)."""
    found = c_blas.find(dtype) if pad == 1 else None
    return None if found is None else found.int_max


def render(program, schedule, loops, caps) -> Generated:
    """The C source of ``schedule`` with its loop steps' nests from ``loops`` (:func:`.codegen.print_c`)."""
    return print_c(schedule, loops)


def build(code: Generated, schedule, facts, options, reference=None) -> CKernel:
    """The compiled, loaded kernel of ``code``."""
    return CKernel(code, pad=options.pad)
