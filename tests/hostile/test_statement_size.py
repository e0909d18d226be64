"""One statement of more tokens than lark_support.MAX_STATEMENT_TOKENS is error[too-large]
before any parse starts, in every lark front end; a statement the parser accepts (as deep
as MAX_DEPTH allows, or wide and shallow) is never refused by that bound."""

import time

import lark
import pytest

import tensorlang
from tensorlang import lang
from tensorlang.errors import TensorLangError
from tensorlang.lang import lark_support

# a program in each lark front end whose one statement is `terms` of A joined by an operator
PROGRAMS = {
    "tl": lambda n: "in var A : [2]\nout var B : [2]\nB = " + " + ".join(["A"] * n) + "\n",
    "cfd": lambda n: "var input A : [2]\nvar output B : [2]\nB = " + " + ".join(["A"] * n) + "\n",
    "teil": lambda n: "in alloc A : [2]\nout alloc B : [2]\nB = " + "add A " * (n - 1) + "A\n",
    "stur": lambda n: "symbols: N\nD(i, j) := " + " + ".join(["B(i, j)"] * n) + "\nB:D(i, j) := (0 <= i < N)\n",
    "diderot": lambda n: "strand s (int i) { output real x = " + " + ".join(["1.0"] * n)
    + "; update { stabilize; } }\ninitially [ s(i) | i in 0..1 ];\n",
}


@pytest.fixture
def no_parse(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the parser was started")
    monkeypatch.setattr(lark.Lark, "parse_interactive", refuse)  # (how lark_support.parse parses)


@pytest.mark.parametrize("terms", [100_000, 1_000_000])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_long_statement_is_refused_before_parsing(name, terms, no_parse):
    text = PROGRAMS[name](terms)
    with pytest.raises(TensorLangError) as info:
        lang.get(name).parse(text, {})
    assert info.value.code == "too-large" and "split it" in info.value.message
    assert info.value.span is not None and info.value.span.line in (1, 2, 3)


@pytest.mark.parametrize("line", [
    "B[i] = A[" + ",".join(["i"] * 1_000_000) + "]",   # a million indices
    "B = A" + " A" * 1_000_000,                         # a million names, no operator
])
def test_long_lines_without_operators_are_refused_before_parsing(line, no_parse):
    with pytest.raises(TensorLangError) as info:
        lang.get("tl").parse("in var A : [2]\nout var B : [2]\n" + line + "\n", {})
    assert info.value.code == "too-large" and info.value.span.line == 3


def test_a_million_dimensions_are_refused_at_the_declaration(no_parse):
    text = "in var A : [" + " 2" * 1_000_000 + "]\nout var B : [2]\nB = A\n"
    with pytest.raises(TensorLangError) as info:
        lang.get("tl").parse(text, {})
    assert info.value.code == "too-large" and info.value.span.line == 1


def test_a_long_identifier_is_one_token():
    lark_support.check_statements("B = " + "A" * 4 * 2**20 + "\n", "=:")  # no refusal: one token


@pytest.mark.parametrize("name", ["tl", "cfd", "teil"])
def test_a_statement_as_deep_as_allowed_is_accepted(name):
    checked = tensorlang.check(PROGRAMS[name](1_999), lang=name)  # (the public call: its recursion room)
    assert checked is not None


def test_the_bound_is_on_tokens_not_characters():
    at_bound = "B = " + "A+" * ((lark_support.MAX_STATEMENT_TOKENS - 2) // 2) + "A"
    lark_support.check_statements(at_bound, "=:")  # B, =, then exactly the bound's tokens after '='
    with pytest.raises(TensorLangError):
        lark_support.check_statements(at_bound + "+A", "=:")
    spaced = "B = " + "A   +   " * 20_000 + "A"  # far more characters than the bound, fewer tokens
    lark_support.check_statements(spaced, "=:")


def test_a_wide_shallow_statement_under_the_bound_is_accepted():
    # (A+A)+(A+A) ... about 12,000 tokens, 8 levels deep: refused by neither bound
    expr = "A"
    for _ in range(11):
        expr = f"({expr}+{expr})"
    program = lang.get("tl").parse("in var A : [2]\nout var B : [2]\nB = " + expr + "\n", {})
    assert len(program.stmts) == 1


def test_a_printed_stage_over_the_bound_is_refused_as_not_read_back(no_parse):
    with pytest.raises(TensorLangError) as info:
        lang.reads_back(PROGRAMS["tl"](100_000), "tl", "tl")
    assert info.value.code == "too-large" and info.value.message.startswith("--emit tl: a statement of more than")


@pytest.mark.parametrize("text", [
    ",".join(["i"] * 1_000_000) + "->i : " + "[2] " * 1_000_000,  # a million operands
    "i->i : [2]" + " [2]" * 1_000_000,                             # a million shapes for one operand
])
def test_an_einsum_file_of_a_million_operands_is_refused_before_reading_them(text, monkeypatch):
    from tensorlang.lang.einsum import program

    def refuse(*args):
        raise AssertionError("the subscripts were read")
    monkeypatch.setattr(program, "parse", refuse)
    with pytest.raises(TensorLangError) as info:
        program.parse_text(text)
    assert info.value.code == "too-large" and "operands" in info.value.message


@pytest.mark.parametrize("name", ["tl", "teil", "cfd"])
def test_the_parse_stops_at_the_first_statement_too_deep(name):
    # many statements, each under the token bound but too deep: refused at the first, before
    # the parser reaches the syntax error after it (it used to parse them all, ~0.5 s each)
    text = PROGRAMS[name](5_000) + "B = = )\n"
    with pytest.raises(TensorLangError) as info:
        lang.get(name).parse(text, {})
    assert info.value.code == "too-large" and info.value.span.line == 3


@pytest.mark.parametrize("marks", ["=:", ";{}", "\n"])
def test_statements_just_under_the_bound_are_measured_in_linear_time(marks):
    # a megabyte of statements of 48 000 characters each: the search used to be tried from
    # every character of each, reading on to its end (minutes); now only where one starts
    text = (marks[0] + " A" * 24_000) * 21
    started = time.process_time()
    lark_support.check_statements(text, marks)
    assert time.process_time() - started < 1.0
