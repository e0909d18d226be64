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


def test_anisotropy_is_high_on_the_tract_and_low_off_it(tmp_path):
    a = _load("anisotropy").main(str(tmp_path / "a.png"), n=16, pixels=32)
    assert np.isfinite(a).all()
    assert np.nanmax(a) > 0.5 and np.nanmin(a) < 0.1
    assert np.all((a >= -1e-12) & (a <= 1 + 1e-12))
    assert _png_size(tmp_path / "a.png") == (64, 32)
