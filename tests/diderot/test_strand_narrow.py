"""Narrow int state in the C executor (targets/c/strands_narrow.py): an int or bool state
variable whose values provably fit in 8, 16 or 32 bits is stored that narrow; one whose
values may not (a counter, an input, a value past the width, a parameter) stays 64-bit;
outputs equal the interpreter's either way."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands_narrow as NW


def program(text: str):
    return strands(check(parse_program(text)))


def widths(text: str) -> dict[str, int]:
    ir, why = strand_plan(program(text).checked)
    assert why is None
    return NW.narrow_slots(ir)


# every int state variable of one strand, each set in a way its width follows from
STATES = """#version 1.0
input int big = 5;
strand s(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int age = 0;
   int flag = 1 if x > 2 else 0;
   int tri = 0;
   int wide = 0;
   int wider = 0;
   int neg = -128;
   int past = 127;
   int fromin = 0;
   int count = 0;
   int prod = 3;
   bool b = false;
   output int alive = 1 if (x + y) % 3 == 0 else 0;
   update {
      if (age >= 4) { stabilize; }
      int n = sum { q.alive | q in sphere(1.5) };
      alive = 1 if n == 3 else alive if n == 2 else 0;
      tri = 2 if n == 1 else tri;
      wide = 200 if n > 1 else wide;
      wider = 40000 * alive;
      neg = -neg if alive == 1 else neg;
      past = past + alive;
      fromin = big;
      count = n;
      prod = prod * prod;
      b = n > 2 || b;
      flag = flag;
      age += 1;
   }
}
initially [ s(x, y) | y in 0..5, x in 0..5 ];
"""


def test_widths_follow_the_values():
    w = widths(STATES)
    assert w["alive"] == w["flag"] == w["tri"] == w["b"] == 8
    assert w["wide"] == 16  # 200 is past int8
    assert w["neg"] == 16  # -(-128) = 128 is past int8
    assert w["wider"] == 32
    # a counter, one that grows past every width (127 + 1 + 1 ...), an input, a sum, repeated squares, parameters
    for name in ("age", "past", "fromin", "count", "prod", "x", "y"):
        assert name not in w


def test_a_counter_that_would_overflow_a_width_is_not_narrowed():
    # past = past + alive grows by one a step with no bound: no width holds it
    text = STATES.replace("past = past + alive;", "past = past + 1;")
    assert "past" not in widths(text)
    # a value that only stays in range while the run is short is not narrowed either
    text = STATES.replace("past = past + alive;", "past = 127 if age < 3 else past + 1;")
    assert "past" not in widths(text)


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
def test_narrow_state_runs_as_the_interpreter(threads):
    p = program(STATES.replace("past = past + alive;", "past = 127 if past > 200 else past;"))
    a = p.run({"big": 7}, backend="interp")
    b = p.run({"big": 7}, backend="c", threads=threads)
    assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable)
    for name in a.outputs:
        assert np.array_equal(a.outputs[name], b.outputs[name])
        assert b.outputs[name].dtype == a.outputs[name].dtype


BIRTHS = """#version 1.0
strand s(int k) {
   int age = 0;
   int small = 1 if k % 2 == 0 else -3;
   output int out = 0;
   update {
      if (age == 1 && k < 4) { new s(k + 4); }
      if (age >= 3) { stabilize; }
      small = -small;
      out = small * 100;
      age += 1;
   }
}
initially { s(k) | k in 0..3 };
"""


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
@pytest.mark.slow
def test_narrow_rows_of_new_strands():
    """Strands born in a run get their narrow rows zeroed, then set by their initialisation."""
    assert widths(BIRTHS) == {"small": 8, "out": 16}
    p = program(BIRTHS)
    a = p.run({}, backend="interp")
    b = p.run({}, backend="c")
    for name in a.outputs:
        assert np.array_equal(a.outputs[name], b.outputs[name])


# a strand that reads no other strand's state steps on copies of its own slots
# (strands_batch.own_steps): its narrow rows are copied in and out at their width
SOLO = """#version 1.0
strand s(int k) {
   int age = 0;
   int sign = 1 if k % 3 == 0 else -1;
   output bool odd = false;
   output int flips = 0;
   update {
      if (age >= 5 + k % 4) { stabilize; }
      sign = -sign;
      odd = !odd;
      flips = flips + 1 if flips < 100 else 0;
      age += 1;
   }
}
initially [ s(k) | k in 0..9 ];
"""


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
def test_a_solo_strands_narrow_rows_on_its_own_copies():
    ir, why = strand_plan(program(SOLO).checked)
    assert why is None and NW.narrow_slots(ir).keys() >= {"sign", "odd"}
    from tensorlang.targets.c import strands as C
    assert "Il[" in C.render(ir)  # the copies are used
    p = program(SOLO)
    a = p.run({}, backend="interp")
    b = p.run({}, backend="c")
    assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable)
    for name in a.outputs:
        assert np.array_equal(a.outputs[name], b.outputs[name]), name


# counters: set to constants at creation, changed only by constant steps in update and
# stabilize (no loop around them): bounded by the run's step limit
COUNTERS = """#version 1.0
strand s(int k) {
   int up = 0;
   int down = 5;
   int by = 0;
   int looped = 0;
   int reset = 0;
   int fromk = k;
   output int out = 0;
   update {
      if (up >= 3 + k % 3) { stabilize; }
      up += 1;
      down = down - 2;
      if (k > 1) { by = by + 60; } else { by = 1 + by; }
      foreach (int j in 0..1) { looped += 1; }
      reset = 0 if up > 2 else reset + 1;
      fromk += 1;
      out = up * 1000 + down * 10 + by + looped + reset + fromk;
   }
   stabilize { by += 10; }
}
initially [ s(k) | k in 0..6 ];
"""


def test_a_counter_narrows_to_the_runs_step_limit():
    ir, why = strand_plan(program(COUNTERS).checked)
    assert why is None
    assert NW.narrow_slots(ir).keys().isdisjoint({"up", "down", "by"})  # no limit: any number of steps
    w = NW.narrow_slots(ir, 1)  # up within [0, 1], down [3, 5], by [0, 60 + 10] (stabilize's step once)
    assert (w["up"], w["down"], w["by"]) == (8, 8, 8)
    w = NW.narrow_slots(ir, 2)  # by up to 2 * 60 + 10 = 130: past int8
    assert (w["up"], w["down"], w["by"]) == (8, 8, 16)
    w = NW.narrow_slots(ir, 10_000)  # the default limit
    assert (w["up"], w["down"], w["by"]) == (16, 16, 32)
    assert NW.narrow_slots(ir, 2**40).keys().isdisjoint({"up", "down", "by"})
    # a step inside a loop, a set that is no step, a start that is not a constant
    assert NW.narrow_slots(ir, 2).keys().isdisjoint({"looped", "reset", "fromk"})


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 2, 0])
def test_counters_at_their_widths_run_as_the_interpreter(limit):
    p = program(COUNTERS)
    a = p.run({}, backend="interp", limit=limit)
    b = p.run({}, backend="c", limit=limit)
    assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable)
    assert np.array_equal(a.outputs["out"], b.outputs["out"]) and b.outputs["out"].dtype == np.int64
