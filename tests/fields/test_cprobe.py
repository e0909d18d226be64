"""The generated C probes (fields/cprobe.py) against the numpy reference
(fields/reconstruct.py): same values, same ⊥ outside the domain."""

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.fields import KERNELS, cprobe, reconstruct, run

pytestmark = pytest.mark.skipif(not cprobe.available(), reason="no working C compiler")

CASES = [(1, "ctmr", 1, ()), (2, "bspln3", 2, ()), (2, "tent", 0, (2,)), (3, "bspln3", 0, ()), (3, "bspln3", 1, ()),
         (3, "bspln3", 2, ()), (3, "c4hexic", 2, (3,)), (2, "c4hexic", 4, ()), (3, "ctmr", 1, (2, 2))]


@pytest.mark.slow
@pytest.mark.parametrize("d,kern,order,voxel", CASES)
def test_c_probes_equal_the_numpy_reference(d, kern, order, voxel):
    rng = np.random.default_rng(d + order)
    img = tl.image(rng.normal(size=(8,) * d + voxel), dim=d, world=np.diag([0.7, 1.3, 0.9][:d]))
    pts = rng.uniform(-1.0, 9.0, size=(200, d))
    pts[0, 0], pts[1, -1], pts[2, 0] = np.nan, np.inf, -np.inf
    ours = run.probe_tensor(img, KERNELS[kern], order, pts, use_c=True)
    ref = reconstruct.probe(img, KERNELS[kern], order, pts)
    assert ours.shape == ref.shape
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    assert np.allclose(ours, ref, equal_nan=True, rtol=1e-12, atol=1e-12)
    assert np.isnan(ours[:3]).all()


@pytest.mark.slow
def test_field_expressions_give_the_same_values_with_c_probes(monkeypatch):
    rng = np.random.default_rng(3)
    F = tl.field(rng.normal(size=(10, 10, 10)), "bspln3")
    E = -tl.grad(tl.norm(tl.grad(F))) @ tl.normalize(tl.grad(F))
    pts = rng.uniform(0, 10, size=(500, 3))
    reference = E.probe(pts)
    monkeypatch.setattr(run, "USE_C", True)
    assert np.allclose(E.probe(pts), reference, equal_nan=True, rtol=1e-10)
    assert np.array_equal(np.isnan(F.probe(pts)), ~tl.inside(F, pts))


@pytest.mark.parametrize("d,kern,order,voxel", CASES)
def test_the_scratch_layout_is_the_c_sources(d, kern, order, voxel):
    """cprobe.scratch_bytes sizes the caller's scratch for C's layout: its packed result
    (each distinct derivative once) is the generated source's PACKED, and tl_unpack's
    buffer of UNPACK points stays within 32 KiB, whatever the voxel's size."""
    import re

    from tensorlang.targets.c import probe as c_probe

    ncomp = int(np.prod(voxel, dtype=np.int64))
    src, _ = c_probe.source(d, KERNELS[kern], order, ncomp)
    packed = int(re.search(r"#define PACKED (\d+)", src).group(1))
    unpack = int(re.search(r"#define UNPACK (\d+)", src).group(1))
    assert packed == cprobe.packed_doubles(d, ncomp, order)
    assert packed == ncomp * len({tuple(sorted(c)) for c in np.ndindex(*(d,) * order)})
    assert 1 <= unpack and (unpack == 1 or unpack * ncomp * d ** order * 8 <= 32 << 10)
    lines = -(-8 * d * 10 // 64) + -(-4 * 10 // 64) + -(-8 * packed * 10 // 64)
    assert cprobe.scratch_bytes(10, d, packed) == 64 * lines + 64


def _cpu_has(feature: str) -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get(feature))


@pytest.mark.slow
@pytest.mark.parametrize("kern,voxel", [("bspln3", ()), ("tent", ()), ("bspln3", (2,))])
def test_the_avx2_and_plain_builds_of_a_probe_agree_with_the_default(kern, voxel, tmp_path):
    """The batch's samples come into the vector lanes by AVX-512 gathers, two AVX2 gathers
    or lane by lane, whichever the compiler targets (csrc/probe_head.h's TL_GATHER; 4-tap
    scalar rows by transposes): the same probe built for AVX2 only and for no vector
    extension at all gives the default build's results, ⊥ and ∞ included."""
    import ctypes
    import subprocess

    from tensorlang.targets.c import build as c_build
    from tensorlang.targets.c import probe as c_probe

    compiler = c_build.require_compiler()
    rng = np.random.default_rng(9)
    data = rng.normal(size=(9, 10, 11) + voxel)
    data.reshape(-1)[[5, 300]] = np.nan, np.inf
    img = tl.image(data, dim=3)
    pts = rng.uniform(-1.0, 11.0, size=(203, 3))
    pts[0, 0], pts[1, 2] = np.nan, np.inf
    ncomp = int(np.prod(voxel, dtype=np.int64))
    want = cprobe.probe(img, KERNELS[kern], 1, pts, sort=False)
    src, _ = c_probe.source(3, KERNELS[kern], 1, ncomp)
    (tmp_path / "probe.c").write_text(src)
    builds = [["-mno-avx512f"], ["-mno-avx512f", "-mno-avx2", "-mno-avx"]] if _cpu_has("AVX2") else [["-mno-avx"]]
    for extra in builds:
        so = tmp_path / f"probe{len(extra)}.so"
        built = subprocess.run([*compiler.command, "-O2", "-std=c99", "-fPIC", "-shared", "-march=native", *extra,
                                str(tmp_path / "probe.c"), "-o", str(so), "-lm"], capture_output=True, text=True)
        if built.returncode != 0:
            pytest.skip(f"the compiler does not build with {extra}: {built.stderr[-300:]}")
        fn = ctypes.CDLL(str(so)).tl_probe
        fn.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 5 + [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        out = np.empty_like(want)
        p = np.ascontiguousarray(pts)
        d = np.ascontiguousarray(img.data, dtype=np.float64)
        sizes = np.asarray(img.sizes, dtype=np.int64)
        m = np.ascontiguousarray(img.to_index[:3], dtype=np.float64)
        fn(len(p), p.ctypes.data, d.ctypes.data, sizes.ctypes.data, m.ctypes.data, out.ctypes.data, 1, 0, None)
        assert np.array_equal(np.isnan(out), np.isnan(want)), extra
        assert np.array_equal(out[np.isinf(want)], want[np.isinf(want)]), extra
        assert np.allclose(out, want, rtol=1e-12, atol=1e-12, equal_nan=True), extra


def _image_and_points_with_nonfinite(n: int):
    """A 12x13x14 image holding a NaN and an inf, and n points inside and outside it with
    NaN, inf and -inf coordinates among them."""
    rng = np.random.default_rng(n)
    data = rng.normal(size=(12, 13, 14))
    data.reshape(-1)[[7, 900]] = np.nan, np.inf
    pts = rng.uniform(-2.0, 15.0, size=(n, 3))
    pts[rng.integers(0, n, size=3), rng.integers(0, 3, size=3)] = np.nan, np.inf, -np.inf
    return tl.image(data, dim=3), pts


@pytest.mark.parametrize("n", [7, 8 * 17 + 3, 2999])
def test_the_block_order_asks_ahead_without_changing_a_result(n):
    """In block order each batch asks for the rows of the points a look-ahead later and for
    the coordinates of those 16 batches past them (prefetches, never reads): points near
    the end, outside, ⊥ or ∞ among them, give the given order's results bit for bit."""
    img, pts = _image_and_points_with_nonfinite(n)
    for order in (0, 1, 2):
        want = cprobe.probe(img, KERNELS["bspln3"], order, pts, sort=False)
        got = cprobe.probe(img, KERNELS["bspln3"], order, pts, sort=True)
        assert np.array_equal(got, want, equal_nan=True)
        assert np.isnan(got[~reconstruct.inside(img, KERNELS["bspln3"], pts)]).all()


@pytest.mark.parametrize("n", [7, 8 * 17 + 3, 2999])
def test_the_given_order_asks_for_coordinates_ahead_without_changing_a_result(monkeypatch, n):
    """In the given order each batch asks for the coordinates of the batch POINTS_AHEAD
    later (a prefetch, never a read, none past the last point): points near the end,
    outside, ⊥ or ∞ among them, give the same results bit for bit as without it."""
    from tensorlang.targets.c import probe as c_probe

    img, pts = _image_and_points_with_nonfinite(n)
    for order in (0, 1, 2):
        got = cprobe.probe(img, KERNELS["bspln3"], order, pts, sort=False)
        monkeypatch.setattr(c_probe, "POINTS_AHEAD", 0)
        want = cprobe.probe(img, KERNELS["bspln3"], order, pts, sort=False)
        monkeypatch.undo()
        assert np.array_equal(got, want, equal_nan=True)
        assert np.isnan(got[~reconstruct.inside(img, KERNELS["bspln3"], pts)]).all()
