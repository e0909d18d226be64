"""The C executor's selects (``a if c else b``): where both arms are a few loads and
arithmetic, both are evaluated and the select takes no branch (``tl_seli``/``tl_selr``);
an arm that may set the error flag (an int division, a sequence index) or calls a function
is still evaluated only when chosen.  Results equal the interpreter's, ⊥ and ±inf included."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as C

pytestmark = [pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler"),
              pytest.mark.slow]  # builds C programs (seconds)

SELECTS = """#version 1.0
input real big = 1e308;
strand s(int i) {
   int d = i % 4 - 1;
   real x = real(i) - 5.0;
   output int a = 0;
   output int b = 0;
   output real c = 0;
   output real e = 0;
   update {
      a = 1 if i % 3 == 0 else 2 if i % 3 == 1 else d * 7;
      b = 100 / d if d != 0 else -1;
      c = (x * big * 10.0) if x > 0.0 else (-1.0 / 0.0 if x < -3.0 else x / 0.0);
      e = sqrt(x) if x >= 0.0 else x;
      stabilize;
   }
}
initially [ s(i) | i in 0..23 ];
"""


def test_selects_agree_with_the_interpreter_and_divide_only_when_chosen():
    p = strands(check(parse_program(SELECTS)))
    ir, why = strand_plan(p.checked)
    assert why is None
    src = C.render(ir)
    assert "tl_seli(" in src and "tl_selr(" in src  # the eager selects are used here
    assert "tl_idiv" in src and "? tl_idiv(" in src  # the division's arm stays behind its test
    a = p.run({}, backend="interp")
    for threads in (1, 2):
        b = p.run({}, backend="c", threads=threads)
        for name in a.outputs:
            assert np.array_equal(a.outputs[name], b.outputs[name], equal_nan=True), name
    assert np.isinf(b.outputs["c"]).any() and np.isnan(b.outputs["c"]).any()
