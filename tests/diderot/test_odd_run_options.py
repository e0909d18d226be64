"""Run options and inputs on odd values, against what the executable built by ``diderotc --double --exec``
(``--snapshot`` for ``-s``) of the same program did with the same command line (the values below are its
output files): a limit of 0, an option given twice (the last counts), a huge real, snapshots every 0 or 2
steps; and the command lines tensorlang refuses with error[input] and writes nothing (diderotc's executable
refuses them too, but for ``-l -1``, ``-s -1`` and ``-n 3.5``, which its option parser reads as 2^32 - 1
and 3: docs/diderot.md, "The iteration cap" and "Differences from Diderot's executables")."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import nrrd
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

PROGRAM = """#version 2.0
input real a = 0.5;
input int n = 3;
strand S (int i) {
  output real y = 0.0;
  int k = 0;
  update {
    y += a * real(i);
    k += 1;
    if (k >= n + i) { stabilize; }
  }
}
create_array { S(i) | i in 0..3 }
"""


def _run(args: list[str], folder, monkeypatch) -> tuple[int, str, dict]:
    prog = folder / "steps.diderot"
    prog.write_text(PROGRAM)
    monkeypatch.chdir(folder)
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        try:
            rc = tl.compile(str(prog), backend="interp").main(args)
        except TensorLangError as exc:
            rc = 1
            print(exc, file=err)
    return rc, err.getvalue(), {p.name: nrrd.read(str(p))[0].tolist() for p in sorted(folder.glob("*.nrrd"))}


@pytest.mark.parametrize("args, files", [
    ([], {"y.nrrd": [0.0, 2.0, 5.0, 9.0]}),
    (["-l", "0"], {"y.nrrd": [0.0, 2.0, 5.0, 9.0]}),
    (["-a", "1", "-a", "2"], {"y.nrrd": [0.0, 8.0, 20.0, 36.0]}),
    (["-l", "2", "-l", "30"], {"y.nrrd": [0.0, 2.0, 5.0, 9.0]}),
    (["-n", "1", "-n", "2"], {"y.nrrd": [0.0, 1.5, 4.0, 7.5]}),
    (["-a", "1.5e300"], {"y.nrrd": [0.0, 6e300, 1.5e301, 2.7000000000000003e301]}),
    (["-s", "0"], {"y.nrrd": [0.0, 2.0, 5.0, 9.0]}),
    (["-o", "x.nrrd", "-o", "y2.nrrd"], {"y2.nrrd": [0.0, 2.0, 5.0, 9.0]}),
    (["-s", "2"], {"y-0000.nrrd": [0.0] * 4, "y-0002.nrrd": [0.0, 1.0, 2.0, 3.0], "y-0004.nrrd": [0.0, 2.0, 4.0, 6.0],
                   "y-0006.nrrd": [0.0, 2.0, 5.0, 9.0], "y.nrrd": [0.0, 2.0, 5.0, 9.0]}),
])
def test_odd_but_valid_command_lines_write_what_diderotc_does(args, files, tmp_path, monkeypatch):
    rc, err, got = _run(args, tmp_path, monkeypatch)
    assert (rc, got) == (0, files), err


def test_snapshots_up_to_a_limit_are_diderotcs_and_the_outputs_stand_as_they_are(tmp_path, monkeypatch):
    rc, _, got = _run(["-s", "1", "-l", "1"], tmp_path, monkeypatch)  # diderotc: the snapshots, then exit 1
    assert rc == 0 and got == {"y-0000.nrrd": [0.0] * 4, "y-0001.nrrd": [0.0, 0.5, 1.0, 1.5],
                               "y.nrrd": [0.0, 0.5, 1.0, 1.5]}


@pytest.mark.parametrize("args, says", [
    (["-o", "nodir/out.nrrd"], "the folder 'nodir' does not exist"),  # diderotc: nrrdSave: couldn't fopen
    (["-print", "nodir/p.txt"], "the folder 'nodir' does not exist"),  # "Error opening print file"
    (["-o", "."], "it is a directory"),  # nrrdSave: couldn't fopen(".","wb"): Is a directory
    (["-bogus", "1"], "unknown option '-bogus'"),  # "unexpected arg (or unrecognized flag)"
    (["--limit=3", "-zz"], "unknown option '-zz'"),
    (["-a"], "-a expects 1 value, got none"),  # "hit end of line before getting 1 parameter"
    (["-o"], "-o expects 1 value, got none"),
    (["-l"], "-l expects 1 value, got none"),
    (["-l", "abc"], "-l expects an integer"),  # "couldn't parse "abc" as unsigned int"
    (["-l", "-1"], "-l expects an integer from 0 to 4294967295"),  # diderotc: 2^32 - 1
    (["-s", "-1"], "-s expects an integer at least 0"),  # diderotc (--snapshot): 2^32 - 1
    (["-n", "3.5"], "expects an integer, got '3.5'"),  # diderotc: 3
])
def test_bad_command_lines_are_refused_and_write_nothing(args, says, tmp_path, monkeypatch):
    rc, err, got = _run(args, tmp_path, monkeypatch)
    assert rc == 1 and "error[input]" in err and says in err and got == {}, err


def test_help_of_every_program_exits_0_and_needs_no_input(tmp_path, monkeypatch, capsys):
    """``--help`` of each program here (as of each public example: the same loop over them exits 0)."""
    from pathlib import Path
    monkeypatch.chdir(tmp_path)
    folders = ("more/unseen", "more/teem", "run_programs", "programs")
    progs = [p for f in folders for p in sorted((Path(__file__).parent / f).glob("*.diderot"))]
    assert len(progs) > 150
    for prog in progs:
        assert tl.compile(str(prog), backend="interp").main(["--help"]) == 0, prog
        assert capsys.readouterr().out.startswith("usage: "), prog
    assert list(tmp_path.iterdir()) == []
