"""The ``fields`` benchmark suite in quick mode: every contender runs and matches the
reference (no timing is asserted)."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy")
import tensorlang_bench  # noqa: E402
from tensorlang_bench import suites  # noqa: E402
from tensorlang_bench.contenders import Peers  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    ROOT not in Path(tensorlang_bench.__file__).resolve().parents,
    reason="tensorlang_bench is imported from another checkout (put benchmarks/ of this one on the path)")


@pytest.mark.slow
def test_fields_suite_quick_contenders_agree_with_the_reference():
    ctx = suites.Context(Peers(disabled={"torch", "jax", "numba"}), quick=True)
    cases = suites.SUITES["fields"](ctx)
    assert [c.kernel for c in cases] == ["bspln3_value", "bspln3_gradient", "bspln3_hessian"]
    for case in cases:
        inputs = case.make_inputs()
        inputs["points"] = inputs["points"][:300]
        expected = case.reference(inputs)
        ran = 0
        for contender in case.contenders:
            if contender.make is None:
                continue
            bound = contender.make(inputs)
            bound.call()
            assert np.allclose(bound.result(), expected, rtol=1e-10, atol=1e-10), (case.kernel, contender.name)
            ran += 1
        assert ran >= 3 if case.kernel == "bspln3_value" else ran >= 2
