"""What the store-based targets (interp, numpy) share: results out of a final store."""

from __future__ import annotations

import numpy as np


def results_from_store(store: dict[str, np.ndarray], outputs: tuple[str, ...],
                       targets: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The results named ``outputs``, copied into the caller's ``out=`` arrays where given."""
    results = {}
    for name in outputs:
        if name in targets:
            np.copyto(targets[name], store[name])
            results[name] = targets[name]
        else:
            results[name] = store[name]
    return results
