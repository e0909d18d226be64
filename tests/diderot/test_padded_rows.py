"""A large 3-D NRRD volume kept between calls has its rows padded (``sampling.image._padded``,
``PAD_ROWS`` doubles after each row whose length is a multiple of 512 bytes): the samples
are the file's, read-only, the rows further apart; a ray program's outputs are the unpadded
image's bit for bit (the C probes take any strides); other shapes are kept as read."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.sampling import image as I
from tensorlang.targets.c import build as c_build

nrrd = pytest.importorskip("nrrd")

RAY = """#version 1.0
input image(3)[] vol;
field#2(3)[] F = bspln3 ⊛ vol;
strand ray (int ui, int vi) {
   vec3 dir = normalize([0.3 + 0.05 * real(ui), 1.0, 0.4 + 0.07 * real(vi)]);
   real t = 0.0;
   output real s = 0;
   output vec3 g = [0, 0, 0];
   update {
      if (t > 70.0) { stabilize; }
      vec3 p = [2.0, 1.5, 2.5] + t * dir;
      if (inside(p, F)) { s += F(p); g += ∇F(p); }
      t += 0.7;
   }
}
initially [ ray(ui, vi) | vi in 0..6, ui in 0..7 ];
"""


def _write(path, data):
    nrrd.write(str(path), data, {"encoding": "raw"}, index_order="F")


def test_a_kept_volumes_rows_are_padded_and_its_samples_are_the_files(tmp_path, monkeypatch):
    monkeypatch.setattr(I, "SAME_BYTES", 0)  # every file is large
    monkeypatch.setattr(I, "RACY_NS", 0)
    monkeypatch.setattr(I, "_LAST", {})
    rng = np.random.default_rng(2)
    data = rng.normal(size=(64, 21, 19))  # rows of 512 bytes
    data[10, 5, 5], data[30, 9, 9], data[40, 12, 3] = np.nan, np.inf, -np.inf
    _write(tmp_path / "v.nrrd", data)
    img = I.load(tmp_path / "v.nrrd")
    assert I.load(tmp_path / "v.nrrd") is img  # kept
    assert img.data.strides == (8, 8 * (64 + I.PAD_ROWS), 8 * (64 + I.PAD_ROWS) * 21) and not img.data.flags.writeable
    assert np.array_equal(img.data, data, equal_nan=True)
    for shape in ((60, 21, 19), (64, 21)):  # rows not a multiple of 512 bytes, a 2-D image: as read
        _write(tmp_path / "w.nrrd", rng.normal(size=shape))
        assert I.load(tmp_path / "w.nrrd").data.strides[1] == 8 * shape[0]


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
@pytest.mark.parametrize("threads", [1, 2])
def test_a_ray_program_on_padded_rows_gives_the_unpadded_bits(tmp_path, monkeypatch, threads):
    monkeypatch.setattr(I, "SAME_BYTES", 0)
    monkeypatch.setattr(I, "RACY_NS", 0)
    monkeypatch.setattr(I, "_LAST", {})
    rng = np.random.default_rng(4)
    data = rng.normal(size=(64, 30, 28))
    data[:, 14:16, :10] = np.nan  # a slab some rays cross
    _write(tmp_path / "a.nrrd", data)
    _write(tmp_path / "b.nrrd", data)
    p = strands(check(parse_program(RAY)))
    monkeypatch.setattr(I, "PAD_ROWS", 0)
    plain = p.run({"vol": str(tmp_path / "a.nrrd")}, backend="c", threads=threads)
    monkeypatch.setattr(I, "PAD_ROWS", 8)
    padded = p.run({"vol": str(tmp_path / "b.nrrd")}, backend="c", threads=threads)
    assert [v[2].data.strides[1] for v in I._LAST.values()] == [512, 576]
    for name in ("s", "g"):
        a, b = np.asarray(plain.outputs[name]), np.asarray(padded.outputs[name])
        assert np.array_equal(a, b, equal_nan=True) and a[~np.isnan(a)].tobytes() == b[~np.isnan(b)].tobytes()
    s = np.asarray(padded.outputs["s"])
    assert np.isnan(s).any() and (np.isfinite(s) & (s != 0)).any()
