"""A vector block's rows are unrolled in part where its accumulators would fill every
register and its moving operand is a contiguous K × X block or a per-iteration temporary
(microkernel.unroll_rows): the CFD products at n = 16 that read a small matrix or a
temporary, also across its rows; the one reading the kernel's input at a stride stays
unrolled whole.  The results are the
reference's, ⊥ and ±inf included (an unroll pragma changes no arithmetic)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import microkernel

from corpus import helmholtz_reference, helmholtz_source, interpolation_source, kron3


def _c(source, **options):
    try:
        return tl.compile(source, backend="c", threads=1, **options)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


def test_unroll_rows_caps_only_contiguous_blocks_past_the_register_budget():
    cap = microkernel.UNROLL_VECTORS
    assert microkernel.unroll_rows(16, 16, 8, True) == 8  # 16 rows x 2 vectors = 32 > 24: 8 at a time
    assert microkernel.unroll_rows(16, 16, 8, False) == 16  # strided moving operand: all
    assert microkernel.unroll_rows(12, 12, 8, True) == 12  # 12 x 2 = 24: fits
    assert microkernel.unroll_rows(8, 8, 8, True) == 8
    assert microkernel.unroll_rows(16, 32, 8, True) == 16  # 4 vectors a row: 4 at a time would be < 8: all
    assert microkernel.unroll_rows(16, 16, 4, True) == 16  # float32: 1 vector a row
    for height in range(1, 17):
        for width in (1, 4, 8, 9, 12, 16, 24, 32):
            got = microkernel.unroll_rows(height, width, 8, True)
            assert height % got == 0 and (got == height or (got >= 8 and got * -(-width * 8 // 64) <= cap))


def _unrolls(source: str) -> list[int]:
    """The unroll pragmas of the plain vector blocks (a register tile's own are left out:
    the ``#if TL_TILES`` branch before each block's ``#else``, tests/loops/test_tiles.py)."""
    plain = re.sub(r"#if TL_TILES\n.*?#else\n", "", source, flags=re.S)
    return [int(m) for m in re.findall(r"#pragma GCC unroll (\d+)", plain)]


@pytest.mark.slow
@pytest.mark.parametrize("fma", [False, True])
def test_cfd_products_at_n16_unroll_the_contiguous_ones_by_8(fma):
    rng = np.random.default_rng(16)
    n, E = 16, 3
    k = _c(interpolation_source(n, E), fma=fma)
    assert sorted(_unrolls(k.target.source)) == [8, 8, 16]  # u[e, k, a, b] strided: 16; tmp1 and C: 8
    A, B, C = (rng.uniform(-1, 1, (n, n)) / n for _ in range(3))
    u = rng.uniform(-1, 1, (E, n, n, n))
    u[0, 1, 2, 3], u[1, 4, 5, 6], u[2, 7, 8, 9], u[2, 0, 0, 0] = np.nan, np.inf, -np.inf, -0.0
    with np.errstate(invalid="ignore"):
        want = kron3(A, B, C, u)
    got = k(A=A, B=B, C=C, u=u)["v"]
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    ok = np.isfinite(want)
    assert np.allclose(got[ok], want[ok], rtol=1e-12, atol=1e-14)

    h = _c(helmholtz_source(n, E), fma=fma)
    assert sorted(_unrolls(h.target.source)) == [8] * 6  # the k-mode products read a temporary across its rows
    S = rng.uniform(-1, 1, (n, n)) / n
    D = rng.uniform(0.5, 1.5, (E, n, n, n))
    got = h(S=S, D=D, u=u)["v"]
    with np.errstate(invalid="ignore"):
        want = helmholtz_reference({"S": S, "D": D, "u": u})
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = np.isfinite(want)
    assert np.allclose(got[ok], want[ok], rtol=1e-11, atol=1e-13)


@pytest.mark.slow
def test_smaller_cfd_kernels_keep_every_row_unrolled():
    for n in (4, 8, 12):
        for source in (interpolation_source(n, 2), helmholtz_source(n, 2)):
            assert set(_unrolls(_c(source).target.source)) <= {n}
