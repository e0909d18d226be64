"""Sixth hostile round: holes found on the surfaces named in docs/security.md, each fixed at
its cause and covered here.

* ``tensorlang bench --docs PAGE`` appended its generated tables to whatever file it was
  given (``--docs /etc/passwd`` run as root appended 120 lines of markdown to it) and found
  a directory (``--docs .``) only after the whole run.  ``--docs`` takes a markdown page
  now, checked before the run: a ``.md`` path, new in a writable directory or a writable
  UTF-8 regular file (``tensorlang_bench.docs_page``).
* An output of a Diderot run (``-o``, ``-print``, a snapshot) over a file the program names
  in ``image("data.nrrd")`` or ``load("data.nrrd")`` (no input: a global's definition) was
  written over it, exit 0; such files count as read now, as inputs already did.
* The cached tables of a grammar (``grammars/lalr-*.lark`` in the cache directory) were
  opened by lark whatever they were: a FIFO there blocked every ``tensorlang check``, a
  link to ``/dev/zero`` read without end.  Only a regular file of at most 16 MiB is opened;
  anything else is removed and the tables written anew (``lark_support.lalr_parser``).
"""

from __future__ import annotations

import pytest
from pathlib import Path

from tensorlang.cli import main


@pytest.mark.parametrize("page,message", [
    ("notes.txt", "takes a markdown page"),
    ("/dev/null", "takes a markdown page"),
    ("dir.md", "not a regular file"),
    ("latin1.md", "not a UTF-8 markdown page"),
    ("missing/x.md", "its directory is not writable"),
])
def test_bench_docs_refuses_what_is_no_markdown_page_before_the_run(page, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("keep me\n")
    (tmp_path / "dir.md").mkdir()
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9\n")
    assert main(["bench", "small", "--quick", "--no-progress", "--out", "out", "--docs", page]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and message in err and "Traceback" not in err
    assert (tmp_path / "notes.txt").read_text() == "keep me\n" and not (tmp_path / "out" / "results.json").exists()


LITERAL = ('#version 2.0\n{decl}\nstrand S (int i) {{ output real v = 0.0; update {{ v = {use}; stabilize; }} }}\n'
           'initially [ S(i) | i in 0..1 ];\n')
IMAGE = LITERAL.format(decl='field#1(2)[] F = image("data.nrrd") ⊛ ctmr;', use="F([1.5, 1.5])")
SEQUENCE = LITERAL.format(decl='real{} xs = load("data.nrrd");', use="xs{0}")


@pytest.mark.parametrize("source", [IMAGE, SEQUENCE], ids=["image", "load"])
@pytest.mark.parametrize("argv", [["-o", "data.nrrd"], ["-print", "data.nrrd"], ["-o", "./sub/../data.nrrd"]])
def test_a_diderot_output_over_a_file_the_program_names_is_refused_and_the_file_kept(source, argv, tmp_path, monkeypatch,
                                                                                     capsys):
    """``image("data.nrrd")`` in a global's definition (no input) was no file the run reads for
    its output checks: ``-o data.nrrd`` wrote the results over the image, exit 0."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from diderot_corpus import nrrd, nrrd2d

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "p.diderot").write_text(source, encoding="utf-8")
    data = nrrd2d() if source is IMAGE else nrrd("NRRD0004\ntype: double\ndimension: 1\nsizes: 3\nendian: little\n"
                                                 "encoding: raw", bytes(24))
    (tmp_path / "data.nrrd").write_bytes(data)
    assert main(["run", "p.diderot", *argv]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "would overwrite" in err and "Traceback" not in err
    assert (tmp_path / "data.nrrd").read_bytes() == data


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse-1GiB", "directory"])
def test_grammar_tables_that_are_no_small_regular_file_are_never_opened(kind, tmp_path, monkeypatch):
    import os
    import signal

    from tensorlang.lang import lark_support

    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    grammar = 'start: "a" "b"'
    tables = lark_support.grammar_cache_dir() / lark_support.cache_file(grammar, {"parser": "lalr"})
    tables.parent.mkdir(mode=0o700, parents=True)
    {"fifo": lambda: os.mkfifo(tables), "dev-zero": lambda: tables.symlink_to("/dev/zero"),
     "sparse-1GiB": lambda: (tables.touch(), os.truncate(tables, 2**30)), "directory": tables.mkdir}[kind]()

    def hang(signum, frame):  # (pytest.fail's exception is no Exception, which lark would catch and carry on)
        pytest.fail(f"the grammar's tables ({kind}) blocked the parser")
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(10)
    try:
        assert lark_support.lalr_parser(grammar).parse("ab").data == "start"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert tables.is_dir() if kind == "directory" else tables.is_file() and tables.stat().st_size < 2**20
