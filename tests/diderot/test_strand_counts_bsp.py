"""Strands that count the strands (``numStrands()``, ``numActive()``, ``numStable()`` in a strand method or a
function) make diderotc run the program in super-steps (its NeedsBSP property), so its prints come step by step
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
#: the interpreter, and the automatic choice (C where it compiles the program: not a count inside a function)
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
DIDEROTC = {  # program: (printed lines, the output c)
    "dies": ("0 1 770|1 1 770|2 1 770|3 1 770|6 1 770|4 1 770|5 1 770|2 2 642|6 2 642|4 2 642|5 2 642|"
             "6 3 523|4 3 523|6 4 523|4 4 523|6 5 514|6 6 514", [770, 770, 642, 523, 514]),
    "counts": ("0 1 40|1 1 31|2 1 22|3 1 22|2 2 22|3 2 13|3 3 13", [40, 31, 22, 13]),
    "function": ("0 1 0|1 1 1|2 1 2|3 1 2|2 2 2|3 2 3|3 3 3", [0, 1, 2, 3]),
}


@pytest.mark.parametrize("backend", BOTH)
@pytest.mark.parametrize("name, text", [("dies", DIES), ("counts", COUNTS), ("function", THROUGH_A_FUNCTION)])
def test_counting_strands_run_in_super_steps_as_diderotc(name, text, backend):
    """The prints came strand by strand (``2 1``, ``2 2``, then ``3 1``), and with ``die`` the strands kept their
    creation order and counted the statuses so far (``1 1 761``): diderotc's are above."""
    res = strands(check(parse_program(text))).run({}, backend=backend)
    printed, c = DIDEROTC[name]
    assert res.printed.strip().split("\n") == printed.split("|")
    assert np.asarray(res.outputs["c"]).ravel().tolist() == c
