"""The NumPy target's contractions keep ⊥ · 0 = ⊥ (targets/numpy/nan_safe.py): numpy.dot
of a matrix with inner extent 1 skips zero factors, so opt_einsum's tensordot lost a NaN
(found by the einsum hypothesis test: ``aba,a`` with a NaN on the diagonal and b = 0)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.targets.numpy.nan_safe import tensordot


def test_a_nan_times_zero_in_a_contraction_stays_nan_on_every_target():
    a, b = np.array([[[np.nan], [-0.46]]]), np.array([0.0])
    src = "in var T : [1 2 1]\nin var x : [1]\nout var r : [2]\nr[j] = sum(i) T[i,j,i] * x[i]\n"
    for backend in tl.available_backends():
        r = tl.compile(src, backend=backend)(T=a, x=b)["r"]
        assert np.isnan(r[0]) and r[1] == 0.0, (backend, r)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=3), st.lists(st.integers(1, 3), min_size=0, max_size=3),
       st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(0, 2**32 - 1))
def test_tensordot_is_numpys_with_nan_kept(free_a, free_b, inner, seed):
    rng = np.random.default_rng(seed)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
    a = rng.standard_normal(tuple(free_a) + tuple(inner))
    b = rng.standard_normal(tuple(inner) + tuple(free_b))
    for x in (a, b):
        if x.size:
            x.reshape(-1)[rng.integers(0, x.size)] = rng.choice(specials)
    axes = (list(range(len(free_a), len(free_a) + len(inner))), list(range(len(inner))))
    got = tensordot(a, b, axes)
    # the reference: the sum of products, term by term (⊥ · 0 is ⊥)
    want = np.einsum(a, list(range(a.ndim)), b, [a.ndim + d for d in range(b.ndim)] if not inner else
                     list(range(len(free_a), len(free_a) + len(inner))) + list(range(a.ndim, a.ndim + len(free_b))))
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    fine = ~np.isnan(want)
    np.testing.assert_allclose(got[fine], want[fine], rtol=1e-12, atol=1e-12)
