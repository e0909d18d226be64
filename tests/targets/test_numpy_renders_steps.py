"""The NumPy target's printer renders the step kind the schedule chose and decides none:
a GEMM step becomes a ``numpy.matmul`` call whatever its operands' order, an einsum step
einsum code (targets/numpy/codegen.py ``compile_numpy``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.schedule.steps import GemmStep, gemm_step
from tensorlang.targets.numpy.codegen import compile_numpy

# C = A Bᵀ for each b: B is read transposed (GemmStep.copies)
SOURCE = """in var A : [6 40 50]
in var B : [6 60 50]
out var C : [6 40 60]
C[b,i,j] = sum(k) A[b,i,k] * B[b,j,k]
"""


@pytest.mark.parametrize("kind", ["GemmStep", "EinsumStep"])
def test_the_printer_renders_the_schedules_step_kind(kind):
    k = tl.compile(SOURCE, backend="numpy", opt=False)
    schedule = k.compiled.schedule
    (einsum,) = schedule.steps
    assert type(einsum).__name__ == "EinsumStep"  # the NumPy target's schedule chose it
    step = einsum
    if kind == "GemmStep":  # the same product as the GEMM step the C target's schedule holds
        buffers = schedule.buffers
        step = dataclasses.replace(gemm_step(einsum.statement, buffers.slot_of, buffers.variable_shapes),
                                   reason="GEMM, as the schedule says")
        assert isinstance(step, GemmStep) and step.copies
    code = compile_numpy(k.compiled.executed, k.dtype, dataclasses.replace(schedule, steps=(step,)))
    assert f"    # {step.reason}\n" in code.source
    assert ("->" in code.source) == (kind == "EinsumStep")  # einsum subscripts only in einsum code
    rng = np.random.default_rng(3)
    inputs = {"A": rng.uniform(-1, 1, (6, 40, 50)), "B": rng.uniform(-1, 1, (6, 60, 50))}
    want = np.einsum("bik,bjk->bij", inputs["A"], inputs["B"])
    np.testing.assert_allclose(code(inputs)["C"], want, rtol=1e-12, atol=1e-12)
