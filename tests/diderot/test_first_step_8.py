"""The first super-step and snapshot 0, as the executables of ``diderotc --double --exec --snapshot`` run them
(docs/diderot.md, "Strand order and the first step"): start methods that leave no strand active take a step of
their own only in a bulk-synchronous program (a global update, ``new``, queries or counts of the strands); snapshot 0 holds the strands
as they were made, before the global start block and the start methods.  Each expected value is what
diderotc's executable wrote and said (``-v``: "done: N steps")."""

from __future__ import annotations

import numpy as np
import pytest
from agreement import printed_close  # tests/diderot is on the path

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BACKENDS = ["interp", pytest.param("c", marks=[pytest.mark.slow, needs_cc])]

GRID = """#version 2.0
input int mode = 1;
strand S (int i, int j) {
  output real y = real(i + 2 * j);
  start { if (mode == 1) stabilize; }
  update { print(i, " ", j, "\\n"); y += 1.0; if (y > 4.0) stabilize; }
}
create_array { S(i, j) | i in 0..2, j in 0..1 }
"""
COLLECTION = """#version 2.0
input int mode = 1;
strand S (int i) {
  output real y = real(i);
  start { if (mode == 1) stabilize; if (mode == 2 && i == 0) die; if (mode == 2) stabilize; }
  update { y += 1.0; if (y > 4.0) stabilize; }
}
create_collection { S(i) | i in 0..3 }
"""
SOLO = """#version 2.0
input int k = 0;
strand S (int i, int j) {
  output real y = real(i + j);
  start { if (k == 0) stabilize; y = 7.0; }
  update { y += 1.0; if (y > 10.0) stabilize; }
}
create_array { S(i, j) | i in 0..2, j in 0..1 }
"""
GLOBAL = """#version 2.0
int gen = 0;
strand S (int i) {
  output real y = real(i);
  start { y = 5.0; }
  update { y += 1.0; if (gen >= 0) stabilize; }
}
update { gen += 1; print("g ", gen, " ", numActive(), " ", numStable(), "\\n"); }
create_collection { S(i) | i in 0..2 }
"""
COUNTS = """#version 2.0
strand S (int i) {
  output real y = real(i);
  output int k = 0;
  start { stabilize; }
  update { k = numActive(); y += 1.0; }
}
create_array { S(i) | i in 0..2 }
"""
GLOBAL_START = """#version 2.0
input int mode = 1;
int gen = 0;
real acc = 0.0;
strand S (int i) {
  output real y = real(i);
  start { y = y + real(gen); if (mode == 1) stabilize; }
  update { y += 1.0; if (y > 14.0) stabilize; }
}
start { gen = 10; acc = sum { s.y | s in S.all }; print("gs ", acc, " ", numActive(), "\\n"); }
update { gen += 1; print("g ", gen, " ", numActive(), " ", sum { s.y | s in S.all }, "\\n"); }
create_collection { S(i) | i in 0..3 }
"""


def _run(text: str, values: dict, backend: str):
    p = strands(check(parse_program(text)))
    snaps: list = []
    got = p.run(values, backend=backend, snapshot=1, on_snapshot=lambda k, r: snaps.append((k, r)))
    assert p.executor_note is None or backend == "interp", p.executor_note
    return got, snaps


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("text", "values", "steps"), [
    (GRID, {}, 0), (COLLECTION, {}, 0), (SOLO, {}, 0), (SOLO, {"k": 1}, 4), (GLOBAL, {}, 1), (COUNTS, {}, 1)],
    ids=["grid", "collection", "solo", "solo_active", "global_update", "counts"])  # (counts: diderotc's NeedsBSP)
def test_start_methods_leaving_none_active_take_a_step_only_in_a_bulk_synchronous_program(text, values, steps, backend):
    got, snaps = _run(text, values, backend)
    assert got.steps == steps
    assert [k for k, _ in snaps] == list(range(steps + 1))  # y-0000 .. y-000N, as diderotc's executable writes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("text", "values", "first", "last", "printed"), [
    (GLOBAL, {}, [0, 1, 2], [6, 6, 6], "g 1 0 3\n"),
    (COLLECTION, {"mode": 2}, [0, 1, 2, 3], [1, 2, 3], ""),  # the strand that dies in its start method: there
    (SOLO, {"k": 1}, [[0, 1], [1, 2], [2, 3]], [[11, 11]] * 3, ""),
    (GLOBAL_START, {}, [0, 1, 2, 3], [10, 11, 12, 13], "gs 6 4\ng 11 0 46\n")],
    ids=["global_update", "die_in_start", "solo", "global_start"])
def test_snapshot_0_holds_the_strands_before_the_start_blocks(text, values, first, last, printed, backend):
    got, snaps = _run(text, values, backend)
    assert snaps[0][0] == 0 and np.array_equal(snaps[0][1].outputs["y"], first)
    assert np.array_equal(got.outputs["y"], last) and (len(snaps) == 1 or np.array_equal(snaps[-1][1].outputs["y"], last))
    assert got.printed == printed


def test_printed_zeros_keep_their_signs():
    """agreement.printed_close, which the stored runs' checks use, reads "-0" and "0" as different numbers."""
    printed_close("a 0 -0.0 1e-300\n", "a 0 -0.0 1.0000000001e-300\n")
    for a, b in [("x -0\n", "x 0\n"), ("0 0", "0 -0.0"), ("-0 1", "0 1")]:
        with pytest.raises(AssertionError, match="zero's sign"):
            printed_close(a, b)
