"""Print order of programs that are not bulk-synchronous, as the executables of ``diderotc --double --exec
--snapshot`` print it (docs/diderot.md, "Differences"): the global start block, then every start method (and the
stabilize method it triggers) in strand order, then the updates strand by strand; with ``-s N`` the executable runs
each strand only up to the next snapshot, so the updates come in blocks of N steps, strand by strand within a block.
Each expected text is what diderotc's executable printed (lines joined by ``|``), for both executors, through the
Python API (``snapshot=N``, ``on_snapshot``, as ``-s N``), with ``progress`` (one step a C call) and on the command line."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

import tensorlang as tl
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BACKENDS = ["interp", pytest.param("c", marks=[pytest.mark.slow, needs_cc])]

# mode 1: a start method stabilizes (its stabilize method prints); mode 2: one dies (collection) or all but one
# stabilize (grid); the strands take different numbers of steps, one dies in its update (collection)
COLLECTION = """#version 2.0
input int mode = 0;
strand S (int i) {
  output real y = real(i);
  start { print("st ", i, "\\n"); if (mode == 1 && i == 1) stabilize; if (mode == 2 && i == 2) die; }
  update { print("up ", i, " ", y, "\\n"); y += 1.0; if (i == 3 && y > 4.5) die; if (y > real(2 + 2*i)) stabilize; }
  stabilize { print("stab ", i, "\\n"); }
}
start { print("gs\\n"); }
create_collection { S(i) | i in 0..3 }
"""
GRID = """#version 2.0
input int mode = 0;
strand S (int i, int j) {
  int k = i + 2*j;
  output real y = real(i + 2*j);
  start { print("st ", k, "\\n"); if (mode == 1 && k == 1) stabilize; if (mode == 2 && k != 2) stabilize; }
  update { print("up ", k, " ", y, "\\n"); y += 1.0; if (y > real(2 + 2*k)) stabilize; }
  stabilize { print("stab ", k, "\\n"); }
}
start { print("gs\\n"); }
create_array { S(i, j) | i in 0..2, j in 0..1 }
"""
# rev52a's reproducers: the smallest (pr), and a global start block with a reduction, die in the update (t23)
PR = """#version 2.0
strand S (int i) {
  output real y = real(i);
  start { print("st ", i, "\\n"); }
  update { print("up ", i, "\\n"); y += 1.0; if (y > 2.0) stabilize; }
}
create_collection { S(i) | i in 0..1 }
"""
T23 = """#version 2.0
real acc = 0.0;
strand S (int i) {
  output real y = real(i);
  update { print(i, " ", y, "\\n"); y += 1.0; if (i == 1) die; if (y > 2.0) stabilize; }
}
start { acc = sum { s.y | s in S.all }; print("acc ", acc, "\\n"); }
create_collection { S(i) | i in 0..3 }
"""

# diderotc's printed text: (mode, -s N) -> lines
COLLECTION_PRINTED = {
    (0, 0): "gs|st 0|st 1|st 2|st 3|up 0 0|up 0 1|up 0 2|stab 0|up 1 1|up 1 2|up 1 3|up 1 4|stab 1|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 3 3|up 3 4",
    (0, 1): "gs|st 0|st 1|st 2|st 3|up 0 0|up 1 1|up 2 2|up 3 3|up 0 1|up 1 2|up 2 3|up 3 4|up 0 2|stab 0|up 1 3|up 2 4|up 1 4|stab 1|up 2 5|up 2 6|stab 2",
    (0, 2): "gs|st 0|st 1|st 2|st 3|up 0 0|up 0 1|up 1 1|up 1 2|up 2 2|up 2 3|up 3 3|up 3 4|up 0 2|stab 0|up 1 3|up 1 4|stab 1|up 2 4|up 2 5|up 2 6|stab 2",
    (0, 3): "gs|st 0|st 1|st 2|st 3|up 0 0|up 0 1|up 0 2|stab 0|up 1 1|up 1 2|up 1 3|up 2 2|up 2 3|up 2 4|up 3 3|up 3 4|up 1 4|stab 1|up 2 5|up 2 6|stab 2",
    (1, 0): "gs|st 0|st 1|stab 1|st 2|st 3|up 0 0|up 0 1|up 0 2|stab 0|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 3 3|up 3 4",
    (1, 1): "gs|st 0|st 1|stab 1|st 2|st 3|up 0 0|up 2 2|up 3 3|up 0 1|up 2 3|up 3 4|up 0 2|stab 0|up 2 4|up 2 5|up 2 6|stab 2",
    (1, 2): "gs|st 0|st 1|stab 1|st 2|st 3|up 0 0|up 0 1|up 2 2|up 2 3|up 3 3|up 3 4|up 0 2|stab 0|up 2 4|up 2 5|up 2 6|stab 2",
    (1, 3): "gs|st 0|st 1|stab 1|st 2|st 3|up 0 0|up 0 1|up 0 2|stab 0|up 2 2|up 2 3|up 2 4|up 3 3|up 3 4|up 2 5|up 2 6|stab 2",
    (2, 0): "gs|st 0|st 1|st 2|st 3|up 0 0|up 0 1|up 0 2|stab 0|up 1 1|up 1 2|up 1 3|up 1 4|stab 1|up 3 3|up 3 4",
    (2, 1): "gs|st 0|st 1|st 2|st 3|up 0 0|up 1 1|up 3 3|up 0 1|up 1 2|up 3 4|up 0 2|stab 0|up 1 3|up 1 4|stab 1",
    (2, 2): "gs|st 0|st 1|st 2|st 3|up 0 0|up 0 1|up 1 1|up 1 2|up 3 3|up 3 4|up 0 2|stab 0|up 1 3|up 1 4|stab 1",
    (2, 3): "gs|st 0|st 1|st 2|st 3|up 0 0|up 0 1|up 0 2|stab 0|up 1 1|up 1 2|up 1 3|up 3 3|up 3 4|up 1 4|stab 1",
}
GRID_PRINTED = {
    (0, 0): "gs|st 0|st 2|st 1|st 3|st 2|st 4|up 0 0|up 0 1|up 0 2|stab 0|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 1 1|up 1 2|up 1 3|up 1 4|stab 1|up 3 3|up 3 4|up 3 5|up 3 6|up 3 7|up 3 8|stab 3|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 4 4|up 4 5|up 4 6|up 4 7|up 4 8|up 4 9|up 4 10|stab 4",
    (0, 1): "gs|st 0|st 2|st 1|st 3|st 2|st 4|up 0 0|up 2 2|up 1 1|up 3 3|up 2 2|up 4 4|up 0 1|up 2 3|up 1 2|up 3 4|up 2 3|up 4 5|up 0 2|stab 0|up 2 4|up 1 3|up 3 5|up 2 4|up 4 6|up 2 5|up 1 4|stab 1|up 3 6|up 2 5|up 4 7|up 2 6|stab 2|up 3 7|up 2 6|stab 2|up 4 8|up 3 8|stab 3|up 4 9|up 4 10|stab 4",
    (0, 2): "gs|st 0|st 2|st 1|st 3|st 2|st 4|up 0 0|up 0 1|up 2 2|up 2 3|up 1 1|up 1 2|up 3 3|up 3 4|up 2 2|up 2 3|up 4 4|up 4 5|up 0 2|stab 0|up 2 4|up 2 5|up 1 3|up 1 4|stab 1|up 3 5|up 3 6|up 2 4|up 2 5|up 4 6|up 4 7|up 2 6|stab 2|up 3 7|up 3 8|stab 3|up 2 6|stab 2|up 4 8|up 4 9|up 4 10|stab 4",
    (0, 3): "gs|st 0|st 2|st 1|st 3|st 2|st 4|up 0 0|up 0 1|up 0 2|stab 0|up 2 2|up 2 3|up 2 4|up 1 1|up 1 2|up 1 3|up 3 3|up 3 4|up 3 5|up 2 2|up 2 3|up 2 4|up 4 4|up 4 5|up 4 6|up 2 5|up 2 6|stab 2|up 1 4|stab 1|up 3 6|up 3 7|up 3 8|stab 3|up 2 5|up 2 6|stab 2|up 4 7|up 4 8|up 4 9|up 4 10|stab 4",
    (1, 0): "gs|st 0|st 2|st 1|stab 1|st 3|st 2|st 4|up 0 0|up 0 1|up 0 2|stab 0|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 3 3|up 3 4|up 3 5|up 3 6|up 3 7|up 3 8|stab 3|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 4 4|up 4 5|up 4 6|up 4 7|up 4 8|up 4 9|up 4 10|stab 4",
    (1, 1): "gs|st 0|st 2|st 1|stab 1|st 3|st 2|st 4|up 0 0|up 2 2|up 3 3|up 2 2|up 4 4|up 0 1|up 2 3|up 3 4|up 2 3|up 4 5|up 0 2|stab 0|up 2 4|up 3 5|up 2 4|up 4 6|up 2 5|up 3 6|up 2 5|up 4 7|up 2 6|stab 2|up 3 7|up 2 6|stab 2|up 4 8|up 3 8|stab 3|up 4 9|up 4 10|stab 4",
    (1, 2): "gs|st 0|st 2|st 1|stab 1|st 3|st 2|st 4|up 0 0|up 0 1|up 2 2|up 2 3|up 3 3|up 3 4|up 2 2|up 2 3|up 4 4|up 4 5|up 0 2|stab 0|up 2 4|up 2 5|up 3 5|up 3 6|up 2 4|up 2 5|up 4 6|up 4 7|up 2 6|stab 2|up 3 7|up 3 8|stab 3|up 2 6|stab 2|up 4 8|up 4 9|up 4 10|stab 4",
    (1, 3): "gs|st 0|st 2|st 1|stab 1|st 3|st 2|st 4|up 0 0|up 0 1|up 0 2|stab 0|up 2 2|up 2 3|up 2 4|up 3 3|up 3 4|up 3 5|up 2 2|up 2 3|up 2 4|up 4 4|up 4 5|up 4 6|up 2 5|up 2 6|stab 2|up 3 6|up 3 7|up 3 8|stab 3|up 2 5|up 2 6|stab 2|up 4 7|up 4 8|up 4 9|up 4 10|stab 4",
    (2, 0): "gs|st 0|stab 0|st 2|st 1|stab 1|st 3|stab 3|st 2|st 4|stab 4|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2",
    (2, 1): "gs|st 0|stab 0|st 2|st 1|stab 1|st 3|stab 3|st 2|st 4|stab 4|up 2 2|up 2 2|up 2 3|up 2 3|up 2 4|up 2 4|up 2 5|up 2 5|up 2 6|stab 2|up 2 6|stab 2",
    (2, 2): "gs|st 0|stab 0|st 2|st 1|stab 1|st 3|stab 3|st 2|st 4|stab 4|up 2 2|up 2 3|up 2 2|up 2 3|up 2 4|up 2 5|up 2 4|up 2 5|up 2 6|stab 2|up 2 6|stab 2",
    (2, 3): "gs|st 0|stab 0|st 2|st 1|stab 1|st 3|stab 3|st 2|st 4|stab 4|up 2 2|up 2 3|up 2 4|up 2 2|up 2 3|up 2 4|up 2 5|up 2 6|stab 2|up 2 5|up 2 6|stab 2",
}
PR_PRINTED = {0: "st 0|st 1|up 0|up 0|up 0|up 1|up 1", 1: "st 0|st 1|up 0|up 1|up 0|up 1|up 0",
              2: "st 0|st 1|up 0|up 0|up 1|up 1|up 0", 3: "st 0|st 1|up 0|up 0|up 0|up 1|up 1"}
T23_PRINTED = {0: "acc 6|0 0|0 1|0 2|1 1|2 2|3 3", 1: "acc 6|0 0|1 1|2 2|3 3|0 1|0 2",
               2: "acc 6|0 0|0 1|1 1|2 2|3 3|0 2", 3: "acc 6|0 0|0 1|0 2|1 1|2 2|3 3"}
# with a step limit (-l): the last block is cut short
LIMITED = [
    (COLLECTION, {"mode": 0}, 3, 4, "gs|st 0|st 1|st 2|st 3|up 0 0|up 0 1|up 0 2|stab 0|up 1 1|up 1 2|up 1 3|up 2 2|"
                                    "up 2 3|up 2 4|up 3 3|up 3 4|up 1 4|stab 1|up 2 5"),
    (COLLECTION, {"mode": 1}, 0, 2, "gs|st 0|st 1|stab 1|st 2|st 3|up 0 0|up 0 1|up 2 2|up 2 3|up 3 3|up 3 4"),
    (GRID, {"mode": 1}, 2, 3, "gs|st 0|st 2|st 1|stab 1|st 3|st 2|st 4|up 0 0|up 0 1|up 2 2|up 2 3|up 3 3|up 3 4|"
                              "up 2 2|up 2 3|up 4 4|up 4 5|up 0 2|stab 0|up 2 4|up 3 5|up 2 4|up 4 6"),
]


def _lines(text: str) -> str:
    return "".join(line + "\n" for line in text.split("|"))


def _printed(program, values: dict, backend: str, every: int, limit: int = 0, progress=None) -> str:
    snaps: list = []
    got = program.run(values, backend=backend, limit=limit, snapshot=every, progress=progress,
                      on_snapshot=(lambda k, r: snaps.append(r.printed)) if every else None)
    assert program.executor_note is None or backend == "interp", program.executor_note
    assert all(got.printed.startswith(s) for s in snaps)  # each snapshot's text so far: a block boundary
    return got.printed


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("text", "expected"), [(COLLECTION, COLLECTION_PRINTED), (GRID, GRID_PRINTED)],
                         ids=["collection", "grid"])
def test_start_methods_print_first_then_the_updates_in_blocks_of_snapshot_steps(text, expected, backend):
    program = strands(check(parse_program(text)))
    for (mode, every), want in expected.items():
        assert _printed(program, {"mode": mode}, backend, every) == _lines(want), (mode, every)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_reviewers_programs_and_a_step_limit(backend):
    for text, expected in ((PR, PR_PRINTED), (T23, T23_PRINTED)):
        program = strands(check(parse_program(text)))
        for every, want in expected.items():
            assert _printed(program, {}, backend, every) == _lines(want), (text, every)
    for text, values, every, limit, want in LIMITED:
        assert _printed(strands(check(parse_program(text))), values, backend, every, limit) == _lines(want), values


@pytest.mark.parametrize("backend", BACKENDS)
def test_progress_runs_a_step_at_a_time_and_prints_the_same(backend):
    program, seen = strands(check(parse_program(GRID))), []
    for every in (0, 2):
        got = _printed(program, {"mode": 1}, backend, every, progress=lambda step, active: seen.append(step))
        assert got == _lines(GRID_PRINTED[(1, every)]), every
    assert seen[:3] == [1, 2, 3]


@pytest.mark.parametrize("args", [[], ["-s", "1"], ["-s", "3"]])
def test_the_command_line_prints_as_diderotc(args, tmp_path, monkeypatch):
    prog = tmp_path / "col.diderot"
    prog.write_text(COLLECTION)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with redirect_stdout(out):
        assert tl.compile(str(prog), backend="interp").main(["-mode", "2", *args]) == 0
    assert out.getvalue() == _lines(COLLECTION_PRINTED[(2, int(args[1]) if args else 0)])
