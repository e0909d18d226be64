"""The reference interpreter as a target: the front end's own semantics (the oracle).

It runs the ``reference`` the pipeline was given (:meth:`Language.interpret
<tensorlang.lang.Language>` on the checked program, or EIN's evaluator for a program that
starts as EIN), never a schedule: what every other target is tested against.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from ..semantics.interface import Role
from .store import results_from_store


class InterpTarget:
    """A program on the reference interpreter."""

    c_call = None
    source = None

    def __init__(self, reference: Callable[[Mapping[str, np.ndarray], np.dtype], dict], roles, dtype: np.dtype):
        self.reference = reference
        self._dtype = dtype
        self._outputs = tuple(name for name, role in roles.items() if role in (Role.INOUT, Role.OUT, Role.OPTIONAL))

    @classmethod
    def build(cls, code, schedule, facts, options, reference) -> "InterpTarget":
        return cls(reference, facts.roles, options.dtype)

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        store = self.reference(supplied, self._dtype)
        return results_from_store(store, self._outputs, targets)
