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
    view = kernel._compiled_for("loops")
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


def _counted(monkeypatch, module, name: str) -> list:
    calls: list = []
    original = getattr(module, name)

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def test_direct_sums_are_lifted_once_per_compilation(monkeypatch):
    """The facts stage lifts a direct sum's reducing items (passes/split.py); the schedule
    plans the program it lifted and does not lift again."""
    lifted = _counted(monkeypatch, pipeline, "lift_concat_items")
    text = ("in var F : [16 3]\nvar G : [16 3 3]\nvar X : [16 12]\nout var C : [12 12]\n"
            "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n")
    kernel = tl.compile(text, backend=BACKENDS[-1])
    assert len(lifted) == 1
    assert kernel.compiled.facts.lifted is not None
    f = np.random.default_rng(2).standard_normal((16, 3))
    x = np.concatenate([f, np.einsum("ri,rj->rij", f, f).reshape(16, 9)], axis=1)
    np.testing.assert_allclose(kernel(F=f)["C"], x.T @ x, rtol=1e-10, atol=1e-10)


def test_a_view_of_another_target_reuses_the_kernels_optimizer_run(monkeypatch):
    """``--emit loops`` of a numpy kernel compiles the C target's view from the kernel's
    own optimized program: the passes run once."""
    runs = _counted(monkeypatch, pipeline, "optimize")
    kernel = tl.compile(PRODUCT, backend="numpy")
    assert len(runs) == 1
    kernel.ir("loops")
    assert kernel._compiled_for("loops").opt is kernel.compiled.opt
    assert len(runs) == 1


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


# ------------------------------------------------------------------ the Gram step
GRAM_TL = "in var X : [40 6]\nout var R : [6 6]\nR[i,j] = sum(n) X[n,i] * X[n,j]\n"
MOMENT_TL = "in var X : [30 5]\nout var R : [5 5 5]\nR[i,j,k] = sum(n) X[n,i] * X[n,j] * X[n,k]\n"
needs_c = pytest.mark.skipif("c" not in tl.available_backends(), reason="the Gram step is the C target's")


@pytest.fixture
def gram_pays(monkeypatch):
    """The Gram step wherever its kernel takes the size (as on an AVX-512 machine)."""
    from tensorlang.schedule.steps import GramStep

    real = GramStep.why_not
    monkeypatch.setattr(GramStep, "why_not", lambda self, vector_bytes: real(self, 64))
    tl.clear_caches()
    yield GramStep
    tl.clear_caches()


@needs_c
@pytest.mark.slow
@pytest.mark.parametrize("text, subscripts", [(GRAM_TL, "ni,nj->ij"), (MOMENT_TL, "ni,nj,nk->ijk")])
def test_a_gram_product_is_one_schedule_step_whatever_the_entry(text, subscripts, gram_pays):
    """The same product as a .tl program, tl.einsum with one array k times, and
    tl.contract_expression called so: one Gram step of one shape, rendered by the C
    target (a third moment the optimizer split is merged back), equal to numpy."""
    kernel = tl.compile(text, backend="c")
    steps = kernel.compiled.schedule.steps
    assert len(steps) == 1 and isinstance(steps[0], gram_pays), kernel.ir("schedule")
    assert "Gram step" in kernel.code("c") and "tmp" not in kernel.ir("schedule")
    x = np.random.default_rng(3).uniform(-1, 1, kernel.shapes["X"])
    k = steps[0].order
    expected = np.einsum(subscripts, *(x,) * k)
    np.testing.assert_allclose(kernel(X=x)["R"], expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tl.einsum(subscripts, *(x,) * k), expected, rtol=1e-12, atol=1e-12)
    key = tl.einsum_api._key(subscripts, (x,) * k, "auto") + (False,)
    einsum_steps = tl.einsum_api._CACHE[key].kernel.compiled.schedule.steps
    expression = tl.contract_expression(subscripts, *(x.shape,) * k)
    np.testing.assert_allclose(expression(*(x,) * k), expected, rtol=1e-12, atol=1e-12)
    expression_steps = expression._same.kernel.compiled.schedule.steps
    fields = ("n", "m", "transposed", "order")
    for other in (einsum_steps, expression_steps):
        assert [tuple(getattr(s, f) for f in fields) for s in other] == [tuple(getattr(steps[0], f) for f in fields)]
    y = x.copy()  # another array object: the contraction's own kernel, no Gram step
    np.testing.assert_allclose(expression(x, *(y,) * (k - 1)), expected, rtol=1e-12, atol=1e-12)
    assert not any(isinstance(s, gram_pays) for s in expression._runner.kernel.compiled.schedule.steps)


@needs_c
def test_a_pair_product_read_twice_is_not_merged_into_a_moment(gram_pays):
    text = ("in var X : [30 5]\nout var R : [5 5 5]\nout var P : [5 5]\nvar t : [30 5 5]\n"
            "t[n,i,j] = X[n,i] * X[n,j]\nR[i,j,k] = sum(n) X[n,k] * t[n,i,j]\nP[i,j] = sum(n) t[n,i,j]\n")
    kernel = tl.compile(text, backend="c", opt=False)
    assert not any(isinstance(s, gram_pays) for s in kernel.compiled.schedule.steps)
    x = np.random.default_rng(4).uniform(-1, 1, (30, 5))
    np.testing.assert_allclose(kernel(X=x)["R"], np.einsum("ni,nj,nk->ijk", x, x, x), rtol=1e-12, atol=1e-12)


@needs_c
@pytest.mark.slow
def test_two_gram_steps_share_one_c_source(gram_pays):
    """Each Gram step's names carry its step's prefix: two in one kernel compile."""
    text = ("in var X : [40 6]\nin var Y : [6 9]\nout var R : [6 6]\nout var S : [9 9]\n"
            "R[i,j] = sum(n) X[n,i] * X[n,j]\nS[i,j] = sum(n) Y[n,i] * Y[n,j]\n")
    kernel = tl.compile(text, backend="c")
    assert sum(isinstance(s, gram_pays) for s in kernel.compiled.schedule.steps) == 2
    rng = np.random.default_rng(5)
    x, y = rng.uniform(-1, 1, (40, 6)), rng.uniform(-1, 1, (6, 9))
    got = kernel(X=x, Y=y)
    np.testing.assert_allclose(got["R"], x.T @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["S"], y.T @ y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend, opt", [("c", True), ("c", False), ("numpy", True), ("numpy", False),
                                          ("interp", True)])
def test_the_optimizer_runs_once_per_kernel(monkeypatch, backend, opt):
    """``Kernel.optimized`` and every stage a kernel shows (``--emit``, ``schedule``,
    ``loop_program``) share the pipeline's one ``opt`` value."""
    runs = []
    real = pipeline.optimize
    monkeypatch.setattr(pipeline, "optimize", lambda *args: runs.append(1) or real(*args))
    k = tl.compile("in var A : [3 4]\nin var B : [4 2]\nout var C : [3 2]\nC = 2 * (A # B . [2 3])\n",
                   backend=backend, opt=opt)
    first = k.optimized
    assert k.schedule is not None and k.loop_program is not None
    assert k.ir("opt") and k.ir("schedule") and k.ir("loops")
    assert k.optimized is first
    assert len(runs) == 1
