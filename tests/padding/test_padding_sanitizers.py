"""Corollary 3 of paper 000 (safety with a padded store): the padded C code, compiled with
AddressSanitizer and UndefinedBehaviorSanitizer, makes no out-of-bounds access on buffers
of exactly their padded size, on random programs (the last dimension padded), and its results meet the oracle's bound with the padding zero.

Each example is one sanitized compile, so the sample is small."""

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from properties.harness import assert_close_to_oracle, cases
from c_source import generate

from padding.harness import needs_sanitizers, run_padded

pytestmark = needs_sanitizers


def run_padded_sanitized(text: str, inputs: dict, pad: int, tmp: Path) -> dict:
    kernel = tl.compile(text, backend="interp")  # for the program's interface only
    generated = generate(kernel.ein, "float64", kernel.roles(), blas=False, pad=pad)
    return run_padded(generated, inputs, kernel.outputs, tmp)


@pytest.mark.slow
@settings(max_examples=25)
@given(case=cases(max_extent=5), pad=st.sampled_from((2, 4, 8)))
def test_padded_c_is_clean_under_sanitizers(case, pad):
    note(case.text)
    with tempfile.TemporaryDirectory() as tmp:
        results = run_padded_sanitized(case.text, case.inputs, pad, Path(tmp))
    assert_close_to_oracle(case, results, "float64", f"c pad={pad} (sanitized)")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["max", "matrix-vector", "transpose in place", "affine", "contraction", "concat", "vec"])
def test_programs_that_could_overrun_are_clean_under_sanitizers(name, tmp_path):
    """Loops that must keep their true extents (A[i,k] padded over i would read past A's
    rows in tensorlang's layout), the scratch copy, an affine index, an interchanged
    contraction, a direct sum (its last piece read at i - S_k): each compiled with ASan
    at pad 4."""
    from test_padding_rules import PROGRAMS

    text = PROGRAMS[name]
    reference = tl.compile(text, backend="interp")
    rng = np.random.default_rng(0)
    inputs = {n: rng.uniform(-1, 1, reference.shapes[n]) for n in reference.inputs}
    expected = reference(**inputs)
    results = run_padded_sanitized(text, inputs, 4, tmp_path)
    for var, value in expected.items():
        np.testing.assert_allclose(results[var], value, rtol=1e-12, atol=1e-14, err_msg=var)
