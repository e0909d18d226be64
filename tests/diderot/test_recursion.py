"""Functions that call themselves: the interpreter runs them MAX_CALL_DEPTH calls deep
(in a thread with a deep stack), and past that says error[too-large] without crashing."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import interp as I
from tensorlang.lang.diderot import parse_program, strands, typecheck

PROGRAM = """#version 2.0
input int n = 1000;
function real f(int k) {
  if (k <= 0) { return 0.25; }
  return 1.0 + 0.5 * f(k - 1);
}
function int g(int k) = 0 if k <= 0 else 1 + g(k - 1);
strand s (int i) {
  output real out = 0;
  output int cnt = 0;
  update { out = f(n + i); cnt = g(n - i); stabilize; }
}
create_collection { s(i) | i in 0..2 };
"""


def program(text: str = PROGRAM):
    return strands(typecheck(parse_program(text)))


def expected(n: int) -> tuple[list[float], list[int]]:
    outs = []
    for i in range(3):
        v = 0.25
        for _ in range(n + i):
            v = 1.0 + 0.5 * v
        outs.append(v)
    return outs, [n - i for i in range(3)]


def test_only_programs_with_a_recursive_function_run_deep():
    assert program().compiled.deep
    assert not program(PROGRAM.replace("0.5 * f(k - 1)", "0.5 * real(k)")
                       .replace("1 + g(k - 1)", "k")).compiled.deep


def test_a_thousand_calls_deep_both_executors_agree():
    p = program()
    limit = sys.getrecursionlimit()
    interp = p.run({}, backend="interp")
    assert sys.getrecursionlimit() == limit  # restored after the run
    out, cnt = expected(1000)
    assert interp.outputs["out"].tolist() == out and interp.outputs["cnt"].tolist() == cnt
    auto = p.run({})  # C where it can: the C executor leaves recursion to the interpreter
    assert "recursion" in (p.executor_note or "")
    assert np.array_equal(auto.outputs["out"], interp.outputs["out"])
    assert np.array_equal(auto.outputs["cnt"], interp.outputs["cnt"])
    with pytest.raises(TensorLangError) as info:  # asked for C, it says why not
        p.run({}, backend="c")
    assert "recursion" in str(info.value)


@pytest.mark.slow
def test_recursion_to_the_documented_depth():
    p = program()
    res = p.run({"n": I.MAX_CALL_DEPTH - 3}, backend="interp")  # f(n + 2): MAX_CALL_DEPTH calls
    assert res.outputs["cnt"].tolist() == expected(I.MAX_CALL_DEPTH - 3)[1]


@pytest.mark.parametrize("n", [I.MAX_CALL_DEPTH, 10**6])
def test_deeper_is_error_too_large(n):
    limit = sys.getrecursionlimit()
    with pytest.raises(TensorLangError) as info:
        program().run({"n": n}, backend="interp")
    assert info.value.code == "too-large" and f"{I.MAX_CALL_DEPTH:,}" in info.value.message
    assert (info.value.line, info.value.col) == (5, 22)  # the recursive call
    assert sys.getrecursionlimit() == limit


@pytest.mark.slow
def test_a_body_too_deep_for_the_stack_is_error_too_large():
    """Each call here nests 60 expressions: the stack runs out before MAX_CALL_DEPTH calls."""
    nested = "(" * 60 + "f(k - 1)" + " + 1.0)" * 60
    text = PROGRAM.replace("1.0 + 0.5 * f(k - 1)", nested)
    with pytest.raises(TensorLangError) as info:
        program(text).run({"n": I.MAX_CALL_DEPTH - 10}, backend="interp")
    assert info.value.code == "too-large" and "stack" in info.value.message


def test_a_deep_run_hands_back_its_errors_and_prints():
    text = PROGRAM.replace("update { out", 'update { print(g(n), "\\n"); out')
    res = program(text).run({"n": 500}, backend="interp")
    assert res.printed == "500\n500\n500\n"
    with pytest.raises(TensorLangError) as info:  # an error inside the worker thread reaches the caller
        program(text.replace("return 0.25", "return 0.25 + real(1 / k)")).run({"n": 500}, backend="interp")
    assert info.value.code == "input" and "division by zero" in info.value.message


@pytest.mark.slow
def test_the_command_line_says_too_large_without_a_crash(tmp_path):
    """A million calls deep from `tensorlang run`: exit status 1 and one error line, no
    traceback, no signal (a segfault would give a negative status)."""
    import os
    import subprocess
    from pathlib import Path

    prog = tmp_path / "rec.diderot"
    prog.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.run([sys.executable, "-m", "tensorlang", "run", str(prog), "-n", "1000000"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "error[too-large]" in proc.stderr and "Traceback" not in proc.stderr
