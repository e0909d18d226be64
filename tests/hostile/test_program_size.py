"""Bounds on a whole program's parse in every lark front end: more tokens than
lark_support.MAX_PROGRAM_TOKENS is error[too-large] before parsing (however many
statements share them), and nesting the parser's stack cannot hold (MAX_PARSE_STACK) or
that a tree shows past MAX_DEPTH is error[too-large] as the parse reaches it, never a
RecursionError; the programs tested elsewhere are well inside both.  tl.einsum and its
kin count their operands against the same bound as an .einsum file's before any work per
operand."""

import gc
import time

import lark
import numpy as np
import pytest

import tensorlang as tl
from tensorlang import lang
from tensorlang.errors import TensorLangError
from tensorlang.lang import lark_support

from hostile.test_large_programs import wide, wide_expressions
from tiers import quick_first

# (head, one statement of `terms` terms, tail) of a program in each lark front end
PARTS = {
    "tl": ("in var A : [2]\nout var B : [2]\n", lambda n: "B = " + " + ".join(["A"] * n) + "\n", ""),
    "cfd": ("var input A : [2]\nvar output B : [2]\n", lambda n: "B = " + " + ".join(["A"] * n) + "\n", ""),
    "teil": ("in alloc A : [2]\nout alloc B : [2]\n", lambda n: "B = " + "add A " * (n - 1) + "A\n", ""),
    "stur": ("symbols: N\n", lambda n: "D(i, j) := " + " + ".join(["B(i, j)"] * n) + "\n", "B:D(i, j) := (0 <= i < N)\n"),
    "diderot": ("strand s (int i) { output real x = 0.0; update { ",
                lambda n: "x = " + " + ".join(["1.0"] * n) + ";\n", "stabilize; } }\ninitially [ s(i) | i in 0..1 ];\n"),
}
STUR = "symbols: N\nA(i) := B(i) * (i <= {})\nB:D(i) := (0 <= i < N)\n"
DIDEROT = "strand s (int i) {{ output real x = 0.0; update {{ {} stabilize; }} }}\ninitially [ s(i) | i in 0..1 ];\n"


@pytest.fixture
def no_parse(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the parser was started")
    monkeypatch.setattr(lark.Lark, "parse_interactive", refuse)


@pytest.mark.parametrize("name", sorted(PARTS))
def test_many_statements_each_under_the_statement_bound_are_refused_before_parsing(name, no_parse):
    head, statement, tail = PARTS[name]
    each = lark_support.MAX_STATEMENT_TOKENS // 8  # terms of 2 to 7 tokens: each statement under its bound
    text = head + statement(each) * (lark_support.MAX_PROGRAM_TOKENS // (2 * each) + 1) + tail
    lark_support.check_statements(text, {"stur": "\n", "diderot": ";{}"}.get(name, "=:"))  # no statement refused
    with pytest.raises(TensorLangError) as info:
        lang.get(name).parse(text, {})
    assert info.value.code == "too-large" and "program of more than 1,000,000 tokens" in info.value.message
    assert info.value.span is not None and info.value.span.line > 2


def test_the_program_bound_is_on_tokens_and_points_at_the_first_past_it():
    at_bound = "A " * lark_support.MAX_PROGRAM_TOKENS
    lark_support.check_program_tokens(at_bound)
    lark_support.check_program_tokens("A" * 4 * lark_support.MAX_PROGRAM_TOKENS)  # one (long) token
    with pytest.raises(TensorLangError) as info:
        lark_support.check_program_tokens(at_bound + "\n+")
    assert info.value.code == "too-large" and (info.value.span.line, info.value.span.col) == (2, 1)


def test_the_program_bound_grows_with_the_statements_allowed(monkeypatch):
    text = "A " * (2 * lark_support.MAX_PROGRAM_TOKENS)
    with pytest.raises(TensorLangError):
        lark_support.check_program_tokens(text)
    monkeypatch.setenv("TENSORLANG_MAX_STATEMENTS", str(2 * lark_support.MAX_PROGRAM_TOKENS // 50))
    lark_support.check_program_tokens(text)


def test_the_largest_programs_tested_are_well_inside_the_bounds():
    for text in (wide(10**4), wide_expressions(10**4)):  # 320 000 and 870 000 tokens: under the bound
        lark_support.check_program_tokens(text)
    assert lark_support.MAX_PROGRAM_TOKENS >= 3 * len(lark_support._TOKEN.findall(wide(10**4)))


DEEP = {  # nesting 10**5 deep (or as deep as one statement's tokens allow), about 1 MB at most
    "diderot blocks": ("diderot", DIDEROT.format("{" * 10**5 + "}" * 10**5)),
    "diderot if blocks": ("diderot", DIDEROT.format("if (true) {" * 80_000 + "}" * 80_000)),
    "diderot else-if chain": ("diderot", DIDEROT.format("if (true) x = 1.0; else " * 40_000 + "x = 2.0;")),
    "diderot prefix operators": ("diderot", DIDEROT.format("x = " + "-" * 45_000 + "1.0;")),
    "diderot tensor brackets": ("diderot", DIDEROT.format("x = " + "[" * 24_000 + "1.0" + "]" * 24_000 + ";")),
    "diderot ^ chain": ("diderot", DIDEROT.format("x = " + "2.0^" * 12_000 + "1.0;")),
    "stur prefix minus": ("stur", STUR.format("- " * 45_000 + "1")),
    "stur left division": ("stur", STUR.format("1/" * 24_000 + "1")),
    "teil prefix operators": ("teil", "in alloc A : [2]\nout alloc B : [2]\nB = " + "add A " * 24_000 + "A\n"),
}


# one kind of nesting per front end in the quick tier (each case a 0.5-1 MB program)
@pytest.mark.parametrize("case", quick_first(sorted(DEEP), {"diderot blocks", "stur prefix minus", "teil prefix operators"}))
def test_deep_nesting_is_refused_quickly_without_recursion(case):
    name, text = DEEP[case]
    lang.get(name)  # (its module imported outside the clock)
    # this thread's CPU time, with the objects earlier tests left frozen out of the collector's
    # passes: a full CI worker's heap made one refusal take 4 s of process time (0.35 s alone)
    gc.collect()
    gc.freeze()
    try:
        started = time.thread_time()
        with pytest.raises(TensorLangError) as info:
            lang.get(name).parse(text, {})  # (no raised recursion limit: nothing recurses)
        took = time.thread_time() - started
    finally:
        gc.unfreeze()
    assert info.value.code in ("too-large", "syntax") and "nested" in info.value.message, info.value.message
    assert took < 2.0, took  # about 0.1-0.4 s; a whole parse of the 1 MB ones took 8-12 s


def test_nesting_as_deep_as_allowed_parses():
    # 1 000 levels of else-if: about 6 entries a level on the parser's stack
    assert tl.check(DIDEROT.format("if (true) x = 1.0; else " * 1_000 + "x = 2.0;"), lang="diderot")


MILLION = [np.ones(2)] * 10**6
MILLION_SUBSCRIPTS = ",".join(["i"] * 10**6) + "->i"


@pytest.fixture(scope="module")
def sublists() -> list:
    """einsum's sublist form of MILLION (two million objects): built once, outside the clock,
    when a test of this file first asks, and dropped after it (not made as every xdist
    worker collects the file, nor left for every later garbage collection to walk)."""
    return [x for o in MILLION for x in (o, [0])] + [[0]]


@pytest.mark.parametrize("call", [
    lambda sub: tl.einsum(MILLION_SUBSCRIPTS, *MILLION),
    lambda sub: tl.einsum(MILLION_SUBSCRIPTS, *MILLION, optimize="greedy"),  # numpy's path search: quadratic
    lambda sub: tl.einsum(*sub),
    lambda sub: tl.contract_expression(MILLION_SUBSCRIPTS, *[(2,)] * 10**6),
    lambda sub: tl.einsum_path(MILLION_SUBSCRIPTS, *MILLION),
], ids=["einsum", "einsum-optimize", "sublists", "contract_expression", "einsum_path"])
def test_a_million_einsum_operands_are_refused_before_any_work_per_operand(call, sublists):
    started = time.process_time()
    with pytest.raises(TensorLangError) as info:
        call(sublists)
    assert info.value.code == "too-large" and "20,000 operands" in info.value.message
    assert time.process_time() - started < 3.0  # about 0.5 s (10^5 operands took 13 s to compile)


def test_an_outer_product_past_the_rank_limit_is_refused_as_it_is_made():
    x = tl.var("x", (2,))
    with pytest.raises(TensorLangError) as info:
        tl.outer(*[x] * 10**5)  # (every partial product's shape was kept: memory ran out)
    assert info.value.code == "too-large" and "65 dimensions" in info.value.message
