"""The lattice check and the kept patterns a row at a time (``tl_lattice``, ``tl_keep_site``,
targets/c/strands.py): rows wider than the check's 8 lanes and not a multiple of them; a
lattice, one position moved inside a row's lanes (then no lattice: the spatial grid), one
moved by less than the check's tolerance (a lattice with a deviation), one not finite; strands
stabilizing mid-row (their patterns not kept).  The interpreter's results at 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

pytestmark = [pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler"),
              pytest.mark.slow]

ROWS = """#version 1.0
input int gens = 3;
input real r = 1.5;
strand cell(int x, int y) {
   vec2 pos = POS;
   int age = 0;
   output int alive = 1 if (x * 7 + y * 3) % 5 < 2 else 0;
   update {
      if (age >= gens || (x == 11 && y == 3 && age == 1)) { stabilize; }
      int n = sum { q.alive | q in sphere(r) };
      alive = 1 if n == 3 else alive if n == 2 else 0;
      age += 1;
   }
}
initially [ cell(x, y) | y in 0..7, x in 0..18 ];
"""


@pytest.mark.parametrize("pos", [
    "[0.5 * real(x), 0.5 * real(y)]",
    "[real(x) + (0.25 if x == 10 && y == 4 else 0.0), real(y)]",
    "[real(x) + (1e-9 if x == 12 && y == 2 else 0.0), real(y)]",
    "[real(x) + (sqrt(-1.0) if x == 9 && y == 2 else 0.0), real(y)]",
])
def test_rows_of_a_lattice_give_the_interpreters_results(pos):
    p = program(ROWS.replace("POS", pos))
    scale = 0.5 if pos.startswith("[0.5") else 1.0
    for r in (1.0 * scale, 1.5 * scale, 2.5 * scale):
        a = p.run({"r": r}, backend="interp")
        for threads in (1, 2):
            b = p.run({"r": r}, backend="c", threads=threads)
            assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable)
            assert np.array_equal(a.outputs["alive"], b.outputs["alive"]), (r, threads)


def program(text: str):
    return strands(check(parse_program(text)))
