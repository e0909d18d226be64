"""``Field.probe(points, out=buf)``: the result lands in the caller's array, the same
numbers as a fresh result, in C and in the numpy reference; a bad ``out`` is a clear
error that writes nothing."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tensorlang as tl
from tensorlang.fields import cprobe, run

rng = np.random.default_rng(7)
DATA = rng.standard_normal((9, 10, 8))
VECTORS = rng.standard_normal((8, 9, 7, 3))
SLANTED = {"spacing": (0.5, 1.5, 2.0), "origin": (1.0, -2.0, 0.5)}


def fields():
    """Fields whose probe is one convolution copied out (value, ∇, Hessian, also of a
    vector image and in a slanted world) and ones computed by a program over probes."""
    F = tl.field(DATA, "bspln3")
    G = tl.field(DATA, "c4hexic", world=SLANTED)
    V = tl.field(VECTORS, "bspln3", dim=3)
    return {
        "value": F, "gradient": tl.grad(F), "hessian": tl.hessian(F),
        "slanted gradient": tl.grad(G), "slanted hessian": tl.hessian(G),
        "jacobian": tl.jacobian(V),
        "norm of gradient": tl.norm(tl.grad(F)), "sum": F + 2.0 * tl.field(DATA[::-1].copy(), "tent"),
    }


FIELDS = fields()
BACKENDS = [False] + ([True] if cprobe.available() else [])

#: corners of the domains and beyond, and the values that are not numbers
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, 3.5, 6.99, 7.0, 20.0]


def _points(n: int, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    pts = r.uniform(-1.0, 12.0, (n, 3))
    special = r.random((n, 3)) < 0.15
    pts[special] = r.choice(SPECIAL, size=int(special.sum()))
    return pts


@pytest.mark.slow
@pytest.mark.parametrize("use_c", BACKENDS)
@pytest.mark.parametrize("name", list(FIELDS))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # one USE_C per test
@given(n=st.integers(1, 300), seed=st.integers(0, 2**31 - 1), threads=st.sampled_from([1, 2]))
def test_out_receives_exactly_the_fresh_result(monkeypatch, name, use_c, n, seed, threads):
    monkeypatch.setattr(run, "USE_C", use_c)
    E = FIELDS[name]
    pts = _points(n, seed)
    fresh = E.probe(pts, threads=threads)
    buf = np.full((n,) + E.shape, 1234.5)  # stale values: every one must be overwritten
    got = E.probe(pts, threads=threads, out=buf)
    assert got is buf
    np.testing.assert_array_equal(buf, fresh)  # NaN where fresh has NaN, bit for bit elsewhere
    assert np.array_equal(np.signbit(buf), np.signbit(fresh))


@pytest.mark.parametrize("use_c", BACKENDS)
def test_one_point_writes_an_out_of_the_voxel_shape(monkeypatch, use_c):
    monkeypatch.setattr(run, "USE_C", use_c)
    for E in (FIELDS["value"], FIELDS["hessian"], FIELDS["norm of gradient"]):
        buf = np.full(E.shape, -7.0)
        got = E.probe(np.array([3.2, 4.1, 2.7]), out=buf)
        assert got is buf
        np.testing.assert_array_equal(buf, E.probe(np.array([3.2, 4.1, 2.7])))


def _bad_outs(E, pts):
    shape = (pts.shape[0],) + E.shape
    readonly = np.zeros(shape)
    readonly.flags.writeable = False
    wide = np.zeros(shape[:-1] + (2 * shape[-1],))
    return {
        "wrong shape": np.zeros((pts.shape[0] + 1,) + E.shape),
        "float32": np.zeros(shape, dtype=np.float32),
        "not contiguous": wide[..., ::2],
        "read-only": readonly,
        "a list": np.zeros(shape).tolist(),
    }


@pytest.mark.parametrize("use_c", BACKENDS)
def test_a_bad_out_is_an_input_error_and_nothing_is_written(monkeypatch, use_c):
    monkeypatch.setattr(run, "USE_C", use_c)
    E = FIELDS["hessian"]
    pts = _points(50, 3)
    for why, bad in _bad_outs(E, pts).items():
        before = np.array(bad, copy=True)
        with pytest.raises(tl.TensorLangError) as err:
            E.probe(pts, out=bad)
        assert err.value.code == "input", why
        assert np.array_equal(np.asarray(bad), before, equal_nan=True), why


def test_out_overlapping_the_points_or_the_image_is_refused():
    data = DATA.copy()
    F = tl.field(data, "tent")
    pts = np.ascontiguousarray(np.random.default_rng(1).uniform(1, 6, (12, 3)))
    with pytest.raises(tl.TensorLangError, match="points") as err:
        F.probe(pts, out=pts.reshape(-1)[:12])
    assert err.value.code == "input"
    img = next(iter(F.images.values())).data
    with pytest.raises(tl.TensorLangError, match="image") as err:
        F.probe(pts, out=img.reshape(-1)[:12])
    assert err.value.code == "input"
    assert np.array_equal(img, DATA)
    # the field holds its own copy of the caller's array, which may then receive probes
    F.probe(pts, out=data.reshape(-1)[:12])
    np.testing.assert_array_equal(data.reshape(-1)[:12], F.probe(pts))
