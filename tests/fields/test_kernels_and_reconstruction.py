"""Kernels (continuity, support, polynomial accuracy) and probes of image fields against
polynomials, finite differences and scipy.ndimage (paper 004 §2.2)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.fields import KERNELS, reconstruct

ndimage = pytest.importorskip("scipy.ndimage")

EXPECTED = {"tent": (2, 0, 1), "c1tent": (2, 1, 1), "ctmr": (4, 1, 2), "bspln3": (4, 2, 1), "c4hexic": (6, 4, 3),
            "c2tent": (2, 2, 1), "c2ctmr": (4, 2, 2), "bspln5": (6, 4, 1)}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_kernel_support_continuity_and_accuracy(name):
    k = KERNELS[name]
    assert (k.support, k.continuity, k.accuracy) == EXPECTED[name]
    assert np.all(k(np.array([k.support / 2, k.support / 2 + 0.5, -k.support / 2 - 1])) == 0)
    # c1tent, c2tent and c2ctmr are the tent and Catmull-Rom declared smoother than they are
    own = {"c1tent": 0, "c2tent": 0, "c2ctmr": 1}.get(name, k.continuity)
    eps = 1e-9
    for knot in range(0, k.radius + 1):
        for order in range(own + 1):
            left, right = k(knot - eps, order), k(knot + eps, order)
            assert abs(left - right) < 1e-6, (knot, order)
    # reproduces the polynomials of degree <= accuracy: Σ_i i^m h(f - i) = f^m, not one more
    f = np.array([0.0, 0.13, 0.5, 0.77, 0.999])
    taps = np.arange(1 - k.radius, k.radius + 1)
    w = reconstruct.cell_weights(k, f, 0)
    for m in range(k.accuracy + 1):
        assert np.allclose(w @ taps.astype(float) ** m, f ** m, atol=1e-13)
    assert not np.allclose(w @ taps.astype(float) ** (k.accuracy + 1), f ** (k.accuracy + 1), atol=1e-6)



def test_bspln5_is_the_quintic_b_spline_of_the_truncated_power_formula():
    # B5(x) = 1/5! sum_k (-1)^k C(6, k) (x + 3 - k)_+^5, written independently of the pieces
    from math import comb, factorial
    x = np.linspace(-3.5, 3.5, 141)
    expect = sum((-1) ** k * comb(6, k) * np.maximum(x + 3 - k, 0) ** 5 for k in range(7)) / factorial(5)
    assert np.allclose(KERNELS["bspln5"](x), expect, atol=1e-12)
    # partition of unity and the kernel's derivative against a central difference
    f = np.linspace(0, 0.99, 23)
    assert np.allclose(reconstruct.cell_weights(KERNELS["bspln5"], f, 0).sum(axis=-1), 1, atol=1e-13)
    h = 1e-6
    fd = (KERNELS["bspln5"](x + h) - KERNELS["bspln5"](x - h)) / (2 * h)
    assert np.allclose(KERNELS["bspln5"](x, 1), fd, atol=1e-8)


def test_the_c2_teaching_kernels_are_the_tent_and_catmull_rom_declared_smoother():
    x = np.linspace(-2.5, 2.5, 101)
    for c2, base in (("c2tent", "tent"), ("c2ctmr", "ctmr")):
        assert KERNELS[c2].continuity == 2 and KERNELS[c2].support == KERNELS[base].support
        for order in (0, 1, 2):
            assert np.array_equal(KERNELS[c2](x, order), KERNELS[base](x, order))


def _poly_image(shape, degree, rng, world=None):
    """An image sampled from a random polynomial of ``degree`` in world space, and the
    polynomial with its gradient."""
    d = len(shape)
    coef = rng.normal(size=(degree + 1,) * d)
    coef[np.indices(coef.shape).sum(axis=0) > degree] = 0  # total degree <= degree
    img = tl.image(np.zeros(shape), world=world)
    idx = np.indices(shape).reshape(d, -1).T.astype(float)
    pts = idx @ img.world[:d, :d].T + img.world[:d, d]

    def value(p):
        p = np.atleast_2d(p)
        return sum(c * np.prod([p[:, a] ** e[a] for a in range(d)], axis=0)
                   for e, c in np.ndenumerate(coef) if c)

    def gradient(p):
        p = np.atleast_2d(p)
        g = np.zeros(p.shape)
        for e, c in np.ndenumerate(coef):
            for a in range(d):
                if c and e[a]:
                    f = c * e[a] * p[:, a] ** (e[a] - 1)
                    g[:, a] += f * np.prod([p[:, b] ** e[b] for b in range(d) if b != a], axis=0)
        return g

    data = value(pts).reshape(shape)
    return tl.image(data, world=world), value, gradient


def _inner_points(img, kern, n, rng):
    d = img.dim
    s = KERNELS[kern].radius
    lo, hi = s - 1, np.array(img.sizes) - s
    idx = rng.uniform(lo, hi, size=(n, d))
    return idx @ img.world[:d, :d].T + img.world[:d, d]


WORLDS = {1: [[0.5, 1.0], [0, 1]], 2: [[0.8, 0.3, -1.0], [-0.2, 1.1, 2.0], [0, 0, 1]],
          3: {"spacing": [0.5, 1.0, 2.0], "origin": [1.0, -2.0, 0.5]}}


@pytest.mark.parametrize("kern,degree", [("tent", 1), ("bspln3", 1), ("ctmr", 2), ("c4hexic", 3)])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_fields_reproduce_the_polynomials_the_kernel_is_accurate_for(kern, degree, d):
    rng = np.random.default_rng(d * 10 + degree)
    shape = {1: (12,), 2: (9, 10), 3: (8, 7, 8)}[d]
    img, value, gradient = _poly_image(shape, degree, rng, WORLDS[d])
    F = tl.field(img, kern)
    pts = _inner_points(img, kern, 40, rng)
    assert np.allclose(F.probe(pts), value(pts), atol=1e-9)
    if KERNELS[kern].continuity >= 1 and degree >= 1:
        g = tl.jacobian(F).probe(pts) if d == 1 else tl.grad(F).probe(pts)
        # a kernel accurate to degree m reproduces the derivative of degree-m data when
        # its derivative is accurate (ctmr's derivative reproduces linear data exactly)
        assert np.allclose(g.reshape(-1, d), gradient(pts), atol=1e-8)


def test_tent_probes_equal_map_coordinates_order_1():
    rng = np.random.default_rng(1)
    data = rng.normal(size=(9, 11, 7))
    pts = rng.uniform(0, 1, size=(300, 3)) * (np.array(data.shape) - 1)
    ours = tl.field(data, "tent").probe(pts)
    inside = tl.inside(tl.field(data, "tent"), pts)
    ref = ndimage.map_coordinates(data, pts.T, order=1)
    assert inside.mean() > 0.9
    assert np.allclose(ours[inside], ref[inside], atol=1e-12)


def test_bspln3_probes_equal_map_coordinates_order_3_on_prefiltered_data():
    rng = np.random.default_rng(2)
    data = rng.normal(size=(10, 9, 12))
    coefficients = ndimage.spline_filter(data, order=3, mode="mirror")
    F = tl.field(coefficients, "bspln3")
    pts = 1 + rng.uniform(0, 1, size=(300, 3)) * (np.array(data.shape) - 3.0001)
    assert tl.inside(F, pts).all()
    ref = ndimage.map_coordinates(data, pts.T, order=3, mode="mirror")
    assert np.allclose(F.probe(pts), ref, atol=1e-12)
    same = ndimage.map_coordinates(coefficients, pts.T, order=3, prefilter=False)
    assert np.allclose(F.probe(pts), same, atol=1e-12)
    # interpolating: at the samples the prefiltered B-spline gives the data back
    grid = np.argwhere(np.ones((4, 4, 4))) + 3
    assert np.allclose(F.probe(grid.astype(float)), data[tuple(grid.T)], atol=1e-10)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["ctmr", "bspln3", "c4hexic"]),
       st.lists(st.floats(2.2, 6.8), min_size=2, max_size=2))
def test_gradient_and_hessian_agree_with_finite_differences(kern, point):
    rng = np.random.default_rng(7)
    data = rng.normal(size=(10, 10))
    F = tl.field(data, kern, world=[[1.0, 0.4, 0.0], [0.0, 0.9, 0.0], [0, 0, 1]])
    p = np.array(point)
    p = F.images[next(iter(F.images))].world[:2, :2] @ p  # index -> world (origin 0)
    h = 1e-6
    grad = tl.grad(F).probe(p)
    fd = np.array([(F.probe(p + e) - F.probe(p - e)) / (2 * h) for e in np.eye(2) * h])
    # a C1 kernel's gradient is continuous: the central difference matches to O(h)
    assert np.allclose(grad, fd, atol=1e-4)
    if KERNELS[kern].continuity >= 2:
        hess = tl.hessian(F).probe(p)
        fdh = np.array([(tl.grad(F).probe(p + e) - tl.grad(F).probe(p - e)) / (2 * h) for e in np.eye(2) * h])
        assert np.allclose(hess, fdh.T, atol=1e-4)
        assert np.allclose(hess, hess.T, atol=1e-12)


def test_vector_and_matrix_voxels_probe_componentwise():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(8, 9, 3, 3))
    F = tl.field(data, "ctmr", dim=2)
    assert F.shape == (3, 3)
    pts = rng.uniform(1, 6, size=(20, 2))
    whole = F.probe(pts)
    for i in range(3):
        for j in range(3):
            assert np.allclose(whole[:, i, j], tl.field(data[..., i, j], "ctmr").probe(pts))
            assert np.allclose(F[i, j].probe(pts), whole[:, i, j])
    J = tl.jacobian(F).probe(pts)
    assert J.shape == (20, 3, 3, 2)
    assert np.allclose(J[:, 1, 2, :], tl.grad(tl.field(data[..., 1, 2], "ctmr")).probe(pts))


def test_probe_matches_the_direct_reconstruction_for_a_world_transform():
    rng = np.random.default_rng(4)
    img = tl.image(rng.normal(size=(9, 9, 9)), world={"spacing": [0.3, 0.5, 0.7], "origin": [1, 2, 3]})
    pts = _inner_points(img, "bspln3", 30, rng)
    H = tl.hessian(tl.field(img, "bspln3")).probe(pts)
    direct = reconstruct.probe(img, KERNELS["bspln3"], 2, pts)
    assert np.allclose(H, direct)
    # world derivatives: d/dp = (1/spacing) d/dx
    idx = reconstruct.probe(tl.image(img.data), KERNELS["bspln3"], 2, (pts - [1, 2, 3]) / [0.3, 0.5, 0.7])
    assert np.allclose(H, idx / np.outer([0.3, 0.5, 0.7], [0.3, 0.5, 0.7]))
