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
    loop_program = None

    def __init__(self, kernel):
        self.kernel = kernel
        self.schedule = plan(kernel.executed, kernel.dtype, kernel.roles())
        self.compiled = compile_numpy(kernel.executed, kernel.dtype, self.schedule)
        self.source = self.compiled.source

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        checked = self.kernel.checked
        store = self.compiled(initial_store(checked.context.shapes, checked.interface.roles, supplied,
                                            self.kernel.dtype))
        return results_from_store(store, self.kernel.outputs, targets)
