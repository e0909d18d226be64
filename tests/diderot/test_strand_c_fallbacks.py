"""Features the C executor once left to the interpreter (docs/diderot-compiled.md, "What runs in
C, and what falls back"): each now runs in C (no ``executor_note``) and agrees with the
interpreter, on one thread and on two, over generated variants."""

from __future__ import annotations

import pytest
from agreement import agree

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def _prog(text: str):
    return strands(check(parse_program(text)))


COUNT = """#version 2.0
input int n = 3;
input real{{}} xs = {{0.5, -1.0, 2.0}};
strand S ({params}) {{
  output int a = numStrands() * {k} + 100 * numStable();
  output real b = real(numActive()) * 0.5 + {arg};
  update {{ b += real(numStrands()); stabilize; }}
}}
{create}
"""
#: grids of one to three axes (bounds from inputs, negative lows, empty), a collection over a sequence
COUNTS = [("int i", "real(i)", "create_array { S(i) | i in 0..n }"),
          ("int i, int j", "real(i - j)", "create_array { S(i, j) | i in -1..n, j in 2..4 }"),
          ("int i, int j, int k", "real(i * j - k)", "create_collection { S(i, j, k) | i in 0..1, j in -2..n, k in n..n+2 }"),
          ("real x", "x", "create_collection { S(x) | x in xs }"),
          ("int i, real x", "x * real(i)", "create_array { S(i, xs[i % 3]) | i in 5..n+9 }"),
          ("int i", "real(i)", "create_array { S(i) | i in n..1 }")]


@needs_cc
@pytest.mark.parametrize("params, arg, create", COUNTS)
@pytest.mark.parametrize("k", [1, 3])
def test_a_state_initializer_counts_the_strands_made_before_it(params, arg, create, k):
    p = _prog(COUNT.format(params=params, arg=arg, create=create, k=k))
    for n in (3, 0):
        agree(p, {"n": n})


def test_counting_in_the_initializer_of_strands_made_by_new_falls_back():
    text = """#version 2.0
strand S (int i) { output int a = numStrands(); update { if (i < 2) new S(i + 5); stabilize; } }
create_collection { S(i) | i in 0..2 }
"""
    ir, why = strand_plan(_prog(text).checked)
    assert ir is None and "made by new" in why
