"""The reference interpreter as a target: the front end's own semantics (the oracle).

It runs :meth:`Language.interpret <tensorlang.lang.Language>` on the checked program,
never the EIN program or a schedule: what every other target is tested against.
"""

from __future__ import annotations

import numpy as np

from .store import results_from_store


class InterpTarget:
    """A kernel's program on the reference interpreter."""

    fast_call = None
    c_call = None
    schedule = None
    loop_program = None
    source = None

    def __init__(self, kernel):
        self.kernel = kernel

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        kernel = self.kernel
        store = kernel.language.interpret(kernel.checked, supplied, kernel.dtype)
        return results_from_store(store, kernel.outputs, targets)
