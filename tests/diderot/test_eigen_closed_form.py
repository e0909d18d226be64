"""``evals`` and ``evecs`` of 2x2 and 3x3 matrices give what the real Diderot compiler's
executables give (docs/diderot.md, "Eigenvalues and eigenvectors"): their closed form, its
order, signs and repeated-root cases (isotropic and cylindrical tensors, the zero matrix,
eigenvalue gaps under its threshold, ⊥ and ±∞ entries, the upper triangle of an asymmetric
matrix), in the strand interpreter and in C, which agree bit for bit.

``more/evecs_diderotc.json`` holds the matrices of ``more/evecs2.diderot`` and
``more/evecs3.diderot`` with the outputs ``diderotc --double --exec`` made of them
(2026-12-01); :func:`test_the_stored_outputs_are_what_diderotc_makes_today` remakes them
where diderotc is on PATH."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build
from agreement import same_bits  # tests/diderot is on the path: the folder is not a package

MORE = Path(__file__).parent / "more"
CASES = json.loads((MORE / "evecs_diderotc.json").read_text())
needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def _cases(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = [c for c in CASES if len(c["m"]) == d]
    return tuple(np.array([c[k] for c in rows], dtype=np.float64) for k in ("m", "vals", "vecs"))


def _write(path: Path, ms: np.ndarray) -> None:
    head = f"NRRD0004\ntype: double\ndimension: 2\nsizes: {ms[0].size} {len(ms)}\nendian: little\nencoding: raw\n\n"
    path.write_bytes(head.encode() + ms.astype("<f8").tobytes())


def _ours(d: int, tmp_path: Path, backend: str) -> tuple[np.ndarray, np.ndarray]:
    ms = _cases(d)[0]
    _write(tmp_path / f"ms{d}.nrrd", ms)
    res = strands(check(parse_program((MORE / f"evecs{d}.diderot").read_text())), str(tmp_path)).run({}, backend=backend)
    return np.asarray(res.outputs["vals"]), np.asarray(res.outputs["vecs"])


def _close(got: np.ndarray, want: np.ndarray, vals: np.ndarray) -> None:
    """Equal within 1e-12, ⊥ at the same places; 1e-5 where two eigenvalues are within 1e-3 of
    the largest's magnitude and not equal (the closed form's rounding grows as the gap shrinks,
    and diderotc's g++ -march=native contracts products and sums into FMAs)."""
    for i in range(len(want)):
        w = vals[i][np.isfinite(vals[i])]
        gaps = np.abs(np.diff(np.sort(w)))
        near = np.any((gaps > 0) & (gaps < 1e-3 * max(np.max(np.abs(w), initial=0.0), 1e-300)))
        tol = 1e-5 if near else 1e-12
        assert np.array_equal(np.isnan(got[i]), np.isnan(want[i])), (i, got[i], want[i])
        assert np.allclose(got[i], want[i], rtol=tol, atol=tol, equal_nan=True), (i, got[i], want[i])


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
def test_evals_and_evecs_are_diderotcs(d, backend, tmp_path):
    _, want_vals, want_vecs = _cases(d)
    vals, vecs = _ours(d, tmp_path, backend)
    _close(vals, want_vals, want_vals)
    _close(vecs, want_vecs, want_vals)


@needs_cc
@pytest.mark.parametrize("d", [2, 3])
def test_the_interpreter_and_c_agree_bit_for_bit(d, tmp_path):
    a, c = _ours(d, tmp_path, "interp"), _ours(d, tmp_path, "c")
    assert same_bits(a[0], c[0]) and same_bits(a[1], c[1])


def test_repeated_roots_take_diderots_vectors():
    """What a general solver answers otherwise: the axes for a triple root (the zero matrix,
    ⊥ entries, a 2x2 gap under 16 ulps of 1, not scaled), and a double root's pair made
    perpendicular to the single root's vector, in a right-handed frame, largest value first."""
    from tensorlang.lang.diderot.interp import BASIS

    def eig(*rows):
        m = np.array(rows, dtype=np.float64)
        return np.array(BASIS["evals"](m)), np.array(BASIS["evecs"](m))

    for m in (np.zeros((3, 3)), 5 * np.eye(3), np.diag([1.0, np.nan, 1.0]), np.diag([1e-8, 2e-8])):
        vals, vecs = eig(*m)
        assert np.array_equal(vecs, np.eye(len(m)))
        assert np.all(vals == np.trace(m) / len(m)) or np.all(np.isnan(vals))
    h = np.sqrt(0.5)  # a single root largest: its vector kept, the pair from the rows of m - I
    vals, vecs = eig([1, 0, 0], [0, 1, 0], [0, 0, 2])
    assert np.allclose(vals, [2, 1, 1], rtol=1e-15) and np.allclose(vecs, [[0, 0, 1], [h, -h, 0], [h, h, 0]], atol=1e-15)
    vals, vecs = eig([-2, 0, 0], [0, -1, 0], [0, 0, -1])  # smallest: the frame kept on its vector
    assert np.allclose(vals, [-1, -1, -2], rtol=1e-15) and np.allclose(vecs, [[0, -h, h], [0, h, h], [-1, 0, 0]], atol=1e-15)


def test_evals_of_a_4x4_matrix_are_refused_as_by_diderotc():
    text = ("#version 1.0\nstrand S (int i) {\n  output real r = 0;\n"
            "  update { real{4} e = evals(identity[4]); r = e{0}; stabilize; }\n}\ninitially [ S(i) | i in 0..1 ];\n")
    with pytest.raises(TensorLangError, match="no overload of evals") as info:
        check(parse_program(text))
    assert info.value.code == "shape"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("diderotc") is None, reason="diderotc (the real Diderot compiler) is not on PATH")
@pytest.mark.parametrize("d", [2, 3])
def test_the_stored_outputs_are_what_diderotc_makes_today(d, tmp_path):
    import nrrd

    ms, want_vals, want_vecs = _cases(d)
    _write(tmp_path / f"ms{d}.nrrd", ms)
    shutil.copy(MORE / f"evecs{d}.diderot", tmp_path)
    subprocess.run(["diderotc", "--double", "--exec", f"evecs{d}.diderot"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=600)
    subprocess.run([f"./evecs{d}"], cwd=tmp_path, check=True, capture_output=True, timeout=60)
    vals = nrrd.read(str(tmp_path / "vals.nrrd"))[0].T.reshape(want_vals.shape)
    vecs = nrrd.read(str(tmp_path / "vecs.nrrd"))[0].T.reshape(want_vecs.shape)
    _close(vals, want_vals, want_vals)
    _close(vecs, want_vecs, want_vals)
    ours = _ours(d, tmp_path, "interp")
    _close(ours[0], vals, vals)
    _close(ours[1], vecs, vals)


@needs_cc
def test_the_nan_of_an_infinite_norm_has_cs_sign_bit_too(tmp_path):
    """An ∞ off the diagonal makes the closed form's scale 0 and its eigenvalues 0/0: the
    interpreter wrote Python's ⊥ (sign bit clear), C and diderotc the machine's 0/0 (set on x86)."""
    ms = np.array([[[1.0, np.inf, 0.0], [np.inf, 1.0, 0.0], [0.0, 0.0, 1.0]], np.full((3, 3), 1e200)])
    _write(tmp_path / "ms3.nrrd", ms)
    prog = check(parse_program((MORE / "evecs3.diderot").read_text()))
    got = [np.asarray(strands(prog, str(tmp_path)).run({}, backend=b).outputs["vals"]) for b in ("interp", "c")]
    assert np.isnan(got[0]).any() and got[0].tobytes() == got[1].tobytes()
