"""Sixth hostile round: holes found on the surfaces named in docs/security.md, each fixed at
its cause and covered here.

* ``tensorlang bench --docs PAGE`` appended its generated tables to whatever file it was
  given (``--docs /etc/passwd`` run as root appended 120 lines of markdown to it) and found
  a directory (``--docs .``) only after the whole run.  ``--docs`` takes a markdown page
  now, checked before the run: a ``.md`` path, new in a writable directory or a writable
  UTF-8 regular file (``tensorlang_bench.docs_page``).
"""

from __future__ import annotations

import pytest

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
