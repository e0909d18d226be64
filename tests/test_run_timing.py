"""``tensorlang run`` reports wall and CPU time in adaptive units and says when the
machine was busy (docs/cli.md, "Timings").  No assertion on how long anything took:
only on how times are written and when the note appears."""

import json
import re

import pytest

from tensorlang import cli
from tensorlang.cli import Timing, duration, main

PROG = "in var A : [3 3]\nout var C : [3 3]\nC = A # A . [2 3]\n"


@pytest.mark.parametrize("seconds, shown", [
    (2.86e-5, "28.6 µs"), (3.18e-4, "318 µs"), (9.994e-4, "999 µs"), (1e-3, "1 ms"), (0.0546, "54.6 ms"),
    (0.5, "500 ms"), (3.48, "3.48 s"), (125.4, "125 s"), (3480.0, "3480 s"), (0.0, "0 µs")])
def test_durations_read_in_their_own_unit(seconds, shown):
    assert duration(seconds) == shown
    assert "e+" not in duration(seconds) and "e-" not in duration(seconds)


def test_the_busy_note(monkeypatch):
    monkeypatch.setattr(cli, "usable_cpus", lambda: 2)
    monkeypatch.setattr(cli, "_load", lambda: 0.5)
    calm = [Timing(1e-3, 0.95e-3)] * 5
    assert cli._busy(calm[0], calm) is None
    waited = [Timing(54.6e-3, 2.1e-3)] * 5
    note = cli._busy(waited[0], waited)
    assert note is not None and "the 5 timed calls had the CPU 4% of their wall time: wall 273 ms, CPU 10.5 ms" in note
    assert note.endswith("the CPU time is closer to the kernel's own cost")
    monkeypatch.setattr(cli, "_load", lambda: 7.9)
    assert "load average 7.9 on 2 CPUs" in cli._busy(calm[0], calm)
    threaded = [Timing(1e-3, 3.9e-3)] * 5  # four threads: more CPU than wall is not busy
    monkeypatch.setattr(cli, "_load", lambda: None)  # no load average (Windows)
    assert cli._busy(threaded[0], threaded) is None


def test_run_prints_wall_and_cpu(tmp_path, capsys, monkeypatch):
    prog = tmp_path / "p.tl"
    prog.write_text(PROG)
    monkeypatch.setattr(cli, "_load", lambda: 99.0)  # as on a crowded machine
    assert main(["run", str(prog), "--random-inputs", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    unit = r"[\d.]+ (?:µs|us|ms|s)"
    assert re.search(rf"time: compile {unit} wall, {unit} CPU; run {unit} wall, {unit} CPU \(median of \d+ warm "
                     rf"calls; first call {unit}\)", out), out
    assert re.search(r"note: the machine was busy \(load average 99.0 on \d+ CPUs?", out), out


def test_run_json_has_both_clocks_and_the_machine(tmp_path, capsys):
    prog = tmp_path / "p.tl"
    prog.write_text(PROG)
    assert main(["run", str(prog), "--random-inputs", "--backend", "numpy", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    seconds = facts["seconds"]
    for key in ("compile", "first_call", "warm_median", "compile_cpu", "first_call_cpu", "warm_median_cpu"):
        assert isinstance(seconds[key], float) and seconds[key] >= 0, key
    assert facts["machine"]["cpus"] >= 1 and (facts["machine"]["busy"] is None or "busy" in facts["machine"]["busy"])
