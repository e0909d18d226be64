"""The probe step: a field probe's probe tensor as a library kernel the schedule chooses.

A field probe's lowered EIN program (fields/run.py, passes/fields.py) computes each probe
tensor it reads by a statement ``P[p, α, β] = Sample(...)`` (ein/fields.py): the
reconstruction V_α ⊛ h and its index-space derivatives of one order at a batch of points.
No loop nest computes that well (a gather of the kernel's support around each point, the
weights as polynomials, the separable sum), so the schedule turns such a statement into a
:class:`ProbeStep`, and the C target renders it from its probe renderer
(targets/c/probe.py).  The step decides what the renderer must not: whether the points
are first sorted by the image's blocks (:func:`sorts`, measured: docs/internals/fields-probes.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ein import ir
from ..ein.fields import Sample, is_sample

#: points from which a probe of a large image goes in block order (:func:`sorts`)
SORT_POINTS = 1 << 14
#: image bytes from which the block order pays (measured on 10^6 random points: slower
#: than the given order on an image of 2 MiB, 2.3x faster on 16 MiB)
SORT_IMAGE_BYTES = 8 << 20
#: the blocks the points are sorted into have 2^SORT_SHIFT cells per axis (32 and 64
#: measured slower: a block's rows no longer stay in L2)
SORT_SHIFT = 4


def sorts(sizes: tuple[int, ...], voxel: int, n: int) -> bool:
    """Whether a probe of ``n`` points of an image with ``sizes`` samples per axis and
    ``voxel`` doubles a sample sorts them by the image's blocks first: where the image is
    large (random points then miss the caches for every row they read: at least
    :data:`SORT_IMAGE_BYTES`), there are enough points for the sort to pay
    (:data:`SORT_POINTS`), no more blocks than points (the counts are one integer per
    block) and fewer than 2^31 points (the sort's indices are 32-bit)."""
    blocks = math.prod(((size - 1) >> SORT_SHIFT) + 1 for size in sizes)
    return SORT_POINTS <= n < 2**31 - 1 and 8 * voxel * math.prod(sizes) >= SORT_IMAGE_BYTES and blocks <= n


@dataclass(frozen=True)
class ProbeStep:
    """``target[p, α, β] = ∂^β (V_α ⊛ kernel)(M·x[p])`` for the ``n`` points of slot
    ``points`` (n × dim), image slot ``image`` (``sizes`` samples per axis, ``ncomp``
    doubles a sample), geometry slot ``geometry`` (per axis its world-to-index row and its
    number of samples, dim × (dim+2)); ``sort``: the points go in the image's block order."""

    target: int
    image: int
    points: int
    geometry: int
    kernel: str
    order: int
    dim: int
    ncomp: int
    n: int
    sizes: tuple[int, ...]
    sort: bool
    statement: ir.Statement
    reason: str = ""

    @property
    def operands(self) -> tuple[int, ...]:
        return (self.image, self.points, self.geometry)


def probe_step(stmt: ir.Statement, slot_of: dict[str, int], shapes: dict[str, tuple[int, ...]]) -> ProbeStep | None:
    """The :class:`ProbeStep` of a statement whose body is a Sample reading its target's
    indices in order, else None."""
    if not is_sample(stmt):
        return None
    e: Sample = stmt.body  # type: ignore[assignment]
    if tuple(e.indices) != tuple(name for name, _ in stmt.index):
        return None
    n, dim = shapes[e.points.name]
    image = shapes[e.image.name]
    sizes = tuple(image[:dim])
    ncomp = math.prod(image[dim:])
    sort = sorts(sizes, ncomp, n)
    reason = (f"probe of {e.image.name} with {e.kernel}, derivative order {e.order}: the probe kernel"
              + (" (points sorted by the image's 16^3-cell blocks first)" if sort else ""))
    return ProbeStep(slot_of[stmt.target], slot_of[e.image.name], slot_of[e.points.name], slot_of[e.geometry.name],
                     e.kernel, e.order, dim, ncomp, n, sizes, sort, stmt, reason)
