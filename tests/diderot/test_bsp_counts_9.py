"""Counts of the strands that make diderotc run a program in super-steps (its NeedsBSP property), as its executables
(``diderotc --double --exec --snapshot``, run with ``-s 1``) wrote and printed them, on both executors: a count in a
state initializer (read through the creation's hidden count parameters) takes the first super-step even when the
start methods leave no strand active; and a count only counts where diderotc's contraction keeps it, as its
executables ran the variants of ``VARIANT`` below (docs/diderot.md, "Strand order and the first step")."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BACKENDS = ["interp", pytest.param("c", marks=[pytest.mark.slow, needs_cc])]

STATE_COUNT = """#version 2.0
strand S (int i) {
  output real y = real(i);
  output int k = numStrands();
  start { stabilize; }
  update { y += 1.0; }
}
create_array { S(i) | i in 0..2 }
"""
STATE_COUNT_PRINTS = """#version 2.0
strand S (int i) {
  output real y = real(i);
  int k = numStrands();
  int t = 0;
  update { print(i, " ", t, " ", k, "\\n"); t += 1; if (i == 0) die; if (t > 1) stabilize; }
}
create_collection { S(i) | i in 0..3 }
"""
#: program: (steps, the snapshots' y, printed) as diderotc's executable gave them with -s 1
DIDEROTC = {
    "state_count": (1, [[0, 1, 2], [0, 1, 2]], ""),
    "state_count_prints": (2, [[0, 1, 2, 3], [3, 1, 2], [3, 1, 2]], "0 0 4|3 0 4|1 0 4|2 0 4|3 1 4|1 1 4|2 1 4"),
}


def _run(text: str, backend: str, **kw):
    p = strands(check(parse_program(text)))
    snaps: list = []
    got = p.run({}, backend=backend, on_snapshot=lambda k, r: snaps.append(np.asarray(r.outputs["y"]).tolist()), **kw)
    assert p.executor_note is None or backend == "interp", p.executor_note
    return got, snaps


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, text", [("state_count", STATE_COUNT), ("state_count_prints", STATE_COUNT_PRINTS)])
def test_a_count_in_a_state_initializer_runs_the_program_in_super_steps(name, text, backend):
    steps, snaps, printed = DIDEROTC[name]
    got, seen = _run(text, backend, snapshot=1)
    assert (got.steps, seen, got.printed.strip()) == (steps, snaps, printed.replace("|", "\n"))
    assert np.asarray(got.outputs["y"]).tolist() == snaps[-1]


# ------------------------------------------------ counts diderotc's contraction drops (needs_bsp.py)
VARIANT = """#version 2.0
%(funcs)s
strand S (int i) {
  output real y = real(i);
  int t = 0;
  %(state)s
  update { %(upd)s print(i, " ", t, "\\n"); t += 1; if (i == 0) die; if (t > 1) stabilize; }
}
create_collection { S(i) | i in 0..3 }
"""
#: diderotc's executable printed strand by strand and kept the creation order (not bulk-synchronous), or step by
#: step in its permuted order (bulk-synchronous: its NeedsBSP)
BY_STRAND, BY_STEP = "0 0|1 0|1 1|2 0|2 1|3 0|3 1", "0 0|3 0|1 0|2 0|3 1|1 1|2 1"
MIXED = "function int f(int a) { if (a > 0) { return numActive(); } int b = 2; return b; }"  # (not inlined)
RETURNS = "function int f(int a) { int b = numActive(); if (a > b) { return 1; } else { return 2; } }"
IGNORES = "function real f(int a) = 1.0;"
VARIANTS = {  # name: (funcs, state, update) -> diderotc's y, and whether it printed step by step
    "state_unused": ("", "int k = numStrands();", "", [1, 2, 3], False),
    "state_printed": ("", "int k = numStrands();", 'print("k", k, "\\n");', [3, 1, 2], True),
    "local_unused": ("", "", "int m = numActive();", [1, 2, 3], False),
    "local_chain_unused": ("", "", "int m = numActive(); int q = m + 1;", [1, 2, 3], False),
    "state_dead_assign": ("", "int k = 0;", "k = numActive();", [1, 2, 3], False),
    "state_reads_itself": ("", "int k = 0;", "k += numActive();", [3, 1, 2], True),
    "state_read_by_dead": ("", "int k = numStrands();", "int z = k;", [1, 2, 3], False),
    "function_unused": ("function int cnt() = numActive();", "", "int m = cnt();", [1, 2, 3], False),
    "function_dead_inside": ("function int cnt() { int a = numActive(); return 1; }", "", "y = real(cnt());", [1, 1, 1], False),
    "function_mixed_unused": (MIXED, "", "int m = f(i);", [3, 1, 2], True),
    "function_returns_unused": (RETURNS, "", "int m = f(i);", [1, 2, 3], False),
    "function_returns_used": (RETURNS, "", "y = real(f(i));", [2, 2, 2], True),
    "if_left_empty": ("", "", "if (numActive() > 100) { int z = 1; }", [1, 2, 3], False),
    "if_false": ("", "", "if (false) { y = real(numActive()); }", [1, 2, 3], False),
    "if_false_variable": ("", "bool sb = false;", "if (sb) { y = real(numActive()); }", [1, 2, 3], False),
    "if_false_global": ("bool g = false;", "", "if (g) { y = real(numActive()); }", [1, 2, 3], False),
    "if_variable_set": ("", "bool sb = false;", "if (sb) { y = real(numActive()); } sb = true;", [3, 3, 3], True),
    "if_input": ("input bool ib = false;", "", "if (ib) { y = real(numActive()); }", [3, 1, 2], True),
    "foreach_left_empty": ("", "", "foreach (int a in 0..1) { int z = numActive(); }", [1, 2, 3], False),
    "foreach_domain": ("", "", "foreach (int a in 0..numActive()) { y += 0.0; }", [3, 1, 2], True),
    "stabilize_dead": ("", "int w = 0; stabilize { w = numStrands(); }", "", [1, 2, 3], False),
    "stabilize_output": ("", "output int o = 0; stabilize { o = numStrands(); }", "", [3, 1, 2], True),
    "condition": ("", "", "if (numActive() > 100) stabilize;", [3, 1, 2], True),
    # an inlined function calling one not inlined keeps that call; a function's arguments are always kept; an
    # inlined function's constant tests (a global bool, a literal bool argument) fold
    "inlined_calls_mixed": (MIXED.replace("f(", "h(") + "\nfunction int g(int a) = h(a) + 1;", "", "int m = g(i);",
                            [3, 1, 2], True),
    "argument_unused": (IGNORES, "", "real m = f(numActive());", [3, 1, 2], True),
    "argument_local": (IGNORES, "", "int k = numActive(); real m = f(k);", [3, 1, 2], True),
    "argument_state": (IGNORES, "int k = numStrands();", "real m = f(k);", [3, 1, 2], True),
    "argument_read": ("function real f(int a) = real(a);", "", "real m = f(numActive());", [3, 1, 2], True),
    "function_global_false": ("bool g = false;\nfunction real f() { if (g) { return real(numActive()); } else "
                              "{ return 1.0; } }", "", "y = f();", [1, 1, 1], False),
    "function_argument_false": ("function real f(bool b) { if (b) { return real(numActive()); } else { return 1.0; } }",
                                "", "y = f(false);", [1, 1, 1], False),
    "function_argument_true": ("function real f(bool b) { if (b) { return 1.0; } else { return real(numActive()); } }",
                               "", "y = f(true);", [1, 1, 1], False),
}


def _variant(name: str) -> str:
    funcs, state, upd, *_ = VARIANTS[name]
    return VARIANT % {"funcs": funcs, "state": state, "upd": upd}


@pytest.mark.parametrize("name, backend", [(n, "interp") for n in VARIANTS] + [  # (C: four of them)
    pytest.param(n, None, marks=[pytest.mark.slow, needs_cc], id=f"{n}-auto")
    for n in ("state_unused", "function_unused", "if_false_variable", "state_reads_itself")])
def test_a_count_whose_value_nothing_keeps_leaves_the_program_strand_by_strand(name, backend):
    y, by_step = VARIANTS[name][3:]
    got = strands(check(parse_program(_variant(name)))).run({}, backend=backend)
    printed = "|".join(line for line in got.printed.splitlines() if not line.startswith("k"))
    assert (np.asarray(got.outputs["y"]).tolist(), printed) == (y, BY_STEP if by_step else BY_STRAND)


PARAMETER = """#version 2.0
bool g = false;
strand S (int i, bool g) {
  output real y = real(i);
  int t = 0;
  update { if (g) { y = real(numActive()); } print(i, " ", t, "\\n"); t += 1; if (i == 0) die; if (t > 1) stabilize; }
}
create_collection { S(i, i > 1) | i in 0..3 }
"""


def test_a_strand_parameter_named_as_a_global_bool_is_not_its_constant():
    got = strands(check(parse_program(PARAMETER))).run({}, backend="interp")  # (diderotc: DIDEROT_BSP)
    assert (np.asarray(got.outputs["y"]).tolist(), got.printed.strip().replace("\n", "|")) == ([3, 1, 3], BY_STEP)


def test_a_function_calling_itself_is_analysed_once():  # (diderotc refuses it; tensorlang runs it)
    calls = "function int f(int a) = (f(a - 1) + %s) if a > 0 else 0;"  # (inlined, as diderotc would)
    text = VARIANT % {"funcs": calls, "state": "", "upd": "y = real(f(2));"}
    assert not check(parse_program(text % "1")).counts and check(parse_program(text % "numActive()")).counts


# ------------------------------------------------ the prints of a program run strand by strand, with -s and -l
STARTS_PRINT = """#version 2.0
strand S (int i) {
  output real y = real(i);
  int t = 0;
  start { print("s", i, "\\n"); }
  update { print(i, " ", t, "\\n"); t += 1; y += 1.0; if (t > i + 1) stabilize; }
}
start { print("gs\\n"); }
create_collection { S(i) | i in 0..2 }
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("snapshot, limit, printed", [  # diderotc's executable, run with -s and -l so
    (0, 0, "gs|s0|s1|s2|0 0|0 1|1 0|1 1|1 2|2 0|2 1|2 2|2 3"), (1, 0, "gs|s0|s1|s2|0 0|1 0|2 0|0 1|1 1|2 1|1 2|2 2|2 3"),
    (2, 0, "gs|s0|s1|s2|0 0|0 1|1 0|1 1|2 0|2 1|1 2|2 2|2 3"), (2, 3, "gs|s0|s1|s2|0 0|0 1|1 0|1 1|2 0|2 1|1 2|2 2"),
    (0, 2, "gs|s0|s1|s2|0 0|0 1|1 0|1 1|2 0|2 1")])
def test_a_program_run_strand_by_strand_prints_its_start_methods_first_and_n_steps_at_a_time(snapshot, limit, printed,
                                                                                              backend):
    """Diderot's executable runs every start method, then each strand's updates to its end, or (``-s N``) up to
    N steps each, strand by strand, N steps at a time; both executors printed each strand's start method with
    its updates, and all its updates at once."""
    got, _ = _run(STARTS_PRINT, backend, snapshot=snapshot, limit=limit)
    assert got.printed.strip().replace("\n", "|") == printed
