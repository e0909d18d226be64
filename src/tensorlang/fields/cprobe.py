"""A probed convolution at any number of points, in generated C: one ``Sample`` statement
compiled by the C target, called through the step's general entry so that all the points
are sorted by the image's blocks at once (docs/fields.md, "How a probe is compiled").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import lang, limits
from ..ein import ir
from ..ein.fields import Sample
from ..errors import Source
from ..kernel import Kernel as CompiledKernel
from ..targets.c import build as c_build
from ..pipeline import Options
from ..sampling.image import Image
from ..sampling.kernels import Kernel
from ..schedule.probe import SORT_IMAGE_BYTES, SORT_POINTS, sorts as _sorts  # noqa: F401 - the rule's constants

#: the points of the program a probe compiles (its block); the general entry takes any number
POINTS = 1 << 14
#: how a probe's program is compiled: by the C target, optimized already (a Sample is no expression for the optimizer)
OPTIONS = Options("c", np.dtype(np.float64), opt=False)


def available() -> bool:
    """Whether a C compiler works here (the probes then run in generated C)."""
    return c_build.find_compiler() is not None


def geometry(img: Image) -> np.ndarray:
    """The geometry a Sample reads (dim × (dim+2)): per space axis, the world-to-index
    map's row, then the image's number of samples along it."""
    d = img.dim
    return np.ascontiguousarray(np.hstack([img.to_index[:d], np.asarray(img.sizes, dtype=np.float64)[:, None]]))


def sample_program(dim: int, voxel: tuple[int, ...], sizes: tuple[int, ...], kernel: str, order: int,
                   points: int, target: str = "E", image: str = "I0", geo: str = "G0", at: str = "X",
                   qual: str = "out") -> ir.Program:
    """The EIN program of one probed convolution at ``points`` points:
    ``target[p, α, β] = probe(image ⊛ kernel^order, at, geo)``, index-space derivatives."""
    indices = ("p",) + tuple(f"c{k}" for k in range(len(voxel))) + tuple(f"d{k}" for k in range(order))
    shape = (points,) + voxel + (dim,) * order
    body = Sample(kernel, order, indices, ir.Tensor(image, ()), ir.Tensor(at, ()), ir.Tensor(geo, ()))
    decls = (ir.Decl(image, sizes + voxel, "in"), ir.Decl(at, (points, dim), "in"),
             ir.Decl(geo, (dim, dim + 2), "in"), ir.Decl(target, shape, qual))
    return ir.Program(decls, (ir.Statement(target, tuple(zip(indices, shape)), body),))  # type: ignore[arg-type]


def compiled(program: ir.Program) -> CompiledKernel:
    """A probe's EIN ``program`` compiled by the C target through the one driver."""
    return CompiledKernel(lang.EIN, lang.EIN.check(program), Source("", "<field probe>"), OPTIONS)


_KERNELS: dict[tuple[Any, ...], Any] = limits.kept({})


def _kernel(img: Image, kern: Kernel, order: int):
    """The compiled one-probe program for ``img``'s shape (the C source does not depend on
    the image's sizes, which the geometry carries: one build serves every size)."""
    from ..targets.c import probe as c_probe

    program = sample_program(img.dim, img.voxel_shape, img.sizes, kern.name, order, POINTS)
    key = (program, c_probe.ROWS, c_probe.COHERENT_POINTS, c_probe.UNPACK_STREAM_BYTES, c_probe.POINTS_AHEAD, c_probe.TILES, c_probe.REGION_POINTS)
    found = _KERNELS.get(key)
    if found is None:
        if len(_KERNELS) > 64:
            _KERNELS.clear()
        found = _KERNELS[key] = compiled(program)
    return found


#: the block order's buffers (:func:`scratch_bytes`) are one scratch array kept between
#: calls, at most this large (fresh memory costs page faults: docs/internals/fields-probes.md)
SCRATCH_KEEP_BYTES = 256 << 20
_SCRATCH: list[np.ndarray] = limits.kept([])  # at most one, taken by a call and given back after it


def scratch_bytes(n: int, dim: int, packed: int) -> int:
    """The bytes of the block order's buffers as C's tl_probe lays them out for ``n``
    points: sorted coordinates, 4-byte keys and ``packed`` doubles a point, each on whole
    64-byte lines (64 more for the first's alignment)."""
    return sum(-(-nbytes // 64) * 64 for nbytes in (n * 8 * dim, n * 4, n * 8 * packed)) + 64


def packed_doubles(dim: int, ncomp: int, order: int) -> int:
    """The doubles of one point's packed result (C's PACKED): each distinct derivative
    component once, for each of the ``ncomp`` voxel components."""
    return ncomp * math.comb(dim + order - 1, order)


def _scratch(nbytes: int) -> np.ndarray:
    """A byte array of at least ``nbytes``: the kept one if it is large enough, else new
    (list.pop is atomic: two calls at once never share one)."""
    try:
        kept = _SCRATCH.pop()
    except IndexError:
        kept = None
    return kept if kept is not None and kept.nbytes >= nbytes else np.empty(nbytes, dtype=np.uint8)


def _keep(buf: np.ndarray) -> None:
    if buf.nbytes <= SCRATCH_KEEP_BYTES and not _SCRATCH:
        _SCRATCH.append(buf)


def sorts(img: Image, n: int) -> bool:
    """Whether a probe of ``n`` points of ``img`` goes in the image's block order
    (:func:`tensorlang.schedule.probe.sorts`)."""
    return _sorts(img.sizes, math.prod(img.voxel_shape), n)


def probe(img: Image, kern: Kernel, order: int, points: np.ndarray, out: np.ndarray | None = None,
          threads: int | None = None, sort: bool | None = None) -> np.ndarray:
    """Index-space derivatives of ``order`` at world ``points`` (as :func:`reconstruct.probe`
    before its chain rule), into ``out`` if given; ``sort``: in the image's block order
    (the same results; None: where :func:`sorts` says it pays)."""
    from ..targets.c.probe import general_entry

    runner = _kernel(img, kern, order).target
    entry, ffi = general_entry(runner), runner.ffi
    # C-contiguous and aligned: ascontiguousarray keeps a misaligned array, which C reads
    # with undefined behaviour
    pts, data, m = (np.require(a, np.float64, ("C", "A")) for a in (points, img.data, img.to_index[: img.dim]))
    sizes = np.asarray(img.sizes, dtype=np.int64)
    shape = (pts.shape[0],) + img.voxel_shape + (img.dim,) * order
    if out is None:
        out = np.empty(shape)
    elif out.shape != shape or out.dtype != np.float64 or not (out.flags.c_contiguous and out.flags.aligned):
        raise ValueError(f"out must be an aligned C-contiguous float64 array of shape {shape}")

    def ptr(a: np.ndarray, kind: str):
        return ffi.cast(kind, a.ctypes.data)

    n = pts.shape[0]
    blocked = 0 < n < 2**31 - 1 and (sorts(img, n) if sort is None else bool(sort))
    packed = packed_doubles(img.dim, math.prod(img.voxel_shape), order)
    scratch = _scratch(scratch_bytes(n, img.dim, packed)) if blocked else None
    entry(n, ptr(pts, "double *"), ptr(data, "double *"), ptr(sizes, "int64_t *"), ptr(m, "double *"),
          ptr(out, "double *"), int(threads or 0), int(blocked), ffi.NULL if scratch is None else ptr(scratch, "char *"))
    if scratch is not None:
        _keep(scratch)
    return out
