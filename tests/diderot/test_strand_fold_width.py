"""The blocked folds' widths (``tl_bk_fill``, targets/c/strands.py): a block's run of strands
that share a kept pattern and read no column outside the strands folds across the whole
block; an int sum whose terms the narrow analysis bounds by m is summed in 8 bits where the
pattern has at most 127 / m offsets, in 16 bits where at most 32767 / m, else in 64; a count or a
sum of terms within ±1 always in 8 bits (``tl_bk``'s v0), where no kept pattern is longer than 127.  The
results are the interpreter's for every width: 0/1 terms (8 bits at r = 1.5 and 2.5; at r = 7,
more than 127 neighbours, strand by strand: their 8-bit v0 gives way), terms within ±100 (16 bits),
terms of ±20000 (64 bits), a mean and a max of reals, on a grid whose rows do not align with the blocks
and whose last block is partial, at 1 and 2 threads."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as C
from tensorlang.targets.c import strands_batch as B

from agreement import run_variant  # tests/diderot is on the path

pytestmark = [pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler"),
              pytest.mark.slow]

WIDTHS = """#version 1.0
input int gens = 2;
input real r = 2.5;
strand cell(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int age = 0;
   real heat = real((x * 5 + y * 3) % 7) / 7.0;
   output int alive = 1 if (x * 7 + y * 3) % 5 < 2 else 0;
   output int v = -100 if (x + y) % 3 == 0 else 100 if (x * y) % 5 == 1 else 7;
   output int w = 20000 if (x * 3 + y) % 4 == 0 else -20000;
   output int s = 0;
   output int t = 0;
   output real h = 0.0;
   output real top = 0.0;
   update {
      if (age >= gens) { stabilize; }
      int n = sum { q.alive | q in sphere(r) };
      s = sum { q.v | q in sphere(r) };
      t = sum { q.w | q in sphere(r) };
      h = mean { q.heat | q in sphere(r) };
      top = max { q.heat + real(q.v) | q in sphere(r) };
      v = -v if n == 3 else v;
      alive = 1 if n == 3 else alive if n == 2 else 0;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..19, x in 0..69 ];
"""


def program(text: str):
    return strands(check(parse_program(text)))


def test_bounded_int_sums_get_narrow_accumulators():
    ir, why = strand_plan(program(WIDTHS).checked)
    assert why is None
    fill = C.render(ir).split("int tl_bk_fill(", 1)[1].split("\n}\n", 1)[0]
    # 0/1 terms: 8 bits, always (a kept pattern past 127 offsets folds strand by strand); terms
    # within ±100: 16 bits up to 327 offsets (8 bits would hold one); ±20000: no narrow sum; the
    # real folds: none either
    assert re.findall(r"if \(len_ <= (\d+)\)", fill) == ["327"]
    assert fill.count("int8_t a_[TL_BK]") == 1 and fill.count("int16_t a_[TL_BK]") == 1
    assert fill.count("double a_[TL_BK]") == 2 and fill.count("int64_t a_[TL_BK]") == 2


@pytest.mark.parametrize("r,gens", [(1.5, 2), (2.5, 0), (2.5, 3), (7.0, 1)])
def test_folds_of_every_width_give_the_interpreters_results(r, gens):
    p = program(WIDTHS)
    a = p.run({"r": r, "gens": gens}, backend="interp")
    for threads in (1, 2):
        b = p.run({"r": r, "gens": gens}, backend="c", threads=threads)
        assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable)
        for name in a.outputs:
            assert np.array_equal(a.outputs[name], b.outputs[name]), (name, threads)


SHORT_RUNS = """#version 1.0
input int w = 10;
strand cell(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int age = 0;
   output int alive = 1 if (x * 7 + y * 3) % 5 < 2 else 0;
   output int s = 0;
   output real h = 0.0;
   update {
      if (age >= 1) { stabilize; }  // one update: each cell's sums of the first snapshot
      int n = sum { q.alive | q in sphere(1.5) };
      s = sum { q.alive * (1 + q.age) | q in sphere(1.5) };
      h = mean { real(q.alive) + 0.5 | q in sphere(1.5) };
      alive = 1 if n == 3 else alive if n == 2 else 0;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..7, x in 0..w-1 ];
"""


@pytest.mark.parametrize("width", [B.LANES + 2, B.LANES + 3])
def test_short_runs_fold_in_registers_up_to_lanes_strands(monkeypatch, width):
    """A row of w cells is three runs of one pattern (its ends, w - 2 cells between): runs of at most LANES strands
    fold in registers (BLOCK_SITE's last path), longer ones in memory.  Both give the interpreter's results; a
    register path made wrong (its accumulator starts at 1 more) spoils every cell at w = LANES + 2 and only the
    rows' ends at w = LANES + 3: the path is taken, and where LANES says."""
    values = {"w": width}
    want = program(SHORT_RUNS).run(values, backend="interp")
    for threads in (1, 2):
        _, got, src = run_variant(SHORT_RUNS, values, monkeypatch, {}, threads)
        assert f"e_ - t_ > {B.LANES}" in src
        for name in want.outputs:
            assert np.array_equal(want.outputs[name], got.outputs[name]), (name, threads)
    wrong = C.BLOCK_SITE.replace("{ty} a_ = {init};", "{ty} a_ = {init} + 1;")
    assert wrong != C.BLOCK_SITE
    _, bad, _ = run_variant(SHORT_RUNS, values, monkeypatch, {(C, "BLOCK_SITE"): wrong})
    off = (bad.outputs["s"] != want.outputs["s"]).reshape(8, width)  # (y, x): the strands in creation order
    ends = np.zeros((8, width), dtype=bool)
    ends[:, [0, -1]] = True
    assert np.array_equal(off, np.ones_like(ends) if width <= B.LANES + 2 else ends)


COUNTS = """#version 1.0
input real r = 7.0;
strand cell(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int one = 1;
   int age = 0;
   output int n = 0;
   update {
      if (age >= 1) { stabilize; }
      n = sum { q.one | q in sphere(r) };
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..29, x in 0..29 ];
"""


def test_an_8bit_fold_gives_way_past_127_offsets(monkeypatch):
    """A fold of 0/1 terms is kept in 8 bits (``tl_bk``'s v0) only while no kept pattern is longer than 127
    (``tl_klong``): at r = 7 (up to 144 neighbours) the strands fold one by one, the interpreter's sums; without
    that condition the 8-bit sums wrap."""
    want = program(COUNTS).run({"r": 7.0}, backend="interp").outputs["n"]
    assert want.max() > 127
    for threads in (1, 2):
        _, got, src = run_variant(COUNTS, {"r": 7.0}, monkeypatch, {}, threads)
        assert "int8_t v0[TL_BK]" in src and "tl_klong[0] <= 127" in src and "int tl_lanes(" in src
        assert np.array_equal(want, got.outputs["n"]), threads
    _, bad, _ = run_variant(COUNTS, {"r": 7.0}, monkeypatch, {(C.Renderer, "_short"): lambda self, q: ""})
    assert not np.array_equal(want, bad.outputs["n"])
