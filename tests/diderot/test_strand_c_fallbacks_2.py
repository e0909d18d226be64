"""More features the C executor once left to the interpreter (docs/diderot-compiled.md, "What
runs in C, and what falls back"): each runs in C (no ``executor_note``) and agrees with the
interpreter, on one thread and on two, over generated variants."""

from __future__ import annotations

import pytest
from agreement import agree

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
slow_c = [pytest.mark.slow, needs_cc]


def _prog(text: str):
    return strands(check(parse_program(text)))


# ------------------------------------------------ sphere queries nested to any depth
DEEP = """#version 2.0
input real r = 1.6;
strand S (int i) {{
  vec2 pos = [real(i % 4) + 0.1 * real(i / 4), real(i / 4)];
  output real c = 0.0;
  output int k = 0;
  int t = 0;
  update {{
    foreach (S a in sphere(r)) {{
      foreach (S b in sphere(a.pos, 1.1)) {{
        {deep}
      }}
    }}
    {move}
    t += 1;
    if (t > 2) stabilize;
  }}
}}
{glob}
create_collection {{ S(i) | i in 0..11 }}
"""
#: the body at depth three (and four): the neighbours of every level read, folds, a centre, a sequence, a counter
DEEP_BODIES = [
    "c += sum { |q.pos - a.pos| + b.c * 0.5 - q.c * 0.25 | q in sphere(b.pos, 1.3) };",
    "foreach (S d in sphere(1.05)) { c += 0.01 * (a.c - d.c + b.c); k += 1; }",
    "foreach (S d in sphere(1.05)) { k += sum { 1 | e in sphere(d.pos, 1.05) } + a.k - b.k; c += real(d.k) * 0.5; }",
    "real[] ds = {}; foreach (S d in sphere(a.pos, 1.2)) { ds = ds @ (d.c - b.c); k += 1; } c += sum { x | x in ds } * 0.001;",
]


MOVING = ("pos = pos + [0.01 * real(k), -0.002 * c];", 'update { print(sum { s.c | s in S.all }, " ", numActive(), "\\n"); }')


@pytest.mark.parametrize("deep, move, glob", [(d, *(MOVING if k % 2 else ("", ""))) for k, d in enumerate(DEEP_BODIES)])
@pytest.mark.slow
@needs_cc
def test_a_sphere_query_three_or_four_deep_runs_in_c(deep, move, glob):
    """The neighbour at depth d is IR space "n" * d, C's j, j1, j2, ...; each outer level's
    neighbours are copied into the arena before its loop (the search inside refills the buffer)."""
    p = _prog(DEEP.format(deep=deep, move=move, glob=glob))
    assert strand_plan(p.checked)[1] is None
    for r in (1.6, 0.5):
        agree(p, {"r": r}, rtol=1e-12)


COUNTER = """#version 2.0
strand S (int i) {
  real pos = 0.1 * real(i);
  output real c = 0.0;
  output int k = 0;
  update {
    int m = 0;
    foreach (int t in 0..29) { foreach (int u in 0..49) { foreach (S p in sphere(1.1)) { c += sum { 1.0 | q in sphere(1.5) }; k += 1; m = m + 1; } } }
    k += m; stabilize;
  }
}
create_collection { S(i) | i in 0..3 }
"""


@pytest.mark.slow
@needs_cc
def test_a_nested_query_whose_body_counts_gives_its_cells_back(monkeypatch):
    """A body that sets an int local from before it (``m = m + 1``, a counter, no sequence's cell)
    kept the outer query's neighbours in the arena until the method ended: 1,500 passes took more
    than a thread's share (error[too-large])."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2 ** 16))  # 2^12 cells a thread
    a, _ = agree(_prog(COUNTER))
    assert a.outputs["c"].tolist() == [13500.0] * 4 and a.outputs["k"].tolist() == [9000] * 4


# ------------------------------------------------ counts in the state initializer of strands made by new
BORN = """#version 2.0
input int n = 4;
strand S (int i) {{
  output int a = numStrands() * 1000 + numActive() * 10 + numStable() + i;
  output real b = real(numStable()) * 0.5 - real(numActive());
  int t = 0;
  update {{
    t += 1;
    {update}
  }}
  {stab}
}}
{glob}
create_collection {{ S(i) | i in 0..n }}
"""
#: births before and after stabilize and die, in a loop, twice from one strand, beside a global block that counts
BORNS = [
    ("if (i % 3 == 0 && t < 3) new S(i + 10 * t); if (i % 2 == 1) stabilize; if (t > 3) stabilize; if (i == 2 && t == 2) die;", "", ""),
    ("if (i % 2 == 0) stabilize; if (t == 2 && i < 30) { new S(i + 30); new S(i + 60); } if (t > 2) die;", "", ""),
    ("foreach (int k in 1..t) { if (i + k < 25) new S(i * 3 + k + 20); } if (t >= 2 || i % 4 == 1) stabilize;",
     "stabilize { b = b + real(numStable()); }", ""),
    ("if (i % 3 == 1) die; if (t < 3 && i < 40) new S(i + 13); if (t > 2) stabilize;", "",
     'update { print(numStrands(), " ", numActive(), " ", numStable(), "\\n"); }'),
]


@pytest.mark.parametrize("update, stab, glob", BORNS)
@pytest.mark.slow
@needs_cc
def test_a_new_strands_initializer_counts_the_strands_when_new_runs(update, stab, glob):
    """C initialises a new strand after the update loop: its counts are hidden parameters that
    ``new`` sets (the strands update one at a time, in order), the initial strands' the grid's."""
    p = _prog(BORN.format(update=update, stab=stab, glob=glob))
    assert strand_plan(p.checked)[1] is None
    for n in (4, 9, 0):
        agree(p, {"n": n})
