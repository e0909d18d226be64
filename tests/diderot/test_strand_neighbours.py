"""The C executor's sphere queries (docs/diderot-compiled.md): the answers it keeps across
super-steps where no strand moves give the interpreter's results, and are found again
when a strand dies or is born; ``new`` storms stop at the memory budget inside the step."""

from __future__ import annotations

import numpy as np
import pytest
from agreement import agree as agree_both  # tests/diderot is on the path

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as C

pytestmark = [pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler"),
              pytest.mark.slow]  # each test builds C programs (seconds)


def program(text: str):
    return strands(check(parse_program(text)))


def agree(p, values=None, **kw):
    return agree_both(p, values, rtol=0, **kw)[1]


def source(p) -> str:
    ir, why = strand_plan(p.checked)
    assert why is None
    return C.render(ir)


# Life on a small board where some cells stabilize early (stable strands stay the others'
# neighbours) and the radius is an input.  (A program whose strands die or are born runs in
# Diderot's permuted order, where nothing is kept.)
LIFE = """#version 1.0
input int gens = 6;
input real r = 1.5;
strand cell(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int age = 0;
   output int alive = 1 if (x * 7 + y * 3) % 5 < 2 else 0;
   update {
      if (age >= gens) { stabilize; }
      if (x == 2 && age == 2) { stabilize; }
      if (y == 5 && age == 4) { stabilize; }
      int n = sum { q.alive | q in sphere(r) };
      alive = 1 if n == 3 else alive if n == 2 else 0;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..8, x in 0..9 ];
"""


def test_kept_answers_agree_with_the_interpreter():
    p = program(LIFE)
    src = source(p)
    assert "#define TL_STILL 1" in src and "tl_nb_kept(0, i, &nb_)" in src
    agree(p)
    agree(p, {"r": 2.5, "gens": 9})
    agree(p, {"r": 0.0})  # no neighbours at all
    dying = program(LIFE.replace("{ stabilize; }\n      if (y", "{ die; }\n      if (y").replace("initially [", "initially {")
                    .replace("x in 0..9 ];", "x in 0..9 };"))
    assert "#define TL_STILL 0" in source(dying)  # permuted: not kept
    agree(dying)


def test_kept_answers_belong_to_their_run():
    """Two runs of one program with other radii, one after the other and interleaved step by
    step: each gets its own neighbours (the kept ones are the run's)."""
    p = program(LIFE)
    want = {r: p.run({"r": r}, backend="interp").outputs["alive"] for r in (1.5, 2.5)}
    for r in (1.5, 2.5, 1.5):
        assert np.array_equal(p.run({"r": r}, backend="c", limit=0).outputs["alive"], want[r])
    steps = {r: [] for r in (1.5, 2.5)}
    for r in (1.5, 2.5):  # progress runs one super-step per call
        p.run({"r": r}, backend="c", progress=lambda s, a, r=r: steps[r].append(s))
        assert steps[r][-1] == 7


def test_queries_not_kept_where_strands_move_or_the_radius_is_the_strands():
    moving = LIFE.replace("age += 1;", "age += 1; pos = pos + [0.0, 0.25];")
    varying = LIFE.replace("sphere(r)", "sphere(r + real(age) / 4.0)")
    for text, still in ((moving, 0), (varying, 1)):
        p = program(text)
        src = source(p)
        assert f"#define TL_STILL {still}" in src and "tl_nb_kept(0, i, &nb_)" not in src
        agree(p)


def test_births_refused_within_the_step_at_the_memory_budget(monkeypatch):
    """A storm of new strands inside one update stops at the budget (error[too-large]) while
    the step runs, not after it; the next run of the program is not left with its births."""
    storm = """#version 1.0
input int k = 10;
strand S (int i) {
   output real x = 0.0;
   update { foreach (int j in 0..k) { new S(i + j); } x += 1.0; if (x > 1.5) { stabilize; } }
}
initially { S(i) | i in 0..9 };
"""
    p = program(storm)
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "2000000")  # about 20,000 strands of this one
    with pytest.raises(TensorLangError) as caught:
        p.run({"k": 1_000_000}, backend="c", limit=1)
    assert caught.value.code == "too-large" and "in one super-step" in caught.value.message
    small = p.run({"k": 1}, backend="c", limit=1)  # 10 strands, 20 births: within the budget
    assert small.active == 30 and small.steps == 1
    assert np.array_equal(np.sort(p.run({"k": 1}, backend="interp", limit=3).outputs["x"]),
                          np.sort(p.run({"k": 1}, backend="c", limit=3).outputs["x"]))


# Strands on a lattice (positions an affine map of the grid's iterators along orthogonal
# axes): the kept answers come from a box of grid offsets tested one by one instead of the
# spatial grid.  Radii on a lattice distance exactly (Diderot's test is strict), scaled,
# shifted, rotated and 3-D lattices, a lattice with one row's positions moved (not a
# lattice: the grid) and a skewed one (not orthogonal: the grid) give the interpreter's results.
LATTICE = """#version 1.0
input int gens = 4;
input real r = 1.5;
strand cell(int x, int y, int z) {
   vec3 pos = POS;
   int age = 0;
   output int alive = 1 if (x * 7 + y * 3 + z * 5) % 5 < 2 else 0;
   update {
      if (age >= gens) { stabilize; }
      if (x == 1 && age == 1) { stabilize; }
      int n = sum { q.alive | q in sphere(r) };
      alive = 1 if n == 3 || n == 5 else alive if n == 2 || n == 4 else 0;
      age += 1;
   }
}
initially [ cell(x, y, z) | z in 0..2, y in 0..5, x in 0..6 ];
"""


@pytest.mark.parametrize("pos, radii", [
    ("[real(x), real(y), real(z)]", (1.0, 1.5, 2.0, 0.5)),
    ("[0.1 * real(x) - 0.35, 0.3 * real(y) + 1.0 / 3.0, 0.2 * real(z)]", (0.3, 0.31, 0.35, 0.45)),
    ("[0.6 * real(x) - 0.8 * real(y), 0.8 * real(x) + 0.6 * real(y), 2.0 * real(z)]", (1.0, 1.5, 2.01)),
    ("[real(x), real(y) + (0.25 if y == 3 else 0.0), real(z)]", (1.0, 1.5)),
    ("[real(x) + 0.5 * real(y), real(y), real(z)]", (1.2, 1.5)),
])
def test_kept_answers_on_lattices_agree_with_the_interpreter(pos, radii):
    p = program(LATTICE.replace("POS", pos))
    assert "#define TL_STILL 1" in source(p)
    for r in radii:
        agree(p, {"r": r})


# Folds over kept neighbours whose value reads only the neighbours' state, inputs and
# constants are folded for a block of strands at once (tl_bk_fill: a run of strands with one
# pattern reads each offset across the run).  Every fold, of ints and reals, on a board
# wider than a block and not a multiple of it, strands stabilizing at different steps,
# border cells with other patterns; folds that read the strand's own state or have a body
# are left to the query's own loop.
FOLDS = """#version 1.0
input int gens = 5;
input real r = 1.5;
input real w = 0.5;
strand cell(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int age = 0;
   real h = real((x * 7 + y * 3) % 11) / 4.0 - 1.0;
   output int alive = 1 if (x * 7 + y * 3) % 5 < 2 else 0;
   output real acc = 0.0;
   update {
      if (age >= gens || (x == 3 && age == 2)) { stabilize; }
      int n = sum { q.alive | q in sphere(r) };
      real s = sum { w * q.h + real(q.alive) | q in sphere(r) };
      real m = mean { q.h | q in sphere(r) };
      real hi = max { q.h | q in sphere(r) };
      int ilo = min { q.alive - 2 * q.age | q in sphere(r) };
      real p = product { 0.5 + q.h * q.h | q in sphere(r) };
      bool any = exists { q.h > 1.0 | q in sphere(r) };
      bool every = all { q.alive == 0 | q in sphere(r) };
      real own = sum { q.h - h | q in sphere(r) };
      alive = 1 if n == 3 else alive if n == 2 else 0;
      h = clamp(-2.0, 2.0, 0.25 * s + m - 0.5 * hi + real(ilo) / 4.0 + p / 100.0 + (0.5 if any else 0.0) - (0.5 if every else 0.0));
      acc += h + own;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..10, x in 0..12 ];
"""


def test_folds_of_a_block_of_strands_agree_with_the_interpreter():
    p = program(FOLDS)
    src = source(p)
    assert "#define TL_BKS 8" in src and "bk_->ok[7]" in src  # own (reads h) is left to its loop
    wide = program(FOLDS.replace("y in 0..10, x in 0..12", "y in 0..3, x in 0..149"))  # whole blocks of one pattern
    for q, values in ((p, {}), (p, {"r": 2.5, "gens": 7}), (p, {"r": 0.5}), (p, {"r": 1.2, "w": -2.0}), (wide, {})):
        a = q.run(values, backend="interp")  # (r 0.5: no neighbours, NaN)
        for threads in (1, 2):
            b = q.run(values, backend="c", threads=threads)
            assert (a.steps, a.stable) == (b.steps, b.stable)
            for name in a.outputs:  # bit for bit (NaN where the interpreter has NaN)
                np.testing.assert_array_equal(a.outputs[name], b.outputs[name], strict=True)
    foreach = program(LIFE.replace("int n = sum { q.alive | q in sphere(r) };",
                                   "int n = 0; foreach (cell q in sphere(r)) { n += q.alive; }"))
    assert "#define TL_BKS 0" in source(foreach)
    agree(foreach)


# Moving strands search the spatial grid every step: a column of cells is one run of
# candidates tested four at a time, the neighbours put in order by counting (up to 32) or
# sorted.  Points on a lattice of spacing 0.5 put neighbours at exactly r (the test decided
# in single precision), a cluster puts many strands in one cell (runs longer than 4, more
# than 16 and more than 32 neighbours), and the fold depends on the neighbours' order.
MOVING = """#version 1.0
input int gens = 3;
input real r = 1.0;
strand pt(int i) {
   POS
   int age = 0;
   int id = i;
   output real s = 0.0;
   update {
      if (age >= gens) { stabilize; }
      DIE
      real t = 0.0;
      foreach (pt q in sphere(r)) { t = 0.5 * t + real(q.id) + |pos - q.pos|; }
      s += t;
      pos += STEP;
      age += 1;
   }
}
initially { pt(i) | i in 0..79 };
"""
_DIMS = {1: ("tensor[1] pos = [0.5 * real(i % 20) + (0.01 * real(i) if i >= 60 else 0.0)];", "[0.125 * real(i % 3)]"),
         2: ("vec2 pos = [0.5 * real(i % 5), 0.5 * real(i / 5)] if i < 60 else [0.01 * real(i), 0.02];",
             "[0.125 * real(i % 3), 0.0]"),
         3: ("vec3 pos = [0.5 * real(i % 4), 0.5 * real((i / 4) % 3), 0.5 * real(i / 12)] if i < 60 "
             "else [1.0 + 0.01 * real(i - 60), 0.5, 0.5];", "[0.0, 0.125 * real(i % 3), -0.0625 * real(i % 2)]")}


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("die", [False, True])
def test_moving_strands_find_the_interpreters_neighbours(dim, die):
    pos, step = _DIMS[dim]
    text = MOVING.replace("POS", pos).replace("STEP", step)
    p = program(text.replace("DIE", "if (i % 7 == 3 && age == 1) { die; }" if die else ""))
    assert "#define TL_STILL 0" in source(p)
    for r in (1.0, 1.5, 2.6):
        agree(p, {"r": r})


# Moving strands keep neighbour lists (strands within r (1 + margin), the margin 0.3 r) while
# every strand stays within half the margin of where it was when the lists were made: small
# steps for many super-steps (lists kept, then made again), a strand jumping far in one step,
# a strand whose position becomes NaN or infinite and then finite again, a centre moved
# before its query (by more than the margin for one strand), a radius that the global block
# changes, strands born and dying (Diderot's permuted order: the list's order re-sorted), a
# query around a given point, and a radius that depends on the strand (no lists).
WALK = """#version 1.0
input int gens = 14;
input real r = 1.0;
input real jump = 5.0;
real rr = r;
strand pt(int i) {
   POS
   int age = 0;
   int id = i;
   real mine = RADIUS;
   output real s = 0.0;
   update {
      if (age >= gens) { stabilize; }
      if (i == 7 && age == 2) { pos += MOVE7; }
      EXTRA
      real t = 0.0;
      foreach (pt q in sphere(mine)) { t = 0.5 * t + real(q.id) + |pos - q.pos|; }
      s += t;
      pos += STEP;
      if (i == 5 && age == 4) { pos += jump * ONE; }
      if (i == 11 && age == 3) { pos = BAD; }
      if (i == 11 && age == 6) { pos = ONE; }
      age += 1;
   }
}
GLOBAL
initially { pt(i) | i in 0..80 };
"""
_WALK = {1: ("tensor[1] pos = [0.37 * real(i)];", "[0.03 * sin(real(7 * i + age))]", "[1.0]", "[0.4]"),
         2: ("vec2 pos = [0.37 * real(i % 9), 0.41 * real(i / 9)];",
             "0.03 * [sin(real(7 * i + age)), cos(real(3 * i + 2 * age))]", "[1.0, 0.0]", "[0.4, -0.1]"),
         3: ("vec3 pos = [0.37 * real(i % 5), 0.41 * real((i / 5) % 4), 0.43 * real(i / 20)];",
             "0.03 * [sin(real(7 * i + age)), cos(real(3 * i + 2 * age)), sin(real(i + 5 * age))]",
             "[1.0, 0.0, 0.0]", "[0.4, -0.1, 0.2]")}


def _walk(dim: int, bad: str = "NAN", extra: str = "", radius: str = "rr", glob: str = "") -> str:
    pos, step, one, move = _WALK[dim]
    nan = "(0.0 / 0.0)" if bad == "NAN" else "(1.0 / 0.0)"
    return (WALK.replace("POS", pos).replace("STEP", step).replace("MOVE7", move).replace("BAD", f"{nan} * {one}")
            .replace("ONE", one).replace("EXTRA", extra).replace("RADIUS", radius).replace("GLOBAL", glob))


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("bad", ["NAN", "INF"])
def test_neighbour_lists_of_moving_strands_agree_with_the_interpreter(dim, bad):
    p = program(_walk(dim, bad))
    src = source(p)
    assert "#define TL_STILL 0" in src and "tl_nb_query(0, n, i" in src
    for r, jump in ((1.0, 5.0), (0.6, 0.5), (1.3, 40.0)):
        agree(p, {"r": r, "jump": jump})


@pytest.mark.parametrize("variant", ["births", "deaths", "radius-changes", "strand-radius", "given-point"])
def test_neighbour_lists_with_births_deaths_and_changing_radii(variant):
    kw: dict = {}
    if variant == "births":
        kw["extra"] = "if (i < 81 && i % 10 == 3 && age == 5) { new pt(i + 90); }"
    elif variant == "deaths":
        kw["extra"] = "if (i % 6 == 1 && age == 3 + i % 4) { die; }"
    elif variant == "radius-changes":
        kw["glob"] = "update { rr = rr * 1.2; }"
    elif variant == "strand-radius":
        kw["radius"] = "rr * (1.0 + 0.1 * real(i % 3))"
    text = _walk(2, **kw)
    if variant == "given-point":
        text = text.replace("sphere(mine)", "sphere(pos + [0.2, 0.1], mine)")
    agree(program(text), {"r": 0.9})


# Where the radius is a global's, a new epoch's lists are made for every active strand at once
# (the first stale query): each pair of strands tested once, the lists put in order by counting.
# Strands that die, stabilize (stable ones stay neighbours), jump, or stand at NaN or infinity;
# and, in agree, two threads.
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("bad", ["NAN", "INF"])
def test_lists_made_at_once_agree_with_the_interpreter(dim, bad):
    extra = "if (i % 6 == 1 && age == 3 + i % 4) { die; }\n      if (i % 9 == 2 && age == 5) { stabilize; }"
    p = program(_walk(dim, bad, extra=extra).replace("sphere(mine)", "sphere(rr)"))
    src = source(p)
    assert "tl_nb_query(0, n, i" in src and "return gr[" in src.split("static double tl_grid_h(const double *gr, const int64_t *gi) {")[1][:60]
    for r, jump in ((1.0, 5.0), (0.6, 0.5), (1.3, 40.0)):
        agree(p, {"r": r, "jump": jump})


# Strands standing at -1e308 and 1e308 (finite positions, whose span is not): the grid's
# cell size was doubled for ever (inf / inf is NaN, never small enough); no grid is made
# and the search tests every strand.
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_strands_spanning_more_than_the_largest_double_find_their_neighbours(dim):
    extra = "if (i == 6 && age == 4) { pos -= jump * ONE; }".replace("ONE", _WALK[dim][2])
    for radius in ("mine", "rr"):
        p = program(_walk(dim, extra=extra).replace("sphere(mine)", f"sphere({radius})"))
        agree(p, {"r": 1.0, "jump": 1e308})
