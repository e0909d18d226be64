"""opt_einsum's expression corpus (the ``tests`` list of its installed test_contract.py,
read, not copied) through tl.einsum and tl.contract_expression, against numpy.einsum."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl

contract_tests = pytest.importorskip("opt_einsum.tests.test_contract")
testing = pytest.importorskip("opt_einsum.testing")

CORPUS = list(contract_tests.tests)


@pytest.mark.parametrize("expression", CORPUS)
def test_the_corpus_matches_numpy(expression):
    np.random.seed(sum(map(ord, expression)))
    views = testing.build_views(expression)
    expected = np.einsum(expression, *views)
    got = tl.einsum(expression, *views, backend="numpy")
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("expression", CORPUS[::8])
def test_the_corpus_as_contract_expressions(expression):
    np.random.seed(sum(map(ord, expression)))
    views = testing.build_views(expression)
    expr = tl.contract_expression(expression, *[np.shape(v) for v in views], backend="numpy")
    np.testing.assert_allclose(expr(*views), np.einsum(expression, *views), rtol=1e-9, atol=1e-12)
