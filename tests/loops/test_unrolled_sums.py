"""A vector block whose simd loop gcc would leave scalar has its rows and its summed loop
unrolled completely (microkernel.unrolled_sum): gcc vectorizes ``simd for x`` only when
nothing under it is a loop any more, and unrolls a summed loop by itself only up to
microkernel.COMPILER_PEELS iterations.  Without the rule the CFD kernels at n = 20-28
(rows not whole 64-byte vectors, sums of 20-28 terms) ran one lane at a time, 5-11×
slower than at n = 16 or 24 (docs/performance.md, "Padding and register tiles").  The
unrolled kernels give the reference's values, ⊥ and ±inf included (a pragma changes no
arithmetic)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import ir as loops
from tensorlang.loops import microkernel

from corpus import helmholtz_reference, helmholtz_source, interpolation_source, kron3

#: the extents the padding bench and docs/performance.md measure, and their neighbours
NS = range(4, 33)


@pytest.fixture(autouse=True)
def _room_for_the_kernels(monkeypatch):
    """These programs hold about 2^20 points per array (72 MiB): a test file run earlier in
    the same process may have left a 64 MiB memory budget set (``monkeypatch_budget``)."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**30))


def _elements(n: int) -> int:
    """E of the padding bench's cases: about 2^20 points on elements of n^3."""
    return max(1, 2**20 // n**3)


def _vector_blocks(nodes):
    """(simd loop, row loop, summed loop) of every vector block (microkernel.vector_block)
    under ``nodes``."""
    for node in loops.walk(nodes):
        if isinstance(node, loops.Loop) and node.simd and len(node.body) == 1:
            row = node.body[0]
            if (isinstance(row, loops.Loop) and len(row.body) == 3 and isinstance(row.body[0], loops.Init)
                    and isinstance(row.body[1], loops.Loop)):
                yield node, row, row.body[1]


def _blocks(source: str):
    kernel = tl.compile(source, backend="numpy", threads=1)  # the loop program C would print
    return [block for nest in kernel.loop_program.nests for block in _vector_blocks(nest.body)]


def straight_line(row: loops.Loop, summed: loops.Loop) -> bool:
    """Whether gcc sees nothing but straight-line code under ``simd`` once the pragmas
    are applied: the rows unrolled whole and the summed loop unrolled whole, or short
    enough for gcc to unroll by itself."""
    return row.unroll == row.extent and (summed.extent <= microkernel.COMPILER_PEELS or summed.unroll == summed.extent)


def test_split_rows_covers_the_rows_no_block_height_divides():
    for rows in range(2, 2 * microkernel.MAX_BLOCK_ROWS + 1):
        for extent in (17, rows, 32):
            split = microkernel.split_rows(rows, extent)
            if rows >= 4 and extent * 2 <= microkernel.UNROLLED_STEPS and rows <= 2 * microkernel.MAX_BLOCK_ROWS:
                assert split is not None, (rows, extent)
            if split is not None:
                assert sum(split) == rows and 2 <= len(split) <= microkernel.MAX_SPLIT
                assert list(split) == sorted(split, reverse=True) and split[0] - split[-1] <= 1 and split[-1] >= 2
                assert split[0] <= microkernel.MAX_BLOCK_ROWS and split[0] * extent <= microkernel.UNROLLED_STEPS
                fewer = len(split) - 1  # no fewer blocks would fit
                most = -(-rows // fewer)
                assert fewer < 2 or most > microkernel.MAX_BLOCK_ROWS or most * extent > microkernel.UNROLLED_STEPS
    assert microkernel.split_rows(17, 17) == (9, 8) and microkernel.split_rows(19, 19) == (10, 9)  # as before
    # the halves of 23, 29 and 31 exceed the budget: three or four blocks
    assert microkernel.split_rows(23, 23) == (8, 8, 7) and microkernel.split_rows(31, 31) == (8, 8, 8, 7)
    assert microkernel.split_rows(29, 29) == (8, 7, 7, 7)
    assert microkernel.split_rows(37, 37) is None  # past MAX_SPLIT blocks


def test_tile_passes_pick_split_rows_over_small_divisors():
    """A ragged tile over a block of 2 rows (26 = 2 × 13: 2 × 26 multiply-adds fit the
    budget, 13 × 26 do not) reloads its row for every 2 rows; three split blocks of 9, 9
    and 8 load it 8 times instead of 13."""
    assert microkernel.tile_passes((2,) * 13, 26, 8) == 13
    assert microkernel.tile_passes(microkernel.split_rows(26, 26), 26, 8) == 8
    assert microkernel.tile_passes((8,) * 3, 24, 8) == 6  # 3 vectors a row: groups of 5 rows


def test_unrolled_sum_rule():
    peels, steps = microkernel.COMPILER_PEELS, microkernel.UNROLLED_STEPS
    assert not microkernel.unrolled_sum(peels, 16, False)  # gcc unrolls it itself
    assert microkernel.unrolled_sum(peels + 1, 8, False)
    assert microkernel.unrolled_sum(25, 5, False) and microkernel.unrolled_sum(22, 11, False)
    assert not microkernel.unrolled_sum(28, 14, False)  # past the budget: 7 rows instead (unrolled_height)
    assert microkernel.unrolled_height(28, 28) == 7 and microkernel.unrolled_height(26, 26) == 2
    assert microkernel.unrolled_height(23, 23) == 0  # a prime: split_rows
    assert not microkernel.unrolled_sum(24, 12, True)  # whole vectors: a register tile
    assert not microkernel.unrolled_sum(steps, 2, False)  # past the unrolled budget
    assert microkernel.unrolled_sum(steps // 2, 2, False)


@pytest.mark.slow
@pytest.mark.parametrize("program", ["interpolation", "helmholtz"])
def test_no_cfd_vector_block_leaves_a_loop_under_its_simd_loop(program):
    """At every n of 4..32 each vector block of the CFD kernels whose row is not whole
    64-byte vectors (so no register tile takes it) is straight-line code under its simd
    loop.  The old choice fails here: at n = 20 the summed loop of 20 terms kept its loop
    (the kernel ran 6× slower than at n = 16)."""
    source = interpolation_source if program == "interpolation" else helmholtz_source
    explicit, tile_only = [], []
    for n in NS:
        for simd, row, summed in _blocks(source(n, _elements(n))):
            if simd.extent * 8 % microkernel.TILE_BYTES == 0:
                continue  # a register tile where the compiler targets AVX-512 (test_tiles.py)
            if summed.extent > microkernel.COMPILER_PEELS and not summed.unroll:
                # cut for a ragged tile only: its plain branch runs row by row (test_ragged_tiles.py)
                assert simd.extent * 8 >= microkernel.RAGGED_TILE_BYTES
                tile_only.append(n)
                continue
            assert straight_line(row, summed), (n, row.unroll, summed.extent, summed.unroll)
            assert row.extent * summed.extent <= microkernel.UNROLLED_STEPS or summed.unroll == 0  # compile time
            if summed.unroll:
                explicit.append(n)
    # the rule is what makes the large n straight-line, primes (split rows) included;
    # n = 23, 29 and 31 (three or four blocks) and 21, 25, 26 and 30 (split rows, not a
    # small divisor: microkernel.tile_passes) are cut for the ragged tile (both programs
    # fused at every n here: their working sets fit the test's 2 MiB L2)
    assert {17, 18, 19, 20, 22, 27, 28} <= set(explicit)
    assert set(tile_only) == {21, 23, 25, 26, 29, 30, 31}
    assert not [n for n in explicit if n <= microkernel.COMPILER_PEELS]  # small n: as before


@pytest.mark.slow
@pytest.mark.parametrize("n", [17, 19])
def test_prime_rows_get_two_blocks(n):
    """Rows no height from 2 to MAX_BLOCK_ROWS divides are cut in two blocks (split_rows)
    that together cover every row once, where both blocks' sums unroll: before, the whole
    product fell back to the interchanged nest (1.4-1.5× slower per element)."""
    split = microkernel.split_rows(n, n)
    assert len(split) == 2
    for source, products in ((interpolation_source, 3), (helmholtz_source, 6)):
        blocks = _blocks(source(n, _elements(n)))
        heights = [row.extent for _, row, _ in blocks]
        assert heights == list(split) * products  # every fused product: two blocks


def _c(source, **options):
    try:
        return tl.compile(source, backend="c", threads=1, **options)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


def _summed_unrolls(source: str) -> list[int]:
    """The unroll pragmas of the plain nests (a register tile's own left out)."""
    plain = re.sub(r"#if TL_TILES\n.*?#else\n", "", source, flags=re.S)
    return [int(m) for m in re.findall(r"#pragma GCC unroll (\d+)", plain)]


def _same(got, want, rtol):
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    ok = np.isfinite(want)
    assert np.allclose(got[ok], want[ok], rtol=rtol, atol=rtol / 100)


@pytest.mark.slow
@pytest.mark.parametrize("n", [19, 27])  # two split blocks; 3 blocks of 9 rows
@pytest.mark.parametrize("fma", [False, True])
def test_unrolled_cfd_kernels_give_the_reference(n, fma):
    """The kernels the rule unrolls, with ⊥, ±inf and -0 among the inputs, against the
    numpy references (the same products in the same order: only pragmas differ)."""
    rng = np.random.default_rng(n)
    E = 3
    u = rng.uniform(-1, 1, (E, n, n, n))
    u[0, 1, 2, 3], u[1, 4, 5, 6], u[2, 7, 8, 9], u[2, 0, 0, 0] = np.nan, np.inf, -np.inf, -0.0
    k = _c(interpolation_source(n, E), fma=fma)
    blocks = len(_blocks(interpolation_source(n, E)))  # one block a product, or two or more for split rows
    assert _summed_unrolls(k.code("c")).count(n) == blocks  # each block's summed loop, unrolled whole
    A, B, C = (rng.uniform(-1, 1, (n, n)) / n for _ in range(3))
    with np.errstate(invalid="ignore"):
        want = kron3(A, B, C, u)
    _same(k(A=A, B=B, C=C, u=u)["v"], want, 1e-12)

    h = _c(helmholtz_source(n, E), fma=fma)
    unrolls = _summed_unrolls(h.code("c"))
    assert unrolls.count(n) == 2 * blocks
    S = rng.uniform(-1, 1, (n, n)) / n
    D = rng.uniform(0.5, 1.5, (E, n, n, n))
    D[1, 0, 0, 0] = 0.0  # 0 · inf = ⊥ where it meets the inf
    with np.errstate(invalid="ignore"):
        want = helmholtz_reference({"S": S, "D": D, "u": u})
    _same(h(S=S, D=D, u=u)["v"], want, 1e-11)
