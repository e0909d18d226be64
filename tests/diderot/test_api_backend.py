"""``tl.compile(diderot_program, backend=...)`` chooses where the strands run (docs/api.md,
"Diderot programs"): ``c`` runs them in C or is error[backend] before the run, ``interp``
runs the interpreter without a fallback warning, ``auto`` (the default) leaves the choice
to TENSORLANG_STRAND_BACKEND; ``c`` and ``interp`` win over the variable.  Any other
back end is error[backend] naming the three.  (``backend=`` was once ignored for a strand
program: ``backend="numpy"`` ran it, ``backend="c"`` fell back to the interpreter.)

Which executor ran is observed, not assumed: the C executor is made unavailable
(strand_ir.UNAVAILABLE, as on a machine without a compiler) or its registration is
wrapped to count its builds."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import strand_ir
from tensorlang.errors import TensorLangError
from tensorlang.strands.runner import BACKEND_ENV, InterpreterFallbackWarning
from tensorlang.targets.c import build as c_build

HALVES = """
input int count = 4;
strand half (int i) {
   output real h = 0.0;
   update { h = real(i) / 2.0; stabilize; }
}
initially [ half(i) | i in 0 .. count-1 ];
"""

NO_CC = "no C compiler: 'cc' is not on PATH (set $CC)"


def _halves(res) -> None:
    assert res["h"].tolist() == [0.0, 0.5, 1.0, 1.5]


@pytest.fixture
def no_c(monkeypatch):
    """The C executor unavailable, as where no compiler works: auto would fall back, warning."""
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.setitem(strand_ir.UNAVAILABLE, "c", lambda: NO_CC)


def test_auto_without_c_falls_back_with_a_warning(no_c):
    # the control of the two tests below: the same program where backend= says nothing
    p = tl.compile(HALVES, lang="diderot", backend="auto")
    with pytest.warns(InterpreterFallbackWarning, match="as intended where no C compiler works"):
        _halves(p())
    assert p.backend is None  # the variable decides, at each call


@pytest.mark.parametrize("env", [None, "c", "auto"])
def test_interp_runs_the_interpreter_without_a_warning_whatever_the_variable_says(no_c, monkeypatch, env):
    if env is not None:
        monkeypatch.setenv(BACKEND_ENV, env)  # "c" would make the missing compiler an error
    p = tl.compile(HALVES, lang="diderot", backend="interp")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        _halves(p())
    assert p.backend == "interp" and p.program.executor_note is None


@pytest.mark.parametrize("env", [None, "interp", "auto"])
def test_c_without_c_is_a_backend_error_before_the_run_whatever_the_variable_says(no_c, monkeypatch, env):
    if env is not None:
        monkeypatch.setenv(BACKEND_ENV, env)  # "interp" would run the interpreter
    p = tl.compile(HALVES, lang="diderot", backend="c")
    steps: list[int] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        with pytest.raises(TensorLangError) as err:
            p.run(progress=lambda step, active: steps.append(step))
    assert err.value.code == "backend" and "not on PATH" in err.value.message
    assert steps == []  # not one super-step ran


def test_auto_leaves_the_choice_to_the_variable(no_c, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "c")
    with pytest.raises(TensorLangError) as err:
        tl.compile(HALVES, lang="diderot")()  # backend="auto", the default
    assert err.value.code == "backend"
    monkeypatch.setenv(BACKEND_ENV, "interp")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        _halves(tl.compile(HALVES, lang="diderot", backend="auto")())


def test_a_keyword_makes_a_bad_variable_harmless_auto_does_not(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "gpu")
    _halves(tl.compile(HALVES, lang="diderot", backend="interp")())  # the variable is not read
    with pytest.raises(TensorLangError) as err:
        tl.compile(HALVES, lang="diderot")()
    assert err.value.code == "input" and BACKEND_ENV in err.value.message


@pytest.fixture
def c_builds(monkeypatch):
    """The strand programs the C executor is asked to run (one a run in C)."""
    if c_build.find_compiler() is None:
        pytest.skip("no working C compiler")
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    built: list[object] = []
    make = strand_ir.EXECUTORS["c"]
    monkeypatch.setitem(strand_ir.EXECUTORS, "c", lambda ir, *steps: built.append(ir) or make(ir, *steps))
    return built


@pytest.mark.parametrize("env", [None, "interp"])
def test_c_runs_the_strands_in_c(c_builds, monkeypatch, env):
    if env is not None:
        monkeypatch.setenv(BACKEND_ENV, env)
    p = tl.compile(HALVES, lang="diderot", backend="c")
    _halves(p())
    assert len(c_builds) == 1


def test_interp_never_asks_the_c_executor(c_builds):
    _halves(tl.compile(HALVES, lang="diderot", backend="interp")())
    assert c_builds == []


def test_backend_applies_to_a_path_too(no_c, tmp_path):
    path = tmp_path / "halves.diderot"
    path.write_text(HALVES)
    with pytest.raises(TensorLangError, match="not on PATH"):
        tl.compile(path, backend="c")()
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        _halves(tl.compile(str(path), backend="interp")(count=4))


@pytest.mark.parametrize("backend", ["numpy", "dask", "cuda", "C", "", None, 3, np.array([1, 2])])
def test_any_other_backend_is_a_backend_error_naming_the_three(backend):
    with pytest.raises(TensorLangError) as err:
        tl.compile(HALVES, lang="diderot", backend=backend)
    message = err.value.message
    assert err.value.code == "backend" and "diderot" in message and repr(backend) in message
    assert "choose one of auto, c " in message and "interp" in message.split("choose", 1)[1]
    # as for a kernel: an unknown back end is error[backend] there too
    if isinstance(backend, str) and backend not in tl.available_backends():
        with pytest.raises(TensorLangError) as kernel_err:
            tl.compile("in var A : [2]\nout var B : [2]\nB = A\n", backend=backend)
        assert kernel_err.value.code == "backend"
