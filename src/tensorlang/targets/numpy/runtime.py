"""The NumPy target: a schedule as generated Python (:mod:`.codegen`) over a store of
named arrays."""

from __future__ import annotations

import numpy as np

from ...semantics.interface import Role, initial_store
from ..store import results_from_store
from .codegen import NumpyKernel, compile_numpy


def render(program, schedule, loops, caps) -> NumpyKernel:
    """The schedule's steps as generated Python (defined, not yet run)."""
    return compile_numpy(program, schedule.dtype, schedule)


def build(code: NumpyKernel, schedule, facts, options, reference=None) -> "NumpyTarget":
    return NumpyTarget(code, facts.shapes, facts.roles, np.dtype(schedule.dtype))


class NumpyTarget:
    """A program on the NumPy target: its schedule's steps as generated Python."""

    c_call = None

    def __init__(self, compiled: NumpyKernel, shapes, roles, dtype: np.dtype):
        self.compiled = compiled
        self.source = compiled.source
        # what every call needs, looked up once (a small kernel's call is mostly Python)
        self._store_args = (shapes, roles)
        self._dtype = dtype
        self._outputs = tuple(name for name, role in roles.items() if role in (Role.INOUT, Role.OUT, Role.OPTIONAL))

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        shapes, roles = self._store_args
        store = self.compiled(initial_store(shapes, roles, supplied, self._dtype))
        return results_from_store(store, self._outputs, targets)
