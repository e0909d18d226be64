"""concat (the direct sum ⊕) and vec of paper 003 §3: typing, errors, and every back end
against numpy's concatenate / reshape, with ⊥ and inf kept in their own piece."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

BACKENDS = ["interp", "numpy", "c"]

POLY = """
in var F : [5 3]
var G : [5 3 3]
var X : [5 12]
out var C : [12 12]
G[r,i,j] = F[r,i] * F[r,j]
X = concat(F, vec(G))
C[p,q] = sum(r) X[r,p] * X[r,q]
"""


def features(F):
    return np.concatenate([F, np.einsum("ri,rj->rij", F, F).reshape(F.shape[0], -1)], axis=1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("opt", [False, True])
def test_polynomial_features_covariance(backend, opt):
    F = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    X = features(F)
    got = tl.compile(POLY, backend=backend, opt=opt)(F=F)["C"]
    np.testing.assert_allclose(got, X.T @ X, rtol=1e-12, atol=1e-12)


MIXED = """
in var A : [3 4]
in var f : [4]
out var x : [3 8]
out var s : [7]
out var v : [48]
out var w : [2]
x = concat(-A / 4, A)
s[p] = concat(a:3 => sum(k) A[a,k] * f[k], b:4 => concat(c:2 => f[c+0], e:2 => sum(j) A[j,e+2])[b])[p]
v = vec(vec(A # f)) * 2
w[i] = concat(a:2 => f[a+2], b:3 => A[b,1])[i+1]
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("opt", [False, True])
def test_concat_and_vec_agree_with_numpy(backend, opt):
    rng = np.random.default_rng(1)
    A, f = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, 4)
    out = tl.compile(MIXED, backend=backend, opt=opt)(A=A, f=f)
    np.testing.assert_allclose(out["x"], np.concatenate([-A / 4, A], axis=1), rtol=1e-12)
    np.testing.assert_allclose(out["s"], np.concatenate([A @ f, f[:2], A[:, 2:].sum(0)]), rtol=1e-12)
    np.testing.assert_allclose(out["v"], 2 * np.multiply.outer(A, f).ravel(), rtol=1e-12)
    np.testing.assert_allclose(out["w"], np.concatenate([f[2:], A[:, 0]])[1:3], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_and_inf_stay_in_their_piece(backend):
    src = "in var a : [2]\nin var b : [3]\nout var x : [5]\nx = concat(a, b * 2)\n"
    a, b = np.array([np.nan, 1.0]), np.array([np.inf, -0.0, 2.0])
    got = tl.compile(src, backend=backend)(a=a, b=b)["x"]
    np.testing.assert_array_equal(got, np.array([np.nan, 1.0, np.inf, -0.0, 4.0]))
    assert np.signbit(got[3])


@pytest.mark.parametrize("text, rule", [
    ("in var a : [2 3]\nin var b : [3 3]\nout var x : [2 6]\nx = concat(a, b)\n", "t-concat"),
    ("in var a : []\nin var b : [3]\nout var x : [4]\nx = concat(a, b)\n", "t-concat"),
    ("in var a : [3]\nout var x : [3]\nx = vec(a)\n", "t-vec"),
])
def test_shape_errors_name_their_rule(text, rule):
    with pytest.raises(TensorLangError) as caught:
        tl.check(text)
    assert caught.value.code == "shape"
    assert rule in str(caught.value)


def test_index_form_concat_binds_distinct_new_variables():
    text = "in var f : [2]\nout var y : [4]\ny[p] = concat(a:2 => f[a], a:2 => f[a])[p]\n"
    with pytest.raises(TensorLangError) as caught:
        tl.check(text)
    assert caught.value.code == "repeated-index"


def test_emit_ein_parses_back_and_computes_the_same():
    kernel = tl.compile(POLY, backend="interp")
    text = kernel.ir("ein")
    assert "concat(" in text
    F = np.random.default_rng(2).uniform(-1, 1, (5, 3))
    np.testing.assert_allclose(tl.compile(text, backend="interp")(F=F)["C"], kernel(F=F)["C"], rtol=1e-12)
