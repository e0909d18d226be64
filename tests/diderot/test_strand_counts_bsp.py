"""Strands that count the strands (``numStrands()``, ``numActive()``, ``numStable()`` in a strand method or a
function they call) make diderotc run the program in super-steps (its NeedsBSP property; counts in the global
blocks, in the creation or in functions no strand calls do not), so its prints come step by step
and, with ``die``, its strands are kept in the permuted order: each test holds what diderotc's executable
(``--double``) printed and wrote (stored here as text), on the interpreter and on the C executor
(docs/diderot.md, "What remains different")."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
#: the interpreter, and the automatic choice (C where it compiles the program)
BOTH = ["interp", pytest.param(None, marks=[pytest.mark.slow, needs_cc], id="auto")]

DIES = """#version 2.0
strand S (int i) {
  output int c = 0;
  int age = 0;
  update { age += 1; c = numStrands()*100 + numActive()*10 + numStable(); print(i," ",age," ",c,"\\n");
     if (i <= age) stabilize; if (i == 2*age+1) die; }
}
create_collection { S(i) | i in 0..6 }
"""
COUNTS = """#version 2.0
strand S (int i) {
  output int c = 0;
  int age = 0;
  update { age += 1; c = numActive()*10 + numStable(); print(i," ",age," ",c,"\\n");
     if (i <= age) stabilize; }
}
create_collection { S(i) | i in 0..3 }
"""
THROUGH_A_FUNCTION = """#version 2.0
function int f() { return numStable(); }
strand S (int i) {
  output int c = 0;
  int age = 0;
  update { age += 1; c = f(); print(i," ",age," ",c,"\\n");
     if (i <= age) stabilize; }
}
create_array { S(i) | i in 0..3 }
"""
OUTSIDE_DIES = """#version 2.0
int gen = 0;
strand S (int i) {
  output int c = i;
  int t = 0;
  update { t += 1; if (i == 1) die; if (t > 2) stabilize; }
}
start { gen = numStrands(); }
create_collection { S(i) | i in 0..4 }
"""
OUTSIDE_PRINTS = """#version 2.0
int gen = 0;
function int unused() { return numActive(); }
strand S (int i) {
  output int c = i;
  int t = 0;
  update { print(i, " ", t, "\\n"); t += 1; if (t > 1) stabilize; }
}
start { gen = numStrands(); }
create_collection { S(i + numStrands() - 3) | i in 0..2 }
"""
DIDEROTC = {  # program: (printed lines, the output c)
    "dies": ("0 1 770|1 1 770|2 1 770|3 1 770|6 1 770|4 1 770|5 1 770|2 2 642|6 2 642|4 2 642|5 2 642|"
             "6 3 523|4 3 523|6 4 523|4 4 523|6 5 514|6 6 514", [770, 770, 642, 523, 514]),
    "counts": ("0 1 40|1 1 31|2 1 22|3 1 22|2 2 22|3 2 13|3 3 13", [40, 31, 22, 13]),
    "function": ("0 1 0|1 1 1|2 1 2|3 1 2|2 2 2|3 2 3|3 3 3", [0, 1, 2, 3]),
    "outside_dies": ("", [0, 2, 3, 4]),  # (counts outside the strands: not bulk-synchronous, creation order)
    "outside_prints": ("0 0|0 1|1 0|1 1|2 0|2 1", [0, 1, 2]),  # (strand by strand)
}


@pytest.mark.parametrize("backend", BOTH)
@pytest.mark.parametrize("name, text", [("dies", DIES), ("counts", COUNTS), ("function", THROUGH_A_FUNCTION),
                                        ("outside_dies", OUTSIDE_DIES), ("outside_prints", OUTSIDE_PRINTS)])
def test_counting_strands_run_in_super_steps_as_diderotc(name, text, backend):
    """The prints came strand by strand (``2 1``, ``2 2``, then ``3 1``), and with ``die`` the strands kept their
    creation order and counted the statuses so far (``1 1 761``): diderotc's are above."""
    res = strands(check(parse_program(text))).run({}, backend=backend)
    printed, c = DIDEROTC[name]
    assert res.printed.strip() == printed.replace("|", "\n")
    assert np.asarray(res.outputs["c"]).ravel().tolist() == c
