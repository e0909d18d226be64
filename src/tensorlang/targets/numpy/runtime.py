"""The NumPy target: a schedule as generated Python (:mod:`.codegen`) over a store of named arrays."""

from __future__ import annotations

import numpy as np

from ...semantics.interface import initial_store
from ..interp import InterpTarget
from .codegen import NumpyKernel


def build(code: NumpyKernel, schedule, facts, options, reference=None) -> "NumpyTarget":
    return NumpyTarget(code, facts.shapes, facts.roles, np.dtype(schedule.dtype))


class NumpyTarget(InterpTarget):
    """A program on the NumPy target: its schedule's steps as generated Python."""

    def __init__(self, compiled: NumpyKernel, shapes, roles, dtype: np.dtype):
        super().__init__(compiled, roles, dtype)
        self.source = compiled.source
        self._store_args = (shapes, roles)  # what every call needs, looked up once

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        shapes, roles = self._store_args
        return self.results(self.reference(initial_store(shapes, roles, supplied, self._dtype)), targets)
