"""The store-based targets: the reference interpreter, which runs the ``reference`` the
pipeline was given (the front end's own semantics, or EIN's evaluator), never a schedule:
the oracle; and the NumPy target, a schedule as generated Python (:mod:`.numpy.codegen`)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..semantics.interface import Role, initial_store
from .numpy.codegen import NumpyKernel


class InterpTarget:
    """A program on the reference interpreter (and what the store-based targets share:
    the results out of a final store)."""

    c_call = None
    source: str | None = None

    def __init__(self, reference: Callable[..., dict], roles, dtype: np.dtype):
        self.reference = reference
        self._dtype = dtype
        self._outputs = tuple(name for name, role in roles.items() if role in (Role.INOUT, Role.OUT, Role.OPTIONAL))

    @classmethod
    def build(cls, code, schedule, facts, options, reference) -> "InterpTarget":
        return cls(reference, facts.roles, options.dtype)

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        return self.results(self.reference(supplied, self._dtype), targets)

    def results(self, store: dict[str, np.ndarray], targets: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The results out of the final ``store``, copied into the caller's ``out=`` arrays where given."""
        results = {}
        for name in self._outputs:
            if name in targets:
                np.copyto(targets[name], store[name])
                results[name] = targets[name]
            else:
                results[name] = store[name]
        return results


class NumpyTarget(InterpTarget):
    """A program on the NumPy target: its schedule's steps as generated Python over a store of named arrays."""

    def __init__(self, compiled: NumpyKernel, shapes, roles, dtype: np.dtype):
        super().__init__(compiled, roles, dtype)
        self.source = compiled.source
        self._store_args = (shapes, roles)  # what every call needs, looked up once

    @classmethod
    def build(cls, code: NumpyKernel, schedule, facts, options, reference=None) -> "NumpyTarget":
        return cls(code, facts.shapes, facts.roles, np.dtype(schedule.dtype))

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        shapes, roles = self._store_args
        return self.results(self.reference(initial_store(shapes, roles, supplied, self._dtype)), targets)
