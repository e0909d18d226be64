"""Running a probe (paper 004 §5; docs/fields.md, "How a probe is compiled"): the plan
(:func:`probe_plan`, once per field) and the run block by block (:func:`probe`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from ..ein import interp, ir
from ..ein.fields import Conv, Probe
from ..ein.rewrite import Tally
from ..errors import TensorLangError, error
from ..kernel import check_threads, default_threads
from ..passes import fields as field_passes
from ..passes import optimize
from ..semantics.interface import check_out
from . import cprobe, reconstruct
from ..sampling.image import Image
from ..sampling.kernels import KERNELS, Kernel

#: a Field (api.py imports this module, so it is not named here)
Field = Any

#: points per evaluation block: one lowered program serves every call (its probe steps
#: sort the block's points by the image's blocks where that pays: schedule/probe.py)
BLOCK = cprobe.POINTS
#: whether probes run in generated C when a compiler works (tests switch it to compare)
USE_C = True


def probe(f: Field, points, threads: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """``f`` at every point (Field.probe's arguments; ``out`` checked by :func:`_target`)."""
    pts, single = _points(points, f.dim)
    nthreads = check_threads(threads) or default_threads()
    the_plan = probe_plan(f)
    result = _target(f, pts, single, out)
    if the_plan.direct is not None:  # one probed convolution: all points at once, straight into the result
        p = the_plan.direct
        img = f.images[p.image]
        probe_tensor(img, KERNELS[p.kernel], p.order, pts, threads=nthreads,  # ⊥ outside already
                     out=result.reshape((pts.shape[0],) + img.voxel_shape + (img.dim,) * p.order))
        return out if out is not None else result[0] if single else result
    kernel = _compiled(f, the_plan)
    inputs = _inputs(f, the_plan)
    block = np.empty((BLOCK, f.dim))
    for start in range(0, pts.shape[0], BLOCK):
        count = min(BLOCK, pts.shape[0] - start)
        block[:count] = pts[start:start + count]
        block[count:] = np.nan  # points past the last: ⊥, dropped
        inputs["X"] = block
        if kernel is not None:
            kernel.threads = nthreads or None
            value = kernel(**inputs)["E"]
        else:
            value = interp.run(the_plan.program, inputs)["E"]
        result[start:start + count] = np.asarray(value)[:count]
    if f.images:
        result[~inside(f, pts)] = np.nan
    return out if out is not None else result[0] if single else result


def _target(f: Field, pts: np.ndarray, single: bool, out: np.ndarray | None) -> np.ndarray:
    """The array a probe writes, shape (N,) + σ: a new one, or ``out`` where it qualifies
    (docs/fields.md: ``E.probe(points, out=buf)``)."""
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
    """Whether each point is in the field's domain (api.inside)."""
    pts, single = _points(points, f.dim)
    ok = np.ones(pts.shape[0], dtype=bool)
    for name, kern in sorted({(c.image, c.kernel) for c in ir.nodes(f.body) if isinstance(c, Conv)}):
        ok &= reconstruct.inside(f.images[name], KERNELS[kern], pts)
    return ok[0] if single else ok


def _points(points, dim: int) -> tuple[np.ndarray, bool]:
    """The points (real numbers already: api._real_points) as an (N, dim) array, and
    whether they were one point."""
    pts = np.asarray(points, dtype=np.float64)
    if dim == 1 and pts.ndim == 1:
        pts = pts[:, None]
    if pts.ndim == 1 and pts.shape == (dim,):
        return pts[None, :], True
    if pts.ndim == 0 and dim == 1:
        return pts.reshape(1, 1), True
    if pts.ndim != 2 or pts.shape[1] != dim:
        hint = (f" (an image whose last axis holds each voxel's components, RGB say, is a {dim - 1}-D field: "
                f"tl.field(img, kernel, dim={dim - 1}))" if pts.ndim == 2 and pts.shape[1] == dim - 1 else "")
        raise error("input", f"points for a {dim}-D field must have shape (N, {dim}), got {pts.shape}{hint}")
    return pts, False


# ------------------------------------------------------------------ the probe's program
@dataclass(frozen=True)
class Plan:
    probe: Any  # the field expression probed: Probe(F, x)
    normal: Any  # after normalization (004 §5.3)
    lowered: ir.Program  # after Slice (004 §5.7.2)
    #: what a block of points runs: each probe tensor a Sample statement (a probe step of
    #: the schedule, schedule/probe.py), the world's chain rule, then the optimized program
    program: ir.Program
    probes: tuple[field_passes.ProbeTensor, ...]
    stages: tuple[tuple[str, int], ...]
    rules: tuple[tuple[str, int], ...]
    #: the probe tensor the optimized program merely copies (``E[p, σ] = P[p, σ]``), if it does
    direct: field_passes.ProbeTensor | None = None
    #: the program's variable for each image name: (image, geometry, world-to-index matrix)
    names: tuple[tuple[str, tuple[str, str, str]], ...] = ()


def probe_plan(f: Field) -> Plan:
    """Normalize, lower (Slice) and optimize the probe of ``f`` once (cached)."""
    plan = f._cache.get("plan")
    if plan is not None:
        return plan
    at = "x"
    probe: Any = Probe(f.body, at)
    tally = Tally()
    normal = field_passes.normalize(probe, tally)
    images = {name: (img.voxel_shape, img.dim) for name, img in f.images.items()}
    constants = {name: a.shape for name, a in f.constants.items()}
    lowered = field_passes.lower(normal, tuple(zip(f.out, f.shape)), BLOCK, images, constants)
    names = {name: (f"I{j}", f"G{j}", f"J{j}") for j, name in
             enumerate(dict.fromkeys(p.image for p in lowered.probes))}
    chained = {p.name for p in lowered.probes if p.order and not reconstruct.world_is_index(f.images[p.image])}
    optimized = optimize(_chain_rule(lowered, chained, names, f))
    stages = [("field", ir.size(probe)), ("normalize", ir.size(normal)), ("slice", lowered.program.size)]
    stages += [(f"opt:{r.name}", r.nodes) for r in optimized.log[1:]]
    rules = tuple((name, n) for name, n in tally.counts.items() if n)
    direct = _direct(optimized.program, lowered.probes)
    program = _with_samples(optimized.program, lowered.probes, chained, names, f)
    if direct is not None and direct.name not in chained:  # the probe step writes the result itself
        img = f.images[direct.image]
        image, geo, _ = names[direct.image]
        program = cprobe.sample_program(img.dim, img.voxel_shape, img.sizes, direct.kernel, direct.order, BLOCK,
                                        image=image, geo=geo)
    plan = Plan(probe, normal, lowered.program, program, lowered.probes, tuple(stages), rules, direct,
                tuple(names.items()))
    f._cache["plan"] = plan
    return plan


def _chain_rule(lowered: field_passes.Lowered, chained: set[str], names: Mapping[str, tuple[str, str, str]],
                f: Field) -> ir.Program:
    """The lowered program with each probe tensor in ``chained`` computed from its
    index-space derivatives ``Q`` by the chain rule, one statement per derivative index
    (∂/∂p_j = Σ_a J[a, j] ∂/∂x_a, in reconstruct.to_world's order: the last axis first)."""
    if not chained:
        return lowered.program
    decls = [d for d in lowered.program.decls if d.name not in chained]
    statements = []
    for p in lowered.probes:
        if p.name not in chained:
            continue
        shape = next(d.shape for d in lowered.program.decls if d.name == p.name)
        d = f.images[p.image].dim
        jac = names[p.image][2]
        if all(x.name != jac for x in decls):
            decls.insert(0, ir.Decl(jac, (d, d), "in"))
        front = ("p",) + tuple(f"c{k}" for k in range(len(shape) - 1 - p.order))
        derivs = [f"d{k}" for k in range(p.order)]
        source = "Q" + p.name[1:]
        decls.insert(0, ir.Decl(source, shape, "in"))
        for k in reversed(range(p.order)):  # the last axis first, as Diderot's executables (to_world)
            target = p.name if k == 0 else f"{source}_{k}"
            if target != p.name:
                decls.append(ir.Decl(target, shape, ir.TEMP))
            reading = derivs[:k] + ["a"] + derivs[k + 1:]
            body = ir.Sum((("a", d),), ir.BinOp("*", ir.Tensor(source, front + tuple(reading)),
                                                ir.Tensor(jac, ("a", derivs[k]))))
            statements.append(ir.Statement(target, tuple(zip(front + tuple(derivs), shape)), body))
            source = target
        decls.append(ir.Decl(p.name, shape, ir.TEMP))
    return ir.Program(tuple(decls), tuple(statements) + lowered.program.statements)


def _with_samples(program: ir.Program, probes, chained: set[str], names: Mapping[str, tuple[str, str, str]],
                  f: Field) -> ir.Program:
    """``program`` (which reads the probe tensors as inputs) preceded by the Sample
    statements that compute them from the images at the points ``X``."""
    sampled = {("Q" + p.name[1:]) if p.name in chained else p.name: p for p in probes}
    decls = []
    for name in dict.fromkeys(p.image for p in probes):
        img = f.images[name]
        image, geo, _ = names[name]
        decls += [ir.Decl(image, img.sizes + img.voxel_shape, "in"), ir.Decl(geo, (img.dim, img.dim + 2), "in")]
    decls.append(ir.Decl("X", (BLOCK, f.dim), "in"))
    statements = []
    for target, p in sampled.items():
        shape = next(d.shape for d in program.decls if d.name == target)
        one = cprobe.sample_program(f.dim, shape[1:len(shape) - p.order], (), p.kernel, p.order, BLOCK, target=target,
                                    image=names[p.image][0], geo=names[p.image][1], qual=ir.TEMP)
        statements.append(one.statements[0])
    decls += [replace(d, qual=ir.TEMP) if d.name in sampled else d for d in program.decls]
    return ir.Program(tuple(decls), tuple(statements) + program.statements)


def stage_text(plan: Plan, stage: str) -> str:
    """``schedule``, ``loops`` or ``c`` (the code) of the probe's program for the C target,
    through the one driver (``--emit`` of a program's stage)."""
    from .. import pipeline

    until = "code" if stage == "c" else stage
    compiled = pipeline.compile(plan.program, cprobe.OPTIONS, until=until)
    text = compiled.show(until)
    assert text is not None, "the C target runs every stage up to its code"
    return text


def _inputs(f: Field, plan: Plan) -> dict[str, Any]:
    """What a block's call reads besides its points: images, geometries, world-to-index
    matrices, lifted tensors."""
    declared = {d.name for d in plan.program.decls}
    inputs: dict[str, Any] = {}
    for name, (image, geo, jac) in plan.names:
        img = f.images[name]
        inputs[image] = np.ascontiguousarray(img.data, dtype=np.float64)
        inputs[geo] = cprobe.geometry(img)
        if jac in declared:
            inputs[jac] = np.ascontiguousarray(img.to_index[:img.dim, :img.dim])
    inputs.update({name: a for name, a in f.constants.items() if name in declared})
    return inputs


def probe_tensor(img: Image, kern: Kernel, order: int, points: np.ndarray, use_c: bool | None = None,
                 threads: int = 0, out: np.ndarray | None = None) -> np.ndarray:
    """One probed convolution at every point, world-space derivatives of ``order``, in C
    (cprobe.py; ``use_c`` chooses) or by the numpy reference, into ``out`` if given."""
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


def _direct(program: ir.Program, probes) -> field_passes.ProbeTensor | None:
    """The probe tensor ``program`` merely copies (``E[p, σ] = P[p, σ]``), if it does."""
    (stmt,) = program.statements if len(program.statements) == 1 else (None,)
    if stmt is None or not isinstance(stmt.body, ir.Tensor) or stmt.body.indices != tuple(v for v, _ in stmt.index):
        return None
    return next((p for p in probes if p.name == stmt.body.name), None)


def _compiled(f: Field, plan: Plan):
    """The probe's EIN program compiled by the C target once per field; None without a
    compiler or with ``USE_C`` off (the EIN evaluator runs it then)."""
    if not USE_C:
        return None
    if "kernel" not in f._cache:
        try:
            f._cache["kernel"] = cprobe.compiled(plan.program) if cprobe.available() else None
        except TensorLangError:
            f._cache["kernel"] = None
    return f._cache["kernel"]
