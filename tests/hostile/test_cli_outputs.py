"""Output paths given to the command line that cannot take the output: a FIFO no
process reads (once a hang), '-' (standard output), a suffix matplotlib cannot write
(once an internal error).  Each is one error[input] line or the expected output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tensorlang.cli import main

MATMUL = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n"
DIDEROT = 'input real a ("a") = 1.0;\nstrand s (int i) { output real x = a*i; update { stabilize; } }\n' \
          "initially [ s(i) | i in 0..3 ];\n"
PRINTS = 'strand s (int i) { output real x = 1.0; update { print("hi\\n"); stabilize; } }\n' \
         "initially [ s(i) | i in 0..1 ];\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@pytest.fixture
def place(tmp_path):
    for name, text in (("mm.tl", MATMUL), ("t.diderot", DIDEROT), ("p.diderot", PRINTS)):
        (tmp_path / name).write_text(text)
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["compile", "mm.tl", "-o", "fifo"], ["compile", "t.diderot", "-o", "fifo"],
                                  ["compile", "mm.tl", "--emit", "c", "-o", "fifo"],
                                  ["run", "t.diderot", "-o", "fifo"], ["run", "p.diderot", "-print", "fifo"]])
def test_a_fifo_that_nobody_reads_is_refused_at_once(place, argv):
    # in a child: before the fix the write waited for a reader forever
    done = subprocess.run([sys.executable, "-m", "tensorlang", *argv], cwd=place, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "error[input]" in done.stderr and "fifo" in done.stderr and "FIFO" in done.stderr


def test_a_fifo_with_a_reader_gets_the_text(place, capsys):
    import threading

    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(open(place / "fifo", encoding="utf-8").read()))
    reader.start()
    try:
        assert main(["compile", str(place / "mm.tl"), "-o", str(place / "fifo")]) == 0
    finally:
        reader.join(30)
    assert got and "C = " in got[0] and capsys.readouterr().out == ""


@pytest.mark.parametrize("name", ["mm.tl", "t.diderot"])
def test_dash_as_the_output_is_standard_output(place, capsys, name):
    assert main(["compile", str(place / name)]) == 0
    shown = capsys.readouterr().out
    assert main(["compile", str(place / name), "-o", "-"]) == 0
    assert capsys.readouterr().out == shown and not (place / "-").exists()


def test_an_empty_output_name_is_an_input_error(place, capsys):
    assert main(["compile", str(place / "mm.tl"), "-o", ""]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "error[input]" in err and "cannot write ''" in err


@pytest.mark.parametrize("name", ["x.out", "fifo"])
def test_a_plot_that_cannot_be_written_is_an_input_error(place, capsys, name):
    pytest.importorskip("matplotlib")
    assert main(["analyze", str(place / "mm.tl"), "--plot", str(place / name)]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "--plot: cannot write" in err and "internal" not in err


def test_a_plot_named_without_a_suffix_is_written_under_that_name(place, capsys):
    """matplotlib adds .png to a name without one: --plot=/tmp wrote /tmp.png and exited 0."""
    pytest.importorskip("matplotlib")
    assert main(["analyze", str(place / "mm.tl"), "--plot", str(place / "picture")]) == 0
    assert (place / "picture").read_bytes().startswith(b"\x89PNG") and not (place / "picture.png").exists()
    (place / "folder").mkdir()
    assert main(["analyze", str(place / "mm.tl"), "--plot", str(place / "folder")]) == 1
    assert "--plot: cannot write" in capsys.readouterr().err and not (place / "folder.png").exists()


def test_a_print_file_in_a_missing_folder_is_refused_before_the_run(place, capsys):
    # once found only after the run had been made (a long run wasted)
    assert main(["run", str(place / "p.diderot"), "-v", "-print", str(place / "nodir" / "p.txt")]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "nodir" in err and "initializing" not in err


def test_a_diderot_output_fifo_with_a_reader_gets_the_nrrd_file(place, capsys):
    import threading

    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(open(place / "fifo", "rb").read()))
    reader.start()
    try:
        assert main(["run", str(place / "t.diderot"), "-o", str(place / "fifo")]) == 0
    finally:
        reader.join(30)
    assert got and got[0].startswith(b"NRRD")
