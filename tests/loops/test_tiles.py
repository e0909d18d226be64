"""Register tiles (the ``tiles`` loop rewrite: loops/microkernel.py ``tile_of`` makes
loops.ir.Tile nodes; codegen ``CPrinter.tile`` prints them).

A vector block of a fused loop whose rows are whole 64-byte vectors is printed as an
explicit register tile where the compiler targets AVX-512 (``TL_TILES``): groups of rows
kept as vectors across the summed index, the loads that move with the row read as
vectors and every other factor put in every lane.  Each lane computes the plain nest's
sum for its element, from +0, over the same products in the same order, with ``fma``
exactly where the nest has one: the tile and the plain nest give the same bits, ⊥, ±inf
and -0 included.  Both forms are built here whatever the machine (``microkernel.TILES``
True and False)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import microkernel
from tensorlang.loops.ir import Loop, walk
from tensorlang.targets.c.codegen import TILE_MARK

from corpus import helmholtz_reference, helmholtz_source, interpolation_source, kron3


def _c(source, **options):
    try:
        return tl.compile(source, backend="c", threads=1, **options)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


def _forced(monkeypatch, tiles: bool | None, source: str, **options):
    """The kernel of ``source`` built with ``microkernel.TILES = tiles`` (another text for
    each setting: never a kernel cached under another)."""
    with monkeypatch.context() as m:
        m.setattr(microkernel, "TILES", tiles)
        return _c(source + "\n" * (3 + {None: 0, True: 1, False: 2}[tiles]), **options)


def _tiles(k) -> list[microkernel.Tile]:
    itemsize = np.dtype(k.dtype).itemsize
    return [t for nest in k.loop_program.nests if nest.wide_vectors for node in walk(nest.body)
            if isinstance(node, Loop) and (t := microkernel.tile_of(node, itemsize)) is not None]


def test_the_cfd_products_at_n16_are_tiles_of_8_rows_of_2_vectors():
    interp, helm = _c(interpolation_source(16, 3)), _c(helmholtz_source(16, 3))
    assert len(_tiles(interp)) == 3 and len(_tiles(helm)) == 6
    for tile in _tiles(interp) + _tiles(helm):
        assert (tile.width, tile.height, tile.extent) == (16, 16, 16)
        assert (tile.vectors(8), tile.groups(8)) == (2, ((0, 16, 8),))
        assert (tile.vectors(4), tile.groups(4)) == (1, ((0, 16, 16),))  # float32: 16 lanes a vector
    # one row operand each; the third Helmholtz product also stores D ⊙ its sum (loops/fusion.py
    # epilogue), reading D's row as a vector
    assert [len(t.moving) for t in _tiles(interp) + _tiles(helm)] == [1] * 5 + [2] + [1] * 3
    assert "tl_vload(&v1[" in helm.target.source  # D, slot 1
    c = helm.target.source
    # the default source has both forms, chosen by the preprocessor
    assert c.count("#if TL_TILES\n") == 6 and c.count(TILE_MARK) == 6 and "#define TL_TILES 1" in c


def test_tiles_is_a_loop_rewrite_and_skipping_it_leaves_the_plain_blocks():
    """The ``tiles`` rewrite puts a loops.ir.Tile where tile_of finds one (the block kept
    as its other branch); ``--emit loops`` shows it; skipped (a debugging switch), the C
    has the plain blocks and no tile, with the same bits."""
    from tensorlang.loops.ir import Tile

    tiled = _c(helmholtz_source(16, 3))
    plain = _c(helmholtz_source(16, 3) + "\n" * 9, skip_passes=("tiles",))
    nodes = [n for nest in tiled.loop_program.nests for n in walk(nest.body) if isinstance(n, Tile)]
    assert len(nodes) == 6 and all(n.plain and microkernel.tile_of(n.loop, 8) == n.tile for n in nodes)
    assert all("tiles" in nest.rewrites for nest in tiled.loop_program.nests if nest.wide_vectors)
    assert "tiles" in tiled.loop_program.rewrites and "tiles" not in plain.loop_program.rewrites
    assert tiled.ir("loops").count("register tile: ") == 6 and "register tile: " not in plain.ir("loops")
    assert not any(isinstance(n, Tile) for nest in plain.loop_program.nests for n in walk(nest.body))
    assert TILE_MARK not in plain.target.source and "#if TL_TILES" not in plain.target.source
    assert "tl_vd" not in plain.target.source
    rng = np.random.default_rng(7)
    n = 16
    args = {"S": rng.uniform(-1, 1, (n, n)), "D": rng.uniform(-1, 1, (3, n, n, n)), "u": rng.uniform(-1, 1, (3, n, n, n))}
    for name, value in tiled(**args).items():
        np.testing.assert_array_equal(plain(**args)[name], value)


@pytest.mark.slow
def test_rows_shorter_than_a_vector_are_not_tiles():
    for n in (4, 6):  # 32, 48 bytes a row (microkernel.RAGGED_TILE_BYTES)
        k = _c(helmholtz_source(n, 3))
        assert _tiles(k) == [] and TILE_MARK not in k.target.source
    assert len(_tiles(_c(helmholtz_source(8, 3)))) == 6  # 64 bytes: one vector a row
    ragged = _tiles(_c(helmholtz_source(12, 3)))  # 96 bytes: a vector and half of one, masked
    assert len(ragged) == 6 and all(t.vectors(8) == 2 and t.tail(8) == 4 for t in ragged)


def _tile_loops(k) -> list[Loop]:
    return [node for nest in k.loop_program.nests if nest.wide_vectors for node in walk(nest.body)
            if isinstance(node, Loop) and microkernel.tile_of(node, 8) is not None]


def test_only_loads_constants_and_plus_minus_times_with_the_row_last_make_a_tile():
    from dataclasses import replace

    from tensorlang.loops.ir import Apply, BinOp, Const, Load, Update

    k = _c("in var A : [8 8]\nin var B : [8 8]\nin var u : [3 8 8]\nout var v : [3 8 8]\nvar t : [3 8 8]\n"
           "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nv[e,i,j] = sum(k) t[e,i,k] * B[k,j]\n")
    loop = _tile_loops(k)[0]
    tile = microkernel.tile_of(loop, 8)
    assert len(_tile_loops(k)) == 2 and tile.height == 8 and tile.extent == 8

    def with_value(value):
        row = loop.body[0]
        init, summed, store = row.body
        summed = replace(summed, body=(Update(tile.update.acc, "+", value),))
        return replace(loop, body=(replace(row, body=(init, summed, store)),))

    (moving,) = tile.moving
    other = next(f for f in walk((tile.update.value,)) if isinstance(f, Load) and f != moving)
    assert microkernel.tile_of(with_value(BinOp("-", Const(2.0), BinOp("*", moving, other))), 8) is not None
    for bad in (BinOp("/", moving, other), Apply("exp", moving), BinOp("*", Apply("exp", other), moving),
                Load(moving.slot, (tile.x, *moving.indices[1:]))):  # the row also before the last index
        assert microkernel.tile_of(with_value(bad), 8) is None, bad
    assert microkernel.tile_of(with_value(other), 8).moving == ()  # nothing moves: a scalar in every lane
    assert microkernel.tile_of(replace(loop, simd=False), 8) is None  # not a vector block
    assert microkernel.tile_of(loop, 16) is not None and microkernel.tile_of(loop, 4) is None  # 32 bytes a row


@pytest.mark.slow
def test_forced_settings_print_one_form():
    with pytest.MonkeyPatch.context() as m:
        m.setattr(microkernel, "TILES", True)
        on = _c(helmholtz_source(16, 3) + "\n\n\n\n")
        m.setattr(microkernel, "TILES", False)
        off = _c(helmholtz_source(16, 3) + "\n\n\n\n\n")
    assert "#if TL_TILES\n" not in on.target.source and on.target.source.count(TILE_MARK) == 6
    assert TILE_MARK not in off.target.source and "tl_vd" not in off.target.source


# ------------------------------------------------------------------ generated programs
#: factors a summed product may have: (text, whether it moves with the row j); t is the
#: chain's previous result (u for the first statement), w a second batched input
_FACTORS = [
    ("A[i,k] * {t}[e,k,j]", True),
    ("{t}[e,i,k] * B[k,j]", True),
    ("{t}[e,k,j] * A[i,k] * w[e,k,j]", True),
    ("(0.0 - A[i,k]) * {t}[e,k,j]", True),
    ("(A[i,k] + 2.5) * ({t}[e,k,j] - w[e,k,j])", True),
    ("{t}[e,i,k] * B[k,j] * B[k,j]", True),
]


@st.composite
def _programs(draw, itemsize):
    lanes = 64 // itemsize  # a row of one vector, two, three; or not a whole number of them
    n = draw(st.sampled_from([lanes, lanes, 2 * lanes, 3 * lanes, lanes // 2 + 4, lanes + 3, 2 * lanes + 1]))
    steps = draw(st.lists(st.sampled_from(range(len(_FACTORS))), min_size=2, max_size=3, unique=True))
    E = draw(st.integers(2, 4))  # a batch of one is not a fused loop
    lines = [f"in var A : [{n} {n}]", f"in var B : [{n} {n}]", f"in var u : [{E} {n} {n}]",
             f"in var w : [{E} {n} {n}]", f"out var v : [{E} {n} {n}]"]
    lines += [f"var t{s} : [{E} {n} {n}]" for s in range(len(steps) - 1)]
    prev = "u"
    for s, choice in enumerate(steps):
        target = "v" if s == len(steps) - 1 else f"t{s}"
        lines.append(f"{target}[e,i,j] = sum(k) " + _FACTORS[choice][0].format(t=prev))
        prev = target
    return "\n".join(lines) + "\n", n, E, steps


_specials = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e300, -1e-300])


def _numpy(steps, A, B, u, w):
    prev = u
    for choice in steps:
        prev = {
            0: lambda t: np.einsum("ik,ekj->eij", A, t),
            1: lambda t: np.einsum("eik,kj->eij", t, B),
            2: lambda t: np.einsum("ekj,ik,ekj->eij", t, A, w),
            3: lambda t: np.einsum("ik,ekj->eij", 0.0 - A, t),
            4: lambda t: np.einsum("ik,ekj->eij", A + 2.5, t - w),
            5: lambda t: np.einsum("eik,kj->eij", t, B * B),
        }[choice](prev)
    return prev


@pytest.mark.slow
@pytest.mark.parametrize("fma", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_tiles_give_the_plain_nests_bits_on_generated_chains(monkeypatch, fma, dtype):
    seen: list[bool] = []  # whether each example's kernel has a tile

    @settings(max_examples=15, deadline=None)
    @given(program=_programs(np.dtype(dtype).itemsize), seed=st.integers(0, 2**32 - 1), special=_specials, where=st.integers(0, 10**6))
    def check(program, seed, special, where):
        source, n, E, steps = program
        tiled = _forced(monkeypatch, True, source, fma=fma, dtype=dtype)
        plain = _forced(monkeypatch, False, source, fma=fma, dtype=dtype)
        seen.append(TILE_MARK in tiled.target.source)
        assert TILE_MARK not in plain.target.source
        rng = np.random.default_rng(seed)
        A, B = (rng.uniform(-1, 1, (n, n)).astype(dtype) / n for _ in range(2))
        u, w = (rng.uniform(-1, 1, (E, n, n)).astype(dtype) for _ in range(2))
        u.flat[where % u.size] = special
        w.flat[(where // 7) % w.size] = -0.0
        args = {"A": A, "B": B, "u": u, "w": w}
        with np.errstate(all="ignore"):
            got, want = tiled(**args)["v"], plain(**args)["v"]
            ref = _numpy(steps, *(x.astype(np.float64) for x in (A, B, u, w)))
        assert got.dtype == want.dtype == np.dtype(dtype)
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))
        # the optimizer may reassociate a chain (A (A u) as (A A) u), which changes where
        # inf - inf makes ⊥: against numpy, only where both are finite
        finite = np.isfinite(ref) & np.isfinite(got)
        scale = max(1.0, float(np.abs(ref[finite]).max(initial=0.0)))
        tol = 1e-4 if dtype == "float32" else 1e-10
        assert np.allclose(got[finite], ref[finite], rtol=tol, atol=tol * scale)

    check()
    assert sum(seen) >= 3, seen  # the property was checked on tiles, not only on plain nests


@pytest.mark.slow
@pytest.mark.parametrize("fma", [False, True])
def test_cfd_kernels_at_n16_tiled_agree_with_the_plain_nests_and_the_reference(monkeypatch, fma):
    n, E = 16, 3
    rng = np.random.default_rng(7)
    u = rng.uniform(-1, 1, (E, n, n, n))
    u[0, 1, 2, 3], u[1, 4, 5, 6], u[2, 7, 8, 9], u[2, 0, 0, 0] = np.nan, np.inf, -np.inf, -0.0
    A, B, C, S = (rng.uniform(-1, 1, (n, n)) / n for _ in range(4))
    D = rng.uniform(0.5, 1.5, (E, n, n, n))
    for source, args, reference in (
            (interpolation_source(n, E), {"A": A, "B": B, "C": C, "u": u}, lambda: kron3(A, B, C, u)),
            (helmholtz_source(n, E), {"S": S, "D": D, "u": u}, lambda: helmholtz_reference({"S": S, "D": D, "u": u}))):
        tiled, plain = _forced(monkeypatch, True, source, fma=fma), _forced(monkeypatch, False, source, fma=fma)
        with np.errstate(invalid="ignore"):
            got, want, ref = tiled(**args)["v"], plain(**args)["v"], reference()
        assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))
        assert np.array_equal(np.isnan(got), np.isnan(ref))
        ok = np.isfinite(ref)
        assert np.allclose(got[ok], ref[ok], rtol=1e-11, atol=1e-13)


# ------------------------------------------------------------------ the portable form
_FILL = r"""
#include <stdio.h>
#include <stdlib.h>
static void tl_fill(real *p, long n, unsigned seed) {
    const real special[5] = {(real)NAN, (real)INFINITY, -(real)INFINITY, (real)-0.0, (real)0.0};
    for (long i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (i % 97 == 13) ? special[(i / 97) % 5] : ((real)((seed >> 8) & 0xffff) / 32768 - 1) / 16;
    }
}
"""


def _run_c(source: str, fma: bool, flags: list[str]) -> bytes:
    """The C of ``source`` built with ``flags`` and run on filled buffers (⊥, ±inf, ±0
    among them); every buffer's bytes afterwards."""
    import subprocess
    import tempfile
    from pathlib import Path

    from c_source import generate
    from tensorlang.targets.c import build as c_build

    compiler = c_build.find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    kernel = tl.compile(source, backend="interp")  # for the program only
    generated = generate(kernel.executed, "float64", blas=False, fma=fma, parallel_work=1)
    lines = [generated.source, _FILL, "int main(void) {"]
    sizes = [max(int(np.prod(shape)), 1) for shape in generated.loop_program.shapes]
    for n, size in enumerate(sizes):
        lines.append(f"    real *v{n} = malloc({size} * sizeof(real)); tl_fill(v{n}, {size}, {n + 1}u);")
    for function in generated.functions:
        lines.append(f"    if ({function.name}({', '.join([f'v{s}' for s in (*function.slots, *function.inputs)] + ['1'])}) != 0) return 3;")
    lines += [f"    fwrite(v{n}, sizeof(real), {size}, stdout);" for n, size in enumerate(sizes)]
    lines += ["    return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp, "k.c"), Path(tmp, "k")
        src.write_text("\n".join(lines) + "\n")
        built = subprocess.run([*compiler.command, "-O3", "-std=c99", *flags, str(src), "-o", str(exe), "-lm"],
                               capture_output=True, text=True)
        if built.returncode != 0 and any(f.startswith("-m") for f in flags):
            pytest.skip(f"the compiler takes no {flags}: {built.stderr[-300:]}")
        assert built.returncode == 0, built.stderr[-3000:]
        ran = subprocess.run([str(exe)], capture_output=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    return ran.stdout


@pytest.mark.slow
@pytest.mark.parametrize("fma", [False, True])
def test_the_portable_tile_gives_the_same_bits_as_the_plain_nest(fma):
    """Where the compiler does not target AVX-512, a forced tile (``-DTL_TILES=1``) uses
    the portable splat and lane-wise fma; its bits are the plain nest's."""
    source = helmholtz_source(16, 2)
    plain = np.frombuffer(_run_c(source, fma, ["-DTL_TILES=0"]), np.float64)
    assert np.isnan(plain).any() and np.isinf(plain).any()  # the specials reached the results
    for flags in (["-march=native", "-mno-avx512f", "-DTL_TILES=1"],
                  ["-march=native"]):  # the default: AVX-512's tile where there is one
        got = np.frombuffer(_run_c(source, fma, flags), np.float64)
        # the same numbers, -0 included (a NaN's sign and payload are not specified)
        assert np.array_equal(got, plain, equal_nan=True), flags
        assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(plain[~np.isnan(plain)])), flags
