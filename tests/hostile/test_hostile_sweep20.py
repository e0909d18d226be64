"""Twentieth sweep: hostile inputs and what new users trip over, on the surfaces besides
the Diderot front end and strands, each fixed at its cause and covered here.

* A Dask run whose chunks' partial sums overflow when added (rows of 1e308, one chunk
  each) gave inf, as the one-kernel run does, but with numpy's "overflow encountered in
  add" RuntimeWarning pointing into tensorlang's sources, and where warnings are errors
  (``-W error``, pytest's ``filterwarnings = error``) ``compute()`` raised it: the
  partial sums are added as IEEE adds them (inf, or ⊥ for inf + -inf), with no warning.
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
