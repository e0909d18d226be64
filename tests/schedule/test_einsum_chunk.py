"""A long product's chunks in the NumPy code are the schedule's choice (schedule.steps
EINSUM_CHUNK, a step's ``chunk``), shown by ``--emit schedule``; the renderers follow it."""

from dataclasses import replace

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.schedule.steps import EINSUM_CHUNK, EinsumStep, LoopStep, einsum_chunk
from tensorlang.targets.numpy.codegen import compile_numpy


def _ring(n: int) -> str:
    """t = tr(A^n) as one sum over a product of n accesses of A."""
    chain = " * ".join(f"A[k{i},k{(i + 1) % n}]" for i in range(n))
    return f"in var A : [3 3]\nout var t : []\nt[] = sum({','.join(f'k{i}' for i in range(n))}) {chain}\n"


def _expected(a: np.ndarray, n: int) -> float:
    return float(np.trace(np.linalg.matrix_power(a, n)))


@pytest.mark.parametrize("n, chunked", [(EINSUM_CHUNK, False), (EINSUM_CHUNK + 1, True), (40, True)])
def test_the_schedule_chunks_long_products_and_shows_it(n, chunked):
    k = tl.compile(_ring(n), backend="numpy", opt=False)
    (step,) = k._compiled_for("schedule", "numpy").schedule.steps
    assert isinstance(step, (LoopStep, EinsumStep)) and step.chunk == (EINSUM_CHUNK if chunked else 0)
    shown = k.ir("schedule")
    assert (f"products of more than {EINSUM_CHUNK} operands contracted {EINSUM_CHUNK} at a time" in shown) is chunked
    contractions = k.code("numpy").count("backend='tensorlang.targets.numpy.nan_safe'")
    assert contractions == (-(-(n - 1) // (EINSUM_CHUNK - 1)) if chunked else 1)
    a = np.random.default_rng(n).uniform(0, 0.5, (3, 3))
    np.testing.assert_allclose(k(A=a)["t"], _expected(a, n), rtol=1e-12)


def test_the_numpy_renderer_follows_the_steps_chunk():
    """A step's chunk, whatever it is, is how the NumPy code contracts (the renderer
    decides nothing): 40 operands 8 at a time, 6 contractions, the same value."""
    compiled = tl.compile(_ring(40), backend="numpy", opt=False)._compiled_for("schedule", "numpy")
    schedule = compiled.schedule
    eight = replace(schedule, steps=tuple(replace(s, chunk=8) for s in schedule.steps))
    code = compile_numpy(compiled.executed, schedule.dtype, eight)
    assert code.source.count("backend='tensorlang.targets.numpy.nan_safe'") == 6
    a = np.random.default_rng(0).uniform(0, 0.5, (3, 3))
    store = code({"A": a, "t": np.zeros(())})
    np.testing.assert_allclose(store["t"], _expected(a, 40), rtol=1e-12)


def test_the_count_bounds_every_product():
    """einsum_chunk counts a statement's array operands (any product of it has at most as
    many): a short statement is never chunked, and only the steps with a long one are."""
    head, body = _ring(EINSUM_CHUNK + 1).split("t[] =")
    k = tl.compile(head + "out var u : [3]\nu[i] = A[i,i]\nt[] =" + body, backend="numpy", opt=False)
    steps = k._compiled_for("schedule", "numpy").schedule.steps
    assert [(type(s), s.chunk) for s in steps] == [(LoopStep, 0), (EinsumStep, EINSUM_CHUNK)]
    assert einsum_chunk(steps[0].statements) == 0 and einsum_chunk((steps[1].statement,)) == EINSUM_CHUNK


@pytest.mark.skipif("c" not in tl.available_backends(), reason="no working C compiler")
def test_the_c_targets_einsum_step_runs_the_chunked_code():
    """The C target runs an einsum step through the NumPy code, chunked as its step says."""
    k = tl.compile(_ring(40), backend="c", opt=False)
    (step,) = k._compiled_for("schedule", "c").schedule.steps
    assert isinstance(step, EinsumStep) and step.chunk == EINSUM_CHUNK
    a = np.random.default_rng(1).uniform(0, 0.5, (3, 3))
    np.testing.assert_allclose(k(A=a)["t"], _expected(a, 40), rtol=1e-12)
