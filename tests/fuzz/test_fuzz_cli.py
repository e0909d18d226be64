"""Fuzzing the command line (issue 16): ``tensorlang.cli.main`` with random argv built
from its own words (subcommands, every option, good and bad values, program and data
files of every kind: valid, empty, binary, a directory, missing, standard input).

Property: ``main`` returns 0 or 1, or argparse exits with status 0 (--help) or 2 (a
usage error); never 3 (internal), never another exception, never a traceback printed."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, note, strategies as st

import pytest
from fuzz.oracle import fuzz_settings, no_hang
from tensorlang.cli import main

PROGRAMS = {
    "p.tl": "in var A : [2 3]\nin var x : [3]\nout var y : [2]\ny[i] = sum(j) A[i,j] * x[j]\n",
    "q.teil": "in alloc A : [2 3]\nin alloc x : [3]\nout alloc y : [2]\ny = contr 2 3 (prod A x)\n",
    "r.cfd": "var input A : [n 3]\nvar input x : [3]\nvar output y : [n]\ny = A . x\n",
    "bad.tl": "in var x : [3]\nout var y : [2]\ny = x\n",
    "empty.tl": "",
}


def _workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="tensorlang-fuzz-cli-"))
    for name, text in PROGRAMS.items():
        (root / name).write_text(text)
    (root / "bin.tl").write_bytes(bytes(range(256)) * 4)
    (root / "dir.tl").mkdir()
    np.save(root / "A.npy", np.ones((2, 3)))
    np.save(root / "x.npy", np.array([1.0, np.nan, -np.inf]))
    np.save(root / "i.npy", np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8))
    np.save(root / "obj.npy", np.array([object()] * 3), allow_pickle=True)
    np.savez(root / "in.npz", A=np.ones((2, 3)), x=np.ones(3))
    (root / "trunc.npz").write_bytes((root / "in.npz").read_bytes()[:40])
    return root


ROOT = _workspace()
FILES = ["p.tl", "q.teil", "r.cfd", "bad.tl", "empty.tl", "bin.tl", "dir.tl", "missing.tl", "-", "A.npy", "in.npz"]
VALUES = ["A=A.npy", "x=x.npy", "A=i.npy", "x=obj.npy", "A=missing.npy", "A=", "=x.npy", "x", "in.npz",
          "trunc.npz", "obj.npy", "out.npz", "dir.tl", "/", "", "n=3", "n=0", "n=-2", "n=" + "9" * 5000, "n=x",
          "n", "3", "0", "-1", "99999999999999999999", "float32", "float64", "int8", "c", "numpy", "interp", "auto",
          "tl", "teil", "cfd", "ast", "ein", "opt", "c", "numpy", "schedule", "loops", "core", "lambda", "fuse",
          "order", "nosuch", "info", "clear", "\x00", "--", "-x"]
OPTIONS = ["--input", "--inputs", "--random-inputs", "--random-inputs=7", "--random-inputs=x", "--output",
           "--backend", "--dtype", "--threads", "--lang", "--param", "--emit", "-o", "--skip", "--no-opt", "--core",
           "-q", "--quiet", "--help", "--version", "--pad", "--check-structure"]
COMMANDS = ["check", "run", "compile", "analyze", "cache", "nosuch", ""]

ARGV = st.lists(st.one_of(st.sampled_from(OPTIONS), st.sampled_from(FILES), st.sampled_from(VALUES)), max_size=7)


@pytest.mark.slow
@fuzz_settings(150)
@given(command=st.sampled_from(COMMANDS), rest=ARGV, stdin=st.sampled_from(sorted(PROGRAMS)))
def test_the_command_line_takes_any_argv(command, rest, stdin):
    argv = ([command] if command else []) + rest
    if command == "cache" and "clear" in rest:
        argv = ["cache", "info"]  # clearing mid-run only costs the other tests their kernels
    note(repr(argv)[:500])
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    saved_stdin = sys.stdin
    try:
        os.chdir(ROOT)
        sys.stdin = io.StringIO(PROGRAMS[stdin])
        with no_hang("command"), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # argparse: --help, --version, usage errors
                status = exc.code
                assert status in (0, 2), (argv, status)
                return
    finally:
        os.chdir(cwd)
        sys.stdin = saved_stdin
    text = out.getvalue() + err.getvalue()
    assert status in (0, 1) or (argv == [] and status == 2), (argv, status, text[-2000:])  # no command: usage, 2
    assert "Traceback" not in text, text[-2000:]
    assert "internal" not in err.getvalue(), err.getvalue()[-2000:]
