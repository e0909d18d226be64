"""``k.dask(...)`` without ``batch=`` (docs/dask.md): the first size, in declaration
order, that an input has and along which the program is data-parallel — so the
documented call works for a program with two sizes (``X : [N p]``, ``C : [p p]``)."""

import numpy as np
import pytest

import tensorlang as tl

pytest.importorskip("dask.array")

X = np.random.default_rng(7).standard_normal((50, 3))


def test_the_covariance_example_runs_with_the_default_batch():
    k = tl.compile("examples/dask/covariance.tl", backend="numpy")  # X : [N p], C : [p p], s : [p]
    res = k.dask(X=X, chunks=20)
    np.testing.assert_allclose(res["C"].compute(), X.T @ X, rtol=1e-12)
    np.testing.assert_allclose(res["s"].compute(), X.sum(axis=0), rtol=1e-12)
    assert res["C"].compute().shape == (3, 3) and len(res["C"].dask) > 1  # chunked along N, not one task


def test_the_batch_is_the_first_size_that_qualifies():
    rows_last = tl.compile("in var X : [p N]\nout var C : [p p]\nC[i,j] = sum(r) X[i,r] * X[j,r]", backend="numpy")
    np.testing.assert_allclose(rows_last.dask(X=X.T, chunks=20)["C"].compute(), X.T @ X, rtol=1e-12)
    both = tl.compile("in var X : [N p]\nout var Y : [N p]\nY = X * X", backend="numpy")  # N and p qualify
    y = both.dask(X=X, chunks=20)["Y"]
    np.testing.assert_allclose(y.compute(), X * X)
    assert y.chunks[0] == (20, 20, 10)  # cut along N, the first


def test_no_size_qualifies_says_why_for_each():
    k = tl.compile("in var X : [N N]\nin var Z : [M M]\nout var Y : [N N]\nout var W : [M M]\n"
                   "Y = X ^ [2 1]\nW = Z ^ [2 1]", backend="numpy")
    with pytest.raises(tl.TensorLangError, match=r"no batch can be chosen.*along N.*along M.*batch="):
        k.dask(X=np.ones((3, 3)), Z=np.ones((2, 2)))


def test_one_size_keeps_its_own_reason():
    k = tl.compile("in var X : [N N]\nout var Y : [N N]\nY = X ^ [2 1]", backend="numpy")
    with pytest.raises(tl.TensorLangError, match="not data-parallel along N: 'X' : \\[N N\\] has it in 2"):
        k.dask(X=np.ones((3, 3)))
