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
"""

from __future__ import annotations

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
