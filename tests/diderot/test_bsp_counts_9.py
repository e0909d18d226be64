"""Counts of the strands that make diderotc run a program in super-steps (its NeedsBSP property), as its executables
(``diderotc --double --exec --snapshot``, run with ``-s 1``) wrote and printed them, on both executors: a count in a
state initializer (read through the creation's hidden count parameters) takes the first super-step even when the
start methods leave no strand active (docs/diderot.md, "Strand order and the first step")."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BACKENDS = ["interp", pytest.param("c", marks=[pytest.mark.slow, needs_cc])]

STATE_COUNT = """#version 2.0
strand S (int i) {
  output real y = real(i);
  output int k = numStrands();
  start { stabilize; }
  update { y += 1.0; }
}
create_array { S(i) | i in 0..2 }
"""
STATE_COUNT_PRINTS = """#version 2.0
strand S (int i) {
  output real y = real(i);
  int k = numStrands();
  int t = 0;
  update { print(i, " ", t, " ", k, "\\n"); t += 1; if (i == 0) die; if (t > 1) stabilize; }
}
create_collection { S(i) | i in 0..3 }
"""
#: program: (steps, the snapshots' y, printed) as diderotc's executable gave them with -s 1
DIDEROTC = {
    "state_count": (1, [[0, 1, 2], [0, 1, 2]], ""),
    "state_count_prints": (2, [[0, 1, 2, 3], [3, 1, 2], [3, 1, 2]], "0 0 4|3 0 4|1 0 4|2 0 4|3 1 4|1 1 4|2 1 4"),
}


def _run(text: str, backend: str, **kw):
    p = strands(check(parse_program(text)))
    snaps: list = []
    got = p.run({}, backend=backend, on_snapshot=lambda k, r: snaps.append(np.asarray(r.outputs["y"]).tolist()), **kw)
    assert p.executor_note is None or backend == "interp", p.executor_note
    return got, snaps


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, text", [("state_count", STATE_COUNT), ("state_count_prints", STATE_COUNT_PRINTS)])
def test_a_count_in_a_state_initializer_runs_the_program_in_super_steps(name, text, backend):
    steps, snaps, printed = DIDEROTC[name]
    got, seen = _run(text, backend, snapshot=1)
    assert (got.steps, seen, got.printed.strip()) == (steps, snaps, printed.replace("|", "\n"))
    assert np.asarray(got.outputs["y"]).tolist() == snaps[-1]
