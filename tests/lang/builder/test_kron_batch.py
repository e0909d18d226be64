"""tl.kron with leading batch axes (docs/api.md, "tl.kron with a batch"): the operator
A1 ⊗ ... ⊗ Ad acts on the last d axes of u, every leading axis is a batch, as numpy's
matmul broadcasts; compared with numpy.einsum on every back end."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl


def rand(rng, *shape):
    return rng.uniform(-1, 1, shape)


@pytest.mark.parametrize("backend", tl.available_backends())
def test_a_batch_of_elements_is_interpolated_as_numpy_does(backend):
    rng = np.random.default_rng(5)
    E, n, m = 4, 3, 5
    a, b, c, u = rand(rng, m, n), rand(rng, m, n), rand(rng, m, n), rand(rng, E, n, n, n)
    A, B, C = (tl.var(name, (m, n)) for name in "ABC")
    k = tl.build({"v": tl.kron(A, B, C)(tl.var("u", (E, n, n, n)))}, backend=backend)
    got = k(A=a, B=b, C=c, u=u)["v"]
    assert got.shape == (E, m, m, m)
    np.testing.assert_allclose(got, np.einsum("ia,jb,kc,eabc->eijk", a, b, c, u), rtol=1e-12, atol=1e-13)


def test_two_batch_axes_and_one_factor():
    rng = np.random.default_rng(6)
    a, u = rand(rng, 2, 3), rand(rng, 4, 5, 3)
    k = tl.build({"v": tl.kron(tl.var("A", (2, 3)))(tl.var("u", (4, 5, 3)))}, backend="numpy")
    np.testing.assert_allclose(k(A=a, u=u)["v"], u @ a.T, rtol=1e-12, atol=1e-13)
    a2 = rand(rng, 2, 2)
    u2 = rand(rng, 3, 4, 5, 2, 2)  # three batch axes, d = 2: the operator is np.kron(A, B) on vec(u)
    k2 = tl.build({"v": tl.kron(tl.var("A", (2, 2)), tl.var("B", (2, 2)))(tl.var("u", (3, 4, 5, 2, 2)))})
    v = k2(A=a2, B=a2.T, u=u2)["v"]
    want = (u2.reshape(60, 4) @ np.kron(a2, a2.T).T).reshape(3, 4, 5, 2, 2)
    np.testing.assert_allclose(v, want, rtol=1e-12, atol=1e-13)


def test_without_a_batch_the_program_is_the_one_written_before():
    A, u = tl.var("A", (3, 3)), tl.var("u", (3, 3))
    text = tl.builder.source({"v": tl.kron(A, A)(u)})
    assert "A # A # u" in text.replace("(", "").replace(")", "")


def test_a_tensor_of_too_low_rank_or_a_batched_factor_is_error_shape():
    with pytest.raises(tl.TensorLangError) as info:
        tl.kron(tl.var("A", (3, 3)), tl.var("B", (3, 3)))(tl.var("u", (3,)))
    assert info.value.code == "shape" and "rank 2 or more" in info.value.message
    with pytest.raises(tl.TensorLangError) as info:
        tl.kron(tl.var("A", (2, 3, 3)))
    assert info.value.code == "shape" and "batch axis goes on the tensor" in info.value.message
