"""The one driver (src/tensorlang/pipeline.py): stages as frozen values that print, the
compiler started from EIN, targets that render what the pipeline planned, and the views
a kernel shows for stages its own target does not run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import lang, pipeline
from tensorlang.errors import Source, TensorLangError
from tensorlang.kernel import Kernel

PRODUCT = "in var A : [6 5]\nin var B : [5 4]\nin var C : [4 3]\nout var D : [6 3]\nD = A # B # C . [[2 3] [4 5]]\n"
BACKENDS = ("interp", "numpy", *(("c",) if "c" in tl.available_backends() else ()))


def _inputs(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"A": rng.standard_normal((6, 5)), "B": rng.standard_normal((5, 4)), "C": rng.standard_normal((4, 3))}


def _options(backend: str, **kw) -> pipeline.Options:
    return pipeline.Options(backend, np.dtype("float64"), **kw)


def test_every_stage_is_a_frozen_value_that_prints():
    ein = tl.compile(PRODUCT, backend="interp").ein
    compiled = pipeline.compile(ein, _options("numpy"), until="code")
    with pytest.raises(dataclasses.FrozenInstanceError):
        compiled.schedule = None  # type: ignore[misc]
    for stage in ("ein", "lambda", "opt", "facts", "schedule", "code"):
        text = compiled.show(stage)
        assert isinstance(text, str) and text.strip(), stage
    assert compiled.build is None and compiled.loops is None  # not run: until, and numpy runs no loop IR
    assert "D" in compiled.show("schedule") and "roles: " in compiled.show("facts")


def test_until_stops_after_the_stage_and_the_stages_are_the_targets():
    ein = tl.compile(PRODUCT, backend="interp").ein
    assert pipeline.compile(ein, _options("numpy"), until="opt").schedule is None
    interp = pipeline.compile(ein, _options("interp"))
    assert interp.opt is None and interp.schedule is None and interp.build is not None
    with pytest.raises(ValueError, match="no stage"):
        pipeline.compile(ein, _options("numpy"), until="assembly")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_built_as_ein_runs_on_every_target_without_text(backend, monkeypatch):
    """lang.EIN: a program Python builds as EIN is checked from its declarations and
    compiled by the one driver; nothing parses text on the way."""
    from tensorlang.lang.tl import parser

    ein = tl.compile(PRODUCT, backend="interp").ein

    def no_text(*args, **kwargs):
        raise AssertionError("a program built as EIN was parsed")

    monkeypatch.setattr(parser, "parse_model", no_text)
    kernel = Kernel(lang.EIN, lang.EIN.check(ein), Source("", "<built>"), _options(backend))
    got = kernel(**_inputs())["D"]
    x = _inputs()
    assert np.allclose(got, x["A"] @ x["B"] @ x["C"])
    assert kernel.inputs == ("A", "B", "C") and kernel.outputs == ("D",)


@pytest.mark.parametrize("backend", BACKENDS)
def test_schedule_and_loops_are_one_consistent_view(backend):
    """A kernel's schedule and loop IR come from one compilation: its own where its target
    runs loops, else what the C target would run, with the same measured threshold."""
    kernel = tl.compile(PRODUCT, backend=backend)
    view = kernel.compiled_for("loops")
    assert kernel.schedule is view.schedule and kernel.loop_program is view.loops
    assert view.options.backend == "c"
    assert kernel.ir("loops").startswith("# loop rewrites:")


def test_the_schedule_is_planned_once_per_compilation(monkeypatch):
    calls = []
    original = pipeline.plan

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "plan", counting)
    kernel = tl.compile(PRODUCT, backend=BACKENDS[-1])
    kernel(**_inputs())
    kernel.ir("schedule"), kernel.ir("loops"), kernel.code("c")
    assert len(calls) == 1


def test_loop_rewrites_are_skipped_by_name_like_passes():
    text = tl.compile(PRODUCT, backend="numpy", skip_passes=("interchange",)).ir("loops")
    first = text.splitlines()[0]
    assert first.startswith("# loop rewrites:") and "interchange" not in first and "lower" in first
    assert "interchange" in tl.compile(PRODUCT, backend="numpy").ir("loops").splitlines()[0]
    with pytest.raises(TensorLangError, match="loop rewrites"):
        tl.compile(PRODUCT, skip_passes=("lower",))
    with pytest.raises(TensorLangError, match="loop rewrites"):
        tl.compile(PRODUCT, skip_passes=("no-such-rewrite",))


def test_the_memory_check_sees_the_optimized_programs_buffers(monkeypatch):
    """A budget between the buffers of the optimized program and those it would need
    without the optimizer: compiled with the optimizer it fits, without it is refused."""
    source = ("in var A : [40 40]\nin var B : [40 40]\nout var C : [40 40]\nvar T : [40 40 40]\n"
              "T[i,j,k] = A[i,j] * B[j,k]\nC[i,k] = sum(j) T[i,j,k]\n")
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(40 * 40 * 8 * 6))  # a few matrices, not T (40³)
    ein = tl.compile(source, backend="interp").ein
    pipeline.compile(ein, _options("numpy"))  # T optimized away
    with pytest.raises(TensorLangError, match="too-large|memory budget"):
        pipeline.compile(ein, _options("numpy", opt=False))
