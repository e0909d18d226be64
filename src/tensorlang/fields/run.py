"""Running a probe: normalize, lower and optimize once per field, then evaluate block by
block (paper 004 §5; docs/fields.md, "How a probe is compiled").

:func:`plan` turns ``Probe(F, x)`` into an optimized EIN program over a block of points
(passes/fields.py: normalization, Slice; passes.optimize) and keeps it on the field;
:func:`probe` computes the probe tensors the program reads (generated C, cprobe.py, or
the numpy reference, reconstruct.py) a chunk of points at a time and runs the program
on each block: compiled by the C target, or on the EIN evaluator without a compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..ein import interp, ir
from ..ein.fields import Conv, Probe
from ..ein.rewrite import Tally, counting
from .. import lang
from ..errors import Source, TensorLangError, error
from ..kernel import Kernel as CompiledKernel, check_threads, default_threads
from ..pipeline import Options
from ..passes import fields as field_passes
from ..passes import optimize
from ..semantics.interface import check_out
from . import cprobe, reconstruct
from ..sampling.image import Image
from ..sampling.kernels import KERNELS, Kernel

#: a Field (api.py imports this module, so it is not named here)
Field = Any

#: points per evaluation block: one lowered program serves every call
BLOCK = 4096
#: points per call of the probe kernels (bounds the probe tensors' memory)
CHUNK = 1 << 16
#: whether probes run in generated C when a compiler works (tests switch it to compare)
USE_C = True


def probe(f: Field, points, threads: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """``f`` at every point (Field.probe); ``threads``: the C probes' OpenMP threads
    (None: OpenMP's default, as compiled kernels take it); ``out``: where the result
    goes (checked by :func:`_target`), returned; None: a new array."""
    pts, single = _points(points, f.dim)
    nthreads = check_threads(threads) or default_threads()
    the_plan = probe_plan(f)
    result = _target(f, pts, single, out)
    direct = _direct(the_plan)
    if direct is not None:  # one probed convolution: computed straight into the result
        (p,) = [p for p in the_plan.probes if p.name == direct]
        img = f.images[p.image]
        probe_tensor(img, KERNELS[p.kernel], p.order, pts, threads=nthreads,  # ⊥ outside already
                     out=result.reshape((pts.shape[0],) + img.voxel_shape + (img.dim,) * p.order))
        return out if out is not None else result[0] if single else result
    for first in range(0, pts.shape[0], CHUNK):
        chunk = pts[first:first + CHUNK]
        probes = {p.name: probe_tensor(f.images[p.image], KERNELS[p.kernel], p.order, chunk, threads=nthreads)
                  for p in the_plan.probes}
        for start in range(0, chunk.shape[0], BLOCK):
            count = min(BLOCK, chunk.shape[0] - start)
            block = {name: _padded(a[start:start + count]) for name, a in probes.items()}
            result[first + start:first + start + count] = _run(f, the_plan, block)[:count]
    if f.images:
        result[~inside(f, pts)] = np.nan
    return out if out is not None else result[0] if single else result


def _target(f: Field, pts: np.ndarray, single: bool, out: np.ndarray | None) -> np.ndarray:
    """The array a probe writes, shape (N,) + σ: a new one, or ``out`` (shape σ for one
    point given as shape (dim,)) where it is a writeable C-contiguous float64 array of
    the result's shape that shares no memory with the points or the images."""
    shape = (pts.shape[0],) + f.shape
    if out is None:
        return np.empty(shape)
    want = f.shape if single else shape
    if isinstance(out, np.ndarray):  # first: an image's memory is read-only too, and this says why
        for name, img in f.images.items():
            if np.may_share_memory(out, img.data):
                raise error("input", f"out shares memory with the image {name!r} the field reads")
        if np.may_share_memory(out, pts):
            raise error("input", "out shares memory with the points")
    return check_out(out, "out", want, np.dtype(np.float64), contiguous=True).reshape(shape)


def inside(f: Field, points) -> np.ndarray:
    """Whether each point is in the field's domain: every image it reads has the whole
    kernel support around the point (Diderot's inside)."""
    pts, single = _points(points, f.dim)
    ok = np.ones(pts.shape[0], dtype=bool)
    for img, kern in _sources(f):
        ok &= reconstruct.inside(img, kern, pts)
    return ok[0] if single else ok


def _sources(f: Field) -> list[tuple[Image, Kernel]]:
    found = {(c.image, c.kernel) for c in ir.nodes(f.body) if isinstance(c, Conv)}
    return [(f.images[name], KERNELS[k]) for name, k in sorted(found)]


def _points(points, dim: int) -> tuple[np.ndarray, bool]:
    try:
        pts = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise error("input", f"points must be an array of numbers, got {type(points).__name__}") from None
    if dim == 1 and pts.ndim == 1:
        pts = pts[:, None]
    if pts.ndim == 1 and pts.shape == (dim,):
        return pts[None, :], True
    if pts.ndim == 0 and dim == 1:
        return pts.reshape(1, 1), True
    if pts.ndim != 2 or pts.shape[1] != dim:
        raise error("input", f"points for a {dim}-D field must have shape (N, {dim}), got {pts.shape}")
    return pts, False


# ------------------------------------------------------------------ the probe's program
@dataclass(frozen=True)
class Plan:
    probe: Any  # the field expression probed: Probe(F, x)
    normal: Any  # after normalization (004 §5.3)
    lowered: ir.Program  # after Slice (004 §5.7.2)
    program: ir.Program
    probes: tuple[field_passes.ProbeTensor, ...]
    stages: tuple[tuple[str, int], ...]
    rules: tuple[tuple[str, int], ...]


def probe_plan(f: Field) -> Plan:
    """Normalize, lower (Slice) and optimize the probe of ``f`` once (cached)."""
    plan = f._cache.get("plan")
    if plan is not None:
        return plan
    at = "x"
    probe: Any = Probe(f.body, at)
    tally = Tally()
    with counting(tally):
        normal = field_passes.normalize(probe, tally)
    images = {name: (img.voxel_shape, img.dim) for name, img in f.images.items()}
    constants = {name: a.shape for name, a in f.constants.items()}
    lowered = field_passes.lower(normal, tuple(zip(f.out, f.shape)), BLOCK, images, constants)
    optimized = optimize(lowered.program)
    stages = [("field", ir.size(probe)), ("normalize", ir.size(normal)), ("slice", lowered.program.size)]
    stages += [(f"opt:{r.name}", r.nodes) for r in optimized.log[1:]]
    rules = tuple((name, n) for name, n in tally.counts.items() if n)
    plan = Plan(probe, normal, lowered.program, optimized.program, lowered.probes, tuple(stages), rules)
    f._cache["plan"] = plan
    return plan


def probe_tensor(img: Image, kern: Kernel, order: int, points: np.ndarray, use_c: bool | None = None,
                 threads: int = 0, out: np.ndarray | None = None) -> np.ndarray:
    """One probed convolution at every point, world-space derivatives of ``order``: in
    generated C where a compiler works (cprobe.py, ``threads`` OpenMP threads, 0: the
    default), else the numpy reference; into ``out`` (C-contiguous float64 of the
    result's shape) where given, returned."""
    if use_c is None:
        use_c = USE_C and cprobe.available()
    if not use_c:
        result = reconstruct.probe(img, kern, order, points)
    elif order == 0 or reconstruct.world_is_index(img):
        return cprobe.probe(img, kern, order, points, out=out, threads=threads)
    else:
        result = reconstruct.to_world(cprobe.probe(img, kern, order, points, threads=threads), img, order)
    if out is None:
        return result
    out[...] = result
    return out


def _padded(a: np.ndarray) -> np.ndarray:
    """A block of probe values padded to the program's extent (the padding is dropped)."""
    if a.shape[0] == BLOCK:
        return a
    return np.concatenate([a, np.zeros((BLOCK - a.shape[0],) + a.shape[1:])])


def _direct(plan: Plan) -> str | None:
    """The probe tensor the program merely copies (``E[p, σ] = P[p, σ]``), if it does."""
    (stmt,) = plan.program.statements if len(plan.program.statements) == 1 else (None,)
    if stmt is None or not isinstance(stmt.body, ir.Tensor):
        return None
    if stmt.body.indices != tuple(v for v, _ in stmt.index) or stmt.body.name not in {p.name for p in plan.probes}:
        return None
    return stmt.body.name


def _compiled(f: Field, plan: Plan):
    """The probe's EIN program compiled by the C target (through the one driver,
    :mod:`tensorlang.pipeline`, from the EIN program itself), once per field; None where
    that is not possible (no compiler, ``USE_C`` off): the EIN evaluator runs it then."""
    if not USE_C:
        return None
    if "kernel" not in f._cache:
        kernel = None
        if cprobe.available():
            try:
                kernel = CompiledKernel(lang.EIN, lang.EIN.check(plan.program), Source("", "<field probe>"),
                                Options("c", np.dtype(np.float64)))
            except TensorLangError:
                kernel = None
        f._cache["kernel"] = kernel
    return f._cache["kernel"]


def _run(f: Field, plan: Plan, probes: Mapping[str, np.ndarray]) -> np.ndarray:
    """One block of the probe's EIN program, from its probe tensors."""
    direct = _direct(plan)
    if direct is not None:
        return probes[direct]
    inputs: dict[str, Any] = dict(probes)
    declared = {d.name for d in plan.program.decls}
    inputs.update({name: a for name, a in f.constants.items() if name in declared})
    kernel = _compiled(f, plan)
    if kernel is not None:
        return np.asarray(kernel(**inputs)["E"])
    store = interp.run(plan.program, inputs)
    return np.asarray(store["E"])
