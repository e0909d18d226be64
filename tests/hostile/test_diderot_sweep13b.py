"""What the sweep of test_diderot_sweep13.py found and left (issue [diderot], "Errors: a clear
error[CODE] with position"): a run-time error of the program names the line and column of
the operation, in the same words in the interpreter and in C; two outputs given one file
are refused before the run; an ``-l`` past 32 bits is refused (Diderot's executables wrap it)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import Span, TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.strands.runner import StrandRun
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BACKENDS = ["interp", pytest.param("c", marks=needs_cc)]


def program(text: str):
    return strands(check(parse_program(text)))


# Line 10 is the operation (its column: where the expression or statement begins). The
# interpreter said "integer division by zero", C "integer division or remainder by zero",
# and neither said where; diderotc's executable stops on SIGFPE for the division and reads
# past the sequence without a word.
FAILING = """#version 2.0
input int d = 0;
input real[] xs;
strand S (int i) {
  output real r = 0.0;
  update {
    int q = 7;
    vec3 v = [1.0, 2.0, 3.0];
    real[3] s = {1.0, 2.0, 3.0};
%s
    stabilize;
  }
}
create_array { S(i) | i in 0..2 };
"""
STATEMENTS = [
    ("    r = real(i / d);", 14, "integer division by zero"),
    ("    r = real(i % d);", 14, "integer remainder by zero"),
    ("    q /= d;", 5, "integer division by zero"),
    ("    q %= d;", 5, "integer remainder by zero"),
    ("    r = v[i + 1];", 9, "tensor index out of range"),
    ("    r = s[i + 1];", 9, "sequence index out of range"),
    ("    r = xs[i];", 9, "sequence index out of range"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("statement, col, message", STATEMENTS, ids=[m + " " + s.split()[0] for s, _, m in STATEMENTS])
def test_a_run_time_error_names_the_operation_s_line_and_column(backend, statement, col, message):
    p = program(FAILING % statement)
    with pytest.raises(TensorLangError) as exc:
        p.run({"xs": np.array([1.0, 2.0])}, backend=backend)
    diag = exc.value.diagnostics[0]
    assert (diag.code, diag.message) == ("input", message)
    assert diag.span == Span.point(10, col)  # the same in both: C knows the first character


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_column_past_20_bits_comes_back_from_c_whole(backend):
    # C returns the position in the error flag, beside the code: a wide line keeps its column
    p = program(FAILING % (" " * 1_100_000 + "r = real(i / d);"))
    with pytest.raises(TensorLangError) as exc:
        p.run({"xs": np.array([1.0, 2.0])}, backend=backend)
    assert exc.value.diagnostics[0].span == Span.point(10, 1_100_010)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_command_line_shows_the_failing_line(tmp_path, backend):
    path = tmp_path / "div.diderot"
    path.write_text(FAILING.replace("%s", "    r = real(i / d);").replace("input real[] xs;", "// (no sequence file)"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENSORLANG_STRAND_BACKEND", backend)
        run = tl.compile(str(path))
        with pytest.raises(TensorLangError) as exc:
            run.main(["-o", str(tmp_path / "r.nrrd")], out=io.StringIO(), err=io.StringIO())
    text = str(exc.value)
    assert "div.diderot:10:14: error[input]: integer division by zero" in text
    assert "r = real(i / d);" in text and not (tmp_path / "r.nrrd").exists()


TWO_OUTPUTS = """#version 2.0
strand S (int i) {
  output real a = 0.0;
  output real b = 1.0;
  update { stabilize; }
}
create_array { S(i) | i in 0..2 };
"""


@pytest.mark.parametrize("argv, names", [
    (["-o-a", "x.nrrd", "-o-b", "x.nrrd"], "output a and output b"),
    (["-o-a", "./x.nrrd", "-o-b", "x.nrrd"], "output a and output b"),
    (["-o-a", "b.nrrd"], "output a and output b"),  # b's default file
    (["-o-a", "x.nrrd", "-print", "x.nrrd"], "output a and the printed output (-print)"),
    (["-s", "1", "-sp-a", "snap", "-sp-b", "snap"], "output a and output b have the same snapshot prefix"),
], ids=["two -o", "one file two spellings", "a default", "-print", "snapshots"])
def test_two_outputs_given_one_file_are_refused_before_the_run(tmp_path, argv, names):
    p = StrandRun(program(TWO_OUTPUTS))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        with pytest.raises(TensorLangError) as exc:
            p.main(argv, out=io.StringIO(), err=io.StringIO())
        assert exc.value.code == "input" and names in exc.value.diagnostics[0].message
        assert list(tmp_path.iterdir()) == []  # nothing written: the run did not start
        assert p.main(["-o-a", "x.nrrd"], out=io.StringIO(), err=io.StringIO()) == 0  # distinct files: as before
        assert sorted(f.name for f in tmp_path.iterdir()) == ["b.nrrd", "x.nrrd"]


@pytest.mark.parametrize("limit", ["4294967296", "99999999999999999999"])
def test_a_limit_past_32_bits_is_refused_as_diderot_would_wrap_it(tmp_path, limit):
    p = StrandRun(program(TWO_OUTPUTS))
    with pytest.raises(TensorLangError) as exc:
        p.main(["-l", limit, "-o-a", str(tmp_path / "a.nrrd")], out=io.StringIO(), err=io.StringIO())
    assert exc.value.code == "input" and "-l expects an integer from 0 to 4294967295" in exc.value.diagnostics[0].message
    with pytest.raises(TensorLangError) as exc:
        p.run({}, limit=int(limit))
    assert exc.value.code == "input" and "limit must be an integer from 0 to 4294967295" in str(exc.value)
    argv = ["-l", "4294967295", "-o-a", str(tmp_path / "a.nrrd"), "-o-b", str(tmp_path / "b.nrrd")]
    assert p.main(argv, out=io.StringIO(), err=io.StringIO()) == 0  # the largest is taken
    assert p.run({}, limit=2**32 - 1)["b"].tolist() == [1.0, 1.0, 1.0]


# `-o prog.diderot` (or -print, or -o-NAME, naming the program's own file) wrote the outputs
# over the program and exited 0, as `tensorlang compile -o` did before it was refused there.
@pytest.mark.parametrize("argv", [["-o-a", "prog.diderot"], ["-o-b", "./prog.diderot"], ["-print", "prog.diderot"]])
def test_an_output_on_the_program_s_own_file_is_refused(tmp_path, argv):
    path = tmp_path / "prog.diderot"
    path.write_text(TWO_OUTPUTS)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        run = tl.compile(str(path))
        with pytest.raises(TensorLangError) as exc:
            run.main(argv, out=io.StringIO(), err=io.StringIO())
    assert exc.value.code == "input" and "the program and " in exc.value.diagnostics[0].message
    assert path.read_text() == TWO_OUTPUTS and sorted(f.name for f in tmp_path.iterdir()) == ["prog.diderot"]


# Two failures in one strand: C kept the last (the division returns 0 and the strand goes on,
# so v[q - 1] failed too and its position replaced the division's); now the first, as the
# interpreter stops at it (a review's finding).
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_first_of_two_run_time_errors_is_the_one_reported(backend):
    p = program(FAILING % "    q = i / d;\n    r = v[q - 1];")
    with pytest.raises(TensorLangError) as exc:
        p.run({"xs": [1.0]}, backend=backend)
    diag = exc.value.diagnostics[0]
    assert diag.message == "integer division by zero" and (diag.span.line, diag.span.col) == (10, 9)


# An output named onto an input file of the run wrote NRRD over the user's data and exited 0.
def test_an_output_on_an_input_file_is_refused(tmp_path):
    (tmp_path / "xs.txt").write_text("1 2 3\n")
    p = StrandRun(program(FAILING % "    r = xs[0];"))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        with pytest.raises(TensorLangError) as exc:
            p.main(["-xs", "xs.txt", "-o", "xs.txt"], out=io.StringIO(), err=io.StringIO())
    assert exc.value.code == "input" and "input xs and output r" in exc.value.diagnostics[0].message
    assert (tmp_path / "xs.txt").read_text() == "1 2 3\n"
