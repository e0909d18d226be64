"""The field examples (examples/fields/) run, at small sizes, and draw what they claim."""

import importlib.util
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parents[2] / "examples" / "fields"


def _load(name):
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    spec = importlib.util.spec_from_file_location(f"fields_example_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_canny_finds_the_edges_of_both_shapes(tmp_path):
    edges = _load("canny").main(str(tmp_path / "c.png"), n=32, pixels=64)
    assert _png_size(tmp_path / "c.png") == (64, 64)
    assert 40 < edges.sum() < 64 * 64 // 4  # thin curves, not blobs
    left, right = edges[:, :32].sum(), edges[:, 32:].sum()
    assert left > 10 and right > 10


def test_helicity_spans_both_signs_and_stays_a_cosine(tmp_path):
    h = _load("helicity").main(str(tmp_path / "h.png"), n=16, pixels=32)
    assert np.nanmax(h) > 0.9 and np.nanmin(h) < -0.9
    assert np.all(np.abs(h[np.isfinite(h)]) <= 1 + 1e-9)


@pytest.mark.slow
def test_anisotropy_is_high_on_the_tract_and_low_off_it(tmp_path):
    a = _load("anisotropy").main(str(tmp_path / "a.png"), n=16, pixels=32)
    assert np.isfinite(a).all()
    assert np.nanmax(a) > 0.5 and np.nanmin(a) < 0.1
    assert np.all((a >= -1e-12) & (a <= 1 + 1e-12))
    assert _png_size(tmp_path / "a.png") == (64, 32)


def test_iso2d_particles_land_on_the_isocontour(tmp_path):
    landed, F = _load("iso2d").main(str(tmp_path / "i.png"), n=24, seeds=12, steps=10)
    assert len(landed) > 10
    assert np.allclose(F.probe(landed), 0.5, atol=1e-6)


def test_lic_averages_noise_along_the_flow(tmp_path):
    lic = _load("lic").main(str(tmp_path / "l.png"), n=24, pixels=24, steps=4)
    assert np.isfinite(lic).all() and 0 <= lic.min() and lic.max() <= 1
    # averaging shrinks the noise's spread
    assert lic.std() < np.random.default_rng(0).uniform(size=(24, 24)).std()


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["bspln3", "c1tent"])
def test_dvr_renders_an_opaque_object(tmp_path, kernel):
    alpha = _load("dvr").main(str(tmp_path / "d.png"), kernel=kernel, n=20, pixels=24, samples=24)
    assert alpha.max() > 0.5 and alpha.min() < 0.05


def test_tensor2_hessians_of_components_are_slices_of_the_jacobians_jacobian(tmp_path):
    import tensorlang as tl

    V, pts = _load("tensor2").main(str(tmp_path / "t.png"), n=12, pixels=8)
    second = tl.jacobian(tl.jacobian(V)).probe(pts)
    for i in range(3):
        assert np.allclose(tl.hessian(V[i]).probe(pts), second[:, i], rtol=1e-12, atol=1e-12)
