"""Diderot programs and runs written as a user would, with features in unusual places (issue
[diderot], "programs you have not seen"; the sweep after test_diderot_sweep12.py): each
finding of the sweep that was fixed, checked on the strand interpreter and on the C executor,
against what ``diderotc --double --exec``'s executable did with the same program."""

from __future__ import annotations

import io

import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.strands.runner import StrandRun
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def program(text: str):
    return strands(check(parse_program(text)))


# A grid whose iteration range is empty (an input bound makes it so) has no strand: Diderot's
# executable says "no stable strands at termination, so no output" and exits 1; the command
# line wrote an NRRD file with an axis of size 0, which Teem (unu, nrrdLoad) cannot read.
EMPTY_GRID = """#version 2.0
input int hi = 3;
strand S (int i, int j) {
  output real r = 0.0;
  update { r = real(i * 10 + j); stabilize; }
}
create_array { S(i, j) | i in 0..hi, j in 2..1 };
"""


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
@pytest.mark.parametrize("snapshot", [[], ["-s", "1"]], ids=["run", "snapshots"])
def test_an_empty_grid_writes_no_file_and_exits_1_as_diderot_does(tmp_path, backend, snapshot):
    p = StrandRun(program(EMPTY_GRID))
    err = io.StringIO()
    argv = ["-o", str(tmp_path / "r.nrrd"), "-sp", str(tmp_path / "snap"), *snapshot]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENSORLANG_STRAND_BACKEND", backend)
        assert p.main(argv, out=io.StringIO(), err=err) == 1
    assert "no stable strands at termination, so no output" in err.getvalue()
    assert list(tmp_path.iterdir()) == []
    res = p.program.run({}, backend=backend)  # from Python: the grid's empty array, as before
    assert res.outputs["r"].shape == (4, 0) and res.grid_shape == (4, 0)


# A sequence of tensors read from an NRRD file: the axes but the last hold an item's
# components in row-major order, and must hold as many as the element type has. The reader
# took any file whose size the element's divided (a `3-vector list` file as a vec2[] of other
# pairs, a 2-D file as a real[]) and read a matrix's components column-major: diderotc's
# executable refuses the first ("expected 2 values per sequence element, but found 3") and
# reads the 4 x N file below as [[0, 1], [2, 3]] and [[4, 5], [6, 7]] (mt = 22).
SEQUENCES = """#version 2.0
input real[] xs ("xs");
input mat2[] ms ("ms");
input vec2[] ps ("ps");
real tot = sum { x | x in xs };
real mt = sum { m[0,1] + 2.0*m[1,0] | m in ms };
real pt = sum { p[0] - p[1] | p in ps };
strand S (int i) {
  output vec4 r = [0.0, 0.0, 0.0, 0.0];
  update { r = [tot, real(length(ms)), mt, pt]; stabilize; }
}
create_collection { S(i) | i in 0..0 };
"""


def _nrrd(path, sizes: list[int], values) -> str:
    """A raw little-endian NRRD of doubles with these sizes (fastest axis first)."""
    import numpy as np
    head = f"NRRD0004\ntype: double\ndimension: {len(sizes)}\nsizes: {' '.join(map(str, sizes))}\n" \
           "endian: little\nencoding: raw\n\n"
    path.write_bytes(head.encode() + np.asarray(values, dtype="<f8").tobytes())
    return str(path)


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
def test_a_sequence_file_holds_row_major_items_of_the_declared_size(tmp_path, backend):
    p = program(SEQUENCES)
    good = {"xs": _nrrd(tmp_path / "xs.nrrd", [1, 3], [1.0, 2.0, 4.0]),
            "ms": _nrrd(tmp_path / "ms.nrrd", [4, 2], range(8)),
            "ps": _nrrd(tmp_path / "ps.nrrd", [2, 2], [5.0, 1.0, 3.0, 7.0])}
    res = p.run(good, backend=backend)
    assert res.outputs["r"].tolist() == [[7.0, 2.0, 22.0, 0.0]]
    for name, sizes, values, want in [("ps", [3, 2], range(6), r"items of 3 number\(s\), not 2"),
                                      ("ps", [4], range(4), r"items of 1 number\(s\), not 2"),
                                      ("xs", [2, 3], range(6), r"items of 2 number\(s\), not 1"),
                                      ("ms", [2, 3], range(6), r"items of 2 number\(s\), not 4")]:
        bad = dict(good, **{name: _nrrd(tmp_path / "bad.nrrd", sizes, values)})
        with pytest.raises(TensorLangError, match=want) as exc:
            p.run(bad, backend=backend)
        assert exc.value.code == "input"


# A plain text sequence file is read as Teem reads it: one line of numbers is 1-D (diderotc's
# executable sums `1 2 3 4` given to a real sequence to 10), several lines are one item a line
# (`1 2` and `3 4` given to ps are two vec2s), and one line of an item's numbers is one item
# (diderotc's executable takes `1 2 3` given to a vec3 sequence so). The row-major change above refused the one line.
@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
def test_a_text_sequence_file_of_one_line_is_one_dimensional_as_teem_reads_it(tmp_path, backend):
    (tmp_path / "xs.txt").write_text("1 2 3 4\n")
    (tmp_path / "ps.txt").write_text("5 1\n3 7\n")
    values = {"xs": str(tmp_path / "xs.txt"), "ms": _nrrd(tmp_path / "ms.nrrd", [4, 2], range(8)),
              "ps": str(tmp_path / "ps.txt")}
    res = program(SEQUENCES).run(values, backend=backend)
    assert res.outputs["r"].tolist() == [[10.0, 2.0, 22.0, 0.0]]
    (tmp_path / "ps.txt").write_text("5 1\n")  # one line of one item's numbers: one vec2 (diderotc: so)
    res = program(SEQUENCES).run(values, backend=backend)
    assert res.outputs["r"].tolist() == [[10.0, 2.0, 22.0, 4.0]]


# Snapshots: Diderot's executable (diderotc --snapshot) runs N super-steps at a time and
# writes a snapshot after each run, so the last step gets one too when the run ends (every
# strand stable, or the -l limit) between two multiples of N; here it wrote only the
# multiples. Strands that multiply with new and die, as diderotc's executable ran them:
# `-s 2` wrote steps 0, 2, 4, 6, 7; `-s 3 -l 4` wrote 0, 3, 4 (same files byte for byte).
TREE = """#version 2.0
strand S (int g, real v) {
  output vec2 r = [0.0, 0.0];
  int age = 0;
  update {
    age += 1;
    if (g < 3 && age == 1) { new S(g + 1, v * 2.0); new S(g + 1, v * 2.0 + 1.0); die; }
    if (g == 3 && v > 10.0) { die; }
    r = [real(g), v];
    if (age > g) { stabilize; }
  }
}
create_collection { S(0, real(i)) | i in 0..1 };
"""


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
@pytest.mark.parametrize("every, limit, want", [(2, 0, [0, 2, 4, 6, 7]), (3, 4, [0, 3, 4]), (8, 0, [0, 7])])
def test_a_snapshot_is_taken_after_the_last_step_as_diderot_does(backend, every, limit, want):
    seen = []
    res = program(TREE).run({}, backend=backend, snapshot=every, limit=limit,
                            on_snapshot=lambda step, r: seen.append((step, len(r.outputs["r"]))))
    assert [step for step, _ in seen] == want and res.steps == want[-1]
    assert seen[-1][1] == 11  # every living strand (diderotc's step-4 snapshot holds 11 too)


# Numbers on the command line are read as Diderot's executables read them (C's strtod and
# strtol, through hest): Python's own spellings were taken too, `-n 1_000` as 1000 (Diderot's
# executable stops at the underscore and runs with 1) and digits of other scripts, `-n ٣` and
# `-eps ５` as 3 and 5 (Diderot's: couldn't parse "٣" as int for "-n" option).
NUMBERS = """#version 2.0
input real eps = 0.5;
input int n = 2;
strand S (int i) {
  output vec2 r = [0.0, 0.0];
  update { r = [eps, real(n)]; stabilize; }
}
create_collection { S(i) | i in 0..0 };
"""


@pytest.mark.parametrize("argv", [["-n", "1_000"], ["-eps", "1_0"], ["-n", "٣"], ["-eps", "٣.٥"], ["-eps", "５"],
                                  ["-l", "３"], ["-n", "2", "-s", "1_0"]])
def test_a_number_on_the_command_line_is_ascii_without_underscores(tmp_path, argv):
    p = StrandRun(program(NUMBERS))
    with pytest.raises(TensorLangError, match=f"expects (a number|an integer), got '{argv[-1]}'") as exc:
        p.main([*argv, "-o", str(tmp_path / "r.nrrd"), "-sp", str(tmp_path / "r")], out=io.StringIO(), err=io.StringIO())
    assert exc.value.code == "input" and list(tmp_path.iterdir()) == []
    assert p.main(["-n", "+7", "-eps", "-1.5e-3", "-o", str(tmp_path / "r.nrrd")], out=io.StringIO(),
                  err=io.StringIO()) == 0


# normalize of a zero vector divides by its length as Diderot's executables do: NaN in every
# component (it was the zero vector here); a vector whose squares underflow has length 0 and
# its components divided by it are infinities of their signs.
NORMALIZE = """#version 2.0
input real s = 0.0;
strand S (int i) {
  output vec3 r = [0.0, 0.0, 0.0];
  update { r = normalize([s * real(i), -s, s]); stabilize; }
}
create_collection { S(i) | i in 0..1 };
"""


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=needs_cc)])
def test_normalize_of_a_zero_vector_is_nan_as_in_diderot(backend):
    import numpy as np

    p = program(NORMALIZE)
    zero = p.run({}, backend=backend).outputs["r"]
    assert np.isnan(zero).all()
    tiny = p.run({"s": 1e-200}, backend=backend).outputs["r"]
    assert np.isnan(tiny[0, 0]) and tiny[0, 1:].tolist() == [-np.inf, np.inf]
    assert tiny[1].tolist() == [np.inf, -np.inf, np.inf]
    one = p.run({"s": 2.0}, backend=backend).outputs["r"]
    assert one[1].tolist() == pytest.approx([3 ** -0.5, -(3 ** -0.5), 3 ** -0.5])
