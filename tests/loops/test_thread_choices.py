"""The thread choices are the loops stage's (loops/parallel.py), shown by ``--emit loops``
and printed as C as they are: a parallel loop's OpenMP schedule (``share``: ``static``
for a loop with reductions, its rounding the same from run to run, ``guided`` for the
others), a Gram step's team (``gram_team``, in ``LoopProgram.teams``) and the points
from which a probe step runs on threads (``probe_points``, in ``LoopProgram.probes``)."""

from __future__ import annotations

from dataclasses import replace

import tensorlang as tl
from tensorlang.loops import loop_program
from tensorlang.loops.ir import Loop, walk
from tensorlang.fields.cprobe import sample_program
from tensorlang.loops.parallel import SCHEDULE, Threshold
from tensorlang.loops.printer import to_text
from tensorlang.passes import optimize
from tensorlang.schedule.plan import plan
from tensorlang.schedule.steps import GramStep, ProbeStep
from tensorlang.targets.c.codegen import print_c

ROWS = "in var X : [64 64]\nout var y : [64]\ny[i] = sum(j) X[i,j] * X[i,j]\n"
TOTAL = "in var X : [64 64]\nout var s : []\ns = sum(i,j) X[i,j] * X[i,j]\n"


def _stages(text: str):
    schedule = plan(optimize(tl.compile(text, backend="interp").ein).program, "float64", blas=False)
    return schedule, loop_program(schedule, parallel_work=1)  # threads forced


def _parallel(loops) -> list[Loop]:
    return [node for nest in loops.nests for node in walk(nest.body) if isinstance(node, Loop) and node.parallel]


def _each_parallel_loop(loops, **changes):
    """``loops`` with ``changes`` made to every parallel loop."""
    def change(node):
        if not isinstance(node, Loop):
            return node
        return replace(node, body=tuple(change(n) for n in node.body), **(changes if node.parallel else {}))

    return replace(loops, nests=tuple(replace(n, body=tuple(change(b) for b in n.body)) for n in loops.nests))


def test_the_loops_stage_sets_the_schedule_and_prints_it():
    for text, kind in ((ROWS, SCHEDULE), (TOTAL, "static")):
        schedule, loops = _stages(text)
        (loop,) = _parallel(loops)
        assert loop.omp_schedule == kind and bool(loop.reductions) == (kind == "static")
        assert f"  # {kind}" in to_text(loops, schedule)
        assert f"schedule({kind})" in print_c(schedule, loops).source


def test_the_c_printer_follows_the_loop():
    schedule, loops = _stages(ROWS)
    changed = _each_parallel_loop(loops, omp_schedule="dynamic")
    source = print_c(schedule, changed).source
    assert "schedule(dynamic)" in source and f"schedule({SCHEDULE})" not in source


XTX = "in var X : [4096 32]\nout var S : [32 32]\nS[i,j] = sum(r) X[r,i] * X[r,j]\n"


def test_the_loops_stage_sets_the_gram_steps_team_and_the_c_follows_it(monkeypatch):
    monkeypatch.setattr(GramStep, "why_not", lambda self, vector_bytes: None)  # the Gram step at any size
    schedule = plan(optimize(tl.compile(XTX, backend="interp").ein).program, "float64", gram=64, from_c=True)
    assert isinstance(schedule.steps[0], GramStep)
    for work, team, shown in ((1 << 62, -1, "one thread"), (1, 0, "no cap"), (4096 * 32 * 33 // 2, 2, "at most 2 threads")):
        loops = loop_program(schedule, parallel_work=work)
        assert loops.teams == ((0, team),)
        assert f"  # TEAM {team}: {shown}" in to_text(loops, schedule)
        assert f"#define TEAM {team}\n" in print_c(schedule, loops).source
    assert loop_program(schedule, parallel_work=1, skip=("parallel",)).teams == ()  # skipped: one thread
    source = print_c(schedule, replace(loops, teams=((0, 3),))).source
    assert "#define TEAM 3\n" in source and "#define TEAM 2\n" not in source


def test_the_loops_stage_sets_the_probe_steps_threads_and_the_c_follows_it():
    """A probe of 4^3 taps a point on threads from the least points whose taps reach the
    compute threshold (of a Threshold, not its streaming figure); skipped: one thread."""
    schedule = plan(sample_program(3, (), (20, 20, 20), "bspln3", 1, 1000), "float64")
    assert isinstance(schedule.steps[0], ProbeStep)
    for work, points in ((64, 1), (6400, 100), (Threshold(6401, 1), 101)):
        loops = loop_program(schedule, parallel_work=work)
        assert loops.probes == ((0, points),)
        assert f"  # on threads from {points} points" in to_text(loops, schedule)
        assert f"n >= {points})" in print_c(schedule, loops).source
    skipped = loop_program(schedule, parallel_work=1, skip=("parallel",))
    assert skipped.probes == () and f"n >= {1 << 62})" in print_c(schedule, skipped).source


def test_the_source_head_is_what_the_printed_loops_use():
    """print_c takes the team chooser (csrc/tl_threads.h) only where the printer printed a
    loop that asks it (CPrinter.uses), not by searching the text."""
    schedule, loops = _stages(ROWS)
    assert [loop.team for loop in _parallel(loops)] == [0], "threads forced: no measured team"
    chosen = _each_parallel_loop(loops, team=2)
    assert "static inline int tl_team(" not in print_c(schedule, loops).source
    assert "static inline int tl_team(" in print_c(schedule, chosen).source
