"""The NumPy target: a kernel's schedule as generated Python (:mod:`.codegen`) over a
store of named arrays."""

from __future__ import annotations

import numpy as np

from ...schedule.plan import plan
from ...semantics.interface import initial_store
from ..store import results_from_store
from .codegen import compile_numpy


class NumpyTarget:
    """A kernel's program on the NumPy target: its schedule's steps as generated Python."""

    fast_call = None
    c_call = None
    loop_program = None

    def __init__(self, kernel):
        self.kernel = kernel
        self.schedule = plan(kernel.executed, kernel.dtype, kernel.roles(), fuse=False, reuse=False)  # store by name
        self.compiled = compile_numpy(kernel.executed, kernel.dtype, self.schedule)
        self.source = self.compiled.source
        # what every call needs, looked up once (a small kernel's call is mostly Python)
        checked = kernel.checked
        self._store_args = (checked.context.shapes, checked.interface.roles)
        self._dtype, self._outputs = kernel.dtype, kernel.outputs

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        shapes, roles = self._store_args
        store = self.compiled(initial_store(shapes, roles, supplied, self._dtype))
        return results_from_store(store, self._outputs, targets)
