"""The runs of statements that may share a batch loop (schedule/fusion.py ``_candidates``)
are decided per added statement from what the run keeps: the same runs as checking
``_joins`` (the legality rule as stated, kept here as the oracle) of the whole longer run
each time (issue 41: that was quadratic in a run's length), on random programs of
batched statements."""

from __future__ import annotations

import importlib
import random

from tensorlang.ein import ir

fusion = importlib.import_module("tensorlang.schedule.fusion")


def _joins(group: list[ir.Statement], extent: int) -> bool:
    """Whether ``group`` (each statement's batch index first) may run in one loop over
    the batch: every variable written in it is read only at the reading statement's batch index."""
    written = {s.target for s in group}
    return all(s.index[0][1] == extent and not fusion._misread(s) & written for s in group)


def _reference(program: ir.Program):
    """The runs as written before: ``_joins`` of the whole run for every statement added."""
    runs, current, start, extent = [], [], 0, 0
    for n, stmt in enumerate(program.statements):
        found = fusion._batch(stmt)
        if current and found is not None and found[1] == extent and len(current) < fusion.MAX_FUSED_STATEMENTS \
                and _joins(current + [stmt], extent):
            current.append(stmt)
            continue
        if len(current) >= 2:
            runs.append((start, current))
        current, start = ([stmt], n) if found is not None and _joins([stmt], found[1]) else ([], n)
        extent = found[1] if found is not None else 0
    if len(current) >= 2:
        runs.append((start, current))
    return runs


def _random_program(rng: random.Random, statements: int) -> ir.Program:
    names = [f"t{k}" for k in range(6)] + ["x"]
    stmts = []
    for _ in range(statements):
        target = rng.choice(names[:-1])
        batch = rng.choice([4, 4, 4, 3, 1])
        reads = []
        for _ in range(rng.randint(1, 3)):
            first = rng.choice(["e", "e", "e", "j", 1])  # at the batch index, another one, a position
            reads.append(ir.Tensor(rng.choice(names), (first, "j")))
        body = reads[0]
        for r in reads[1:]:
            body = ir.BinOp("+", body, r)
        stmts.append(ir.Statement(target, (("e", batch), ("j", 3)), body))
    return ir.Program((), tuple(stmts))


def test_runs_checked_per_added_statement_are_the_runs_checked_whole():
    rng = random.Random(41)
    fused = 0
    for _ in range(300):
        program = _random_program(rng, rng.randint(1, 40))
        got = fusion._candidates(program)
        assert got == _reference(program)
        fused += sum(len(run) for _, run in got)
    assert fused > 300  # the programs do make runs


def test_a_run_stops_at_the_statement_whose_target_an_earlier_one_read_off_the_batch_index():
    a = ir.Statement("a", (("e", 4), ("j", 3)), ir.Tensor("x", ("e", "j")))
    b = ir.Statement("b", (("e", 4), ("j", 3)), ir.Tensor("c", (1, "j")))  # reads c off the batch index
    c = ir.Statement("c", (("e", 4), ("j", 3)), ir.Tensor("a", ("e", "j")))
    runs = fusion._candidates(ir.Program((), (a, b, c)))
    assert [[s.target for s in run] for _, run in runs] == [["a", "b"]]
