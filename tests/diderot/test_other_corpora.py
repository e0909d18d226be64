"""Opt-in: Diderot programs from a corpus on disk (TENSORLANG_DIDEROT_CORPUS names a
folder; every ``*.diderot`` under it is read).  Each program must parse, typecheck and
become a runnable program, or be refused with a TensorLangError (a code and a message),
never a traceback.  A program with a sibling ``<name>.args`` file (the command-line
arguments, one line) and no ``<name>.skip`` is also run with them through the command
line, in its own folder, and must exit 0.  Without the variable the tests are skipped;
the repository holds no corpus program."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check

_FOLDER = os.environ.get("TENSORLANG_DIDEROT_CORPUS", "")
_FILES = sorted(Path(_FOLDER).rglob("*.diderot")) if _FOLDER and Path(_FOLDER).is_dir() else []
pytestmark = pytest.mark.skipif(not _FILES, reason="set TENSORLANG_DIDEROT_CORPUS to a folder of Diderot programs")


@pytest.mark.parametrize("path", _FILES, ids=[str(p.relative_to(_FOLDER)) for p in _FILES] if _FILES else [])
def test_a_corpus_program_is_accepted_or_refused_with_an_error_code(path):
    try:
        strands(check(parse_program(path.read_text(encoding="utf-8"))), str(path.parent))
    except TensorLangError as exc:
        assert exc.code and str(exc)


_RUNS = [p for p in _FILES if p.with_suffix(".args").exists() and not p.with_suffix(".skip").exists()]


@pytest.mark.slow
@pytest.mark.parametrize("path", _RUNS, ids=[str(p.relative_to(_FOLDER)) for p in _RUNS] if _RUNS else [])
def test_a_corpus_program_runs_with_its_arguments(path, tmp_path):
    args = path.with_suffix(".args").read_text().split()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.run([sys.executable, "-m", "tensorlang", "run", path.name, *args], cwd=path.parent,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
