"""The table of printable stages (src/tensorlang/stages.py) needs no Kernel: the front
end's views print from the checked program, every other stage from a ``Compiled``."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import lang, pipeline, stages
from tensorlang.api import check_source
from tensorlang.errors import Source, TensorLangError
from tensorlang.kernel import Kernel
from tensorlang.lang.lark_support import MAX_NESTING

PRODUCT = "in var A : [60 50]\nin var B : [50 40]\nin var C : [40 3]\nout var D : [60 3]\nD = A # B # C . [[2 3] [4 5]]\n"


def _no_kernel(monkeypatch):
    """Any Kernel made from here on fails the test."""
    monkeypatch.setattr(Kernel, "__init__", lambda *args, **kwargs: pytest.fail("a stage was printed through a Kernel"))


def _checked():
    return check_source(Source(PRODUCT, "<product>"), "tl")


def test_the_front_ends_views_print_from_the_checked_program(monkeypatch):
    checked = _checked()
    _no_kernel(monkeypatch)
    texts = {stage: stages.front_text(stage, lang.get("tl"), checked) for stage in stages.FRONT_STAGES}
    assert "D = A # B # C" in texts["ast"] and set(texts) == {"ast", *lang.VIEWS}


@pytest.mark.parametrize("backend", ["numpy", *(("c",) if "c" in tl.available_backends() else ())])
def test_the_pipelines_stages_print_from_a_compiled(backend, monkeypatch):
    """Each stage after the front end is ``Compiled.show`` of the pipeline's value, the
    text ``Kernel.ir``/``Kernel.code`` (and so ``--emit``) prints for the same program."""
    language = lang.get("tl")
    checked = _checked()
    compiled = pipeline.compile(language.lower(checked), pipeline.Options(backend, np.dtype("float64")), until="code")
    with monkeypatch.context() as patch:
        _no_kernel(patch)
        texts = {stage: stages.compiled_text(stage, compiled, "tl") for stage, until in stages.IR_STAGES.items()
                 if until is not None and (until == "ein" or getattr(compiled, until) is not None)}
        texts[backend] = stages.compiled_text(backend, compiled, "tl")
    # (ir("schedule") is the schedule that goes with the loop IR: the C target's)
    assert set(texts) == {"ein", "lambda", "opt", "facts", backend} | ({"schedule", "loops"} if backend == "c" else set())
    kernel = tl.compile(PRODUCT, backend=backend)
    for stage, text in texts.items():
        assert text == (kernel.code(stage) if stage in stages.CODE_STAGES else kernel.ir(stage)), stage


def test_every_emit_stage_is_in_the_table_once():
    assert len(set(stages.EMIT_STAGES)) == len(stages.EMIT_STAGES)
    assert set(stages.EMIT_STAGES) == {*stages.FRONT_STAGES, *stages.IR_STAGES, *stages.CODE_STAGES}
    assert all(until in (None, "ein", *pipeline.STAGES) for until in stages.IR_STAGES.values())


def test_the_optimizers_stage_of_a_kernel_compiled_without_it():
    """``opt=False`` runs the lowered program, and ``ir("opt")`` still shows what the
    optimizer makes of it (the same text as an optimizing kernel's)."""
    plain = tl.compile(PRODUCT, backend="numpy", opt=False)
    assert plain.compiled.opt is None
    assert plain.ir("opt") == tl.compile(PRODUCT, backend="numpy").ir("opt")


@pytest.mark.parametrize("extent", ["3", "n"])  # a Kernel, a SymbolicKernel
def test_every_kernel_refuses_a_view_its_reader_would_not_read_back(extent):
    """A SymbolicKernel prints the front end's views through the same table as a Kernel:
    a view nested deeper than its reader reads is error[too-large] on both."""
    depth = MAX_NESTING + 5
    source = f"in alloc x : [{extent}]\nout alloc y : [{extent}]\ny = " + "add x " * (depth - 1) + "x\n"
    kernel = tl.compile(source, lang="teil", backend="numpy")
    assert len(kernel.ir("teil")) > depth  # TeIL needs no parentheses
    with pytest.raises(TensorLangError, match="more than the tl front end reads back") as caught:
        kernel.ir("tl")
    assert caught.value.code == "too-large"
