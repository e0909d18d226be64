"""A strand program that was to run in C and ran in the reference interpreter says so
(docs/diderot.md, "C or the interpreter"): the API warns with InterpreterFallbackWarning,
the command line prints one note, and TENSORLANG_STRAND_BACKEND=c makes it an error.

The compile failure is real: the renderer's C gets a line that is not C, and the
machine's compiler rejects it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import strand_ir
from tensorlang.cli import main
from tensorlang.errors import TensorLangError
from tensorlang.strands.runner import BACKEND_ENV, InterpreterFallbackWarning
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as c_strands

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

HERON = """#version 1.0
input int numval ("how many") = 5;
strand sqroot (real val) {
   real root = val;
   output real r = 0;
   update {
      root = (root + val/root) / 2.0;
      if (|root*root - val| < 1e-12) { r = root; stabilize; }
   }
}
initially [ sqroot(real(ii)) | ii in 1 .. numval ];
"""


@pytest.fixture
def broken_c(monkeypatch):
    """The strand renderer's C gets a line the compiler rejects (a new program text, so
    no cached runner or object is reused)."""
    source = c_strands.Renderer.source
    monkeypatch.setattr(c_strands.Renderer, "source", lambda self: source(self) + "\nthis_is_not_c tl_broken(;\n")
    monkeypatch.setattr(c_strands, "_RUNNERS", {})
    monkeypatch.delenv(BACKEND_ENV, raising=False)


def _roots(res) -> None:
    assert np.allclose(res["r"], np.sqrt(np.arange(1, 6)))


@needs_cc
def test_generated_c_that_does_not_compile_warns_with_the_compilers_first_error(broken_c):
    p = tl.compile(HERON, lang="diderot")
    with pytest.warns(InterpreterFallbackWarning) as caught:
        res = p()
    _roots(res)  # the interpreter ran it
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "ran in the interpreter" in text and "did not compile" in text and "bug in tensorlang" in text
    assert "error" in text.split("please report it): ", 1)[1]  # the compiler's error line, not "In function"
    assert "tl_broken" in text or "this_is_not_c" in text
    assert f"{BACKEND_ENV}=c" in text


@needs_cc
def test_the_warning_comes_once_per_run_also_with_progress(broken_c):
    p = tl.compile(HERON, lang="diderot")
    heard = []
    with pytest.warns(InterpreterFallbackWarning) as caught:
        p.run(progress=lambda step, active: heard.append(step))
    assert len(caught) == 1 and heard  # said at the first progress, not again at the end


@needs_cc
def test_the_environment_variable_makes_the_fallback_an_error(broken_c, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "c")
    p = tl.compile(HERON, lang="diderot")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        with pytest.raises(TensorLangError, match="did not compile"):
            p()


def test_interp_runs_the_interpreter_without_a_word(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "interp")
    p = tl.compile(HERON, lang="diderot")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        _roots(p())
    assert p.program.executor_note is None  # the C executor was never asked


@pytest.mark.parametrize("value", ["C++", "numpy", "1"])
def test_a_bad_value_of_the_variable_is_an_input_error(monkeypatch, value):
    monkeypatch.setenv(BACKEND_ENV, value)
    with pytest.raises(TensorLangError) as err:
        tl.compile(HERON, lang="diderot")()
    assert err.value.code == "input" and BACKEND_ENV in err.value.message


def test_no_c_compiler_is_an_intended_fallback_and_says_so(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.setitem(strand_ir.UNAVAILABLE, "c", lambda: "no C compiler: 'cc' is not on PATH (set $CC)")
    p = tl.compile(HERON, lang="diderot")
    with pytest.warns(InterpreterFallbackWarning, match="as intended where no C compiler works"):
        _roots(p())
    monkeypatch.setenv(BACKEND_ENV, "c")
    with pytest.raises(TensorLangError) as err:
        p()
    assert err.value.code == "backend" and "not on PATH" in err.value.message


def test_an_unsupported_program_names_what_c_lacks(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.setitem(strand_ir.UNAVAILABLE, "c", lambda: None)
    text = HERON.replace("real root = val;", "real root = val; real{}{} seen = {};")  # (a sequence of sequences in the state)
    p = tl.compile(text, lang="diderot")
    with pytest.warns(InterpreterFallbackWarning, match="ran in the interpreter, not in C: the C executor "):
        p()


@needs_cc
def test_a_program_that_runs_in_c_does_not_warn(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        _roots(tl.compile(HERON, lang="diderot")())


@needs_cc
def test_the_command_line_prints_one_note_and_still_writes_the_outputs(broken_c, tmp_path, capsys, monkeypatch):
    prog = tmp_path / "heron.diderot"
    prog.write_text(HERON)
    out = tmp_path / "r.nrrd"
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)  # a note, not a warning
        assert main(["run", str(prog), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("tensorlang: note:") == 1 and "ran in the interpreter" in err and "did not compile" in err
    assert out.exists()
    monkeypatch.setenv(BACKEND_ENV, "c")
    out.unlink()
    assert main(["run", str(prog), "-o", str(out)]) != 0
    err = capsys.readouterr().err
    assert "did not compile" in err and "Traceback" not in err and not out.exists()


@needs_cc
def test_the_warning_comes_as_the_interpreter_begins_not_after_the_run(broken_c):
    p = tl.compile(HERON, lang="diderot")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seen = []
        p.run(progress=lambda step, active: seen.append(len(caught)))
    assert seen[0] == 1 and len(caught) == 1  # already told at the first super-step's progress


def test_a_bad_value_of_the_variable_is_one_line_on_the_command_line(tmp_path, capsys, monkeypatch):
    prog = tmp_path / "heron.diderot"
    prog.write_text(HERON)
    monkeypatch.setenv(BACKEND_ENV, "gpu")
    assert main(["run", str(prog), "-o", str(tmp_path / "r.nrrd")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error[input]" in err and BACKEND_ENV in err and "Traceback" not in err
