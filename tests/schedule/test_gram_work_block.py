"""The Gram step's work block is kept between calls (targets/c/gram.py ``step_function``):
calls from several Python threads at once, of one compiled kernel, each get a block of
their own and their own right result; a call after them reuses the kept one."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.schedule.steps import GramStep

needs_c = pytest.mark.skipif("c" not in tl.available_backends(), reason="the Gram step is the C target's")


@needs_c
@pytest.mark.slow
@pytest.mark.parametrize("text, result", [
    ("in var X : [300 40]\nout var R : [40 40]\nR[i,j] = sum(n) X[n,i] * X[n,j]\n", lambda x: x.T @ x),
    ("in var X : [200 20]\nout var R : [20 20 20]\nR[i,j,k] = sum(n) X[n,i] * X[n,j] * X[n,k]\n",
     lambda x: np.einsum("ni,nj,nk->ijk", x, x, x)),
])
def test_concurrent_calls_each_get_their_own_work_block(text, result, monkeypatch):
    real = GramStep.why_not
    monkeypatch.setattr(GramStep, "why_not", lambda self, vector_bytes: real(self, 64))
    kernel = tl.compile(text, backend="c", threads=1)
    assert isinstance(kernel.compiled.schedule.steps[0], GramStep)
    assert "_kept" in kernel.code("c")
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(-1, 1, kernel.shapes["X"]) for _ in range(8)]

    def run(x):
        return [kernel(X=x)["R"] for _ in range(20)]

    with ThreadPoolExecutor(4) as pool:
        for x, got in zip(inputs, pool.map(run, inputs)):
            for r in got:
                np.testing.assert_allclose(r, result(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel(X=inputs[0])["R"], result(inputs[0]), rtol=1e-12, atol=1e-12)
