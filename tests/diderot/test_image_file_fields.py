"""A field made of ``image("file.nrrd")`` without a declared image: the file says the
image's dimension and voxels only when the program runs (diderotc reads it when it
compiles).  Found by running other corpora's programs, with synthetic images, through
``tensorlang run``: a file that does not fit the declared field reached the probes and
stopped with an internal error (or, for a 3-vector file under a ``vec2`` field, printed
three numbers for a vec2); ``|F|``, ``-F``, ``normalize(F)`` and ``inv(F)`` of such a field
stopped on an assertion.  Now the file is checked against the declaration where it is
read (error[input] at ``image(...)``), and those functions run."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check


def _nrrd(path, data: np.ndarray, kinds: str | None = None) -> None:
    """A raw little-endian double NRRD of ``data`` (C order: the last axis is NRRD's fastest)."""
    sizes = " ".join(str(n) for n in reversed(data.shape))
    head = f"NRRD0004\ntype: double\ndimension: {data.ndim}\nsizes: {sizes}\n" + (f"kinds: {kinds}\n" if kinds else "")
    path.write_bytes((head + "encoding: raw\nendian: little\n\n").encode() + data.astype("<f8").tobytes())


@pytest.fixture
def files(tmp_path):
    ramp = np.arange(30.0).reshape(5, 6)  # 2-D, y then x
    _nrrd(tmp_path / "flat.nrrd", ramp)
    _nrrd(tmp_path / "cube.nrrd", np.arange(60.0).reshape(3, 4, 5))
    _nrrd(tmp_path / "pairs.nrrd", np.stack([ramp, 2 * ramp + 1], axis=-1), "vector space space")
    _nrrd(tmp_path / "triples.nrrd", np.stack([ramp, ramp, ramp], axis=-1), "3-vector space space")
    _nrrd(tmp_path / "line.nrrd", np.arange(7.0))
    return tmp_path


def _program(field_decl: str, probe: str) -> str:
    return (f"#version 2.0\n{field_decl}\n"
            f"strand s(int i) {{ output {probe} o = V([1.5, 2.5]); update {{ stabilize; }} }}\n"
            "initially [ s(i) | i in 0..0 ];\n")


@pytest.mark.parametrize("decl, probe, file_is", [
    ('field#0(2)[2] V = tent ⊛ image("flat.nrrd");', "vec2", "2-D with voxels of shape []"),
    ('field#0(2)[] V = tent ⊛ image("cube.nrrd");', "real", "3-D"),
    ('field#0(2)[] V = tent ⊛ image("pairs.nrrd");', "real", "2-D with voxels of shape [2]"),
    ('field#0(2)[2] V = tent ⊛ image("triples.nrrd");', "vec2", "voxels of shape [3]"),
    ('field#0(2)[] V = tent ⊛ image("flat.nrrd") - tent ⊛ clamp(image("line.nrrd"));', "real", "1-D"),
    ('field#0(2)[] V = |tent ⊛ image("line.nrrd")|;', "real", "1-D"),
])
@pytest.mark.parametrize("backend", ["interp", "c"])
def test_a_file_that_does_not_fit_the_declared_field_is_an_input_error_at_its_image(files, decl, probe, file_is,
                                                                                      backend):
    prog = strands(check(parse_program(_program(decl, probe))), str(files))
    with pytest.raises(TensorLangError) as info:
        prog.run({}, backend=backend)
    err = info.value
    assert err.code == "input"
    assert file_is in err.message and "definition of V" in err.message
    column = decl.rindex("image(")  # the last image(...) of the line is the one that does not fit
    assert (err.diagnostics[0].span.line, err.diagnostics[0].span.col) == (2, column + 1)


@pytest.mark.parametrize("decl, probe, expect", [
    # the ramp at (x, y) = (1.5, 2.5) is 6 y + x = 16.5; the second component 2 * 16.5 + 1
    ('field#0(2)[] V = |tent ⊛ image("pairs.nrrd")|;', "real", np.hypot(16.5, 34.0)),
    ('field#0(2)[] V = -(tent ⊛ image("flat.nrrd"));', "real", -16.5),
    ('field#0(2)[2] V = normalize(tent ⊛ image("pairs.nrrd"));', "vec2", np.array([16.5, 34.0]) / np.hypot(16.5, 34.0)),
    ('field#0(2)[] V = inv(tent ⊛ image("flat.nrrd"));', "real", 1 / 16.5),
    ('field#0(2)[] V = |tent ⊛ image("triples.nrrd")|;', "real", 16.5 * np.sqrt(3)),
])
def test_functions_of_a_field_over_an_undeclared_image_run(files, decl, probe, expect):
    prog = strands(check(parse_program(_program(decl, probe))), str(files))
    out = prog.run({}, backend="interp").outputs["o"]
    np.testing.assert_allclose(out.reshape(np.shape(expect)), expect, rtol=1e-14)


def test_an_operation_that_needs_the_undeclared_images_type_says_to_declare_it():
    text = _program('field#0(2)[] V = (tent ⊛ image("pairs.nrrd")) • (tent ⊛ image("pairs.nrrd"));', "real")
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text))
    assert info.value.code == "shape" and "declare the image with its type" in info.value.message
    assert info.value.diagnostics[0].span.line == 2
