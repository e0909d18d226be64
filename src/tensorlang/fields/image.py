"""Images: sampled data on a regular grid with an index-to-world transform (004 §2.1).

An :class:`Image` is a float64 array whose first ``dim`` axes are space (1 to 3 of them)
and whose remaining axes are the voxel's tensor shape (scalar, vector, matrix), plus the
affine map from index space to world space: world = A·index + origin, held as one
homogeneous (dim+1)×(dim+1) matrix.  Index i along an axis is the centre of sample i
(0-based), so a kernel of support 2s reaches samples n+1-s .. n+s around n = ⌊x⌋.

Files: ``.npy`` (numpy's own format; the transform is the identity unless given) and
NRRD (``.nrrd``/``.nhdr``, the format of Diderot's and Teem's users), read with pynrrd.
NRRD's axis 0 is the fastest; it is read in that order (index_order 'F'), so array axis
k is NRRD axis k, as Diderot indexes images.  Axes whose kind is a vector or matrix kind
become the voxel shape; "space directions" and "space origin" (or "spacings") give the
transform.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field as dataclass_field

import numpy as np

from ..errors import error

_COUNTER = itertools.count(1)

#: NRRD axis kinds that are components of a voxel, and the tensor shape they make.
_VOXEL_KINDS = {
    "vector": None, "list": None, "point": None, "covariant-vector": None, "normal": None,
    "2-vector": (2,), "3-vector": (3,), "4-vector": (4,), "3-color": (3,), "4-color": (4,),
    "2d-matrix": (2, 2), "3d-matrix": (3, 3), "quaternion": (4,),
}
_SPACE_KINDS = {"domain", "space", "time"}


@dataclass(frozen=True, eq=False)
class Image:
    """Sampled data (space axes first, then the voxel shape) and its index-to-world map."""

    data: np.ndarray
    dim: int
    world: np.ndarray  # (dim+1, dim+1), homogeneous: world = world @ [index, 1]
    name: str = dataclass_field(default_factory=lambda: f"V{next(_COUNTER)}")

    @property
    def sizes(self) -> tuple[int, ...]:
        """The number of samples along each space axis."""
        return tuple(self.data.shape[: self.dim])

    @property
    def voxel_shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape[self.dim:])

    @property
    def to_index(self) -> np.ndarray:
        """The world-to-index map (the inverse of :attr:`world`), homogeneous."""
        return np.linalg.inv(self.world)

    def __repr__(self) -> str:
        return f"Image({self.name}, sizes={self.sizes}, voxel={self.voxel_shape})"


def _world_matrix(world, dim: int) -> np.ndarray:
    """The homogeneous index-to-world matrix from None (identity), a dim×dim linear part
    (column a: the world step of index axis a), a (dim+1)×(dim+1) homogeneous matrix, or
    a dict with ``spacing`` (per axis or one number), ``origin`` and ``directions`` (a
    dim×dim matrix whose columns are the unit world directions of the index axes)."""
    if world is None:
        return np.eye(dim + 1)
    if isinstance(world, dict):
        unknown = set(world) - {"spacing", "origin", "directions"}
        if unknown:
            raise error("input", f"world= takes spacing, origin and directions, not {sorted(unknown)}")
        directions = np.asarray(world.get("directions", np.eye(dim)), dtype=np.float64)
        spacing = np.broadcast_to(np.asarray(world.get("spacing", 1.0), dtype=np.float64), (dim,))
        origin = np.broadcast_to(np.asarray(world.get("origin", 0.0), dtype=np.float64), (dim,))
        if directions.shape != (dim, dim):
            raise error("input", f"world directions must be {dim}x{dim}, got shape {directions.shape}")
        m = np.eye(dim + 1)
        m[:dim, :dim] = directions * spacing[None, :]
        m[:dim, dim] = origin
        world = m
    try:
        m = np.array(world, dtype=np.float64)
    except (TypeError, ValueError):
        raise error("input", "world= must be a matrix of numbers") from None
    if m.shape == (dim, dim):
        h = np.eye(dim + 1)
        h[:dim, :dim] = m
        m = h
    if m.shape != (dim + 1, dim + 1):
        raise error("input", f"a {dim}-D image needs a {dim}x{dim} or {dim + 1}x{dim + 1} world matrix, "
                             f"got shape {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m[dim, :dim] != 0) or m[dim, dim] != 1:
        raise error("input", "the world matrix must be finite and affine (last row 0 ... 0 1)")
    if abs(np.linalg.det(m[:dim, :dim])) < 1e-300 or np.linalg.cond(m[:dim, :dim]) > 1e12:
        raise error("input", "the world matrix is singular: index space cannot be recovered from world space")
    return m


def image(data, dim: int | None = None, world=None) -> Image:
    """An image from an array: the first ``dim`` axes are space (default: all of them),
    the rest the voxel shape; ``world``: the index-to-world transform (default identity)."""
    if isinstance(data, Image):
        return data if world is None else Image(data.data, data.dim, _world_matrix(world, data.dim), data.name)
    try:
        array = np.array(data, dtype=np.float64)
    except (TypeError, ValueError):
        raise error("input", f"an image needs an array of numbers, got {type(data).__name__}") from None
    if dim is None:
        dim = array.ndim
    if not isinstance(dim, (int, np.integer)) or not 1 <= dim <= 3:
        raise error("input", f"an image has 1, 2 or 3 space axes, not {dim!r}")
    if array.ndim < dim:
        raise error("input", f"a {dim}-D image needs at least {dim} axes, the array has {array.ndim}")
    if any(n < 1 for n in array.shape):
        raise error("input", f"an image needs samples along every axis, got shape {array.shape}")
    array.setflags(write=False)
    return Image(array, int(dim), _world_matrix(world, int(dim)))


def load(path, dim: int | None = None, world=None) -> Image:
    """An image from a ``.npy`` or NRRD (``.nrrd``, ``.nhdr``) file; error[input] when it
    cannot be read."""
    name = os.fspath(path)
    suffix = os.path.splitext(name)[1].lower()
    if suffix == ".npy":
        try:
            data = np.load(name, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise error("input", f"cannot read image {name!r}: {exc}") from None
        return image(data, dim, world)
    if suffix in (".nrrd", ".nhdr"):
        return _load_nrrd(name, dim, world)
    raise error("input", f"cannot read image {name!r}: expected a .npy, .nrrd or .nhdr file")


def _load_nrrd(name: str, dim: int | None, world) -> Image:
    import nrrd  # pynrrd: imported here, so `import tensorlang` does not need it

    try:
        data, header = nrrd.read(name, index_order="F")
    except (OSError, ValueError, KeyError, nrrd.NRRDError) as exc:
        raise error("input", f"cannot read NRRD image {name!r}: {exc}") from None
    kinds = [str(k).lower() for k in header.get("kinds", ["domain"] * data.ndim)]
    space = [a for a, k in enumerate(kinds) if k in _SPACE_KINDS]
    voxel = [a for a, k in enumerate(kinds) if k not in _SPACE_KINDS]
    for a in voxel:
        if kinds[a] not in _VOXEL_KINDS:
            raise error("input", f"NRRD image {name!r}: axis {a} has kind {kinds[a]!r}, which this reader does not "
                                 f"take (vector, list, n-vector, 2D-matrix, 3D-matrix)")
    array = np.transpose(np.asarray(data, dtype=np.float64), space + voxel)
    vshape: tuple[int, ...] = ()
    for a in voxel:
        shape = _VOXEL_KINDS[kinds[a]] or (data.shape[a],)
        if int(np.prod(shape)) != data.shape[a]:
            raise error("input", f"NRRD image {name!r}: axis {a} of kind {kinds[a]} has {data.shape[a]} samples")
        vshape += shape
    d = len(space)
    array = array.reshape(array.shape[:d] + vshape)
    if dim is not None and dim != d:
        raise error("input", f"NRRD image {name!r} has {d} space axes, not {dim}")
    if world is None:
        m = np.eye(d + 1)
        directions = header.get("space directions")
        if directions is not None:
            rows = [np.asarray(directions[a], dtype=np.float64) for a in range(len(directions))]
            rows = [r for r in rows if r.ndim == 1 and np.all(np.isfinite(r))]
            if len(rows) == d and all(len(r) == d for r in rows):
                m[:d, :d] = np.stack(rows, axis=1)  # column a: the world step of index axis a
        elif header.get("spacings") is not None:
            spacings = np.asarray(header["spacings"], dtype=np.float64)[space]
            m[:d, :d] = np.diag(np.where(np.isfinite(spacings), spacings, 1.0))
        origin = header.get("space origin")
        if origin is not None and len(origin) == d:
            m[:d, d] = np.asarray(origin, dtype=np.float64)
        world = m
    return image(array, d, world)
