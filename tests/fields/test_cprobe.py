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
