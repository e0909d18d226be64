"""Twenty-first sweep: hostile inputs and what new users trip over, on the surfaces besides
the Diderot front end and strands, each fixed at its cause and covered here.

* A writeable ``out=`` whose elements share memory (``np.lib.stride_tricks.as_strided``
  with a zero stride, a broadcast view made writeable) was accepted by every back end and
  came back holding the last row written in every row: a wrong answer with no word.  It is
  error[input] now (``semantics.interface.check_out``), as a read-only ``out=`` already was.
* ``tl.einsum(..., order='A')`` with operands that are all Fortran-contiguous (1-d ones,
  ``i,j->ij``, are) returned a C-ordered result where numpy.einsum returns an F-ordered one
  ('A' is 'F' where every input is F): numpy computes that call, as it does for 'K' and 'A'
  with any operand that is not C-ordered (docs/einsum.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.targets import available

BACKENDS = [b for b in ("interp", "numpy", "c") if b in available() or b == "interp"]
MATMUL = "in var A : [4 4]\nin var B : [4 4]\nout var C : [4 4]\nC = A # B . [2 3]\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_out_whose_elements_share_memory_is_refused(backend):
    kernel = tl.compile(MATMUL, backend=backend)
    a, b = np.arange(16.0).reshape(4, 4), np.eye(4)
    shared = np.lib.stride_tricks.as_strided(np.zeros(4), (4, 4), (0, 8))  # writeable, every row one row
    with pytest.raises(tl.TensorLangError, match=r"error\[input\].*overlap in memory"):
        kernel(A=a, B=b, out={"C": shared})
    # a strided, reversed or transposed view of an array of its own still receives the results
    for target in (np.zeros((8, 8))[::2, ::-2], np.zeros((4, 4)).T):
        assert kernel(A=a, B=b, out={"C": target})["C"] is target
        np.testing.assert_array_equal(target, a)


def test_only_element_sharing_strides_count_as_shared():
    from tensorlang.semantics.interface import shares_elements
    z, strided = np.zeros(100), np.lib.stride_tricks.as_strided
    assert not any(shares_elements(x) for x in (z, z[::3], z.reshape(10, 10)[::-1, ::2].T, np.zeros((0, 3)),
                                                  strided(z, (1, 5), (0, 8)), strided(z, (3, 3), (16, 24))))
    assert all(shares_elements(x) for x in (strided(z, (4, 4), (0, 8)), strided(z, (4, 4), (8, 8)),
                                              strided(z, (3, 3), (16, 8))))


def test_einsum_order_a_with_fortran_operands_has_numpys_layout():
    a, b = np.arange(2.0), np.arange(3.0)
    for ops in ((a, b), (np.ones((3, 1)), np.ones((1, 3)))):
        subscripts = "i,j->ij" if ops[0].ndim == 1 else "ij,jk->ik"
        for order in ("A", "K", "C"):
            got, want = tl.einsum(subscripts, *ops, order=order), np.einsum(subscripts, *ops, order=order)
            np.testing.assert_array_equal(got, want)
            assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)


@pytest.mark.parametrize("backend", BACKENDS)
def test_outs_overlapping_in_part_are_refused_and_interleaved_ones_taken(backend):
    """A stride shorter than an element overlaps neighbours in part (4x4 with strides (32, 4): a wrong C was
    returned); two outs interleaved in one buffer (z[::2], z[1::2]) share no element and are taken (they were
    refused as overlapping)."""
    kernel = tl.compile(MATMUL, backend=backend)
    a, b = np.arange(16.0).reshape(4, 4), np.eye(4)
    with pytest.raises(tl.TensorLangError, match=r"error\[input\].*overlap in memory"):
        kernel(A=a, B=b, out={"C": np.lib.stride_tricks.as_strided(np.zeros(40), (4, 4), (32, 4))})
    two = tl.compile("in var A : [4]\nout var C : [4]\nout var D : [4]\nC = A\nD = 2 * A\n", backend=backend)
    z = np.zeros(8)
    two(A=np.arange(4.0), out={"C": z[::2], "D": z[1::2]})
    np.testing.assert_array_equal(z, [0, 0, 1, 2, 2, 4, 3, 6])


def test_a_large_out_laid_out_in_overlapping_order_is_refused_without_counting():
    from tensorlang.semantics.interface import shares_elements
    big = np.lib.stride_tricks.as_strided(np.zeros(4 << 20), (2048, 2048), (8, 16))  # (4M elements, 16 MB apart)
    assert shares_elements(big)  # (counting its offsets took 10 s and 145 MB a call)
