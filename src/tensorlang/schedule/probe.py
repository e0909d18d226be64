"""The probe step: a ``Sample`` statement as a library kernel that the C target renders
(docs/internals/fields-probes.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ein import ir
from ..ein.fields import Sample, is_sample

#: points and image bytes from which a probe goes in block order (:func:`sorts`)
SORT_POINTS, SORT_IMAGE_BYTES = 1 << 14, 8 << 20
#: the blocks the points are sorted into have 2^SORT_SHIFT cells per axis
SORT_SHIFT = 4


def sorts(sizes: tuple[int, ...], voxel: int, n: int) -> bool:
    """Whether a probe of ``n`` points of an image with ``sizes`` samples per axis and
    ``voxel`` doubles a sample sorts them by the image's blocks first: a large image, enough
    points, no more blocks than points, fewer than 2^31 points (32-bit indices)."""
    blocks = math.prod(((size - 1) >> SORT_SHIFT) + 1 for size in sizes)
    return SORT_POINTS <= n < 2**31 - 1 and 8 * voxel * math.prod(sizes) >= SORT_IMAGE_BYTES and blocks <= n


@dataclass(frozen=True)
class ProbeStep:
    """``target[p, α, β] = ∂^β (V_α ⊛ kernel)(M·x[p])`` for the ``n`` points of slot ``points``
    (docs/internals/fields-probes.md); ``sort``: in the image's block order."""
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
