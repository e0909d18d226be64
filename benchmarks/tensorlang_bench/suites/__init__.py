"""The benchmark suites: kernels, sizes, flop and byte counts, references, contenders.

Counting conventions (docs/performance.md repeats them):

* flops are those of the best known algorithm, not of the naive loop nest: the Kronecker
  products ``(A⊗B⊗C) u`` are counted sum-factorized (three n^4 passes, 2 flops per
  multiply-add: 6 n^4 per element), a matrix product 2 n^3, ``tr(AB)`` 2 n^2;
* bytes are the compulsory traffic to memory: every input read once, every result
  written once (an in-place ``x`` is read and written), small matrices included;
  the write-allocate read is not counted (STREAM's convention).

Every case has a float64 reference computed independently of the contenders (numpy
``tensordot`` chains, or ``longdouble`` arithmetic for elementwise kernels), and every
contender's result is checked against it before it is timed.

Each suite is a module (``cfd``, ``inplace``, ``blas``, ``small``, ``einsum``, ``fields``, ``structure``, ``padding``, ``diderot``) whose ``cases`` takes a
:class:`Context` and returns its cases; building a case is cheap (inputs are made only
when the runner reaches it).  ``common`` holds what several suites share.
"""

from __future__ import annotations

from typing import Callable

from . import blas, cfd, diderot, einsum, fields, inplace, padding, small, structure
from .common import Case, Context

SUITES: dict[str, Callable[[Context], list[Case]]] = {
    "cfd": cfd.cases, "inplace": inplace.cases, "blas": blas.cases, "small": small.cases,
    "einsum": einsum.cases, "fields": fields.cases,
    "structure": structure.cases,
    "padding": padding.cases,
    "diderot": diderot.cases,
}
