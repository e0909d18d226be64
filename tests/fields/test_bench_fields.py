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


def test_the_probe_bound_counts_the_flops_and_a_perfect_caches_bytes():
    """The suite's bound (docs/performance.md): flops of the separable sum, the weights and
    the map; per point its 24 bytes and its result; once per call the image's lines the
    points touch, each once: 22 lines a point while few points share any, the whole image
    (never more) when many do."""
    from tensorlang_bench.suites.fields import counts

    image = 8 * 256 ** 3
    for order, (flops, nbytes) in enumerate([(270, 32), (538, 48), (822, 96)]):
        f, b, once = counts(order, 256, 10 ** 6)
        assert (f, b) == (flops, nbytes)
        assert image * 0.9999 < once <= image
        assert counts(order, 64, 10 ** 6)[2] <= 8 * 64 ** 3
    few = counts(0, 256, 100)[2]
    assert abs(few - 100 * 22 * 64) < 0.01 * few
    assert counts(0, 256, 10 ** 4)[2] < counts(0, 256, 10 ** 5)[2] < counts(0, 256, 10 ** 6)[2]


def test_the_gather_floors_read_each_points_rows_in_either_order():
    """The suite's gather floors (docs/performance.md): the C gather sums each point's
    16 rows of 4 samples, in the given order and in the block order, which is a stable
    permutation grouping the points by 16³-cell block."""
    from tensorlang_bench.suites import fields

    rng = np.random.default_rng(1)
    data = rng.standard_normal((40, 40, 40))
    points = rng.uniform(1.0, 40 - 2.0001, size=(500, 3))
    made = fields.gather(data, points, ahead=8)
    if made is None:
        pytest.skip("no C compiler")
    call, out = made
    call()
    n = np.floor(points).astype(np.intp)
    taps = np.arange(-1, 3)
    expected = data[n[:, 0, None, None, None] + taps[None, :, None, None],
                    n[:, 1, None, None, None] + taps[None, None, :, None],
                    n[:, 2, None, None, None] + taps[None, None, None, :]].sum(axis=(1, 2, 3))
    assert np.allclose(out, expected, rtol=1e-13, atol=1e-12)
    order = fields.block_order(points, 40)
    block = (n >> fields.GATHER_SHIFT) @ np.array([9, 3, 1])
    assert sorted(order) == list(range(500)) and np.all(np.diff(block[order]) >= 0)
    assert all(np.all(np.diff(order[block[order] == b]) > 0) for b in np.unique(block))  # stable
    floors = fields.gather_seconds(data, points, repeats=1)
    assert floors is not None and set(floors) == {"random order", "block order"} and min(floors.values()) >= 0
