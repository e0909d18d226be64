"""Register tiles over rows that are not whole 64-byte vectors (loops/microkernel.py
``Tile.tail``, ``Tile.groups``; codegen ``CPrinter.tile_code``): the row's last vector is
loaded and stored through a lane mask (csrc/tl_tiles_tail.h), so nothing past the row is
read or written, and the groups of rows need not divide the block's height.  Each lane
still computes the plain nest's sum for its element in the same order: the tile gives the
plain nest's bits, ⊥, ±inf and -0 included (docs/c-backend.md, "Padding and register
tiles")."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.loops import microkernel
from tensorlang.loops.ir import Init, Store, Tile, Update, walk
from tensorlang.targets.c.codegen import TILE_MARK

from corpus import helmholtz_reference, helmholtz_source, interpolation_source, kron3
from test_tiles import _c, _forced, _run_c, _tiles


@pytest.fixture(autouse=True)
def _room_for_the_kernels(monkeypatch):
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**30))
    monkeypatch.setenv("ASAN_OPTIONS", "detect_leaks=0")  # the harness's buffers live to the exit


def _tile(width: int, height: int) -> microkernel.Tile:
    acc = Init("a", "+")
    return microkernel.Tile("x", width, "u", height, "k", 3, acc, Update("a", "+", None), Store(0, ("x",), None), ())


def test_a_ragged_row_has_a_part_vector_and_even_groups():
    t = _tile(25, 5)  # 3 vectors and 1 lane; at most 4 rows of 4 vectors a group
    assert (t.vectors(8), t.tail(8)) == (4, 1)
    assert t.groups(8) == ((0, 3, 3), (3, 5, 2))  # 3 and 2 rows, not 4 and 1
    assert _tile(23, 8).groups(8) == ((0, 8, 4),)  # 3 vectors: up to 5 rows, two groups of 4
    assert _tile(23, 11).groups(8) == ((0, 8, 4), (8, 11, 3))
    assert (_tile(12, 7).vectors(4), _tile(12, 7).tail(4)) == (1, 12)  # float: 16 lanes
    for width in range(8, 65):
        for height in range(1, 17):
            t = _tile(width, height)
            groups = t.groups(8)
            covered = [r for first, end, size in groups for r in range(first, end)]
            assert covered == list(range(height))  # every row once, in order
            assert all((end - first) % size == 0 and size * t.vectors(8) <= max(microkernel.TILE_VECTORS, t.vectors(8))
                       for first, end, size in groups)
            if width % 8 == 0:  # whole vectors: one loop, as before
                assert len(groups) == 1 and height % groups[0][2] == 0


@pytest.mark.slow
@pytest.mark.parametrize("n", [12, 23, 25])
@pytest.mark.parametrize("fma", [False, True])
def test_cfd_kernels_on_ragged_rows_tiled_give_the_plain_nests_bits(monkeypatch, n, fma):
    """Tiled (``microkernel.TILES`` True) against plain (False) on the CFD kernels with ⊥,
    ±inf and -0 among the inputs: the same bits, and the numpy reference's values.  n = 23
    is cut in three blocks (``split_rows``): before, it had no block at all."""
    E = 2
    rng = np.random.default_rng(n)
    u = rng.uniform(-1, 1, (E, n, n, n))
    u[0, 1, 2, n - 1], u[1, 4, 5, 6], u[1, 7, 8, n - 2], u[0, 0, 0, 0] = np.nan, np.inf, -np.inf, -0.0
    A, B, C, S = (rng.uniform(-1, 1, (n, n)) / n for _ in range(4))
    D = rng.uniform(0.5, 1.5, (E, n, n, n))
    for source, args, reference in (
            (interpolation_source(n, E), {"A": A, "B": B, "C": C, "u": u}, lambda: kron3(A, B, C, u)),
            (helmholtz_source(n, E), {"S": S, "D": D, "u": u}, lambda: helmholtz_reference({"S": S, "D": D, "u": u}))):
        tiled, plain = _forced(monkeypatch, True, source, fma=fma), _forced(monkeypatch, False, source, fma=fma)
        assert "tl_vloadn(" in tiled.target.source and TILE_MARK not in plain.target.source
        assert all(t.tail(8) == n % 8 for t in _tiles(tiled)) and len(_tiles(tiled)) >= 3
        with np.errstate(invalid="ignore"):
            got, want, ref = tiled(**args)["v"], plain(**args)["v"], reference()
        assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))
        assert np.array_equal(np.isnan(got), np.isnan(ref))
        ok = np.isfinite(ref)
        assert np.allclose(got[ok], ref[ok], rtol=1e-11, atol=1e-13)


@pytest.mark.slow
def test_ragged_tiles_in_float32(monkeypatch):
    """float: 16 lanes, a row of 19 is one vector and 3 lanes; against the float64
    reference (the interpreter evaluates the naive statement's n^9 outer product)."""
    n, E = 19, 2
    rng = np.random.default_rng(3)
    args = {"S": (rng.uniform(-1, 1, (n, n)) / n).astype(np.float32),
            "D": rng.uniform(0.5, 1.5, (E, n, n, n)).astype(np.float32),
            "u": rng.uniform(-1, 1, (E, n, n, n)).astype(np.float32)}
    args["u"][1, 2, 3, n - 1] = np.inf
    args["u"][0, 5, 6, 17] = np.nan
    source = helmholtz_source(n, E)
    tiled, plain = _forced(monkeypatch, True, source, dtype="float32"), _forced(monkeypatch, False, source, dtype="float32")
    assert any(t.tail(4) == 3 for t in _tiles(tiled))
    with np.errstate(invalid="ignore", over="ignore"):
        got, same = tiled(**args)["v"], plain(**args)["v"]
        want = helmholtz_reference({k: v.astype(np.float64) for k, v in args.items()})
    assert np.array_equal(got, same, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = np.isfinite(want)
    assert np.allclose(got[ok], want[ok], rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("flags", [["-march=native", "-mno-avx512f", "-DTL_TILES=1"], ["-march=native"]],
                         ids=["portable", "native"])
def test_ragged_tiles_stay_in_bounds_under_address_sanitizer(flags):
    """The C of a ragged n built with ``-fsanitize=address`` on buffers of their exact size
    (malloc'd one by one): no read or write past a row, and the plain nest's bits.  The
    portable form loads and stores the part vector lane by lane (what AddressSanitizer
    checks); the native one through AVX-512's masked moves where the compiler targets it."""
    source = helmholtz_source(11, 2)
    plain = np.frombuffer(_run_c(source, True, ["-DTL_TILES=0"]), np.float64)
    got = np.frombuffer(_run_c(source, True, [*flags, "-fsanitize=address", "-fno-omit-frame-pointer"]), np.float64)
    assert np.isnan(plain).any() and np.isinf(plain).any()
    assert np.array_equal(got, plain, equal_nan=True)
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(plain[~np.isnan(plain)]))


@pytest.mark.slow
def test_primes_past_two_halves_get_blocks_and_tiles():
    """n = 23: its halves (12 × 23 multiply-adds) exceed the unrolled budget, so before it
    ran the interchanged nest; now three blocks of 8, 8 and 7 rows, each a ragged tile."""
    k = _c(interpolation_source(23, 2))
    heights = sorted(t.height for t in _tiles(k))
    assert heights == [7, 7, 7, 8, 8, 8, 8, 8, 8]
    # blocks cut for the tile: the loop stage marks their plain branch row by row (Tile.rows)
    tiles = [n for nest in k.loop_program.nests for n in walk(nest.body) if isinstance(n, Tile)]
    assert tiles and all(t.rows for t in tiles) and "else the loop below, row by row" in k.ir("loops")


@pytest.mark.slow
@pytest.mark.parametrize("n", [23, 25])
def test_blocks_cut_for_the_tile_have_a_row_by_row_plain_branch(n):
    """Blocks that exist for a ragged tile only (23: three blocks; 25: 9 + 8 + 8 rows
    instead of 5 × 5) keep their sums as loops: where the compiler does not target AVX-512
    their plain branch runs row by row (``tl_row``, a simd loop per k step) instead of
    gcc compiling 23 × 23 or 25 × 25 unrolled multiply-adds a product.  Its bits are the
    tile's, ⊥, ±inf and -0 included, and AddressSanitizer finds nothing."""
    source = interpolation_source(n, 2)  # a batch of one is no fused loop
    code = _c(source).target.source
    assert "tl_row[" in code and f"#pragma GCC unroll {n}\n" not in code
    tiled = np.frombuffer(_run_c(source, True, ["-march=native"]), np.float64)
    plain = np.frombuffer(_run_c(source, True, ["-DTL_TILES=0", "-fsanitize=address"]), np.float64)
    assert np.isnan(plain).any() and np.isinf(plain).any()
    assert np.array_equal(tiled, plain, equal_nan=True)
    assert np.array_equal(np.signbit(tiled[~np.isnan(tiled)]), np.signbit(plain[~np.isnan(plain)]))
