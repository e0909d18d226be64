"""``image("file.nrrd")`` with no declared image type: where the file is there when the
program is checked, its NRRD header (only the header, bounded) gives the image's dimension
and voxel shape, as diderotc reads it when it compiles, so operations that need them
typecheck.  The file is looked for where the run looks for it (the program file's folder,
then the working directory).  A file that is not there or whose header cannot be read
leaves the image's type to the run, as before (error[shape] with the advice to declare the
image where an operation needs it); the run still checks the file it reads."""

from __future__ import annotations

import copy
import os
import pickle

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.check import file_image_type
from tensorlang.lang.diderot.types import Ty

from test_image_file_fields import _nrrd  # tests/diderot is on the path: the folder is not a package

RAMP = np.arange(30.0).reshape(5, 6)  # 2-D, y then x: the ramp at (x, y) is 6 y + x
DOT = ('field#0(2)[] V = (tent ⊛ image("pairs.nrrd")) • (tent ⊛ image("pairs.nrrd"));', "real")


def _program(field_decl: str, probe: str = "real") -> str:
    return (f"#version 2.0\n{field_decl}\n"
            f"strand s(int i) {{ output {probe} o = V([1.5, 2.5]); update {{ stabilize; }} }}\n"
            "initially [ s(i) | i in 0..0 ];\n")


@pytest.fixture
def files(tmp_path):
    _nrrd(tmp_path / "pairs.nrrd", np.stack([RAMP, 2 * RAMP + 1], axis=-1), "vector space space")
    _nrrd(tmp_path / "flat.nrrd", RAMP)
    _nrrd(tmp_path / "cube.nrrd", np.arange(60.0).reshape(3, 4, 5))
    return tmp_path


def _refused_for_want_of_a_type(text: str, folder) -> None:
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text), str(folder))
    assert info.value.code == "shape" and "declare the image with its type" in info.value.message
    assert info.value.diagnostics[0].span.line == 2


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_an_operation_that_needs_the_files_type_typechecks_from_its_header_and_runs(files, backend):
    checked = check(parse_program(_program(DOT[0])), str(files))
    out = strands(checked, str(files)).run({}, backend=backend).outputs["o"]
    assert out.tolist() == [16.5 ** 2 + 34.0 ** 2]  # (16.5, 34) • (16.5, 34)


@pytest.mark.parametrize("decl, probe, expect", [
    ('field#0(2)[] V = (tent ⊛ image("pairs.nrrd"))[1];', "real", 34.0),
    ('field#1(2)[2] V = ∇(bspln3 ⊛ image("flat.nrrd"));', "vec2", [1.0, 6.0]),
    ('field#0(2)[2,2] V = (tent ⊛ image("pairs.nrrd")) ⊗ (tent ⊛ image("pairs.nrrd"));', "tensor[2,2]",
     [[16.5 ** 2, 16.5 * 34], [16.5 * 34, 34.0 ** 2]]),
])
def test_indexing_derivatives_and_products_of_a_field_over_a_file_use_its_header(files, decl, probe, expect):
    text = _program(decl, probe)
    _refused_for_want_of_a_type(text, files / "elsewhere")  # no file there: the type is unknown
    out = strands(check(parse_program(text), str(files)), str(files)).run({}, backend="interp").outputs["o"]
    np.testing.assert_allclose(np.reshape(out, np.shape(expect)), expect, rtol=1e-9)  # (bspln3: rounded kernel coefficients)


def test_a_file_that_does_not_fit_the_declaration_is_refused_when_checked(files):
    text = _program('field#0(2)[] V = tent ⊛ image("cube.nrrd");')
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text), str(files))
    err = info.value
    assert err.code == "assign-shape" and "field#0(3)[]" in err.message
    assert (err.diagnostics[0].span.line, err.diagnostics[0].span.col) == (2, 18)


def test_the_file_is_looked_for_in_the_programs_folder_then_the_working_directory(files, tmp_path_factory,
                                                                               monkeypatch):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    text = _program(DOT[0])
    _refused_for_want_of_a_type(text, elsewhere)
    check(parse_program(text), str(files))  # the folder's file
    monkeypatch.chdir(files)
    check(parse_program(text))  # no folder: the working directory's
    check(parse_program(text), str(elsewhere))  # not in the folder: the working directory's, as the run does


def test_the_command_line_and_compile_read_the_header_beside_the_program(files, tmp_path_factory, monkeypatch,
                                                                        capsys):
    from tensorlang.cli import main

    (files / "p.diderot").write_text(_program(DOT[0]), encoding="utf-8")
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert main(["check", str(files / "p.diderot")]) == 0, capsys.readouterr().err
    assert tl.compile(str(files / "p.diderot"), backend="interp")().o.tolist() == [16.5 ** 2 + 34.0 ** 2]
    (files / "p.diderot").write_text(_program(DOT[0].replace("pairs", "absent")), encoding="utf-8")
    assert main(["check", str(files / "p.diderot")]) == 1
    err = capsys.readouterr().err
    assert "p.diderot:2:" in err and "error[shape]" in err and "declare the image" in err


def _write(path, content: bytes) -> None:
    path.write_bytes(content)


@pytest.mark.parametrize("make", [
    lambda p: _write(p, b""),  # empty
    lambda p: _write(p, b"P5\n2 2\n255\n\x00\x01\x02\x03"),  # not NRRD
    lambda p: _write(p, b"NRRD0004\ntype: double\ndimension: 2\nsizes: 2 x\nencoding: raw\n\n"),  # bad sizes
    lambda p: _write(p, b"NRRD0004\ntype: double\ndimension: 3\nsizes: 2 5 6\nkinds: blob space space\n\n"),
    lambda p: _write(p, b"NRRD0004\ntype: double\ndimension: 3\nsizes: 4 5 6\nkinds: 3-vector space space\n\n"),
    lambda p: _write(p, b"NRRD0004\ntype: double\ndimension: 4\nsizes: 2 2 2 2\nencoding: raw\n\n"),  # 4 space axes
    lambda p: _write(p, b"NRRD0004\ntype: double\ndimension: 3\nsizes: 0 5 6\nkinds: vector space space\nencoding: raw\n\n"),
    lambda p: _write(p, b"NRRD0004\ntype: double\ndimension: 3\nsizes: 2 5 6\nkinds: space space\nencoding: raw\n\n"),
    lambda p: _write(p, b"NRRD0004\ntype: block\nblock size: 8\ndimension: 2\nsizes: 5 6\nencoding: raw\n\n"),
    lambda p: _write(p, b"NRRD0004\ntype: double\ndimension: 2\nsizes: 4.5 6\nencoding: raw\n\n"),
    lambda p: _write(p, b"NRRD0004\n" + b"# long\n" * 200_000),  # a header past MAX_HEADER_BYTES, no end
    lambda p: p.mkdir(),  # a directory
    lambda p: os.mkfifo(p),  # a FIFO: never opened (the read would wait for a writer)
])
def test_a_file_whose_header_cannot_be_read_leaves_the_type_to_the_run(tmp_path, make):
    make(tmp_path / "pairs.nrrd")
    assert file_image_type("pairs.nrrd", str(tmp_path)) is None
    _refused_for_want_of_a_type(_program(DOT[0]), tmp_path)


@pytest.mark.parametrize("sizes, kinds, want", [
    ("6 5", None, Ty("image", (), 2)),
    ("2 6 5", "vector space space", Ty("image", (2,), 2)),
    ("3 6 5 4", "3-vector space space space", Ty("image", (3,), 3)),
    ("4 6 5", "2D-matrix domain domain", Ty("image", (2, 2), 2)),
    ("9 2 7", "3D-matrix list space", Ty("image", (3, 3, 2), 1)),
])
def test_the_headers_axis_kinds_give_the_voxel_shape_as_the_loader_does(tmp_path, sizes, kinds, want):
    from tensorlang.sampling.image import load

    n = [int(s) for s in sizes.split()]
    data = np.arange(float(np.prod(n))).reshape(tuple(reversed(n)))
    _nrrd(tmp_path / "f.nrrd", data, kinds)
    assert file_image_type("f.nrrd", str(tmp_path)) == want
    img = load(tmp_path / "f.nrrd")
    assert (img.dim, img.voxel_shape) == (want.dim, want.shape)


def test_an_inputs_default_file_is_not_read_when_checked(files):
    """The run may be given another image for an input: its default is no type."""
    text = ('#version 2.0\ninput image(2)[] img = image("cube.nrrd");\nfield#0(2)[] V = tent ⊛ img;\n'
            "strand s(int i) { output real o = V([1.5, 2.5]); update { stabilize; } }\n"
            "initially [ s(i) | i in 0..0 ];\n")
    prog = strands(check(parse_program(text), str(files)), str(files))
    with pytest.raises(TensorLangError, match="3-D") as caught:
        prog.run({}, backend="interp")
    assert caught.value.code == "input"
    flat = tl.fields.load(str(files / "flat.nrrd"))
    assert prog.run({"img": flat}, backend="interp").outputs["o"].tolist() == [16.5]


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_a_file_changed_after_the_check_is_refused_where_it_is_read(files, backend):
    prog = strands(check(parse_program(_program(DOT[0])), str(files)), str(files))
    _nrrd(files / "pairs.nrrd", RAMP)  # now scalar
    with pytest.raises(TensorLangError) as info:
        prog.run({}, backend=backend)
    assert info.value.code == "input" and "voxels of shape []" in info.value.message
    assert info.value.diagnostics[0].span.line == 2


@pytest.mark.parametrize("decls, column", [
    ('field#0(2)[] V = tent ⊛ image("absent.nrrd");', 25),
    ('image(2)[] img = image("absent.nrrd");\nfield#0(2)[] V = tent ⊛ img;', 18),
    ('real{} xs = load("absent.nrrd");\nfield#0(2)[] V = tent ⊛ image("flat.nrrd");', 13),
])
@pytest.mark.parametrize("content", [None, b"NRRD0004\ntype: double\ndimension: 2\nsizes: 6 5\nencoding: raw\n\n\x00"])
@pytest.mark.parametrize("backend", ["interp", "c"])
def test_a_file_the_run_cannot_read_is_an_error_at_its_image_or_load(files, decls, column, content, backend):
    """A missing file, or one whose header is fine but whose data are short: error[input] at
    the ``image(...)`` or ``load(...)`` that names it (it had no position)."""
    if content is not None:
        (files / "absent.nrrd").write_bytes(content)
    prog = strands(check(parse_program(_program(decls)), str(files)), str(files))
    with pytest.raises(TensorLangError) as info:
        prog.run({}, backend=backend)
    assert info.value.code == "input" and "absent.nrrd" in info.value.message
    span = info.value.diagnostics[0].span
    assert span is not None and (span.line, span.col) == (2, column)


def test_a_kept_world_to_index_map_follows_the_image_world():
    """An Image keeps its world map's inverse (made once, its world read-only): two images that share
    the samples' tables but not the world get each its own inverse, in Conv and in to_index, in turn."""
    from tensorlang.lang.diderot.fieldval import Conv
    from tensorlang.sampling.image import image, world_to_index

    first = image(np.random.default_rng(0).random((8, 8)), 2)
    second = image(first, world=np.diag([2.0, 3.0, 1.0]))
    assert first.tables is second.tables and first.tables is not None
    for img in (first, second, first, second):
        conv, inverse = Conv(img, None), world_to_index(img.world, 2)
        assert np.array_equal(img.to_index, inverse) and img.to_index is img.to_index
        assert np.array_equal(conv._m, inverse[:2, :2]) and np.array_equal(conv.index([0.0, 0.0]), inverse[:2, 2])
        assert conv._identity == np.array_equal(img.world, np.eye(3))
    assert not np.array_equal(first.to_index, second.to_index)


@pytest.mark.parametrize("again", [lambda img: img, lambda img: pickle.loads(pickle.dumps(img)), copy.deepcopy])
def test_an_image_world_and_its_inverse_cannot_be_written(again):
    """The kept inverse cannot go stale: an image's world (and the inverse) refuse writes, also in a copy
    or a pickle's image, and where the image was made of a caller's writable matrix (copied)."""
    from tensorlang.sampling.image import Image, image

    world = np.diag([2.0, 4.0, 1.0])
    for img in (again(image(np.zeros((4, 5)), 2, world)), again(Image(np.zeros((4, 5)), 2, world))):
        for array in (img.world, img.to_index):
            with pytest.raises(ValueError, match="read-only"):
                array[0, 0] = 0.5
        assert np.array_equal(img.to_index, np.diag([0.5, 0.25, 1.0]))
    world[0, 0] = 8.0  # the caller's matrix stays the caller's
    assert np.array_equal(img.world, np.diag([2.0, 4.0, 1.0]))


@pytest.mark.parametrize("make", ["image", "Image"])
def test_an_image_of_a_singular_world_is_refused_clearly(make):
    from tensorlang.sampling import image as I

    with pytest.raises(TensorLangError) as info:
        getattr(I, make)(np.zeros((4, 5)), 2, np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]]))
    assert info.value.code == "input"
    assert info.value.message == "the world matrix is singular: index space cannot be recovered from world space"
