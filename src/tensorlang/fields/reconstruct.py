"""Probing an image reconstructed with a kernel, 004 §2.2's separable sum vectorized over
points (x = M·p, n = ⌊x⌋, f = x − n; Σ h⁽ᵇ⁰⁾(f₀ − i) ... V[n₀+i, ...], then the chain
rule): the numpy reference of the C probes and the EIN evaluator's Sample; ⊥ outside.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..ein.fields import Sample
from ..ein.interp import EVALUATE
from ..sampling.image import Image, Samples
from ..sampling.kernels import KERNELS, Kernel, at_integer

#: points per block: bounds the gathered neighbourhoods (block × support^dim × voxel)
BLOCK = 1 << 14


def _axis(img: Image, points: np.ndarray, a: int) -> np.ndarray:
    """Index-space coordinate ``a`` of world ``points``, column by column (no BLAS call for
    a 3x3 map; (N, dim) temporaries and all(axis=-1) in :func:`inside` cost 17x this): the
    products, then the translation, as Diderot's executables sum them (1-D: not fused)."""
    m, d = img.to_index, img.dim
    column = np.zeros(points.shape[0])
    with np.errstate(all="ignore"):
        for b in range(d):
            if m[a, b] != 0:
                column += m[a, b] * points[:, b]
        return column + m[a, d]


def index_positions(img: Image, points: np.ndarray) -> np.ndarray:
    """The index-space positions of world ``points`` (shape (N, dim))."""
    return np.stack([_axis(img, points, a) for a in range(img.dim)], axis=1)


def inside(img: Image, kern: Kernel, points: np.ndarray) -> np.ndarray:
    """Which points have the kernel's whole support inside the image (Diderot's inside)."""
    ok = np.ones(points.shape[0], dtype=bool)
    with np.errstate(all="ignore"):
        for a in range(img.dim):
            n = np.floor(_axis(img, points, a))  # support n+1-radius .. n+radius; NaN and ±inf fail both tests
            ok &= (n >= kern.radius - 1) & (n <= img.sizes[a] - 1 - kern.radius)
    return ok


def probe(img: Image, kern: Kernel, order: int, points: np.ndarray, world: bool = True) -> np.ndarray:
    """∂^order (kern ⊛ img) at every point: shape (N,) + voxel shape + (dim,)*order, in
    world space (``world=False``: in index space, as a Sample is); ⊥ (NaN) outside the
    domain."""
    points = np.asarray(points, dtype=np.float64)
    out = np.empty((points.shape[0],) + img.voxel_shape + (img.dim,) * order)
    for start in range(0, points.shape[0], BLOCK):
        stop = min(start + BLOCK, points.shape[0])
        out[start:stop] = _probe_block(img, kern, order, points[start:stop], world)
    return out


@dataclass(frozen=True)
class _Sampled(Samples):
    """An image as a Sample reads it (ein/fields.py): samples, and the geometry's
    world-to-index rows (index_positions and inside read ``to_index``)."""

    data: np.ndarray
    dim: int
    to_index: np.ndarray


def _evaluate_sample(e: Sample, at) -> np.ndarray:
    """The EIN evaluator's rule for a Sample: this module's reference probe, in index space."""
    points = np.asarray(at.store[e.points.name], dtype=np.float64)
    geo = np.asarray(at.store[e.geometry.name], dtype=np.float64)
    d = points.shape[1]
    img = _Sampled(np.asarray(at.store[e.image.name], dtype=np.float64), d, geo[:, : d + 1])
    value = probe(img, KERNELS[e.kernel], e.order, points, world=False)  # type: ignore[arg-type]
    return at.domain.exact(at.spread(value[tuple(at.coords(i) for i in e.indices)]))


EVALUATE[Sample] = _evaluate_sample


def cell_weights(kern: Kernel, frac: np.ndarray, order: int) -> np.ndarray:
    """The weights h⁽ᵒʳᵈᵉʳ⁾(f - i) of the taps i = 1-s .. s, shape ``frac.shape + (2s,)``,
    each tap's piece chosen by its cell as the C probes do (not by f - i, which rounds:
    f = 1e-320), at ``frac == 0`` the right-hand limits :func:`at_integer`."""
    columns = []
    for i in range(1 - kern.radius, kern.radius + 1):
        x = frac + float(-i) if i <= 0 else float(i) - frac
        h = np.polynomial.polynomial.polyval(x, kern.piece(-i if i <= 0 else i - 1, order))
        if i >= 1 and order % 2:
            h = -h  # h(x) = p(-x) for x < 0
        columns.append(np.where(frac == 0, at_integer(kern, -i, order), h))
    return np.stack(columns, axis=-1)


def _probe_block(img: Image, kern: Kernel, order: int, points: np.ndarray, world: bool = True) -> np.ndarray:
    d, s = img.dim, kern.radius
    x = index_positions(img, points)
    ok = inside(img, kern, points)
    x = np.where(ok[:, None], x, float(s - 1))  # a safe cell for the points that are out
    n = np.floor(x)
    f = x - n
    n = n.astype(np.intp)
    taps = np.arange(1 - s, s + 1)
    # the neighbourhood V[n0+i, n1+j, ...] of every point: (N, S, ..., S) + voxel shape
    grids = np.ix_(*([taps] * d)) if d > 1 else (taps,)
    # clipped: a point that is out reads some sample of the image (its result is ⊥), and an
    # image smaller than the support has no safe cell (every point is out; it raised IndexError)
    index = tuple(np.clip(n[:, a].reshape((-1,) + (1,) * d) + grids[a][None], 0, img.sizes[a] - 1)
                  for a in range(d))
    hood = img.data[index]
    # weights per axis and derivative order: w[a][m] has shape (N, S)
    w = [[cell_weights(kern, f[:, a], m) for m in range(order + 1)] for a in range(d)]
    letters = "abc"[:d]
    spec = "n" + letters + "...," + ",".join(f"n{c}" for c in letters) + "->n..."
    result = np.empty((points.shape[0],) + img.voxel_shape + (d,) * order)
    for axes in itertools.combinations_with_replacement(range(d), order):
        counts = [axes.count(a) for a in range(d)]
        with np.errstate(all="ignore"):  # ∞ and ⊥ samples follow IEEE arithmetic
            value = np.einsum(spec, hood, *(w[a][counts[a]] for a in range(d)), optimize=True)
        for perm in set(itertools.permutations(axes)):
            result[(Ellipsis,) + perm] = value
    if order and world:
        result = to_world(result, img, order)
    result[~ok] = np.nan
    return result


def world_is_index(img: Image) -> bool:
    """Whether the world-to-index map's linear part is the identity (index-space derivatives are the world's)."""
    return bool(np.array_equal(img.to_index[:img.dim, :img.dim], np.eye(img.dim)))


def to_world(result: np.ndarray, img: Image, order: int) -> np.ndarray:
    """Index-space derivatives to world space: ∂/∂p_j = Σ_a M[a, j] ∂/∂x_a per derivative
    index (M: the world-to-index matrix's linear part), the last first as Diderot's (a zero's sign: fieldval)."""
    if world_is_index(img):
        return result
    d = img.dim
    m = img.to_index[:d, :d]
    for k in reversed(range(order)):
        axis = result.ndim - order + k
        result = np.moveaxis(np.tensordot(result, m, axes=([axis], [0])), -1, axis)
    return result
