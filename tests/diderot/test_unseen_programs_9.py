"""An eighth round of programs and inputs (``more/unseen9/``, ``unseen9_inputs.py``): snapshots (``-s N``) of grids
and of collections that are born (``new``), die and stabilize, with start methods, global start and update blocks and
sequences of any length as outputs, cut by ``-l``, with ``-s`` past the run's end and on runs of no step; the parallel
executables (``diderotc --target=parallel``, run with ``-n 2``); ``#version 1.0`` programs (``initially``, 1.0 kernels,
``real{3}`` and ``real{}``, a ``global`` block) and programs adapted from the public examples (heron, vimg, circle).
Each run must print and write what diderotc's executable did (``more/unseen9/diderotc.json``), on the interpreter and
on the C executor: the same exit status, the same text (numbers within 1e-9), the same files, every snapshot
(``agreement.same_files``)."""

from __future__ import annotations

import pytest

from agreement import round_tests  # tests/diderot is on the path: the folder is not a package
from tensorlang.targets.c import build as c_build
import unseen9_inputs
from unseen9_inputs import RUNS

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
#: runs where tensorlang differs from diderotc's executable on purpose (docs/diderot.md): run -> why
DIFFERENT: dict[str, str] = {
    **dict.fromkeys(["y01_n2", "y01_n2l"], "diderotc's parallel executable: a grid strand that stabilizes in its start method "
                    "stays counted active and the run never ends (stopped by -l, its counts are off by one)"),
    "y03_l3": "-l stops a collection with sequence outputs, some strands stable: diderotc's executable aborts (free(): "
              "invalid next size) writing the outputs; tensorlang writes the stable strands'",
    "y05_l1": "a grid stopped by -l with no strand stable: tensorlang writes the outputs as they stand",
    "y07_s2": "diderotc's executables contract a*b-c into fma (g++ -march=native): a Newton step of 1e-7 differs by 1e-8",
    **dict.fromkeys(["y09_0", "y09_s1", "y09_n2"], "sphere() in a super-step in which strands stabilize: diderotc's "
                    "later strands see the new state of those that stabilized before them"),
    "y13_0": "no -l: Diderot's executables run until every strand is done, tensorlang stops at 10000 super-steps",
}
_run, test_every_run_has_its_stored_outputs, test_the_interpreter_prints_and_writes_what_diderotc_does, \
    test_the_c_executor_prints_and_writes_what_diderotc_does = round_tests(unseen9_inputs, DIFFERENT)


_THREADED = [r for r in RUNS if "-n" in r[2] and r[0] not in DIFFERENT]


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("threads", ["3"])
@pytest.mark.parametrize("run", _THREADED, ids=[r[0] for r in _THREADED])
def test_the_c_executor_gives_the_parallel_executables_result_at_any_thread_count(run, threads, tmp_path, monkeypatch):
    """Diderot's parallel executables (``-n 2``) gave what its sequential ones give on every bulk-synchronous
    program here (docs/diderot.md); the C executor gives that at three threads too (and at one: the sequential runs above)."""
    name, prog, argv = run
    argv = [threads if i and argv[i - 1] == "-n" else a for i, a in enumerate(argv)]
    _run((name, prog, argv), "c", tmp_path, monkeypatch)


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=[needs_cc, pytest.mark.slow])])
def test_vectors_of_a_sequence_read_from_a_float_file_are_doubles(backend, tmp_path, monkeypatch):
    """``input vec2[] pts = load_sequence("pts.nrrd")`` of a float file (circle's ``vec2.nrrd``): the interpreter
    kept each vector's float32 samples as float32 arrays, so ``p0 / |p0|`` was computed in single precision
    (circle's and sphere's first snapshot 7e-8 off); reals, ints and the C executor were right."""
    _run(next(r for r in RUNS if r[0] == "y15_0"), backend, tmp_path, monkeypatch)


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=[needs_cc, pytest.mark.slow])])
def test_the_print_file_is_written_though_nothing_was_printed(backend, tmp_path, monkeypatch):
    """``-print out.txt`` on a program that prints nothing: Diderot's executables open the file at the start, so an
    empty ``out.txt`` is there after the run; tensorlang wrote the file only when something was printed."""
    _run(next(r for r in RUNS if r[0] == "y04_pr"), backend, tmp_path, monkeypatch)
    assert (tmp_path / "out.txt").read_text() == ""
