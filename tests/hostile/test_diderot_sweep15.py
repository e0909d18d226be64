"""Diderot programs and runs written as a user would (issue [diderot], "programs you have not
seen"; the sweep after test_diderot_sweep13.py), field-heavy ones compared with what
``diderotc --double --exec``'s executable wrote: each finding that was fixed, on the strand
interpreter and on the C executor, and one agreement check of tensor-field derivatives."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.strands.runner import StrandRun
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BACKENDS = ["interp", pytest.param("c", marks=needs_cc)]


def program(text: str):
    return strands(check(parse_program(text)))


def _main(text: str, backend: str, argv: list[str], where) -> tuple[int, str]:
    """Run ``text`` from the command line in the folder ``where``: (exit status, stderr); an
    error is raised (the command line prints it)."""
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENSORLANG_STRAND_BACKEND", backend)
        mp.chdir(where)
        rc = StrandRun(program(text)).main(argv, out=io.StringIO(), err=err)
    return rc, err.getvalue()


# An int output past 32 bits is error[input] (docs/diderot.md); the command line wrote the
# outputs before it (r.nrrd here) and then stopped at m, leaving a part of the run's files
# (a snapshot too: r-0001.nrrd). Now every output is checked before any file is written.
WIDE_INT = """#version 2.0
strand S (int i) {
  output real r = 0;
  output int m = 0;
  output vec2 w = [0,0];
  update { r = real(i); m = i * 4000000000; w = [r, -r]; stabilize; }
}
create_array { S(i) | i in 0..2 };
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("snapshot", [[], ["-s", "1"]], ids=["run", "snapshots"])
def test_an_int_output_past_32_bits_writes_no_file_at_all(tmp_path, backend, snapshot):
    with pytest.raises(TensorLangError, match="output 'm' holds integers beyond 32 bits") as exc:
        _main(WIDE_INT, backend, snapshot, tmp_path)
    assert exc.value.code == "input"
    # with -s 1: the whole snapshot of the initial state, nothing of the first step's
    want = ["m-0000.nrrd", "r-0000.nrrd", "w-0000.nrrd"] if snapshot else []
    assert sorted(p.name for p in tmp_path.iterdir()) == want
    for path in tmp_path.iterdir():
        path.unlink()
    rc, err = _main(WIDE_INT.replace("4000000000", "4"), backend, [], tmp_path)
    assert rc == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["m.nrrd", "r.nrrd", "w.nrrd"]


# The elements of an int sequence of any length were written as NRRD type int with no check:
# 4e9 came out as -294967296 (a silently wrong value, exit status 0), where a fixed-size int
# output past 32 bits is error[input].
INT_SEQ = """#version 2.0
strand S (int i) {
  output real r = 0;
  output int[] xs = {};
  update { r = real(i); xs = xs @ (i * 4000000000); stabilize; }
}
create_collection { S(i) | i in 0..2 };
"""


def test_an_int_sequence_past_32_bits_is_an_input_error_and_no_file(tmp_path):
    with pytest.raises(TensorLangError, match="output 'xs' holds integers beyond 32 bits") as exc:
        _main(INT_SEQ, "interp", [], tmp_path)
    assert exc.value.code == "input"
    assert list(tmp_path.iterdir()) == []
    rc, err = _main(INT_SEQ.replace("4000000000", "4"), "interp", [], tmp_path)
    assert rc == 0
    data = (tmp_path / "xs-data.nrrd").read_bytes()
    assert np.frombuffer(data[data.index(b"\n\n") + 2:], "<i4").tolist() == [0, 4, 8]


def _image(path, array: np.ndarray, kinds: str, dirs: list[str], origin: list[float]) -> str:
    sizes = " ".join(map(str, array.shape[::-1]))
    head = (f"NRRD0004\ntype: double\ndimension: {array.ndim}\nsizes: {sizes}\nkinds: {kinds}\n"
            f"space dimension: {len(origin)}\nspace directions: {' '.join(dirs)}\n"
            f"space origin: ({','.join(map(repr, origin))})\nendian: little\nencoding: raw\n\n")
    path.write_bytes(head.encode() + np.ascontiguousarray(array, "<f8").tobytes())
    return str(path)


# Derivatives of a vector field on a rotated, sheared 7 x 9 x 11 grid (c4hexic) and the
# Hessian's eigen-system of a bspln5 scalar field with clamp on another: what diderotc
# --double --exec's executable wrote for the strand S(0, 3) (both executors agree with it
# within 2e-12 relative; the curl and divergence cancel, hence not 1e-14).
FIELDS = """#version 2.0
input image(3)[3] vimg = load_image("vec.nrrd");
input image(2)[] simg = load_image("scl.nrrd");
field#2(3)[3] V = c4hexic ⊛ vimg;
field#1(3)[] D = ∇•V;
field#1(3)[3] C = ∇×V;
field#4(2)[] G = bspln5 ⊛ clamp(simg);
strand S (int i, int j) {
  vec3 p = [-0.4 + 0.11*real(i), -0.3 + 0.09*real(j), -0.7 + 0.05*real(i+j)];
  vec2 q = [-1.0 + 0.7*real(i), -1.5 + 0.5*real(j)];
  output vec3 c = [0,0,0];
  output real d = 0;
  output vec2 ev = [0,0];
  output vec2 e0 = [0,0];
  output tensor[3,3,3] H = zeros[3,3,3];
  update {
    c = C(p);
    d = D(p);
    H = ∇⊗∇⊗V(p);
    tensor[2,2] h = ∇⊗∇G(q);
    real[2] la = evals(h);
    ev = [la[0], la[1]];
    vec2[2] vs = evecs(h);
    e0 = vs[0];
    stabilize;
  }
}
create_array { S(i, j) | i in 0..0, j in 3..3 };
"""

DIDEROTC = {"c": [1.9146677986095864, -3.531496899379753, 1.1250137906547704], "d": [-3.858548942333738],
            "ev": [1.927576229782479, -0.429726729021918], "e0": [-0.9357026125683608, 0.3527897686055309],
            "H": [-11.338623650202823, 9.11029122842855, -4.75769231829545, 9.110291228428549,
                  -5.383741431287771, 0.38950607416784244]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_field_derivatives_agree_with_diderotc(tmp_path, backend):
    rng = np.random.default_rng(1)
    c, s = math.cos(0.3), math.sin(0.3)
    vec = _image(tmp_path / "vec.nrrd", rng.standard_normal((11, 9, 7, 3)), "3-vector space space space",
                 ["none", f"({0.5 * c!r},{0.5 * s!r},0)", f"({-0.4 * s!r},{0.4 * c!r},0.1)", "(0.05,0,0.6)"],
                 [-1.5, -1.2, -3.0])
    scl = _image(tmp_path / "scl.nrrd", rng.standard_normal((8, 13)), "space space", ["(0.7,0.2)", "(-0.1,0.9)"],
                 [-2.0, -2.5])
    res = program(FIELDS).run({"vimg": vec, "simg": scl}, backend=backend)
    for name, want in DIDEROTC.items():
        got = np.asarray(res.outputs[name]).reshape(-1)[:len(want)]
        np.testing.assert_allclose(got, want, rtol=2e-12, atol=1e-13, err_msg=name)
