"""Hostile inputs by class (helper hostile2): what a corpus over tl.einsum's ``optimize``
and over field expressions found (docs/einsum.md, docs/fields.md, docs/errors.md)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.fields.api import MAX_FIELD_NODES

A = np.arange(6.0).reshape(2, 3)
B = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("optimize", [0, 1, 0.0, 1.0, np.False_, np.True_])
def test_an_optimize_numpy_refuses_is_refused_as_numpy_does(optimize):
    """0, 1, 0.0 and numpy's bools equal False/True but numpy refuses them (TypeError):
    they must not take the compiled path as if they were False/True."""
    with pytest.raises(TypeError):
        np.einsum("ij,jk->ik", A, B, optimize=optimize)
    with pytest.raises(TypeError):
        tl.einsum("ij,jk->ik", A, B, optimize=optimize)


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
def test_the_plain_optimize_values_still_give_numpy_s_result(optimize):
    np.testing.assert_allclose(tl.einsum("ij,jk->ik", A, B, optimize=optimize), A @ B)


def _doubled(field, times):
    for _ in range(times):
        field = field + field
    return field


@pytest.mark.parametrize("combine", [
    lambda g: g + g,
    lambda g: g * g,
    lambda g: g - g,
    lambda g: tl.fields.sqrt(g * g) / g,
])
def test_a_field_expression_that_doubles_is_too_large_not_a_hang(combine):
    """A field used twice is copied by the lowering: 25 doublings would be 2^25 leaves.
    Building it is error[too-large] as soon as the tree passes MAX_FIELD_NODES."""
    field = tl.field(np.ones((4, 4)), "tent")
    with pytest.raises(tl.TensorLangError) as err:
        for _ in range(40):
            field = combine(field)
    assert err.value.code == "too-large"


@pytest.mark.slow
def test_a_field_expression_below_the_bound_still_probes():
    field = tl.field(np.ones((4, 4)), "tent")
    doubled = _doubled(field, 6)  # 127 operations
    assert doubled.size < MAX_FIELD_NODES
    np.testing.assert_allclose(doubled.probe(np.array([[1.0, 1.5]])), [64.0])


DASK_PROGRAM = ("in var X : [N p]\nout var C : [p p]\nout var s : [p]\n"
                "C[i,j] = sum(r) X[r,i] * X[r,j]\ns[i] = sum(r) X[r,i]")
ROWS = np.arange(30.0).reshape(10, 3)


@pytest.fixture(scope="module")
def summing():
    pytest.importorskip("dask")
    return tl.compile(DASK_PROGRAM, params={"p": 3})


@pytest.mark.parametrize("chunks", [11, 10**3, 2**63, 10**30, np.int64(2**62)])
def test_a_chunk_length_beyond_the_batch_is_one_chunk(summing, chunks):
    result = summing.dask(X=ROWS, batch="N", chunks=chunks)
    np.testing.assert_allclose(result["C"].compute(), ROWS.T @ ROWS)
    np.testing.assert_allclose(result["s"].compute(), ROWS.sum(axis=0))


@pytest.mark.parametrize("inputs", [[ROWS], ROWS, "X", 3, ("X", ROWS)])
def test_dask_inputs_that_are_no_mapping_are_an_input_error(summing, inputs):
    with pytest.raises(tl.TensorLangError) as err:
        summing.dask(inputs, batch="N")
    assert err.value.code == "input"
