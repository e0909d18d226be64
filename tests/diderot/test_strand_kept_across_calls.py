"""A run reuses the neighbour patterns the run before kept (``tl_set_prev``, ``Runner.placed``,
targets/c/strands.py) where no strand moves and creation places the strands by the grid's
iterators, globals and constants alone: the same grid and globals, the same positions.  Calls
in a row with the same and with other inputs (a spacing, a radius, the grid, the board) give
the interpreter's results at 1 and 2 threads; positions read from an image, a sequence or
under a condition that reads a probe are not placed."""

from __future__ import annotations

import re

import numpy as np
import pytest
from agreement import same

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.sampling.image import Image
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as CS

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

LIFE = """#version 1.0
input int N = 12;
input real h = 1.0;
input real r = 1.5;
input int gens = 3;
input image(2)[] board;
field#0(2)[] B = tent ⊛ board;
strand cell(int x, int y) {
   vec2 pos = POS;
   int age = 0;
   output int alive = 1 if inside(pos, B) && B(pos) > 0.5 else 0;
   update {
      if (age >= gens) { stabilize; }
      int n = sum { q.alive | q in sphere(r) };
      alive = 1 if n == 3 else alive if n == 2 else 0;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..N-1, x in 0..N-1 ];
"""

GRID = "[h * real(x), h * real(y)]"


def program(text: str):
    return strands(check(parse_program(text)))


def board(n: int, seed: int, h: float = 1.0) -> Image:
    data = (np.random.default_rng(seed).random((n, n)) < 0.4).astype(np.float64)
    return Image(data, 2, np.diag([h, h, 1.0]))


def runner_of(p):
    ir, why = strand_plan(p.checked)
    assert why is None, why
    return CS.build(ir, 10_000)


def test_calls_in_a_row_give_the_interpreters_results(monkeypatch):
    prevs = []
    start = CS.Run.__init__

    def record(run, *args, **kw):
        start(run, *args, **kw)
        prevs.append(run.prev >= 0)
    monkeypatch.setattr(CS.Run, "__init__", record)
    p = program(LIFE.replace("POS", GRID))
    assert runner_of(p).placed
    calls = [dict(board=board(12, 1)), dict(board=board(12, 1)), dict(board=board(12, 2)),  # same grid: kept
             dict(board=board(12, 2, 0.5), h=0.5),  # spacing: other positions, the patterns made again
             dict(board=board(12, 2, 0.5), h=0.5, r=0.6),  # radius: only the four sides
             dict(board=board(12, 3), gens=0), dict(board=board(12, 3)),  # all stable at once, then again
             dict(board=board(9, 4), N=9), dict(board=board(9, 4), N=9)]  # another grid
    for values in calls:
        a = p.run(values, backend="interp")
        for threads in (1, 2):
            b = p.run(values, backend="c", threads=threads)
            assert p.executor_note is None
            same(a, b)
    # the C runs (two a call): a run after the first with its grid and globals reuses
    assert prevs == [False, True] + [True, True] * 2 + [False, True] * 5 + [True, True]


@pytest.mark.slow  # three C builds to read one flag (the placed case is test_calls_in_a_row_... here too)
def test_positions_made_of_other_things_are_not_placed():
    on_image = "[real(x) + (0.5 if B([real(x), real(y)]) > 0.5 else 0.0), real(y)]"
    assert not runner_of(program(LIFE.replace("POS", on_image))).placed
    tangled = LIFE.replace("POS", GRID).replace("   int age = 0;\n", "   int age = 0;\n   vec2 q = pos;\n")
    assert runner_of(program(tangled)).placed  # other state read from pos: still placed
    seq = LIFE.replace("input int N = 12;", "input int N = 12;\ninput vec2{} pts;").replace(
        "POS", "pts{x % length(pts)} + [0.0, real(y)]")
    assert not runner_of(program(seq)).placed


def test_a_moved_board_under_the_same_grid_keeps_the_interpreters_results():
    p = program(LIFE.replace("POS", GRID))
    for seed in range(3):  # only the board changes: the positions, and so the patterns, stay
        values = dict(board=board(12, 10 + seed), gens=2)
        same(p.run(values, backend="interp"), p.run(values, backend="c"))


def _life(board: np.ndarray, gens: int) -> np.ndarray:
    """Life by numpy: cells on the board's edge dead at the start (outside ``inside``)."""
    a = (board > 0.5).astype(np.int64)
    a[[0, -1], :] = 0
    a[:, [0, -1]] = 0
    for _ in range(gens):
        p = np.pad(a, 1)
        n = sum(p[1 + dy:p.shape[0] - 1 + dy, 1 + dx:p.shape[1] - 1 + dx]
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
        a = ((n == 3) | ((n == 2) & (a == 1))).astype(np.int64)
    return a


@pytest.mark.parametrize("n", [23, 131])  # blocks of 256 strands, the last one short; the statuses
def test_boards_of_many_blocks_give_numpys_life(n):  # counted across a 16384-strand chunk (131²)
    p = program(LIFE.replace("POS", GRID))
    img = board(n, 7)
    for threads in (1, 2):
        for _ in range(2):  # (the second call on the first one's patterns)
            b = p.run(dict(board=img, N=n, gens=4), backend="c", threads=threads)
            assert np.array_equal(b.outputs["alive"], _life(img.data.T, 4))
    if n < 100:
        same(p.run(dict(board=img, N=n, gens=4), backend="interp"), b)


FOLD8 = """#version 1.0
input int gens = 3;
strand cell(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int age = 0;
   output int alive = 1 if (x * 7 + y * 3) % 5 < 2 else 0;
   output int sgn = -1 if (x + y) % 3 == 0 else 1 if (x * y) % 4 == 1 else 0;
   output int big = 0;
   output int k = 0;
   output int w = 0;
   update {
      if (age >= gens) { stabilize; }
      int n = sum { q.alive | q in sphere(1.5) };
      int m = sum { q.sgn | q in sphere(2.5) };
      int c = sum { q.age | q in sphere(1.5) };
      m = m * 1000000000;
      alive = 1 if n == 3 else alive if n == 2 else 0;
      big = m + c;
      k = n;
      w = c;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..16, x in 0..20 ];
"""


def test_folds_within_one_are_8_bits_in_lanes():
    """A blocked int sum of values within ±1 (and its copy that nothing sets again) is 8 bits
    in the block (while no pattern is longer than 127) and in the update's lanes; a sum of wider
    values, or a copy set again (``m * 10⁹`` would wrap in 8 bits), stays 64: the interpreter's results."""
    p = program(FOLD8)
    src = runner_of(p).source
    assert re.search(r"int8_t l_red_\d+ = bk_->v0\[u_\];", src) and "int8_t v0[TL_BK]" in src
    assert "int64_t v2[TL_BK]" in src  # the ages' sum
    assert re.search(r"int8_t l_n_\d+ = l_red_", src) and re.search(r"int64_t l_m_\d+ = l_red_", src)
    for threads in (1, 2):
        same(p.run({}, backend="interp"), p.run({}, backend="c", threads=threads))


def test_a_real_copy_of_an_8_bit_fold_is_a_double_in_lanes():
    """``real c = n`` of an 8-bit neighbour count is a double in the update's lanes, as in the
    interpreter: ``-c`` is -0.0 where n is 0, so ``1.0 / (-c)`` is -inf (an int copy would give +inf)."""
    p = program(FOLD8.replace("output int w = 0;", "output real w = 0.0;").replace("w = c;", "real r = n;\n      w = 1.0 / (-r);"))
    src = runner_of(p).source
    assert re.search(r"double l_r_\d+ = l_n_", src)
    ref = p.run({}, backend="interp")
    assert np.isneginf(ref.outputs["w"]).any()
    for threads in (1, 2):
        same(ref, p.run({}, backend="c", threads=threads))


def test_a_run_that_failed_leaves_no_positions_behind(monkeypatch):
    """Creation in lanes leaves the positions as they are only where the state arrays are those
    of the run before, whose grid and globals were the same (``Run.same_pos``): a run that failed
    after its creation handed no arrays on, so the next one makes its positions again."""
    seen = []
    start = CS.Run.__init__

    def record(run, *args, **kw):
        start(run, *args, **kw)
        seen.append(run.same_pos)
    monkeypatch.setattr(CS.Run, "__init__", record)
    p = program(LIFE.replace("POS", GRID).replace(
        "   int age = 0;\n", "   int age = 0;\n   int d = 0 if inside(pos, B) && B(pos) > 1.5 else 1;\n").replace(
        "      age += 1;\n", "      alive = alive / d;\n      age += 1;\n"))
    ok = board(12, 1)
    data = ok.data.copy()
    data[5, 5] = 2.0  # a division by zero in that strand's first update
    p.run(dict(board=ok), backend="c")
    with pytest.raises(TensorLangError):
        p.run(dict(board=Image(data, 2, np.diag([1.0, 1.0, 1.0]))), backend="c")
    a = p.run(dict(board=ok), backend="interp")
    for _ in range(2):
        same(a, p.run(dict(board=ok), backend="c"))
    assert seen == [0, 1, 0, 1]
