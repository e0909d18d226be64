"""The strand interpreter's field values against an independent numpy evaluation, and
sphere() queries against brute force.

The independent probe below follows 004 §2.2 directly: index position by solving the
index-to-world map, the kernel called on ``f - i`` for every tap (``Kernel.__call__``,
exact coefficients, not the interpreter's tap polynomials), the border modes as
``np.pad`` modes, and world-space derivatives as M^T (index derivative) M ... with M the
world-to-index matrix."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.sampling.image import index_point
from tensorlang.sampling.kernels import KERNELS
from tensorlang.lang.diderot import fieldval as FV
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.interp import within_sphere

_PAD = {"clamp": "edge", "wrap": "wrap", "mirror": "symmetric"}


def reference_probe(img, kern, order: int, p: np.ndarray, mode: str | None) -> np.ndarray:
    d, s = img.dim, kern.radius
    lin = img.world[:d, :d]
    # index position by the homogeneous world-to-index map in the order of Diderot's runtime (and
    # the interpreter): on a knot, another rounding picks the next cell (numpy's product gave
    # -8.5e-17 where the runtime's sums give 0, and the cell read a ⊥ sample the probe does not)
    x = index_point(img.to_index, p)
    n = np.floor(x).astype(int)
    f = x - n
    data = img.data
    if mode is None:
        if np.any(n + 1 - s < 0) or np.any(n + s > np.array(img.sizes) - 1):
            return np.full(img.voxel_shape + ((d,) * order if d > 1 else ()), np.nan)
    else:  # pad by more than the support on every side, then shift the cell
        pad = s + 2 * max(img.sizes) + int(np.max(np.abs(n))) + 1
        data = np.pad(data, [(pad, pad)] * d + [(0, 0)] * (data.ndim - d), mode=_PAD[mode])
        n = n + pad
    taps = np.arange(1 - s, s + 1)
    hood = data[np.ix_(*[n[a] + taps for a in range(d)])]
    out = np.empty(img.voxel_shape + (d,) * order)
    import itertools
    for axes in itertools.product(range(d), repeat=order):
        v = hood
        for a in range(d):
            w = _kernel_at_taps(kern, f[a], taps, axes.count(a))
            with np.errstate(all="ignore"):
                v = np.einsum("i,i...->...", w, v)
        out[(Ellipsis,) + axes] = v
    m = np.linalg.inv(lin)  # world to index: each derivative axis picks up a factor of M
    with np.errstate(all="ignore"):  # ⊥ and ±inf samples
        for k in range(order):
            axis = out.ndim - order + k
            out = np.moveaxis(np.tensordot(out, m, axes=([axis], [0])), -1, axis)
    return out.reshape(img.voxel_shape) if d == 1 and order else out


def _kernel_at_taps(kern, f: float, taps: np.ndarray, order: int) -> np.ndarray:
    """h⁽ᵒʳᵈᵉʳ⁾(f - i) per tap; at a knot (f = 0) tap i >= 1 takes the piece on its own
    side, |x| in (i-1, i], as Diderot's generated code does (that matters only for the
    derivatives of the kernels declared smoother than they are: c1tent, c2tent, c2ctmr)."""
    out = []
    for i in taps:
        k = -i if i <= 0 else i - 1
        value = np.polynomial.polynomial.polyval(abs(f - i), kern.piece(k, order))
        out.append(-value if (i >= 1 and order % 2) else value)
    return np.array(out)


@st.composite
def probe_case(draw):
    d = draw(st.integers(1, 3))
    name = draw(st.sampled_from(sorted(KERNELS)))
    kern = KERNELS[name]
    order = draw(st.integers(0, min(kern.continuity, 2)))
    sizes = tuple(draw(st.integers(kern.support, kern.support + 3)) for _ in range(d))
    voxel = draw(st.sampled_from([(), (2,)]))
    values = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
    special = st.sampled_from([np.nan, np.inf, -np.inf])
    n = int(np.prod(sizes + voxel))
    data = np.array(draw(st.lists(values, min_size=n, max_size=n))).reshape(sizes + voxel)
    if draw(st.booleans()):  # a few ⊥ / ±inf samples
        for _ in range(draw(st.integers(1, 3))):
            data[tuple(draw(st.integers(0, k - 1)) for k in sizes)] = draw(special)
    spacing = [draw(st.sampled_from([0.5, 1.0, 1.5, -0.75])) for _ in range(d)]
    origin = [draw(st.floats(-3, 3)) for _ in range(d)]
    lin = np.diag(spacing)
    if d > 1 and draw(st.booleans()):  # a rotated grid
        t = draw(st.floats(0, 3))
        rot = np.eye(d)
        rot[:2, :2] = [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]
        lin = rot @ lin
    world = np.eye(d + 1)
    world[:d, :d], world[:d, d] = lin, origin
    mode = draw(st.sampled_from([None, "clamp", "wrap", "mirror"]))
    # a point in (or a little beyond) the index range, carried to world space
    idx = np.array([draw(st.floats(-1.5, k + 0.5)) for k in sizes])
    p = lin @ idx + np.array(origin)
    return tl.image(data, d, world=world), kern, order, p, mode


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(probe_case())
def test_field_probes_agree_with_an_independent_numpy_evaluation(case):
    img, kern, order, p, mode = case
    field = FV.Conv(FV.BorderImage(img, mode) if mode else img, kern)
    got = np.asarray(field.value(p, order))
    want = reference_probe(img, kern, order, p, mode)
    assert got.shape == want.shape
    finite = np.isfinite(want)
    # the same samples are read: a probe is finite exactly where the reference is
    assert np.array_equal(np.isfinite(got), finite)
    scale = 1 + np.max(np.abs(img.data[np.isfinite(img.data)]), initial=0)
    # Diderot's 12-digit kernel coefficients (fieldval.DIDEROT_DIGITS) against exact ones
    assert np.allclose(got[finite], want[finite], rtol=1e-9, atol=1e-9 * scale * 4 ** order)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.sampled_from(sorted(KERNELS)), st.data())
def test_inside_is_the_support_test_in_index_space(d, name, data):
    kern = KERNELS[name]
    sizes = tuple(data.draw(st.integers(kern.support, kern.support + 4)) for _ in range(d))
    img = tl.image(np.zeros(sizes), world={"spacing": 0.5, "origin": -1.0})
    idx = np.array([data.draw(st.floats(-2, k + 1)) for k in sizes])
    p = 0.5 * idx - 1.0
    x = (p + 1.0) / 0.5  # Diderot's generated test: strict, on the index position itself
    want = bool(np.all(x > kern.radius - 1) and np.all(x < np.array(sizes) - kern.radius))
    assert FV.Conv(img, kern).inside(p) == want


def test_tap_weights_partition_unity_and_match_the_kernel():
    from tensorlang.sampling.kernels import tap_weights
    for kern in KERNELS.values():
        taps = np.arange(1 - kern.radius, kern.radius + 1)
        for f in (0.0, 0.25, 0.5, 0.999):
            for order in range(min(kern.continuity, 2) + 1):
                exact = tap_weights(kern, order, f)
                rounded = tap_weights(kern, order, f, FV.DIDEROT_DIGITS)
                if order == 0:
                    assert abs(exact.sum() - 1) < 1e-13
                if f > 0:  # at f = 0 a knot: the kernel's own value depends on the side
                    assert np.allclose(exact, kern(f - taps, order), atol=1e-12)
                assert np.allclose(rounded, exact, atol=1e-9)


# ---------------------------------------------------------------- sphere queries
SPHERE = """#version 2.0
input vec2{} pts ("positions");
input real r ("query radius") = 0.25;
strand pt (vec2 p0) {
   output vec2 pos = p0;
   output int n = 0;
   output real far = 0;
   update {
      foreach (pt q in sphere(r)) {
         n += 1;
         far = max(far, |q.pos - pos|);
      }
      stabilize;
   }
}
create_collection { pt(pts{i}) | i in 0 .. length(pts)-1 }
"""


@pytest.fixture(scope="module")
def sphere_program():
    return strands(check(parse_program(SPHERE)))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 16), st.integers(0, 16)), min_size=1, max_size=40),
       st.integers(0, 8))
def test_sphere_queries_find_what_brute_force_finds(sphere_program, grid_points, r16):
    # positions and radii on a 1/16 grid: squared distances are exact, so the strict
    # test dist² < r² has its boundary cases (a neighbour at exactly r is not found)
    pts = np.array(grid_points, dtype=np.float64) / 16
    r = r16 / 16
    res = sphere_program.run({"pts": pts, "r": r})
    d2 = np.sum((pts[:, None, :] - pts[None, :, :]) ** 2, axis=-1)
    near = (d2 < r * r) & ~np.eye(len(pts), dtype=bool)
    assert res.outputs["n"].tolist() == near.sum(axis=1).tolist()
    far = np.where(near, np.sqrt(d2), 0).max(axis=1)
    assert np.allclose(res.outputs["far"], far)


def test_within_sphere_sums_in_single_precision():
    # a point at distance² 1 + 2^-30 from the centre: in single precision that sum is 1,
    # below r² = 1 + 2^-31, so Diderot's runtime finds it (a double sum would not)
    r = np.sqrt(1 + 2.0 ** -31)
    pts = np.array([[np.sqrt(1 + 2.0 ** -30), 0.0], [1.0, 0.0], [1.5, 0.0]])
    assert within_sphere(pts, np.zeros(2), r).tolist() == [True, True, False]
    assert within_sphere(pts, np.zeros(2), 1.0).tolist() == [False, False, False]  # strictly inside


@pytest.mark.parametrize("name", sorted(FV.LIFTED))
def test_lifted_functions_and_abs_of_fields_differentiate_by_the_chain_rule(name):
    # a positive, smooth 1-D field; derivatives against central differences of the value
    xs = np.linspace(0, 3, 16)
    img = tl.image(2 + np.sin(xs) + 0.1 * xs ** 2, world={"spacing": 0.25, "origin": -1.0})
    base = FV.Conv(img, KERNELS["c4hexic"])
    inner = FV.Lifted("*", base, 0.2, 1) if name in ("asin", "acos") else base  # inside (-1, 1)
    for field in (FV.Lifted1(name, inner), FV.Lifted("norm", FV.Lifted("+", base, -2.5, 1), None, 1)):
        p, h = np.array([0.83]), 1e-4
        for order in (1, 2, 3):
            fd = (np.asarray(field.value(p + h, order - 1)) - np.asarray(field.value(p - h, order - 1))) / (2 * h)
            assert np.allclose(field.value(p, order), fd, rtol=1e-5, atol=1e-6), (name, order)
