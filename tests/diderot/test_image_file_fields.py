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


@pytest.mark.parametrize("decl, advised", [
    ('field#0(2)[] V = (tent ⊛ image("pairs.nrrd"))[0];', True),  # an index: its shape
    ('field#0(2)[2] V = ∇(bspln3 ⊛ image("pairs.nrrd"));', True),  # ∇: its dimension
    ('field#0(2)[] V = tent ⊛ image("pairs.nrrd") if true else 1.0;', True),  # branches compared
    ('field#0(2)[] V = tent ⊛ image("pairs.nrrd") + [1.0, 2.0];', True),
    ('field#0(2)[] V = tent ⊛ image("pairs.nrrd");\nvec2 w = 1.0 + true;', False),  # not the image's type
    ('field#0(2)[] V = tent ⊛ image("pairs.nrrd");\nreal w = [1.0, 2.0];', False),
])
def test_the_advice_to_declare_the_image_comes_where_its_unknown_type_was_compared(decl, advised):
    """The checker advises declaring the image where a type it refused is one over an
    undeclared image("file") (the operand's dimension unknown), not elsewhere."""
    with pytest.raises(TensorLangError) as info:
        check(parse_program(_program(decl, "real")))
    assert ("declare the image with its type" in info.value.message) == advised, info.value.message


# Three more faults the mutated programs found (each a traceback before): a range of a
# strand grid that reads an earlier iterator, a sphere query without its radius, and a
# probe of a border-controlled image at a position past 2^63 samples.

def test_an_iteration_range_cannot_read_another_iterator_as_in_diderotc():
    text = ("#version 2.0\nstrand s(int a, int b) { output int o = a + b; update { stabilize; } }\n"
            "create_collection { s(a, b) | a in 0..3, b in 0..a };\n")
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text))
    assert info.value.code == "undeclared" and (info.value.diagnostics[0].span.line, info.value.diagnostics[0].span.col) == (3, 50)


@pytest.mark.parametrize("query", ["sphere()", "sphere(true)", "sphere(1.0, 2.0)", "sphere(pos, 1.0, 2.0)"])
def test_a_sphere_query_needs_a_radius(query):
    text = ("#version 2.0\nstrand s(int i) { vec2 pos = [real(i), 0]; output int near = 0;\n"
            f"  update {{ near = sum {{ 1 | m in {query} }}; stabilize; }} }}\n"
            "initially [ s(i) | i in 0..4 ];\n")
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text))
    assert info.value.code == "shape" and info.value.diagnostics[0].span.line == 3
    ok = text.replace(query, "sphere(1.5)")
    assert list(strands(check(parse_program(ok))).run({}, backend="interp").outputs["near"]) == [1, 2, 2, 2, 1]


@pytest.mark.parametrize("border, expect", [("clamp", 6.0), ("wrap", 1.0), ("mirror", 5.0)])
def test_a_border_controlled_probe_far_outside_the_image_reads_its_border(files, border, expect):
    # the samples are 0..6; 1e300 is 8 past a multiple of 14 (2 * 7, the mirror's period), so it
    # is sample 8 mod 7 = 1 wrapped, 13 - 8 = 5 mirrored, the last (6) clamped
    assert np.fmod(1e300, 14.0) == 8.0
    text = (f'#version 2.0\nfield#0(1)[] F = tent ⊛ {border}(image("line.nrrd"));\n'
            "strand s(int i) { output real o = F(1e300); update { stabilize; } }\ninitially [ s(i) | i in 0..0 ];\n")
    out = strands(check(parse_program(text)), str(files)).run({}, backend="interp").outputs["o"]
    assert out.tolist() == [expect]


def test_the_command_line_shows_a_run_time_error_in_the_programs_text(files, monkeypatch, capsys):
    """``tensorlang run`` names the file, line and column of a run-time error that has a
    position, with the source line under it (it printed ``tensorlang:2:34`` alone).  (A .npy
    file: the check reads NRRD headers only, so the 3-D file is found out when the run reads it.)"""
    from tensorlang.cli import main

    np.save(files / "cube.npy", np.arange(60.0).reshape(3, 4, 5))
    (files / "p.diderot").write_text(_program('field#0(2)[] V = tent ⊛ image("cube.npy");', "real"),
                                     encoding="utf-8")
    monkeypatch.chdir(files)
    assert main(["run", "p.diderot", "--backend", "interp"]) == 1
    err = capsys.readouterr().err
    assert "p.diderot:2:" in err and "error[input]" in err and 'image("cube.npy")' in err.split("\n", 1)[1], err


def test_a_global_image_that_does_not_fit_is_called_a_global_not_an_input(files):
    text = ('#version 2.0\nimage(2)[] img = image("cube.nrrd");\nfield#0(2)[] V = tent ⊛ img;\n'
            "strand s(int i) { output real o = V([1.5, 2.5]); update { stabilize; } }\n"
            "initially [ s(i) | i in 0..0 ];\n")
    with pytest.raises(TensorLangError, match=r"global img is image\(2\)\[\], the image given is 3-D") as caught:
        strands(check(parse_program(text)), str(files)).run({}, backend="interp")
    assert caught.value.code == "input"
