"""The ``fields`` suite (paper 004): value, gradient and Hessian probes of a 3-D bspln3
field at many random points, on an image that fits the L2 cache (64³, 2 MiB) and on one
that does not (256³, 128 MiB; ``--quick``: 64³ only, 2000 points).

Contenders: tensorlang's field probes (``tensorlang[c]``: generated C, OpenMP over the
points, the run's thread count; ``tensorlang[numpy]``: the numpy reference
reconstruction), scipy's ``ndimage.map_coordinates`` (order 3 on the B-spline
coefficients, ``prefilter=False``, the same function; values only) and a
numpy-vectorized hand implementation (weights per axis, the 4x4x4 neighbourhood
gathered, contracted with einsum), which is also the reference.  tensorlang and scipy
write into a result array made once (``out=``, ``output=``), as every suite's
tensorlang contenders do: a caller probing in a loop reuses it, and a fresh 72 MB
Hessian result would add its pages' faults and zeroing (about 5 ms here) to the time.

The bound (:func:`counts`; docs/performance.md, "Fields: the probe bound made the
machine's", has the numbers) is the machine's limit for this work, whatever order the
points come in: the larger of the arithmetic at the core's FMA peak and the memory
traffic a perfect cache would leave.
Flops are the separable sum's, done outer axes first (16 rows of 4 samples weighted per
outer derivative combination, then 4 rows, then one 4-term dot product per derivative
component, 2 flops per multiply-add), the weight polynomials (Horner) and the
world-to-index map.  Bytes are the point read (24 B) and the result written (8 B per
component), per point, plus every cache line of the image that some point's support
touches, read once: for random points, of the image's L lines each point touches 22 (16
rows of 32 bytes at a random 8-byte offset; a row straddles two 64-byte lines 3 times in
8), so L·(1 − exp(−22·n/L)) distinct lines are expected (the whole image for 10⁶ points
on 256³).  A probe that moves more (a random-order gather reads 22 lines a point; the
block sort writes and reads the points again) is measured against this.  A note gives
what the gather alone takes (the 16 rows read and summed, C, one thread), measured in
the same run, in the points' random order and in the image's block order: the memory
floors of a probe that does not sort its points and of one that does.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..contenders import Bound, Contender
from .common import Case, Context, make_rng, missing

#: image sizes (n³ samples): one inside the L2 cache, one far beyond it
SIZES = (64, 256)
QUICK_SIZES = (64,)


def _weights(f: np.ndarray, order: int) -> np.ndarray:
    """Cubic B-spline weights (or their derivatives) of the 4 taps around f in [0, 1)."""
    t = f[:, None] - np.arange(-1, 3)[None, :]
    a = np.abs(t)
    sign = np.where(t < 0, -1.0, 1.0) if order % 2 else 1.0
    inner = [2 / 3 - a ** 2 + a ** 3 / 2, -2 * a + 1.5 * a ** 2, -2 + 3 * a][order]
    outer = [(2 - a) ** 3 / 6, -(2 - a) ** 2 / 2, 2 - a][order]
    return sign * np.where(a < 1, inner, np.where(a < 2, outer, 0.0))


def hand_probe(data: np.ndarray, pts: np.ndarray, order: int) -> np.ndarray:
    """The numpy hand implementation: value (order 0), gradient (1) or Hessian (2)."""
    n = np.floor(pts).astype(np.intp)
    f = pts - n
    taps = np.arange(-1, 3)
    hood = data[(n[:, 0, None, None, None] + taps[None, :, None, None]),
                (n[:, 1, None, None, None] + taps[None, None, :, None]),
                (n[:, 2, None, None, None] + taps[None, None, None, :])]
    w = [[_weights(f[:, a], m) for m in range(order + 1)] for a in range(3)]
    out = np.empty((pts.shape[0],) + (3,) * order)
    for axes in itertools.combinations_with_replacement(range(3), order):
        c = [axes.count(a) for a in range(3)]
        value = np.einsum("nabc,na,nb,nc->n", hood, w[0][c[0]], w[1][c[1]], w[2][c[2]], optimize=True)
        for perm in set(itertools.permutations(axes)):
            out[(Ellipsis,) + perm] = value
    return out


def _tensorlang(ctx: Context, order: int) -> list[Contender]:
    import tensorlang as tl
    from tensorlang.fields import cprobe, run

    result = []
    for backend in ctx.backends:
        name = f"tensorlang[{backend}]"
        if backend not in ("c", "numpy") or (backend == "c" and not cprobe.available()):
            why = "no C compiler" if backend == "c" else "field probes run in C or numpy (numpy is the reference)"
            result.append(missing(name, "tensorlang", why))
            continue

        def make(inp, use_c=backend == "c"):
            F = tl.field(inp["data"], "bspln3")
            E = [F, tl.grad(F), tl.hessian(F)][order]
            out = np.empty((inp["points"].shape[0],) + E.shape)  # made once, as a caller in a loop would

            def call(pts=inp["points"], target=out):
                previous = run.USE_C
                run.USE_C = use_c
                try:
                    E.probe(pts, threads=ctx.threads, out=target)
                finally:
                    run.USE_C = previous

            call(inp["points"][:4], out[:4])  # normalize, lower and build once, before timing
            return Bound(call, lambda: out)

        note = ("generated C probe, OpenMP over points; out= buffer" if backend == "c"
                else "numpy reference reconstruction; out= buffer")
        result.append(Contender(name, "tensorlang", make, note))
    return result


def _scipy(ctx: Context) -> Contender:
    try:
        from scipy import ndimage
    except ImportError:
        return missing("scipy.map_coordinates", "peer", "scipy is not installed")

    def make(inp):
        data, coords = inp["data"], np.ascontiguousarray(inp["points"].T)
        out = np.empty(coords.shape[1])

        def call():
            ndimage.map_coordinates(data, coords, output=out, order=3, prefilter=False)

        return Bound(call, lambda: out)

    return Contender("scipy.map_coordinates", "peer", make,
                     "order=3, prefilter=False (the same B-spline sum); output= buffer")


def _hand(order: int) -> Contender:
    def make(inp):
        cell = [None]

        def call():
            cell[0] = hand_probe(inp["data"], inp["points"], order)

        return Bound(call, lambda: cell[0])

    return Contender("numpy (hand)", "peer", make, "vectorized: 4x4x4 gather + einsum per derivative")


def counts(order: int, size: int, points: int) -> tuple[float, float, float]:
    """(flops, bytes) of one probe of derivative ``order`` on a ``size``³ float64 image,
    and the bytes read once per call of ``points`` uniformly random points: the image's
    lines their supports touch, each once (a perfect cache)."""
    taps, lanes, d = 4, 4, 3
    inner = len([c for c in itertools.product(range(order + 1), repeat=d - 1) if sum(c) <= order])
    per_axis1 = (order + 1) * taps * lanes * 2  # one t0: axis 1's rows, per derivative order
    flops = taps * per_axis1 + inner * taps * lanes * 2  # then axis 0
    flops += len(list(itertools.combinations_with_replacement(range(d), order))) * taps * 2  # the dots
    flops += sum(d * taps * (2 * (3 - m) + 1) for m in range(order + 1))  # weights: Horner, argument
    flops += d * d * 2  # the world-to-index map
    nbytes = 24 + 8 * d ** order  # the point, the result
    lines = 8 * size ** d / 64
    touched = taps * taps * (1 + 3 / 8)  # lines a point's 16 rows touch
    once = 64 * lines * -math.expm1(-touched * points / lines)
    return float(flops), float(nbytes), float(once)


#: what the "% of limit" column of this suite compares with (docs/performance.md, "Fields:
#: the probe bound made the machine's")
LIMIT_NOTE = ("% of limit: the larger of the flops at the FMA peak and the bytes a perfect cache would move "
              "(each image line some point touches read once, the points read, the results written), "
              "whatever the points' order: the block sort's traffic and a random-order gather's misses are "
              "the probe's, not the bound's")


def l2_bytes() -> int | None:
    """The L2 cache's size (sysfs), None if unknown."""
    from ..machine import _cache_sizes

    text = _cache_sizes().get("L2 Unified", "")
    if not text:
        return None
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


_GATHER = """
#include <stdint.h>
/* the probe's 16 rows of 4 samples per point read and summed (no weights, no checks;
   points inside); with ahead > 0 the rows of the point that many ahead are asked for
   first, as the probe's look-ahead does in block order */
void tl_gather(int64_t n, const double *pts, const double *data, int64_t s0, int64_t s1, double *out, int64_t ahead)
{
    for (int64_t p = 0; p < n; p++) {
        if (ahead > 0 && p + ahead < n) {
            const double *q = pts + 3*(p + ahead);
            const double *c = data + ((int64_t)q[0] - 1)*s0 + ((int64_t)q[1] - 1)*s1 + (int64_t)q[2] - 1;
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) __builtin_prefetch(c + i*s0 + j*s1, 0, 1);
        }
        const double *b = data + ((int64_t)pts[3*p] - 1)*s0 + ((int64_t)pts[3*p+1] - 1)*s1 + (int64_t)pts[3*p+2] - 1;
        double sum = 0.0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                const double *r = b + i*s0 + j*s1;
                sum += (r[0] + r[1]) + (r[2] + r[3]);
            }
        out[p] = sum;
    }
}
"""
#: the block order of :func:`gather_seconds`: blocks of 2**GATHER_SHIFT cells per axis
#: (the probe's own, schedule/probe.py SORT_SHIFT), the rows of the point this many ahead
#: asked for (the probe's REGION_AHEAD)
GATHER_SHIFT = 4
GATHER_AHEAD = 512


def block_order(points: np.ndarray, size: int) -> np.ndarray:
    """The permutation putting ``points`` (index space, inside a ``size``³ image) in the
    order of the image's blocks of 2**GATHER_SHIFT cells, stable (as the probe's sort)."""
    cell = np.floor(points).astype(np.int64) >> GATHER_SHIFT
    blocks = ((size - 1) >> GATHER_SHIFT) + 1
    return np.argsort((cell[:, 0] * blocks + cell[:, 1]) * blocks + cell[:, 2], kind="stable")


def gather(data: np.ndarray, points: np.ndarray, ahead: int = 0):
    """The gather alone (``tl_gather``): a callable reading the 16 rows of every point and
    summing them into its result, and that result; None without a C compiler."""
    from tensorlang.targets.c import build

    compiler = build.find_compiler()
    if compiler is None:
        return None
    ffi, lib = build.build_and_load(_GATHER, compiler, "void tl_gather(int64_t n, const double *pts, "
                                    "const double *data, int64_t s0, int64_t s1, double *out, int64_t ahead);")
    out = np.empty(points.shape[0])
    size = data.shape[0]

    def call():
        lib.tl_gather(points.shape[0], ffi.cast("double *", points.ctypes.data), ffi.cast("double *", data.ctypes.data),
                      size * size, size, ffi.cast("double *", out.ctypes.data), ahead)

    return call, out


def gather_seconds(data: np.ndarray, points: np.ndarray, repeats: int = 5) -> dict[str, float] | None:
    """The gather's floors, the median CPU time of this thread (``time.thread_time``: other
    processes' load does not count) of :func:`gather`: the points in their random order
    (each row a miss: what a probe that does not sort waits on), and in block order with
    the rows ahead asked for (the permutation made outside the clock: the memory part of a
    probe that sorts)."""
    import time

    sorted_points = np.ascontiguousarray(points[block_order(points, data.shape[0])])
    result = {}
    for name, pts, ahead in (("random order", points, 0), ("block order", sorted_points, GATHER_AHEAD)):
        made = gather(data, pts, ahead)
        if made is None:
            return None
        call = made[0]
        call()
        times = []
        for _ in range(repeats):
            start = time.thread_time()
            call()
            times.append(time.thread_time() - start)
        result[name] = float(np.median(times))
    return result


def cases(ctx: Context) -> list[Case]:
    points = 2_000 if ctx.quick else 1_000_000
    l2 = l2_bytes()
    result = []
    for size in (QUICK_SIZES if ctx.quick else SIZES):
        def inputs(points=points, size=size):
            rng = make_rng(4)
            return {"data": rng.standard_normal((size, size, size)),
                    "points": rng.uniform(1.0, size - 2.0001, size=(points, 3))}

        notes = [LIMIT_NOTE]
        if not ctx.quick:
            made = inputs()
            floors = gather_seconds(made["data"], made["points"])
            del made
            if floors is not None:
                notes.append("the gather alone (16 rows per point read and summed, C, 1 thread, CPU time) takes "
                             f"{floors['random order'] * 1e3:.1f} ms in the points' random order and "
                             f"{floors['block order'] * 1e3:.1f} ms in block order (sorted outside the clock, rows "
                             f"{GATHER_AHEAD} points ahead prefetched): the memory floors of a probe that does not "
                             "and that does sort the points")
        where = "fits L2" if l2 is not None and 8 * size ** 3 <= l2 else "beyond L2"
        for order, kernel in enumerate(("value", "gradient", "hessian")):
            flops, nbytes, once = counts(order, size, points)
            contenders = _tensorlang(ctx, order) + ([_scipy(ctx)] if order == 0 else []) + [_hand(order)]
            result.append(Case("fields", f"bspln3_{kernel}", f"{size}^3 ({where}), {points} points", points, points,
                               flops * points, nbytes * points + once, inputs,
                               lambda inp, order=order: hand_probe(inp["data"], inp["points"], order),
                               contenders, "scipy.map_coordinates" if order == 0 else "numpy (hand)",
                               tolerance=1e-10, notes=list(notes)))
    return result
