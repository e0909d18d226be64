"""The ``diderot`` suite (issue 42): Diderot strand programs run end to end — vimg, iso2d,
life, sphere, mip and dvr (our own programs in benchmarks/diderot/programs/, written with
the language features Diderot's public examples use), at realistic sizes.

Contenders:

* ``tensorlang[c]``: ``p = tl.compile(program, threads=N)`` then ``p(**inputs)`` (images
  passed as NRRD paths, the outputs read from the result); in a run with N > 1 threads also
  ``tensorlang[c] 1 thread``, interleaved with the rest.  The compile time is a note: the
  first contender of a case compiles into an empty build cache.  A program that would run
  in the strand interpreter (hours at these sizes) is reported as an error, not timed.  The
  other back ends are listed as skipped: a strand program runs through the C target (the
  strand interpreter is the oracle, far too slow at these sizes).
* ``diderot (seq)`` and ``diderot (pthread)``: the real compiler's executables
  (``diderotc --double --exec``, and ``--target=pthread`` run with ``-n N``; in a run with
  N > 1 threads also ``diderot (pthread) 1 thread``, ``-n 1``), an optional peer
  skipped when ``diderotc`` is not on PATH.  Built once per program, size and target into a
  cache (``$TENSORLANG_BENCH_CACHE`` or ``~/.cache/tensorlang-bench/diderot``); the first
  build's time is a note.  A call is a whole process: start-up, reading the NRRD inputs,
  running, writing the output (what a user of the executable pays).
* ``numpy``: the program vectorized over all strands with numpy/scipy, one array operation
  per super-step over every active strand (diderot_peers.py); it is also the reference,
  checked against the real executables by tests/diderot/test_bench_peers.py.

Results must agree with the reference to 1e-7 of its largest magnitude; iso2d's to 1e-5 (a
seed stops once its Newton step is below 1e-6: a rounding difference can add or save the
last step, which moves the point by up to that much).

"per element" in the tables is the time per strand (strands per second is its inverse).
"% of limit" is the probe bound: the roofline time of the probes the program makes (counted
exactly by the reference run: flops of the separable kernel sums, each inside probe once;
bytes: the image once per call plus the outputs, since a ray's or a pixel's neighbours
reuse its cache lines) divided by the measured time; life (no probes after the first step)
and sphere (no fields) count their neighbour sums instead.  Sizes: a 512² image plane
(vimg, iso2d seeds, life board) and a 256³ volume (mip, dvr; 256² rays for mip and 192² for
dvr, stepping two voxels: the numpy version takes about ten seconds a call beyond that);
``--quick``: tiny sizes.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from ..contenders import Bound, Contender
from . import diderot_peers as dp
from .common import Case, Context, missing

PEER_NOTE = "diderotc is not on PATH (the real Diderot compiler; /work/shared/tools/diderot/README.md builds it)"


def _camera(res: int, n: int, step_voxels: float) -> dict:
    return dict(eye=[4.0, 3.5, 3.0], at=[0.0, 0.0, 0.0], up=[0.0, 0.0, 1.0], fov=24.0, resU=res, resV=res,
                near=-1.8, far=1.8, dt=step_voxels * 2.0 / (n - 1))


#: sizes: (image n, plane), (volume n, mip rays, dvr rays), (life n, generations), (particles, steps)
SIZES = {"full": ((256, 512), (256, 256, 192), (512, 10), (10_000, 20)),
         "quick": ((48, 64), (32, 48, 32), (64, 5), (500, 5)),
         "tiny": ((16, 12), (12, 10, 10), (12, 3), (60, 2))}


def _specs(size: str) -> list[dict]:
    """Each benchmark: its program, the size label, how to make its inputs, strands."""
    (img_n, plane), (vol_n, mip_res, dvr_res), (life_n, gens), (parts, sgens) = SIZES[size]
    shade = dict(level=0.5, thick=0.02, stopAt=0.01, light=[1.0, 1.0, 2.0], ka=0.2, kd=0.7, ks=0.3, shiny=30.0,
                 tint=[0.9, 0.8, 0.6])
    return [
        dict(name="vimg", label=f"{plane}² pixels, {img_n}² image, bspln3 value+gradient", strands=plane * plane,
             output="rgb", images=("img", "cmap"), vdims={"cmap": 1}, make=lambda: {"images": {"img": dp.smooth2d(img_n), "cmap": dp.colormap()},
                                         "args": dict(center=[0.0, 0.0], height=1.9, resU=plane, resV=plane, level=0.2,
                                                      width=0.01, vmin=-1.5, vmax=1.5, background=[0.1, 0.1, 0.1])}),
        dict(name="iso2d", label=f"{plane}² seeds, {img_n}² image, Newton steps", strands=plane * plane, output="x",
             images=("img",), tolerance=1e-5, make=lambda: {"images": {"img": dp.smooth2d(img_n)},
                           "args": dict(level=0.2, res=plane, lo=[-0.95, -0.95], hi=[0.95, 0.95], maxSteps=16,
                                        tol=1e-6)}),
        dict(name="life", label=f"{life_n}² cells, {gens} generations", strands=life_n * life_n, output="alive",
             images=("board",), make=lambda: {"images": {"board": dp.board(life_n)}, "args": dict(N=life_n, gens=gens)},
             float_images=("board",)),
        dict(name="sphere", label=f"{parts} particles, {sgens} steps", strands=parts, output="pos",
             make=lambda: {"args": dict(num=parts, rad=float(np.sqrt(32.0 / parts)), step=0.002, gens=sgens)}),
        dict(name="mip", label=f"{mip_res}² rays, {vol_n}³ volume, tent", strands=mip_res * mip_res, output="m",
             images=("vol",), make=lambda: {"images": {"vol": dp.blob3d(vol_n)}, "args": _camera(mip_res, vol_n, 2.0)}),
        dict(name="dvr", label=f"{dvr_res}² rays, {vol_n}³ volume, bspln3 value+gradient", strands=dvr_res * dvr_res,
             output="rgba", images=("vol",), make=lambda: {"images": {"vol": dp.blob3d(vol_n)},
                                          "args": dict(_camera(dvr_res, vol_n, 2.0), **shade)}),
    ]


def flat(made: dict) -> dict:
    """A case's inputs as the runner keeps them (a flat dict of arrays, which it copies and
    checks for writes): ``img``, ``img:origin``, ``img:spacing`` per image, the point lists,
    ``arg:NAME`` per scalar or vector input."""
    out = {}
    for key, img in made.get("images", {}).items():
        out[key], out[f"{key}:origin"], out[f"{key}:spacing"] = img.data, img.origin, np.array(img.spacing)
    out.update(made.get("points", {}))
    out.update({f"arg:{k}": np.array(v) for k, v in made["args"].items()})
    return out


def nest(inp: dict, spec: dict) -> dict:
    """The inverse of :func:`flat`: images as ``Img``, arguments as Python numbers and lists."""
    images = {k: dp.Img(inp[k], inp[k].ndim - spec.get("vdims", {}).get(k, 0), inp[f"{k}:origin"], float(inp[f"{k}:spacing"]))
              for k in spec.get("images", ())}
    points = {k: inp[k] for k in spec.get("points", ())}
    args = {k[4:]: (v.item() if v.ndim == 0 else v.tolist()) for k, v in inp.items() if k.startswith("arg:")}
    return {"images": images, "points": points, "args": args}


# ------------------------------------------------------------------ counts: the probe bound
def _probe_counts(dim: int, taps: int, top: int, degree: int) -> float:
    """Flops of one probe of the derivatives 0..``top`` at a point, by the best separable
    algorithm (what the C probe does): every tap's weight per axis and order, a
    polynomial of ``degree`` less the order by Horner's rule (2 flops a degree: the
    derivative's weight is a polynomial of one degree less); the innermost axis summed
    once per order over every row of taps; each outer axis summing, per order still
    possible, the partial sums of the axis inside it (2 flops a multiply-add)."""
    def tuples(axes: int) -> int:  # derivative counts over ``axes`` axes summing to at most top
        return sum(1 for c in itertools.product(range(top + 1), repeat=axes) if sum(c) <= top)

    sums = taps ** (dim - 1) * (top + 1) * taps * 2
    sums += sum(tuples(dim - level) * taps ** level * taps * 2 for level in range(dim - 1))
    return float(sums + sum(dim * taps * 2 * max(degree - order, 0) for order in range(top + 1)))


def _counts(spec: dict, inp: dict, stats: dict) -> tuple[float, float]:
    """(flops, bytes) of one run, from the reference run's statistics."""
    name = spec["name"]
    image_bytes = sum(im.data.nbytes for im in inp.get("images", {}).values())
    out_bytes = 8.0 * stats.get("outputs", spec["strands"])
    if name in ("vimg", "iso2d", "dvr"):  # bspln3 value and gradient (one probe: orders 0 and 1 at once)
        flops = stats["probes"] * _probe_counts(2 if name != "dvr" else 3, 4, 1, 3)
    elif name == "mip":  # tent value
        flops = stats["probes"] * _probe_counts(3, 2, 0, 1)
    elif name == "life":
        flops = spec["strands"] * inp["args"]["gens"] * 8.0  # the eight-neighbour sum
        image_bytes += spec["strands"] * inp["args"]["gens"] * 2 * 4.0  # states read and written, every generation
    else:  # sphere: ~30 flops a neighbour pair (difference, length, the push), both ways
        flops = stats["pairs"] * 2 * 30.0  # pairs counted over every step
        image_bytes += spec["strands"] * inp["args"]["gens"] * 2 * 24.0
    return max(flops, 1.0), float(image_bytes + out_bytes)


def _reference(spec: dict, case_box: list):
    """The numpy version, which also counts the probes (neighbour pairs for sphere) it makes:
    the case's flops and bytes are set from them."""

    def ref(made: dict) -> np.ndarray:
        inp = nest(made, spec)
        count = [0]
        out = dp.NUMPY[spec["name"]](inp, count)
        case = case_box[0]
        case.flops, case.bytes = _counts(spec, inp, {"probes": count[0], "pairs": count[0], "outputs": out.size})
        return out

    return ref


# ------------------------------------------------------------------ contenders
def _write_inputs(spec: dict, inp: dict, where: Path) -> dict:
    """The program's inputs as the executables and tl.compile take them: images and point
    lists written as NRRD files in ``where``, named by input."""
    args = dict(inp["args"])
    for key, img in inp.get("images", {}).items():
        dp.write_nrrd(where / f"{key}.nrrd", img, "float" if key in spec.get("float_images", ()) else "double")
        args[key] = f"{key}.nrrd"
    for key, pts in inp.get("points", {}).items():
        dp.write_list_nrrd(where / f"{key}.nrrd", pts)
        args[key] = f"{key}.nrrd"
    return args


def _diderot(ctx: Context, spec: dict, notes: list, target: str, threads: int | None = None) -> Contender:
    """The real compiler's executable; ``threads``: the pthread executable's ``-n``
    (default: the run's count; named "... 1 thread" when it is 1 in a multi-threaded run)."""
    threads = ctx.threads if threads is None else threads
    label = "diderot (seq)" if target == "seq" else "diderot (pthread)"
    if target == "par" and threads != ctx.threads:
        label += f" {threads} thread" + ("s" if threads > 1 else "")
    if dp.diderotc() is None:
        return missing(label, "peer", PEER_NOTE)

    def make(made):
        inp = nest(made, spec)
        holder = tempfile.TemporaryDirectory(prefix="tl-bench-diderot-")  # removed with the bound call
        tmp = Path(holder.name)
        args = _write_inputs(spec, inp, tmp)
        proxies = {f"{k}.nrrd": tmp / f"{k}.nrrd" for k in inp.get("images", {})
                   if k not in spec.get("float_images", ())}
        proxies.update({f"{k}.nrrd": tmp / f"{k}.nrrd" for k in inp.get("points", {})})
        built = dp.build(spec["name"], target, proxies)
        if threads == ctx.threads:
            notes.append(f"{label}: diderotc took {built.first_compile_s:.1f} s to compile {spec['name']}.diderot"
                         + ("" if built.compile_s else " (cached build; the first build's time)"))
        cli = dp.cli_args(args) + (["-n", str(threads)] if target == "par" else [])
        cell: dict[str, np.ndarray] = {}

        def call(keep=holder):
            cell["out"] = dp.run_exe(built.exe, tmp, cli, "out.nrrd")

        return Bound(call, lambda: cell["out"])

    note = "the real compiler's executable: " + ("diderotc --double --exec" if target == "seq"
                                                 else f"diderotc --double --exec --target=pthread, -n {threads}")
    return Contender(label, "peer", make, note + "; a call is a whole process (start-up, NRRD in and out)")


def _tensorlang(ctx: Context, spec: dict, notes: list) -> list[Contender]:
    result = []
    for backend in ctx.backends:
        name = f"tensorlang[{backend}]"
        if backend != "c":
            result.append(missing(name, "tensorlang", "a Diderot program runs through the C target (its strand "
                                                      "interpreter is the oracle, too slow at these sizes)"))
            continue
        if ctx.threads > 1:  # the 1-thread run interleaved with the others (runner: the thread pair)
            result.append(_tensorlang_c(ctx, spec, notes, "tensorlang[c] 1 thread", 1))
        result.append(_tensorlang_c(ctx, spec, notes, name, ctx.threads))
    return result


#: programs whose compile time this process has measured (the first contender made compiles)
_COMPILED: set[str] = set()


@contextlib.contextmanager
def _fresh_build_cache(fresh: bool):
    """An empty C build cache while the first contender of a case compiles (so that the
    compile time is the C compiler's, not a cache hit); the user's cache otherwise."""
    if not fresh:
        yield
        return
    old = os.environ.get("TENSORLANG_CACHE")
    with tempfile.TemporaryDirectory(prefix="tl-bench-diderot-cache-") as where:
        os.environ["TENSORLANG_CACHE"] = where
        try:
            yield
        finally:
            if old is None:
                del os.environ["TENSORLANG_CACHE"]
            else:
                os.environ["TENSORLANG_CACHE"] = old


def _tensorlang_c(ctx: Context, spec: dict, notes: list, name: str, threads: int) -> Contender:
    """``tl.compile(program, threads=threads)`` called with the case's inputs."""
    def make(made):
        import tensorlang as tl

        inp = nest(made, spec)
        holder = tempfile.TemporaryDirectory(prefix="tl-bench-diderot-tl-")
        tmp = Path(holder.name)
        values = _values(spec, inp, tmp)
        prog = tmp / f"{spec['name']}.diderot"
        shutil.copy(dp.PROGRAMS / prog.name, prog)
        first = spec["name"] not in _COMPILED
        _COMPILED.add(spec["name"])
        with _fresh_build_cache(first):
            start = time.perf_counter()
            program = tl.compile(str(prog), threads=threads)
            program(**values)  # the first call builds the C (cached afterwards)
            seconds = time.perf_counter() - start
        if first:  # the compile: the first call's time beyond a second call's
            start = time.perf_counter()
            program(**values)
            seconds -= time.perf_counter() - start
            notes.append(f"tensorlang: compile time {seconds:.2f} s for {prog.name} (tl.compile and the C compiler, "
                         "into an empty build cache: the first call's time less a second call's)")
        _fast_enough(program, spec, tmp)
        cell: dict[str, np.ndarray] = {}

        def call(keep=holder):  # (the output as the program gives it: numpy's call converts nothing either)
            res = program(**values)
            cell["out"] = getattr(res, "outputs", res)[spec["output"]]

        return Bound(call, lambda: np.asarray(cell["out"], dtype=np.float64))

    return Contender(name, "tensorlang", make, f"tl.compile(program, threads={threads}); p(**inputs) "
                                               "(images as NRRD paths)")


def _values(spec: dict, inp: dict, where: Path) -> dict:
    """Keyword arguments of the compiled program: inputs written as NRRD files (paths),
    vectors as arrays, numbers as they are."""
    args = _write_inputs(spec, inp, where)
    images, points = inp.get("images", {}), inp.get("points", {})
    return {k: (str(where / v) if k in images else points[k] if k in points
                else np.asarray(v, dtype=float) if isinstance(v, list) else v) for k, v in args.items()}


def _fast_enough(program, spec: dict, where: Path) -> None:
    """Raise when the program does not run in C (the strand interpreter would take hours
    at the case's size): the executor says why (``executor_note``), checked on tiny inputs."""
    tiny = next(s for s in _specs("tiny") if s["name"] == spec["name"])
    sub = where / "tiny"
    sub.mkdir(exist_ok=True)
    program(**_values(tiny, tiny["make"](), sub))
    why = getattr(getattr(program, "program", None), "executor_note", None)
    if why:
        raise RuntimeError(f"not timed: the program runs in the strand interpreter ({why})")


def _numpy(spec: dict) -> Contender:
    def make(made):
        inp = nest(made, spec)
        fn = dp.NUMPY[spec["name"]]
        cell: dict[str, np.ndarray] = {}

        def call():
            cell["out"] = fn(inp, None)

        return Bound(call, lambda: cell["out"])

    how = {"life": "the 8-neighbour sum as 8 shifted views of a uint8 board, in place", "sphere": "cKDTree.query_pairs + bincount a step",
           "mip": "scipy.ndimage.map_coordinates(order=1) a step"}.get(
        spec["name"], "4x4 neighbourhood gathered, separable bspln3 weights, a step")
    return Contender("numpy", "peer", make, f"vectorized over all active strands: {how}")


def _flat_maker(make) -> Callable[[], dict]:
    return lambda: flat(make())


def cases(ctx: Context) -> list[Case]:
    result = []
    for spec in _specs("quick" if ctx.quick else "full"):
        notes: list[str] = []
        box: list[Case] = []
        contenders = (_tensorlang(ctx, spec, notes) + [_diderot(ctx, spec, notes, "seq")]
                      + ([_diderot(ctx, spec, notes, "par", 1)] if ctx.threads > 1 else [])
                      + [_diderot(ctx, spec, notes, "par"), _numpy(spec)])
        one = "tensorlang[c] 1 thread" if ctx.threads > 1 else "tensorlang[c]"
        par1 = "diderot (pthread) 1 thread" if ctx.threads > 1 else "diderot (pthread)"
        ratios = [("diderot (seq)", one, "tensorlang (1 thread) over Diderot's sequential executable", None),
                  (par1, one, "tensorlang (1 thread) over Diderot's pthread executable (-n 1)", None),
                  ("numpy", one, "tensorlang (1 thread) over numpy/scipy", None)]
        if ctx.threads > 1:
            ratios.append(("diderot (pthread)", "tensorlang[c]",
                           f"tensorlang ({ctx.threads} threads) over Diderot's pthread executable (-n {ctx.threads})", None))
        case = Case("diderot", spec["name"], spec["label"], spec["strands"], spec["strands"], 1.0, 1.0,
                    _flat_maker(spec["make"]), _reference(spec, box), contenders, "numpy", tolerance=spec.get("tolerance", 1e-7),
                    notes=notes, ratios=ratios)
        box.append(case)
        result.append(case)
    return result
