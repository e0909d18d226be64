"""Twentieth sweep: hostile inputs and what new users trip over, on the surfaces besides
the Diderot front end and strands, each fixed at its cause and covered here.

* A Dask run whose chunks' partial sums overflow when added (rows of 1e308, one chunk
  each) gave inf, as the one-kernel run does, but with numpy's "overflow encountered in
  add" RuntimeWarning pointing into tensorlang's sources, and where warnings are errors
  (``-W error``, pytest's ``filterwarnings = error``) ``compute()`` raised it: the
  partial sums are added as IEEE adds them (inf, or ⊥ for inf + -inf), with no warning.
* The reference interpreter of the model language (``backend="interp"``, and so CFDlang's
  and the builder's, and ``tensorlang run --backend interp``) warned "overflow encountered
  in multiply" for an outer product past the float range and "invalid value encountered in
  reduce" for a contraction adding inf and -inf, and where warnings are errors the call was
  error[internal] "please report it": the operator form evaluates under ``np.errstate`` as
  the index form's reductions already did, inf and ⊥ being values there.
* Tensor fields given long doubles past the float64 range (``np.longdouble("1e4000")``,
  what a user's extended-precision data holds): probe points and ``tl.inside`` points,
  image samples, a world spacing, a tensor combined with a field, each converted with
  numpy's "overflow encountered in cast" RuntimeWarning pointing into tensorlang, and
  where warnings are errors the probe was error[internal] "please report it" and the
  image and world raised the bare RuntimeWarning: they round to ±inf as IEEE does, with
  no warning, and are then what docs/fields.md says of infinities (a point ⊥, a sample
  followed by IEEE arithmetic, a world spacing error[input] naming the key).
  ``tl.testing.reference`` and ``assert_matches_reference`` converted such an input with
  the same warning (a kernel's own call already read it as inf quietly): now as the call.
* ``tl.compile(folder)`` (a new user passing the examples folder, or ``/dev/stdin``) read
  the one-line path as program text: "error[syntax]: unexpected '/'". A one-line string
  that names anything that exists is a path, and ``read_source`` refuses what is no
  regular file as the command line does ("it is a directory, not a regular file").
* ``tl.padded_empty((True, 4), 8)`` made a (1, 4) array, a bool read as the integer 1,
  where ``tl.var``, ``tl.contract_expression`` and every other shape refuse a bool
  extent: it is error[input] too.
* The STUR reference interpreter added every product into a +0 buffer, so that a rule
  as plain as ``D(i, j) := B(i, j)`` turned B's -0 entries into +0 (and ``(-1) * B``
  its +0 into +0), where the numpy and C targets keep the sign: a product with nothing
  summed keeps its zero's sign (docs/einsum.md's rule) and products add as IEEE adds
  them, the buffer starting at -0 (the identity of IEEE addition) where a product
  writes and +0 where none does; a sum over other variables starts at +0, as compiled.
  Of 18 rules on two inputs, 30 disagreed in a zero's sign and 4 do now (two products
  under complementary conditions, +0 compiled: docs/structure.md).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import tensorlang as tl

SUMS = """
in var X : [N p]
out var s : [p]
s[i] = sum(r) X[r,i]
"""


@pytest.mark.parametrize("column, expected", [([1e308, 1e308, 1e308, 1e308], np.inf),
                                              ([1e308, 1e308, -1e308, -1e308], np.inf),
                                              ([np.inf, 1.0, -np.inf, 1.0], np.nan)])
def test_partial_sums_of_dask_chunks_that_overflow_are_ieee_without_a_warning(column, expected):
    da = pytest.importorskip("dask.array")
    import dask

    rows = np.stack([np.array(column), np.ones(4)], axis=1)
    k = tl.compile(SUMS, backend="numpy")
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("error")
        got = k.dask(X=da.from_array(rows, chunks=(1, 2)), batch="N")["s"].compute()
    np.testing.assert_array_equal(got, [expected, 4.0])
    np.testing.assert_array_equal(got, k(X=rows)["s"])


#: A # x . [2 3] with entries whose products overflow and whose sums meet inf and -inf.
OVERFLOWING = {
    "tl": "in var A : [3 4]\nin var x : [4]\nout var y : [3]\ny = (A # x) . [2 3]\n",
    "cfd": "var input A : [3 4]\nvar input x : [4]\nvar output y : [3]\ny = (A # x) . [[1 2]]\n",
}


@pytest.mark.parametrize("lang", sorted(OVERFLOWING))
def test_the_reference_interpreter_computes_overflow_and_inf_minus_inf_without_a_warning(lang):
    A = np.array([[1e308, 1e308, -1e308, np.inf], [-np.inf, np.nan, 0.0, -0.0], [1.0, 2.0, 3.0, 4.0]])
    x = np.full(4, 1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tl.compile(OVERFLOWING[lang], lang=lang, backend="interp")(A=A, x=x)["y"]
    np.testing.assert_array_equal(got, [np.nan, np.nan, np.inf])


def test_the_builders_reference_run_of_an_overflowing_product_has_no_warning():
    A, x = tl.var("A", (2, 2)), tl.var("x", (2,))
    k = tl.build({"y": tl.contract(tl.outer(A, x), (2, 3)), "z": -tl.outer(A, x)}, backend="interp")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = k(A=np.array([[1e308, -1e308], [np.inf, 1.0]]), x=np.array([1e308, 1e308]))
    np.testing.assert_array_equal(got["y"], [np.nan, np.inf])
    assert got["z"][0, 0, 0] == -np.inf


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # (where long double is float64, the text overflows to inf)
    HUGE = np.longdouble("1e4000")
needs_long_double = pytest.mark.skipif(not np.isfinite(HUGE), reason="long double is float64 on this machine")


def _quietly(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


@needs_long_double
def test_long_double_probe_points_past_float64_are_outside_without_a_warning():
    F = tl.field(np.ones((4, 4)), "tent")
    points = np.array([[HUGE, 1.5], [1.5, 1.5]], dtype=np.longdouble)
    np.testing.assert_array_equal(_quietly(lambda: F.probe(points)), [np.nan, 1.0])
    np.testing.assert_array_equal(_quietly(lambda: tl.inside(F, points)), [False, True])


@needs_long_double
def test_long_double_samples_and_tensors_past_float64_are_infinities_without_a_warning():
    samples = np.full((4, 4), HUGE, dtype=np.longdouble)
    assert _quietly(lambda: tl.field(samples, "tent").probe(np.array([1.5, 1.5]))) == np.inf
    F = tl.field(np.ones((4, 4)), "tent")
    assert _quietly(lambda: (F + np.array(HUGE)).probe(np.array([1.5, 1.5]))) == np.inf


@needs_long_double
def test_a_long_double_world_spacing_past_float64_is_an_input_error_naming_it():
    with pytest.raises(tl.TensorLangError) as err:
        _quietly(lambda: tl.field(np.ones((4, 4)), "tent", world={"spacing": HUGE}))
    assert err.value.code == "input" and "spacing" in str(err.value)


@needs_long_double
def test_the_reference_of_a_long_double_input_past_float64_is_computed_without_a_warning():
    from tensorlang.testing import assert_matches_reference, reference

    text = "in var A : [2]\nout var C : [2]\nC = A * 2\n"
    a = np.array([HUGE, 1], dtype=np.longdouble)
    value, _bound = _quietly(lambda: reference(text, {"A": a}))["C"]
    np.testing.assert_array_equal(value, [np.inf, 2.0])
    _quietly(lambda: assert_matches_reference(text, {"A": a}, tl.compile(text)(A=a)))


@pytest.mark.parametrize("what", ["directory", "device"])
def test_compiling_a_path_that_is_no_regular_file_says_so(what, tmp_path):
    path = str(tmp_path) if what == "directory" else "/dev/null"
    if what == "device" and not os.path.exists(path):
        pytest.skip("no /dev/null")
    for call in (tl.compile, tl.check):
        with pytest.raises(tl.TensorLangError) as err:
            call(path)
        assert err.value.code == "input" and f"a {what}" in str(err.value), str(err.value)


@pytest.mark.parametrize("shape", [(True, 4), (4, np.bool_(True)), (False,), iter([True, 3])], ids=["t", "np", "f", "iter"])
def test_padded_empty_refuses_a_bool_extent_as_every_shape_does(shape):
    with pytest.raises(tl.TensorLangError) as err:
        tl.padded_empty(shape, 8)
    assert err.value.code == "input" and "non-negative integers" in str(err.value)
    assert tl.padded_empty((np.int64(1), 4), 8).shape == (1, 4)


STUR_RULES = {
    "D(i, j) := B(i, j)": "D", "D(i, j) := (-1) * B(i, j)": "D", "D(i, j) := B(i, j) + B(i, j)": "D",
    "D(i, j) := B(i, j) * (i <= j)": "D", "D(i, j) := B(i, j) * B(j, i)": "D", "E(i) := B(i, j)": "E",
    "D(i, j) := B(i, k) * B(k, j)": "D", "D(i, j) := 2 * B(i, j) + (-0) * B(i, j)": "D",
    "D(i, j) := B(i, j) * (0 <= iter < 1)": "D", "D(i, j) := B(i, j) * (0 <= iter < 2)": "D",  # (no sum of B: -0 kept)
}


@pytest.mark.parametrize("rule", sorted(STUR_RULES))
def test_the_stur_reference_keeps_the_sign_of_zero_as_the_compiled_targets_do(rule):
    out = STUR_RULES[rule]
    dims = "D:D(i, j) := (0 <= i < N) * (0 <= j < N)" if out == "D" else "E:D(i) := (0 <= i < N)"
    text = f"symbols: N\n{rule}\nB:D(i, j) := (0 <= i < N) * (0 <= j < N)\n{dims}\n"
    b = np.array([[-0.0, 0.0, -0.0], [0.0, -0.0, 1.0], [-0.0, np.inf, -1.0]])
    reference = tl.compile(text, lang="stur", backend="interp")(B=b)[out]
    for backend in ("numpy", "c"):
        got = tl.compile(text, lang="stur", backend=backend)(B=b)[out]
        np.testing.assert_array_equal(got, reference)
        defined = ~np.isnan(got)
        assert (np.signbit(got) == np.signbit(reference))[defined].all(), (backend, got, reference)
