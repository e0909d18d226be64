"""Running strand programs: the Python callable, the command line, outputs and errors
(tensorlang.strands.runner, the dispatch in api.py and cli.py), with a stand-in program
registered as a front end with a ``strands`` hook."""

from __future__ import annotations

import io
import os
from pathlib import Path

import nrrd
import numpy as np
import pytest

import tensorlang as tl
from diderot.run_programs import fake
from tensorlang import cli, lang as languages
from tensorlang.errors import TensorLangError
from tensorlang.strands import StrandRun, options


@pytest.fixture
def fake_language(monkeypatch):
    """Programs ``*.fakestrand`` whose text names a stand-in: grid, collection, images."""
    made = {"grid": lambda: fake.grid_program(outputs=("val",)), "grid2": fake.grid_program,
            "collection": fake.collection_program, "images": fake.program_with_images}
    def unused(*args):
        raise AssertionError("a strand program is neither lowered nor interpreted as a kernel")

    language = languages.Language(
        name="fakestrand", suffixes=(".fakestrand",), parse=lambda text, params: text.strip(), check=lambda ast: ast,
        lower=unused, interpret=unused, print=str, binds_params=True, strands=lambda checked, base_dir=None: made[checked]())
    monkeypatch.setitem(languages.REGISTRY, "fakestrand", language)
    monkeypatch.setitem(languages.SUFFIXES, ".fakestrand", "fakestrand")
    return language


@pytest.fixture
def program_file(tmp_path, fake_language):
    def write(kind: str, name: str = "prog.fakestrand"):
        path = tmp_path / name
        path.write_text(kind + "\n")
        return str(path)
    return write


def run_cli(argv, capsys):
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# ------------------------------------------------------------------ Python
def test_compile_returns_a_callable_whose_result_maps_output_names_to_arrays(program_file):
    p = tl.compile(program_file("grid2"))
    assert isinstance(p, StrandRun) and [i.name for i in p.inputs][:2] == ["isoval", "size"]
    res = p(img=np.full((4, 4), 2.0), size=3, isoval=1.0)
    assert sorted(res) == ["pos", "val"] and res.val is res["val"]
    assert res.val.shape == (3, 4) and res.pos.shape == (3, 4, 2)
    np.testing.assert_array_equal(res.val, 1.0 + 2.0 + 10 * np.arange(3)[:, None] + np.arange(4))
    assert (res.steps, res.active, res.stable, res.grid_shape) == (3, 0, 12, (3, 4))
    with pytest.raises(AttributeError, match="no output 'nope'"):
        _ = res.nope


def test_a_collection_gives_the_stable_strands(program_file):
    res = tl.compile(program_file("collection"))(n=7, scale=2.0)
    np.testing.assert_array_equal(res.x, [0.0, 4.0, 8.0, 12.0])
    assert res.grid_shape is None and res.stable == 4


def test_run_takes_the_limit_threads_and_snapshots(program_file):
    p = tl.compile(program_file("collection"), threads=2)
    seen = []
    res = p.run({"n": 9}, limit=2, snapshot=1, on_snapshot=lambda step, r: seen.append((step, len(r.x))))
    assert res.steps == 2 and res.active == 5
    assert seen == [(0, 9), (1, 8), (2, 7)]
    call = p.program.calls[-1]
    assert (call["limit"], call["threads"], call["snapshot"]) == (2, 2, 1)
    p.run({"n": 1})
    assert p.program.calls[-1]["limit"] == options.DEFAULT_LIMIT  # no limit: the default cap, never 0


@pytest.mark.parametrize("kwargs, message", [
    ({"size": 2, "img": np.zeros((3, 3)), "isovalue": 1}, r"no input 'isovalue'; its inputs: isoval \(real\), size \(int\)"),
    ({"img": np.zeros((3, 3))}, r"missing required input: size \(int\)"),
    ({"size": 2.5, "img": np.zeros((3, 3))}, r"input size \(int\) must be an integer"),
    ({"size": 2, "img": np.zeros((3, 3)), "isoval": "a"}, r"input isoval \(real\) must be a real number"),
    ({"size": 2, "img": np.zeros((3, 3)), "cmin": [1, 2, 3]}, r"input cmin \(vec2\) must have shape \(2,\)"),
    ({"size": 2, "img": np.zeros((3, 3)), "flag": 1}, r"input flag \(bool\) must be True or False"),
    ({"size": 2, "img": np.zeros((3, 3, 2))}, r"the image's samples have shape \(2,\), the program declares scalar"),
    ({"size": 2, "img": np.zeros(3)}, r"the image has 1 space axes, the program declares 2"),
])
def test_bad_inputs_are_input_errors(program_file, kwargs, message):
    p = tl.compile(program_file("grid2"))
    with pytest.raises(TensorLangError, match=message) as info:
        p(**kwargs)
    assert info.value.code == "input"
    assert p.program.calls == []  # refused before the program ran


def test_images_come_from_nrrd_and_npy_files_and_arrays(program_file, tmp_path):
    p = tl.compile(program_file("grid2"))
    img = np.arange(12.0).reshape(3, 4)
    nrrd.write(str(tmp_path / "img.nrrd"), img, {"kinds": ["space", "space"]}, index_order="C")
    np.save(tmp_path / "img.npy", img)
    for given in (str(tmp_path / "img.nrrd"), tmp_path / "img.npy", img, tl.image(img)):
        res = p(size=2, img=given)
        assert res.val[0, 0] == 0.5 + img.mean()
    got = p.program.calls[-1]["values"]["img"]
    assert isinstance(got, tl.fields.Image) and got.dim == 2


def test_an_image_input_left_out_is_read_from_its_default_path_beside_the_program(program_file, tmp_path):
    vol = np.zeros((2, 3, 4, 3))
    nrrd.write(str(tmp_path / "vol.nrrd"), vol, {"kinds": ["space", "space", "space", "3-vector"]}, index_order="F")
    p = tl.compile(program_file("images"))
    p()
    img = p.program.calls[-1]["values"]["vol"]
    assert img.dim == 3 and img.voxel_shape == (3,) and img.sizes == (2, 3, 4)


@pytest.mark.parametrize("content, code, message", [
    (None, "input", "does not exist|No such file"),
    (b"", "input", "cannot read NRRD image"),
    (b"NRRD0004\ntype: double\ndimension: 2\nsizes: 4 4\nencoding: raw\n\n" + bytes(10), "input", "cannot read NRRD"),
    (b"NRRD0004\ntype: double\ndimension: 3\nsizes: 4 4 4\nkinds: space space space\nendian: little\nencoding: raw\n\n" + bytes(512),
     "input", "3 space axes, the program declares 2"),
    (b"NRRD0004\ntype: double\ndimension: 2\nsizes: 100000 100000\nencoding: raw\n\n", "too-large",
     "more than the memory budget"),
])
def test_an_unreadable_wrong_or_huge_image_is_a_clear_error(program_file, tmp_path, monkeypatch, content, code, message):
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**24))
    path = tmp_path / "bad.nrrd"
    if content is not None:
        path.write_bytes(content)
    p = tl.compile(program_file("grid2"))
    with pytest.raises(TensorLangError, match=message) as info:
        p(size=2, img=str(path))
    assert info.value.code == code and "input img (image(2)[])" in info.value.message


def test_a_run_that_does_not_fit_in_memory_is_too_large(program_file):
    p = tl.compile(program_file("grid"))

    def explode(*args, **kwargs):
        raise MemoryError
    p.program.run = explode
    with pytest.raises(TensorLangError, match="does not fit in memory") as info:
        p(size=2, img=np.zeros((2, 2)))
    assert info.value.code == "too-large"


def test_run_arguments_are_checked(program_file):
    p = tl.compile(program_file("collection"))
    for kwargs in ({"limit": -1}, {"threads": 0}, {"threads": 300}, {"snapshot": 1.5}):
        with pytest.raises(TensorLangError, match="must be an integer"):
            p.run({}, **kwargs)


# ------------------------------------------------------------------ command line
def test_the_command_line_writes_one_nrrd_file_per_output(program_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "img.npy", np.ones((3, 3)))
    prog = program_file("grid2")
    status, out, err = run_cli(["run", prog, "-size", "2", "-img", "img.npy", "-cmin", "-4", "-3",
                                "-o-pos", "p.nrrd"], capsys)
    assert (status, out, err) == (0, "", "")
    val, header = nrrd.read("val.nrrd", index_order="C")
    np.testing.assert_array_equal(val, 1.5 + 10 * np.arange(2)[:, None] + np.arange(3))
    assert header["kinds"] == ["space", "space"]
    pos, header = nrrd.read("p.nrrd", index_order="C")
    assert pos.shape == (2, 3, 2) and header["kinds"] == ["2-vector", "space", "space"]
    np.testing.assert_array_equal(pos[1, 2], [1 - 4, 2 - 3])


def test_dash_o_names_the_one_output_and_snapshots_take_its_name(program_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["run", program_file("collection"), "-n", "5", "-o", "out.nrrd", "-s", "1"], capsys)
    assert status == 0
    x, header = nrrd.read("out.nrrd", index_order="C")
    np.testing.assert_array_equal(x, [0.0, 2.0, 4.0])
    assert header["kinds"] == ["list"]
    assert sorted(f for f in os.listdir() if f.startswith("x-")) == ["x-0000.nrrd", "x-0001.nrrd", "x-0002.nrrd"]
    snap, _ = nrrd.read("x-0001.nrrd", index_order="C")
    np.testing.assert_array_equal(snap, [0.0, 2.0, 3.0, 4.0])  # strand 1 died; the rest are alive
    os.makedirs("snap")
    status, *_ = run_cli(["run", program_file("collection"), "-n", "5", "-s", "2", "-sp", "snap/s"], capsys)
    assert status == 0 and sorted(os.listdir("snap")) == ["s-0000.nrrd", "s-0002.nrrd"]


def test_help_lists_the_inputs_and_needs_none_of_them(program_file, capsys):
    prog = program_file("grid2")
    status, out, _ = run_cli(["run", prog, "--help"], capsys)
    assert status == 0 and out.startswith(f"usage: tensorlang run {prog} [-isoval x] -size int")
    assert "(real) isovalue to look for; default: 0.5" in out and "-o-val, --output-val FILE" in out
    status, out, _ = run_cli(["run", prog, "-h"], capsys)
    assert status == 0 and out.count("\n") == 1


def test_print_timing_and_verbose(program_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "img.npy", np.ones((3, 3)))
    prog = program_file("grid")
    status, out, err = run_cli(["run", prog, "-size", "2", "-img", "img.npy", "-flag", "true", "-t"], capsys)
    assert status == 0 and out.startswith("hello from the grid\nusr=")
    status, out, err = run_cli(["run", prog, "-size", "2", "-img", "img.npy", "-flag", "true", "-print", "p.txt",
                                "-v"], capsys)
    assert out == "" and open("p.txt").read() == "hello from the grid\n"
    assert "step 1: 4 active strands" in err and "done: 3 steps" in err and "wrote val.nrrd" in err


def test_at_the_limit_the_outputs_are_written_as_they_stand(program_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "img.npy", np.zeros((3, 3)))
    status, out, err = run_cli(["run", program_file("grid"), "-size", "3", "-img", "img.npy", "-l", "1"], capsys)
    assert status == 0 and err == ""
    val, _ = nrrd.read("val.nrrd", index_order="C")
    assert val[0, 0] == 0.5 and val[0, 1] == -1.0  # strand (0, 1) needs two steps
    monkeypatch.setattr(options, "DEFAULT_LIMIT", 1)
    status, out, err = run_cli(["run", program_file("grid"), "-size", "3", "-img", "img.npy"], capsys)
    assert status == 0 and "default cap of 1 super-steps: 8 strands still active; -l N sets the limit" in err


def test_a_collection_without_stable_strands_writes_nothing_and_fails(program_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["run", program_file("collection"), "-n", "2", "-l", "0", "-scale", "1"], capsys)
    assert status == 0
    os.remove("x.nrrd")
    status, out, err = run_cli(["run", program_file("collection"), "-n", "0"], capsys)
    assert status == 1 and "no stable strands" in err and not os.path.exists("x.nrrd")


@pytest.mark.parametrize("argv, message", [
    (["-img", "img.npy"], "error[input]: missing required input: -size (int)"),
    (["-size", "2", "-img", "missing.nrrd"], "error[input]: input img (image(2)[]): "),
    (["-size", "2", "-img", "img.npy", "-isovalue", "1"], "error[input]: unknown option '-isovalue'"),
    (["-size", "2", "-img", "img.npy", "-o-val", "no/such/dir/v.nrrd"], "the folder 'no/such/dir' does not exist"),
])
def test_command_line_errors_are_one_diagnostic_without_traceback(program_file, tmp_path, capsys, monkeypatch,
                                                                   argv, message):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "img.npy", np.ones((3, 3)))
    status, out, err = run_cli(["run", program_file("grid2"), *argv], capsys)
    assert status == 1 and message in err and "Traceback" not in err
    assert not os.path.exists("val.nrrd")


def test_programs_of_other_languages_still_take_runs_own_options(tmp_path, capsys, fake_language):
    path = tmp_path / "p.tl"
    path.write_text("in var a : [2]\nout var b : [2]\nb = a + a\n")
    status, out, err = run_cli(["run", str(path), "--random-inputs", "--backend", "numpy", "-q"], capsys)
    assert status == 0, err


def test_main_writes_to_the_streams_it_is_given(program_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    p = tl.compile(program_file("collection"))
    assert p.main(["-n", "3", "-v"], out=out, err=err) == 0
    assert "done: 2 steps" in err.getvalue() and out.getvalue() == ""


# ------------------------------------------------------------------ end to end, with the Diderot front end
PROGRAMS = Path(__file__).parent / "run_programs"
needs_diderot = pytest.mark.skipif("diderot" not in languages.REGISTRY, reason="the Diderot front end is not here")


def linear_image(n: int = 6) -> np.ndarray:
    """f = 2x + 3y on an n x n grid (array axis 0 is x, NRRD's fastest axis)."""
    x, y = np.meshgrid(np.arange(n, dtype=float), np.arange(n, dtype=float), indexing="ij")
    return 2 * x + 3 * y


@needs_diderot
def test_a_diderot_grid_program_from_python():
    p = tl.compile(str(PROGRAMS / "sample2d.diderot"))
    assert [i.name for i in p.inputs] == ["img", "scale", "res", "lo", "hi", "negate", "label"]
    res = p(img=linear_image(), scale=2.0)
    i, j = np.meshgrid(np.arange(3.0), np.arange(3.0), indexing="ij")
    # inside(x, F) is Diderot's strict test, 1 < x < 4 for ctmr on 6 samples: the points
    # at x = 1 or y = 1 (i = 0 or j = 0) are outside and keep their initial values
    ins = (i > 0) & (j > 0)
    np.testing.assert_allclose(res.val, np.where(ins, 2.0 * (2 * (1 + i) + 3 * (1 + j)), -1.0), atol=1e-12)
    np.testing.assert_allclose(res.grad, np.where(ins[..., None], [2.0, 3.0], 0.0), atol=1e-12)
    assert res.printed == "sampled\n" and res.grid_shape == (3, 3)
    res = p(img=linear_image(), negate=True, res=2, lo=[1.5, 1.25], hi=[1.5, 2.0])
    np.testing.assert_allclose(res.val, [[-6.75, -9.0], [-6.75, -9.0]], atol=1e-12)
    with pytest.raises(TensorLangError, match=r"no input 'image'; its inputs: img \(image\(2\)\[\]\), scale"):
        p(image=linear_image())
    with pytest.raises(TensorLangError, match=r"missing required input: img \(image\(2\)\[\]\)"):
        p()
    with pytest.raises(TensorLangError, match=r"samples have shape \(4,\), the program declares scalar samples"):
        p(img=np.zeros((4, 4, 4)))  # an array's first two axes are space, the rest the sample's shape


@needs_diderot
def test_a_diderot_grid_program_from_the_command_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nrrd.write("lin.nrrd", linear_image(), {"kinds": ["space", "space"]}, index_order="F")
    prog = str(PROGRAMS / "sample2d.diderot")
    status, out, err = run_cli(["run", prog, "-img", "lin.nrrd", "-lo", "1.5", "1.5", "-label", "hi",
                                "-o-grad", "g.nrrd"], capsys)
    assert (status, out, err) == (0, "hi\n", "")
    val, header = nrrd.read("val.nrrd", index_order="C")
    assert header["kinds"] == ["space", "space"] and header["type"] == "double"
    np.testing.assert_allclose(val[0], [3 + 4.5, 3 + 6.75, 3 + 9.0], atol=1e-12)  # j (fastest) moves y
    grad, header = nrrd.read("g.nrrd", index_order="C")
    assert list(header["sizes"]) == [2, 3, 3] and header["kinds"][0] == "2-vector"
    status, out, _ = run_cli(["run", prog, "--help"], capsys)
    assert status == 0 and "-lo x y" in out and "(vec2) the grid's lower corner; default: 1 1" in out
    assert "(image(2)[]) the image to sample; required" in out


@needs_diderot
def test_a_diderot_collection_with_snapshots(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["run", str(PROGRAMS / "walkers.diderot"), "-count", "5", "-s", "2",
                                "-o-x", "x-final.nrrd"], capsys)
    assert status == 0, err
    x, header = nrrd.read("x-final.nrrd", index_order="C")
    assert x.tolist() == [0.0, 0.0, 0.0] and header["kinds"] == ["list"]
    trail, header = nrrd.read("trail.nrrd", index_order="C")
    assert trail.tolist() == [[0.0, 0.0, 0.0], [2.0, 0.0, 2.0], [4.0, 0.0, 4.0]]
    assert header["kinds"] == ["3-vector", "list"]
    snaps = sorted(f for f in os.listdir() if f.startswith(("x-0", "trail-0")))
    assert snaps == ["trail-0000.nrrd", "trail-0002.nrrd", "trail-0004.nrrd", "trail-0005.nrrd", "x-0000.nrrd",
                     "x-0002.nrrd", "x-0004.nrrd", "x-0005.nrrd"]  # and the last step's, as diderotc's executable
    first, _ = nrrd.read("x-0000.nrrd", index_order="C")
    assert first.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]  # every strand, before the first step


@needs_diderot
def test_the_iteration_limit_and_the_default_cap(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prog = str(PROGRAMS / "forever.diderot")
    status, out, err = run_cli(["run", prog, "-l", "3"], capsys)
    assert status == 0 and err == ""
    assert nrrd.read("n.nrrd", index_order="C")[0].tolist() == [3, 3, 3]
    monkeypatch.setattr(options, "DEFAULT_LIMIT", 7)
    status, out, err = run_cli(["run", prog], capsys)
    assert status == 0 and "stopped at the default cap of 7 super-steps: 3 strands still active" in err
    assert nrrd.read("n.nrrd", index_order="C")[0].tolist() == [7, 7, 7]
    assert tl.compile(prog).run(limit=4).n.tolist() == [4, 4, 4]


@needs_diderot
def test_diderot_text_compiles_with_lang():
    text = (PROGRAMS / "forever.diderot").read_text()
    res = tl.compile(text, lang="diderot").run(limit=2)
    assert res.n.tolist() == [2, 2, 2] and res.active == 3


@needs_diderot
def test_an_ill_typed_diderot_program_is_an_error_at_its_position(tmp_path, capsys):
    path = tmp_path / "bad.diderot"
    path.write_text("#version 2.0\nstrand s (int i) {\n   output real x = [1.0, 2.0];\n   update { stabilize; }\n}\n"
                    "initially [ s(i) | i in 0..1 ];\n")
    status, out, err = run_cli(["run", str(path)], capsys)
    assert status == 1 and f"{path}:3:" in err and "error[" in err and "Traceback" not in err


@needs_diderot
@pytest.mark.slow
def test_tensorlang_run_in_a_fresh_process(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "tensorlang", "run", str(PROGRAMS / "forever.diderot"), "-l", "2",
                           "-o", "out.nrrd"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(tl.__file__).parents[1])))
    assert done.returncode == 0, done.stderr
    assert nrrd.read(str(tmp_path / "out.nrrd"), index_order="C")[0].tolist() == [2, 2, 2]


@needs_diderot
def test_the_tutorials_isocontour_finds_points_on_the_circle():
    c = np.linspace(-2.0, 2.0, 41)
    x, y = np.meshgrid(c, c, indexing="ij")
    img = tl.image(x**2 + y**2, world={"spacing": 0.1, "origin": [-2.0, -2.0]})
    res = tl.compile(str(PROGRAMS / "isocontour.diderot"))(img=img, isoval=1.0, res=6)
    assert res.pos.shape[1:] == (2,) and 20 <= len(res.pos) <= 36
    np.testing.assert_allclose(np.hypot(res.pos[:, 0], res.pos[:, 1]), 1.0, atol=1e-9)


@needs_diderot
def test_the_tutorials_mip_keeps_the_brightest_sample_of_each_ray(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    vol = np.zeros((5, 6, 7))
    vol[2, 3, 4], vol[1, 1, 1] = 5.0, 2.0
    nrrd.write("vol.nrrd", vol, {"kinds": ["space"] * 3}, index_order="F")
    status, _, err = run_cli(["run", str(PROGRAMS / "mip.diderot"), "-vol", "vol.nrrd", "-res0", "4", "-res1", "5",
                              "-hi", "3", "4", "6", "-step", "1", "-o", "mip.nrrd"], capsys)
    assert status == 0, err
    mip, header = nrrd.read("mip.nrrd", index_order="C")
    expected = np.zeros((4, 5))
    expected[2, 3], expected[1, 1] = 5.0, 2.0
    expected[0, :] = expected[:, 0] = -np.inf  # rays on the volume's border: inside() is strict, as Diderot's
    np.testing.assert_array_equal(mip, expected)
    assert list(header["sizes"]) == [5, 4] and header["kinds"] == ["space", "space"]


def test_a_closed_standard_output_is_one_diagnostic(program_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdout", None)
    status = cli.main(["run", program_file("collection"), "-n", "3", "-t"])
    err = capsys.readouterr().err
    assert status == 1 and "error[input]: cannot write to standard output: it is closed" in err
