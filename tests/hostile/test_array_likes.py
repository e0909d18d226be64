"""Array types numpy treats specially (docs/einsum.md): tl.einsum returns what numpy.einsum
returns for masked arrays (mask ignored), np.matrix, object arrays, and raises numpy's
ValueError for a read-only out=; a compiled kernel refuses masked entries, object dtype and
a read-only out= with error[input] and reads a matrix as its array."""

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # (np.matrix)

A = np.arange(6.0).reshape(2, 3)
B = np.arange(12.0).reshape(3, 4) - 5.0
MASKED = np.ma.masked_array(A, mask=[[True, False, False], [False, False, True]])
CALLS = {  # (operands, keywords) of the same einsum "ij,jk->ik"
    "masked": ((MASKED, B), {}),
    "masked without masked entries": ((np.ma.masked_array(A), np.ma.masked_array(B)), {}),
    "matrix": ((np.matrix(A), B), {}),
    "two matrices": ((np.matrix(A), np.matrix(B)), {}),
    "object": ((A.astype(object), B), {}),
    "float32 matrix and masked": ((np.matrix(A, dtype=np.float32), np.ma.masked_array(B, dtype=np.float32)), {}),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("backend", ["auto", "numpy"])
def test_einsum_returns_what_numpy_returns_for_array_likes(name, backend):
    operands, keywords = CALLS[name]
    ours = tl.einsum("ij,jk->ik", *operands, backend=backend, **keywords)
    theirs = np.einsum("ij,jk->ik", *operands, **keywords)
    assert type(ours) is type(theirs) and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("out", [np.matrix(np.zeros((2, 4))), np.ma.zeros((2, 4))])
def test_an_out_of_another_array_type_is_filled_and_kept(out):
    result = tl.einsum("ij,jk->ik", A, B, out=out)
    assert result is out
    np.testing.assert_array_equal(np.asarray(out), A @ B)


def test_a_read_only_out_raises_numpys_error_and_is_left_unwritten():
    out = np.full((2, 4), 7.0)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        np.einsum("ij,jk->ik", A, B, out=out)
    with pytest.raises(ValueError, match="read-only"):
        tl.einsum("ij,jk->ik", A, B, out=out)
    assert (out == 7.0).all()


KERNEL = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [[2 3]]\n"


@pytest.mark.parametrize("backend", ["interp", "numpy"])
def test_a_kernel_refuses_what_has_no_value_and_reads_a_matrix_as_its_array(backend):
    kernel = tl.compile(KERNEL, backend=backend)
    np.testing.assert_allclose(kernel(A=np.matrix(A), B=B)["C"], A @ B)
    np.testing.assert_allclose(kernel(A=np.ma.masked_array(A), B=B)["C"], A @ B)  # no masked entry
    read_only = np.zeros((2, 4))
    read_only.flags.writeable = False
    for inputs, out, said in [({"A": MASKED}, None, "masked"), ({"A": A.astype(object)}, None, "dtype object"),
                              ({"A": A}, {"C": read_only}, "read-only")]:
        with pytest.raises(TensorLangError) as info:
            kernel(**{"B": B, **inputs}, out=out) if out else kernel(**{"B": B, **inputs})
        assert info.value.code == "input" and said in info.value.message
