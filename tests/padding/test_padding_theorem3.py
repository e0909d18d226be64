"""Theorem 3 of paper 000 (§4.3) as a property: on random well-typed programs, the C back
end with padded buffers (pad = 2, 4, 8; the last dimension padded) gives the reference's values on the unpadded region,
and every buffer's padding is zero afterwards (checked through the C kernel's internal
``store_hook``, which sees the padded store).

The theorem is stated over real numbers; the store holds IEEE numbers, so the second
property draws NaN, ±inf and ±0 into the inputs too: the padding holds zeros, never
the inputs, and schedule/padding.py pads a loop only where that stays exact.
"""

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from properties.harness import assert_close_to_oracle, assert_within_rounding, cases
from tensorlang.schedule.padding import padded_shape
from tensorlang.targets.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

PADS = (2, 4, 8)
SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0)


def with_specials(inputs: dict, data) -> dict:
    """Copies of ``inputs`` as float64 with up to three entries each replaced by a special
    value (⊥, ±inf, ±0) drawn by hypothesis."""
    out = {}
    for name, value in inputs.items():
        value = np.array(value, dtype=np.float64)
        if value.size:
            flat = value.reshape(-1)
            for _ in range(data.draw(st.integers(0, 3))):
                flat[data.draw(st.integers(0, flat.size - 1))] = data.draw(st.sampled_from(SPECIALS))
        out[name] = value
    return out


def padded_run(text: str, inputs: dict, pad: int):
    """The results of ``text`` on the padded C back end, and its padded store."""
    kernel = tl.compile(text, backend="c", pad=pad)
    seen = {}
    kernel.target.store_hook = seen.update
    results = kernel(**inputs)
    store = {name: buffer.copy() for name, buffer in seen.items()}
    assert_padding_zero(kernel, store)
    return kernel, results, store


def assert_padding_zero(kernel, store: dict) -> None:
    """Every variable's buffer is zero outside its unpadded region (000 rule d-pad-var)."""
    buffers = kernel.schedule.buffers
    for n, buffer in enumerate(buffers.buffers):
        if buffer.name not in store or buffer.name.startswith("<"):
            continue  # the flat scratch slot has no padding of its own
        padded = store[buffer.name]
        assert padded.shape == padded_shape(buffer.shape, buffers.pad) == buffers.storage_shapes[n]
        assert padded.shape[:-1] == tuple(buffer.shape[:-1])  # only the contiguous dimension is padded
        mask = np.ones(padded.shape, dtype=bool)
        mask[tuple(slice(0, k) for k in buffer.shape)] = False
        outside = padded[mask]
        assert np.all(outside == 0), f"padding of {buffer.name!r} holds {outside[outside != 0][:5]}"


@pytest.mark.slow
@settings(max_examples=30)
@given(case=cases(max_extent=6), pad=st.sampled_from(PADS))
def test_padded_store_matches_reference(case, pad):
    note(case.text)
    kernel, results, store = padded_run(case.text, case.inputs, pad)
    assert_close_to_oracle(case, results, "float64", f"c pad={pad}")


@pytest.mark.slow
@settings(max_examples=20)
@given(case=cases(max_extent=6), pad=st.sampled_from(PADS), data=st.data())
def test_padding_stays_zero_with_nan_inf_and_signed_zero(case, pad, data):
    note(case.text)
    inputs = with_specials(case.inputs, data)
    # the reference here is the unpadded C kernel of the same optimized program: the
    # optimizer's algebra (factoring a number out of a sum) already changes what inf and
    # NaN give against the interpreter (inf * inf + 0 * inf is NaN, (inf + 0) * inf is
    # inf), which is not padding's doing; padding must change nothing
    expected = tl.compile(case.text, backend="c")(**inputs)
    kernel, results, store = padded_run(case.text, inputs, pad)
    assert set(results) == set(expected)
    # padding may reorder sums: within the program's rounding bound, not a fixed rtol
    assert_within_rounding(case.text, inputs, results, expected, who=f"c pad={pad}")
