"""The ``fields`` suite (paper 004): value, gradient and Hessian probes of a 3-D bspln3
field at many random points.

Contenders: tensorlang's field probes (``tensorlang[c]``: generated C, OpenMP over the
points; ``tensorlang[numpy]``: the numpy reference reconstruction), scipy's
``ndimage.map_coordinates`` (order 3 on the B-spline coefficients, ``prefilter=False``,
the same function; values only) and a numpy-vectorized hand implementation (weights per
axis, the 4x4x4 neighbourhood gathered, contracted with einsum), which is also the
reference.

Counts per point: flops are those of the separable sum (64 taps of the innermost axis
plus 16 and 4 for the outer ones, 2 flops each, for every derivative combination the
probe needs, plus the 12 weight polynomials); bytes are the point read (24 B) and the
result written (8 B per component): the image (2 MiB at 64³) is read once per call and
mostly hits the cache, so it is not counted per point.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..contenders import Bound, Contender
from .common import Case, Context, make_rng, missing

SIZE = 64


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
            cell = [None]

            def call(pts=inp["points"]):
                previous = run.USE_C
                run.USE_C = use_c
                try:
                    cell[0] = E.probe(pts)
                finally:
                    run.USE_C = previous

            call(inp["points"][:4])  # normalize, lower and build once, before timing
            return Bound(call, lambda: cell[0])

        note = "generated C probe, OpenMP over points" if backend == "c" else "numpy reference reconstruction"
        result.append(Contender(name, "tensorlang", make, note))
    return result


def _scipy(ctx: Context) -> Contender:
    try:
        from scipy import ndimage
    except ImportError:
        return missing("scipy.map_coordinates", "peer", "scipy is not installed")

    def make(inp):
        data, coords = inp["data"], np.ascontiguousarray(inp["points"].T)
        cell = [None]

        def call():
            cell[0] = ndimage.map_coordinates(data, coords, order=3, prefilter=False)

        return Bound(call, lambda: cell[0])

    return Contender("scipy.map_coordinates", "peer", make, "order=3, prefilter=False (the same B-spline sum)")


def _hand(order: int) -> Contender:
    def make(inp):
        cell = [None]

        def call():
            cell[0] = hand_probe(inp["data"], inp["points"], order)

        return Bound(call, lambda: cell[0])

    return Contender("numpy (hand)", "peer", make, "vectorized: 4x4x4 gather + einsum per derivative")


def cases(ctx: Context) -> list[Case]:
    points = 2_000 if ctx.quick else 1_000_000
    result = []
    for order, kernel in enumerate(("value", "gradient", "hessian")):
        combos = len(list(itertools.combinations_with_replacement(range(3), order)))
        flops = float(points * (combos * 2 * (64 + 16 + 4) + 12 * 8))
        nbytes = float(points * (24 + 8 * 3 ** order))
        contenders = _tensorlang(ctx, order) + ([_scipy(ctx)] if order == 0 else []) + [_hand(order)]

        def inputs(points=points):
            rng = make_rng(4)
            return {"data": rng.standard_normal((SIZE, SIZE, SIZE)),
                    "points": rng.uniform(1.0, SIZE - 2.0001, size=(points, 3))}

        result.append(Case("fields", f"bspln3_{kernel}", f"{points} points", points, points, flops, nbytes,
                           inputs, lambda inp, order=order: hand_probe(inp["data"], inp["points"], order),
                           contenders, "scipy.map_coordinates" if order == 0 else "numpy (hand)",
                           tolerance=1e-10))
    return result
