"""Sixth hostile round: holes found on the surfaces named in docs/security.md, each fixed at
its cause and covered here.

* ``tensorlang bench --docs PAGE`` appended its generated tables to whatever file it was
  given (``--docs /etc/passwd`` run as root appended 120 lines of markdown to it) and found
  a directory (``--docs .``) only after the whole run.  ``--docs`` takes a markdown page
  now, checked before the run: a ``.md`` path, new in a writable directory or a writable
  UTF-8 regular file (``tensorlang_bench.docs_page``).
* An output of a Diderot run (``-o``, ``-print``, a snapshot) over a file the program names
  in ``image("data.nrrd")`` or ``load("data.nrrd")`` (no input: a global's definition) was
  written over it, exit 0; such files count as read now, as inputs already did.  And an
  output ``x.nhdr`` writes its data to ``x.raw``, which no check saw: ``-img in.nhdr -o
  keep.nhdr`` wrote over the input's data file ``keep.raw``, ``-o-a x.nhdr -o-b x.raw`` left
  a header whose data was the other output's file, both exit 0.
* The cached tables of a grammar (``grammars/lalr-*.lark`` in the cache directory) were
  opened by lark whatever they were: a FIFO there blocked every ``tensorlang check``, a
  link to ``/dev/zero`` read without end.  Only a regular file of at most 16 MiB is opened;
  anything else is removed and the tables written anew (``lark_support.lalr_parser``).
* The measured parallel thresholds (``parallel_work.json`` in the cache directory) were read
  with ``read_text``: a FIFO there blocked every C compile, and JSON nested 10^5 deep was
  ``error[too-large]: the program is nested too deeply`` for any program.  They are read as
  the kernels' manifests are (a small private regular file), anything else measured anew.
* ``tensorlang analyze p.svg --lang tl --plot p.svg`` drew the plot over the program (exit 0);
  ``compile -o`` already refused its program, ``--plot`` does now too, and so does ``run
  p.npz --lang tl --output p.npz`` (which replaced the program with its results).
* ``--snapshot N -sp nodir/s`` was found at the first snapshot, after the strands were made;
  a snapshot prefix's folder is checked before the run, as the outputs' are; and an output
  file that is there but read-only passed the check and failed when written, after the run;
  ``--snapshot 1 -o v-0000.nrrd`` wrote the output over the first snapshot of ``v``.
* The C executor of Diderot programs wrote a printed string as Python's unicode_escape spells
  it: ``é`` as ``\\xe9``, one Latin-1 byte that C's hex escape joined with the hex digits
  after it (``print("éab")`` printed U+FFFD and lost ``ab``), and ``??/``, ``??=`` ... as
  they are, trigraphs under -std=c99 (``a??/b`` printed ``a`` and a backspace).  Strings are
  their UTF-8 bytes in octal escapes now (``targets.c.strands.c_string``); the interpreter
  was right.
"""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path

import pytest

from tensorlang.cli import main


@contextlib.contextmanager
def within(seconds: int, what: str):
    """Fail the test (not wait forever) when the body blocks past ``seconds``; pytest.fail's
    exception is no Exception, which a library's ``except Exception`` would swallow."""
    def expired(signum, frame):
        pytest.fail(f"{what} blocked for more than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


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

    from tensorlang.lang import lark_support

    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    grammar = 'start: "a" "b"'
    tables = lark_support.grammar_cache_dir() / lark_support.cache_file(grammar, {"parser": "lalr"})
    tables.parent.mkdir(mode=0o700, parents=True)
    {"fifo": lambda: os.mkfifo(tables), "dev-zero": lambda: tables.symlink_to("/dev/zero"),
     "sparse-1GiB": lambda: (tables.touch(), os.truncate(tables, 2**30)), "directory": tables.mkdir}[kind]()

    with within(10, f"the grammar's tables ({kind})"):
        assert lark_support.lalr_parser(grammar).parse("ab").data == "start"
    assert tables.is_dir() if kind == "directory" else tables.is_file() and tables.stat().st_size < 2**20


@pytest.mark.parametrize("kind", ["fifo", "nested", "list", "figures"])
def test_cached_parallel_thresholds_are_read_only_from_a_small_regular_file(kind, tmp_path, monkeypatch):
    import json
    import os

    from tensorlang.loops.parallel import Threshold
    from tensorlang.targets.c import build, threshold

    compiler = build.find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("TENSORLANG_CACHE", str(tmp_path))
    monkeypatch.delenv("TENSORLANG_PARALLEL_WORK", raising=False)
    monkeypatch.setattr(threshold, "measure", lambda compiler, cpus: {"parallel_work": 1, "stream_work": 2})
    monkeypatch.setattr(threshold, "wait_for_quiet", lambda *args: False)  # (so nothing measured is written)
    path = tmp_path / threshold.CACHE_FILE
    figures = {"key": threshold._key(compiler), "parallel_work": 12345, "stream_work": 678}
    {"fifo": lambda: os.mkfifo(path), "nested": lambda: path.write_text("[" * 10**5 + "]" * 10**5),
     "list": lambda: path.write_text("[1, 2]"), "figures": lambda: path.write_text(json.dumps(figures))}[kind]()
    os.chmod(path, 0o600)
    with within(10, f"the thresholds' file ({kind})"):
        got = threshold._thresholds.__wrapped__(threshold.cpu_count())
    assert got == (Threshold(12345, 678) if kind == "figures" else Threshold(1, 2))


@pytest.mark.parametrize("argv", [["analyze", "--plot", "p.npz"], ["analyze", "--plot", "./p.npz"],
                                  ["analyze", "--plot", "link.npz"], ["run", "--random-inputs", "--output", "link.npz"]])
def test_a_plot_or_output_over_the_program_is_refused_and_the_program_kept(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = "in var A : [2 2]\nout var B : [2 2]\nB = A\n"
    (tmp_path / "p.npz").write_text(text)
    (tmp_path / "link.npz").symlink_to("p.npz")
    assert main([argv[0], "p.npz", "--lang", "tl", *argv[1:]]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and ("it is the program" in err or "this run reads" in err)
    assert (tmp_path / "p.npz").read_text() == text


@pytest.mark.parametrize("argv,message", [(["--snapshot", "1", "-sp", "nodir/s"], "'nodir' does not exist"),
                                          (["-o", "kept.nrrd"], "a file that is not writable"),
                                          (["--snapshot", "1", "-o", "v-0000.nrrd"], "and a snapshot of output v have the same")])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(argv, message, tmp_path, monkeypatch, capsys):
    import os

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.diderot").write_text(LITERAL.format(decl="", use="1.0"), encoding="utf-8")
    (tmp_path / "kept.nrrd").write_text("mine")
    os.chmod(tmp_path / "kept.nrrd", 0o444)
    access = os.access  # (root may write a read-only file: the check asks os.access, as it would a user's)
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: access(path, mode, **kw) and not (
        mode & os.W_OK and str(path).endswith("kept.nrrd")))
    assert main(["run", "p.diderot", *argv]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and message in err and (tmp_path / "kept.nrrd").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.nrrd", "p.diderot"]


def test_printed_strings_of_the_c_executor_are_the_interpreters():
    import tensorlang as tl
    from tensorlang.targets import available

    if "c" not in available():
        pytest.skip("no C compiler")
    text = ('#version 2.0\nstring g = "é€??=x";\nstrand S (int i) { output real x = 0.0; update { '
            'print("éab|日本|??/n??(??)??!??<??>??-??\'|\\\\|\\"|\\t|", g, "\\n"); stabilize; } }\n'
            'initially [ S(i) | i in 0..0 ];\n')
    printed = {backend: tl.compile(text, lang="diderot", backend=backend)().printed for backend in ("interp", "c")}
    assert printed["c"] == printed["interp"] == "éab|日本|??/n??(??)??!??<??>??-??'|\\|\"|\t|é€??=x\n"


@pytest.mark.parametrize("argv,message", [
    (["-img", "in.nhdr", "-o-v", "keep.nhdr", "-o-w", "w.nrrd"], "input img and the data of output v have the same file"),
    (["-img", "img.nrrd", "-o-v", "x.nhdr", "-o-w", "x.raw"], "output w and the data of output v have the same file"),
])
def test_the_data_file_of_a_detached_output_header_is_checked_as_an_output(argv, message, tmp_path, monkeypatch, capsys):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from diderot_corpus import nrrd2d

    monkeypatch.chdir(tmp_path)
    source = LITERAL.format(decl="input image(2)[] img;\nfield#1(2)[] F = img ⊛ ctmr;", use="F([1.5, 1.5])")
    (tmp_path / "p.diderot").write_text(source.replace("output real v = 0.0;", "output real v = 0.0; output real w = 1.0;"),
                                        encoding="utf-8")
    (tmp_path / "img.nrrd").write_bytes(nrrd2d())
    (tmp_path / "keep.raw").write_bytes(bytes(128))
    (tmp_path / "in.nhdr").write_text("NRRD0004\ntype: double\ndimension: 2\nsizes: 4 4\nendian: little\nencoding: raw\n"
                                      "data file: keep.raw\n")
    assert main(["run", "p.diderot", *argv]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and message in err and (tmp_path / "keep.raw").read_bytes() == bytes(128)
    assert not any(p.suffix == ".nhdr" and p.name != "in.nhdr" for p in tmp_path.iterdir())
