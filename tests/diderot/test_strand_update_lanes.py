"""The C executor's update in lanes (``tl_lanes``, targets/c/strands.py): a block of strands
whose update reads its neighbours only through the blocked folds runs as one loop over the
block, every statement under the strand's predicate.  Exits at any depth, locals set in
branches, real and narrow int state give the interpreter's results at 1 and 2 threads; an
update with a statement lanes cannot run (an int division, a loop) runs strand by strand."""

from __future__ import annotations

import pytest
from agreement import agree as agree_both  # tests/diderot is on the path

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as C

pytestmark = [pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler"),
              pytest.mark.slow]


def program(text: str):
    return strands(check(parse_program(text)))


def source(p) -> str:
    ir, why = strand_plan(p.checked)
    assert why is None
    return C.render(ir)


def agree(p, values=None, **kw):
    return agree_both(p, values, rtol=0, **kw)[1]


# exits inside nested branches, a continue, locals set in one branch and read after, a real
# state variable, a fold of reals and one of ints; strands stabilize at different steps
BRANCHY = """#version 1.0
input int gens = 7;
input real r = 1.5;
strand cell(int x, int y) {
   vec2 pos = [real(x), real(y)];
   int age = 0;
   real heat = real((x * 5 + y * 3) % 7) / 7.0;
   output int alive = 1 if (x * 7 + y * 3) % 5 < 2 else 0;
   output real acc = 0.0;
   update {
      if (age >= gens) { stabilize; }
      int n = sum { q.alive | q in sphere(r) };
      real h = mean { q.heat | q in sphere(r) };
      real d = 0.0;
      if (n > 4) {
         d = h - heat;
         if (d > 0.3 && age > 2) { acc += 100.0; stabilize; }
      } else {
         d = heat * 0.5;
         if (n == 0) { age += 1; continue; }
      }
      heat = heat + 0.25 * d;
      acc += heat if alive == 1 else -heat;
      alive = 1 if n == 3 else alive if n == 2 else 0;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..11, x in 0..9 ];
"""


@pytest.mark.parametrize("gens", [0, 1, 7])
def test_branchy_update_in_lanes_runs_as_the_interpreter(gens):
    p = program(BRANCHY)
    assert "int tl_lanes(" in source(p)
    agree(p, {"gens": gens})


def test_radius_too_small_for_a_neighbour():
    agree(program(BRANCHY), {"gens": 5, "r": 0.5})


def test_an_update_lanes_cannot_run_runs_strand_by_strand():
    text = BRANCHY.replace("heat = heat + 0.25 * d;", "heat = heat + 0.25 * d + real(n / (age - 3));")
    p = program(text)
    assert "int tl_lanes(" not in source(p)
    with pytest.raises(TensorLangError):  # age - 3 is 0 in some strand's fourth step: both executors refuse
        p.run({"gens": 7}, backend="c")
    agree(p, {"gens": 3})
