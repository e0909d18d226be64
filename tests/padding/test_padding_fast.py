"""The fast paths of padded kernels (000 §4, issue 22): BLAS steps on padded buffers
(the padded row stride as BLAS's leading dimension), the general path's plain calls, and
``tl.padded_empty`` inputs and ``out=`` targets used with no copy.  Every path is checked
against the reference on generated programs, and the padding must stay zero
(test_padding_theorem3.assert_padding_zero, through the C kernel's ``store_hook``)."""

import contextlib

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from padding.test_padding_theorem3 import PADS, assert_padding_zero, with_specials
from properties.harness import assert_close_to_oracle, assert_within_rounding, cases
from tensorlang.schedule import padding, steps
from tensorlang.schedule.steps import GemmStep, ModeStep
from tensorlang.targets.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

MATMUL = "in var A : [37 35]\nin var B : [35 33]\nout var C : [37 33]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n"
# a mode product over the last dimension (Q empty) and over the one before it (Q the last)
MODE_LAST = "in var W : [34 33]\nin var X : [3 5 33]\nout var Y : [3 5 34]\nY[e,a,j] = sum(m) W[j,m] * X[e,a,m]\n"
MODE_MIDDLE = "in var W : [34 33]\nin var X : [3 33 5]\nout var Y : [3 34 5]\nY[e,j,q] = sum(m) W[j,m] * X[e,m,q]\n"
SCALE = "inout var x : [13 7]\nin var s : []\nx = s * x\n"
MULTIPLY = "in var v : [13 7]\ninout var x : [13 7]\nx = x * v\n"


@contextlib.contextmanager
def blas_everywhere():
    """Every BLAS-shaped statement a BLAS step, padded or not (the thresholds are for speed)."""
    saved = steps.BLAS_WORK, steps.MODE_BATCH_WORK, steps.MODE_BATCH_MIN, padding.PADDED_BLAS_MIN
    steps.BLAS_WORK = steps.MODE_BATCH_WORK = steps.MODE_BATCH_MIN = padding.PADDED_BLAS_MIN = 1
    try:
        yield
    finally:
        steps.BLAS_WORK, steps.MODE_BATCH_WORK, steps.MODE_BATCH_MIN, padding.PADDED_BLAS_MIN = saved


def run_with_store(kernel, **arrays):
    seen = {}
    kernel.target.store_hook = seen.update
    try:
        results = kernel(**arrays)
    finally:
        kernel.target.store_hook = None
    store = {name: buffer.copy() for name, buffer in seen.items()}
    assert_padding_zero(kernel, store)
    return results, seen


def padded_copy(value, pad):
    value = np.asarray(value, dtype=np.float64)
    if not value.ndim:
        return value
    array = tl.padded_empty(value.shape, pad)
    array[...] = value
    return array


# ------------------------------------------------------------------ BLAS on padded buffers
@pytest.mark.parametrize("text, kind", [(MATMUL, (GemmStep, ModeStep)), (MODE_LAST, ModeStep), (MODE_MIDDLE, ModeStep)])
@pytest.mark.parametrize("pad", PADS)
def test_blas_steps_run_on_padded_buffers(text, kind, pad):
    rng = np.random.default_rng(pad)
    with blas_everywhere():
        kernel = tl.compile(text, backend="c", pad=pad)
        unpadded = tl.compile(text, backend="c")
    assert any(isinstance(s, kind) for s in kernel.target.steps), kernel.target.steps
    inputs = {b.name: rng.uniform(-1, 1, b.shape) for b in kernel.schedule.buffers.buffers if b.role == "in"}
    expected = unpadded(**inputs)
    for given_inputs in (inputs, {k: padded_copy(v, pad) for k, v in inputs.items()}):
        results, store = run_with_store(kernel, **given_inputs)
        for name, value in expected.items():
            np.testing.assert_allclose(results[name], value, rtol=1e-12, atol=1e-14)


def test_padded_blas_refuses_what_would_copy_and_narrow_matrices():
    text = ("in var W : [34 33]\nin var X : [33 4 5]\nout var Y : [34 4 5]\n"
            "Y[j,a,q] = sum(m) W[j,m] * X[m,a,q]\n")  # Q = (a, q) would merge the padded q
    with blas_everywhere():
        kernel = tl.compile(text, backend="c", pad=4)
    assert not any(isinstance(s, (GemmStep, ModeStep)) for s in kernel.target.steps)
    narrow = tl.compile(MODE_LAST.replace("34", "7").replace("33", "7"), backend="c", pad=4)
    reasons = " ".join(r for s in narrow.target.steps for r in getattr(s, "reasons", ()))
    assert "PADDED_BLAS_MIN" in reasons or "BLAS_WORK" in reasons
    # the default thresholds: a 64x64 matrix product runs on BLAS with padding too
    big = tl.compile(MATMUL.replace("37", "64").replace("35", "64").replace("33", "64"), backend="c", pad=8)
    assert any(isinstance(s, ModeStep | GemmStep) for s in big.target.steps)


@pytest.mark.slow
@settings(max_examples=25)
@given(case=cases(max_extent=6), pad=st.sampled_from(PADS))
def test_generated_programs_with_blas_steps_on_padded_buffers(case, pad):
    note(case.text)
    with blas_everywhere():
        kernel = tl.compile(case.text, backend="c", pad=pad)
    results, _ = run_with_store(kernel, **case.inputs)
    assert_close_to_oracle(case, results, "float64", f"c pad={pad} with BLAS steps")


@pytest.mark.slow
@settings(max_examples=20)
@given(case=cases(max_extent=6), pad=st.sampled_from(PADS), data=st.data())
def test_padded_blas_with_nan_inf_and_signed_zero(case, pad, data):
    note(case.text)
    inputs = with_specials(case.inputs, data)
    with blas_everywhere():
        expected = tl.compile(case.text, backend="c")(**inputs)
        kernel = tl.compile(case.text, backend="c", pad=pad)
    results, _ = run_with_store(kernel, **inputs)
    # padding may reorder sums: within the program's rounding bound, not a fixed rtol
    assert_within_rounding(case.text, inputs, results, expected, who=f"c pad={pad}")


# ------------------------------------------------------------------ the calls the C caller declines
def test_a_padded_kernel_runs_what_the_c_caller_declines_on_the_general_path():
    """padded_empty inputs and reversed targets run through CKernel.run, and what is
    wrong the general path reports."""
    kernel = tl.compile(MULTIPLY, backend="c", pad=4)
    v, x = padded_copy(np.full((13, 7), 2.0), 4), padded_copy(np.arange(91.0).reshape(13, 7), 4)
    np.testing.assert_array_equal(kernel(v=v, x=x)["x"], 2.0 * np.arange(91.0).reshape(13, 7))
    target = np.empty((13, 7))
    assert kernel(v=v, x=x, out={"x": target[::-1]})["x"] is not None  # any writeable array: a copy
    np.testing.assert_array_equal(target[::-1], 2.0 * np.arange(91.0).reshape(13, 7))
    for wrong in ({"v": v}, {"v": v, "x": x, "w": x}, {"v": v[:, :6], "x": x}):
        with pytest.raises(tl.TensorLangError) as info:
            kernel(**wrong)
        assert info.value.code == "input"
    with pytest.raises(tl.TensorLangError) as info:
        kernel(v=v, x=x, out={"v": target})  # v is no result
    assert info.value.code == "input"


def test_padded_out_targets_are_written_in_place():
    kernel = tl.compile(MULTIPLY, backend="c", pad=4)
    rng = np.random.default_rng(5)
    v, x = padded_copy(rng.uniform(-1, 1, (13, 7)), 4), padded_copy(rng.uniform(-1, 1, (13, 7)), 4)
    expected = x * v
    target = tl.padded_empty((13, 7), 4)
    seen = {}
    kernel.target.store_hook = seen.update
    assert kernel(v=v, x=x, out={"x": target})["x"] is target
    np.testing.assert_array_equal(target, expected)
    assert np.shares_memory(seen["x"], target) and np.shares_memory(seen["v"], v)
    # the in-place idiom k(x=x, out={"x": x}) with a padded x: x's own buffer, no copy
    before = x.copy()
    assert kernel(v=v, x=x, out={"x": x})["x"] is x
    np.testing.assert_array_equal(x, before * v)
    assert np.shares_memory(seen["x"], x)
    # a target that is another input (v): copied after the run, from v's value before it
    v_before = v.copy()
    result = kernel(v=v, x=x, out={"x": v})["x"]
    assert result is v and not np.shares_memory(seen["x"], v)
    np.testing.assert_array_equal(v, x * v_before)
    # a target whose padding a caller wrote through the base: zeroed, results unchanged
    dirty = tl.padded_empty((13, 7), 4)
    dirty.base[...] = 255  # every byte: NaN in every double, the padding included
    np.testing.assert_array_equal(kernel(v=v_before, x=x, out={"x": dirty})["x"], x * v_before)
    assert_padding_zero(kernel, {k: b.copy() for k, b in seen.items()})


def test_padded_input_recognised_by_identity_and_its_padding_zeroed():
    kernel = tl.compile(SCALE, backend="c", pad=8)
    x = padded_copy(np.ones((13, 7)), 8)
    x.base[...] = 255  # every byte of the allocation: NaN in every double, padding included
    x[...] = 1.0
    results, seen = run_with_store(kernel, x=x, s=2.0)
    np.testing.assert_array_equal(results["x"], 2.0)
    reshaped = x.view()
    with pytest.raises(AttributeError):  # a padded view cannot be made contiguous in place
        reshaped.shape = (91,)


@pytest.mark.slow
@settings(max_examples=25)
@given(case=cases(max_extent=6), pad=st.sampled_from(PADS), padded_out=st.booleans())
def test_generated_programs_with_padded_inputs_and_targets(case, pad, padded_out):
    note(case.text)
    kernel = tl.compile(case.text, backend="c", pad=pad)
    inputs = {name: padded_copy(value, pad) for name, value in case.inputs.items()}
    kept = {name: value.copy() for name, value in inputs.items()}
    first = kernel(**inputs)
    targets = {name: (tl.padded_empty(np.shape(value), pad) if padded_out and np.ndim(value) else
                      np.empty(np.shape(value))) for name, value in first.items()}
    seen = {}
    kernel.target.store_hook = seen.update
    results = kernel(**inputs, out=targets)
    assert all(results[name] is targets[name] for name in targets)
    assert_close_to_oracle(case, results, "float64", f"c pad={pad}, padded inputs and out=")
    assert_padding_zero(kernel, {k: b.copy() for k, b in seen.items()})
    for name, value in inputs.items():  # inputs are never written (their padding aside)
        np.testing.assert_array_equal(value, kept[name])
