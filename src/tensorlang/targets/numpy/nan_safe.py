"""The array functions opt_einsum calls for the NumPy target's contractions, with ⊥ kept.

``numpy.tensordot`` multiplies through ``numpy.dot``, and ``numpy.dot`` of a matrix with
an inner extent of 1 (an outer product in disguise) skips terms whose factor is zero:
``dot([[nan], [1]], [[0]])`` is ``[[0], [0]]`` where the language (and ``matmul``) gives
``[[nan], [0]]``: ⊥ · 0 is ⊥.  opt_einsum takes its ``tensordot`` from the module named
as its ``backend``; this module is that backend: numpy's own tensordot, reshaping to
matrices exactly as numpy does, with the product done by ``matmul`` (the same BLAS
routine for every other shape, so nothing is slower).
"""

from __future__ import annotations

import numpy as np

#: opt_einsum's ``backend=`` for the NumPy target's contractions.
BACKEND = __name__

einsum = np.einsum
transpose = np.transpose


def tensordot(a, b, axes=2):
    """numpy.tensordot, with the matrix product by matmul."""
    a, b = np.asarray(a), np.asarray(b)
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = [list(x) if not isinstance(x, int) else [x] for x in axes]
    axes_a = [x % a.ndim for x in axes_a] if a.ndim else axes_a
    axes_b = [x % b.ndim for x in axes_b] if b.ndim else axes_b
    free_a = [d for d in range(a.ndim) if d not in axes_a]
    free_b = [d for d in range(b.ndim) if d not in axes_b]
    inner = int(np.prod([a.shape[d] for d in axes_a], dtype=np.int64))
    left = a.transpose(free_a + axes_a).reshape(-1, inner)
    right = b.transpose(axes_b + free_b).reshape(inner, -1)
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return np.matmul(left, right).reshape(shape)
