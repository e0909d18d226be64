"""An image's world-to-index map and a world point's index position, bit for bit as
Diderot's executables compute them (docs/diderot.md, "Images"), so that ``inside`` at a
point exactly on a sample edge agrees with them.  The expected bits and flags below were
written by executables ``diderotc --double --exec`` made on this machine (2026-12-01);
numpy's inverse (used before) differs in the last bit of 1 to 10 of their entries, and the
lattices' flags then differed at 2, 23 and 29 points.  Where diderotc is on PATH the last
test compiles and runs the program itself."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.sampling.image import fma, image, world_to_index
from tensorlang.targets.c import build as c_build

_ROT = (math.cos(0.3) * 0.1, math.sin(0.3) * 0.1)

#: (index-to-world directions as columns, origin, Diderot's inverse row-major then its translation, as hex)
BITS = [
    ([[0.1]], [0.7], ["0x1.4000000000000p+3", "-0x1.bffffffffffffp+2"]),
    ([[0.1, -0.02], [0.03, 1 / 3]], [-0.5, 0.25],
     ["0x1.3a578344e75b0p+3", "0x1.2dc4a6fa77b38p-1", "-0x1.c4a6fa77b38d4p-1", "0x1.7935d0b915a07p+1",
      "0x1.30e95e0d139d6p+2", "-0x1.2dc4a6fa77b38p+0"]),
    ([[_ROT[0], -_ROT[1]], [_ROT[1], _ROT[0]]], [-0.5, 0.3],
     ["0x1.31b52a49d6614p+3", "0x1.7a440fb2968bfp+1", "-0x1.7a440fb2968bfp+1", "0x1.31b52a49d6614p+3",
      "0x1.f1ef83114c655p+1", "-0x1.15fdb6e5bfdd5p+2"]),
    ([[0.1, -0.02, 0.0], [0.03, 1 / 3, 0.1], [0.01, 0.05, 0.3]], [-0.5, 0.25, 0.1],
     ["0x1.3ab325a1a8043p+3", "0x1.3e032e1c9f01ap-1", "-0x1.a8043d7b7eacdp-3", "-0x1.a8043d7b7eacdp-1",
      "0x1.8d83f9a3c6c20p+1", "-0x1.0902a66d2f2c1p+0", "-0x1.84ae8db1341e5p-3", "-0x1.139c5b29df239p-1",
      "0x1.c1a25cee27edbp+1", "0x1.321642c8590b1p+2", "-0x1.1642c8590b216p+0", "-0x1.3f128cfc4a340p-2"]),
    ([[1 / 3, 0.1, 0], [0, 0.1, 0.7], [0.2, 0, 0.3]], [-0.5, 1 / 3, 0.7],
     ["0x1.3ffffffffffffp+0", "-0x1.3ffffffffffffp+0", "0x1.7555555555554p+1", "0x1.7555555555554p+2",
      "0x1.0aaaaaaaaaaaap+2", "-0x1.371c71c71c71cp+3", "-0x1.aaaaaaaaaaaacp-1", "0x1.aaaaaaaaaaaacp-1",
      "0x1.638e38e38e38ep+0", "-0x1.ffffffffffffcp-1", "0x1.0aaaaaaaaaaaap+3", "-0x1.aaaaaaaaaaaabp+0"]),
]


def _world(directions, origin) -> np.ndarray:
    d = len(origin)
    w = np.eye(d + 1)
    w[:d, :d] = directions
    w[:d, d] = origin
    return w


@pytest.mark.parametrize("directions, origin, bits", BITS)
def test_the_world_to_index_map_has_the_bits_of_diderots_executables(directions, origin, bits):
    d = len(origin)
    m = image(np.zeros((4,) * d), world=_world(directions, origin)).to_index
    assert [float(v).hex() for v in [*m[:d, :d].ravel(), *m[:d, d]]] == bits
    assert m[d].tolist() == [0.0] * d + [1.0]


def test_fma_rounds_once():
    a = 1.0 + 2.0**-30
    assert fma(a, a, -1.0) == 2.0**-29 + 2.0**-60  # a·a - 1 exactly; two roundings lose 2^-60
    assert (a * a) - 1.0 == 2.0**-29
    assert math.isnan(fma(0.0, math.inf, 1.0)) and fma(2.0, math.inf, 1.0) == math.inf
    assert math.copysign(1.0, fma(-0.0, 1.0, -0.0)) == -1.0 and math.copysign(1.0, fma(1.0, 1.0, -1.0)) == 1.0
    assert fma(1e308, 10.0, 0.0) == math.inf and fma(-1e308, 10.0, 0.0) == -math.inf


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_a_map_whose_det_under_or_overflows_keeps_numpys_inverse(scale):
    # Diderot's formula: 1/0 or 1/∞ (an executable's map is ∞ or 0 there): numpy's inverse
    for d in (2, 3):
        w = np.diag([scale] * d + [1.0])
        assert np.array_equal(world_to_index(w, d), np.linalg.inv(w))


PROGRAM = """#version 2.0
input image({d})[] img;
input vec{d}[] pts;
field#2({d})[] F = img ⊛ bspln3;
field#0({d})[] G = img ⊛ tent;
strand S (vec{d} p) {{
  output vec4 r = [0.0, 0.0, 0.0, 0.0];
  update {{
    if (inside(p, F)) {{ r = [1.0, r[1], F(p), r[3]]; }}
    if (inside(p, G)) {{ r = [r[0], 1.0, r[2], G(p)]; }}
    stabilize;
  }}
}}
create_collection {{ S(p) | p in pts }}
"""

#: (directions, origin, samples (slowest axis first), lattice step in index space,
#:  the executable's inside flags for bspln3 and for tent, np.packbits of the lattice's points)
LATTICES = [
    ([[0.1]], [0.7], (9,), 0.5, "3ffc00", "ffff00"),
    ([[0.1, -0.02], [0.03, 1 / 3]], [-0.5, 0.25], (5, 6), 0.5,
     "00000000701c0701c0703400000000", "003fcff1fc7f3fc7f3fcffbfcff000"),
    ([[0.1, -0.02, 0.0], [0.03, 1 / 3, 0.1], [0.01, 0.05, 0.3]], [-0.5, 0.25, 0.1], (5, 6, 7), 1.0,
     "0000000000000000008420000610000118c2000061080000000000",
     "000006004e73bc003bce7084e779c8239de7181e779c00001e0000"),
]


def _files(tmp: Path, directions, origin, shape, step) -> dict:
    """The lattice's image (float samples, as diderotc compiles an image input without a proxy) and its
    points: world points of index points a ``step`` apart (every sample, half-way between), on cell edges."""
    d = len(origin)
    data = np.random.default_rng(0).standard_normal(shape).astype("<f4")
    sizes = " ".join(str(n) for n in shape[::-1])
    dirs = " ".join("(" + ",".join(repr(float(directions[i][j])) for i in range(d)) + ")" for j in range(d))
    (tmp / "img.nrrd").write_bytes(
        f"NRRD0004\ntype: float\ndimension: {d}\nsizes: {sizes}\nspace dimension: {d}\nspace directions: {dirs}\n"
        f"space origin: ({','.join(repr(float(v)) for v in origin)})\nkinds: {' '.join(['space'] * d)}\n"
        "endian: little\nencoding: raw\n\n".encode() + data.tobytes())
    grids = np.meshgrid(*[np.arange(0, n - 0.49, step) for n in shape[::-1]], indexing="ij")
    pts = np.stack([g.ravel() for g in grids], axis=1) @ np.asarray(directions).T + np.asarray(origin)
    head = f"sizes: {len(pts)}\nkinds: list" if d == 1 else f"sizes: {d} {len(pts)}\nkinds: {d}-vector list"
    (tmp / "pts.nrrd").write_bytes(f"NRRD0004\ntype: double\ndimension: {1 if d == 1 else 2}\n{head}\n"
                                   "endian: little\nencoding: raw\n\n".encode() + pts.astype("<f8").tobytes())
    (tmp / "edge.diderot").write_text(PROGRAM.format(d=d).replace("vec1", "real"))
    return {"img": str(tmp / "img.nrrd"), "pts": str(tmp / "pts.nrrd")}


def _run(tmp: Path, values: dict, backend: str) -> np.ndarray:
    p = strands(check(parse_program((tmp / "edge.diderot").read_text())))
    res = p.run(values, backend=backend)
    assert p.executor_note is None, p.executor_note
    return np.asarray(res.outputs["r"])


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=pytest.mark.skipif(
    c_build.find_compiler() is None, reason="no working C compiler"))])
@pytest.mark.parametrize("directions, origin, shape, step, spline, tent", LATTICES)
def test_inside_on_sample_edges_is_diderots(tmp_path, backend, directions, origin, shape, step, spline, tent):
    got = _run(tmp_path, _files(tmp_path, directions, origin, shape, step), backend)
    assert np.packbits(got[:, 0] == 1).tobytes().hex() == spline
    assert np.packbits(got[:, 1] == 1).tobytes().hex() == tent


@pytest.mark.skipif(shutil.which("diderotc") is None, reason="diderotc (the real Diderot compiler) is not on PATH")
@pytest.mark.parametrize("directions, origin, shape, step, spline, tent", LATTICES)
def test_inside_and_probes_on_sample_edges_match_diderotc(tmp_path, directions, origin, shape, step, spline, tent):
    import nrrd

    values = _files(tmp_path, directions, origin, shape, step)
    built = subprocess.run(["diderotc", "--double", "--exec", "edge.diderot"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert (tmp_path / "edge").is_file(), built.stdout + built.stderr
    ran = subprocess.run(["./edge", "-img", "img.nrrd", "-pts", "pts.nrrd", "-o", "r.nrrd"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    want = np.asarray(nrrd.read(str(tmp_path / "r.nrrd"), index_order="C")[0], dtype=np.float64)
    for backend in ["interp"] + (["c"] if c_build.find_compiler() is not None else []):
        got = _run(tmp_path, values, backend)
        assert np.array_equal(got[:, :2], want[:, :2]), backend
        assert np.max(np.abs(got[:, 2:] - want[:, 2:])) <= 1e-14 * max(1.0, np.max(np.abs(want))), backend
