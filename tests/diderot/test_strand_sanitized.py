"""Strand C under UndefinedBehaviorSanitizer: programs with sphere queries built with
``-fsanitize=undefined -fno-sanitize-recover=all`` (in a child process: a report aborts it)
and run where the neighbour lists are empty (no two strands within the radius: the bulk
build of an epoch's lists finds no pair, and a strand's list made again by a search is
empty), few, or many; the results must also be the interpreter's, bit for bit.  GCC's
UBSan reports a NULL argument to ``memcpy``; clang's (``CC=clang``) also reports
arithmetic on a NULL pointer (``NULL + 0``), which ``tl_vbuild`` once made with no pair."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import sanitizer_probe

SANITIZE = ("-fsanitize=undefined", "-fno-sanitize-recover=all")


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _ubsan_loads():
    sanitizer_probe.skip_unless(SANITIZE, shared=True, reason="no C compiler here builds a loadable UBSan shared object")


SPHERE = (Path(__file__).parents[2] / "benchmarks" / "diderot" / "programs" / "sphere.diderot").read_text()

CHILD = r"""
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from agreement import same
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import strands as CS
CS.NO_ERRNO = CS.NO_ERRNO + tuple(sys.argv[2].split())
CS.FIXED_TEAM = True  # two threads really run (the team build of the neighbour lists among them)
p = strands(check(parse_program(sys.stdin.read())))
for num, rad, gens in ((6, 1e-3, 4), (1, 0.5, 3), (300, 0.02, 6), (400, 0.3, 5)):
    values = dict(num=num, rad=rad, step=0.01, gens=gens)
    a = p.run(values, backend="interp")
    for threads in (1, 2):
        b = p.run(values, backend="c", threads=threads)
        assert p.executor_note is None, p.executor_note
        same(a, b, 0)
    print("ran", num, rad, flush=True)
"""


def test_sphere_queries_are_clean_under_ubsan():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).parents[2] / "src"),
                                                                   os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).parent), " ".join(SANITIZE)], input=SPHERE,
                         capture_output=True, text=True, env=env, timeout=600)
    assert "runtime error" not in run.stderr, run.stderr[-3000:]
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("ran") == 4
