"""Properties of the front end: printing round-trips, and no edit of a valid program
makes it raise anything but TensorLangError."""

import re
from pathlib import Path

import numpy as np
from hypothesis import given, note, strategies as st

import pytest
import tensorlang as tl
from properties.generators import edit_tokens, map_children, program_text, programs
from tensorlang.lang.tl import ast
from tensorlang.lang.tl.parser import parse_model
from tensorlang.lang.tl.printer import to_source

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").rglob("*.tl"))


def strip_parens(e):
    """The expression without its Paren nodes (the generators build none; the parser
    keeps the ones the text needs)."""
    if isinstance(e, ast.Paren):
        return strip_parens(e.expr)
    return map_children(e, strip_parens)


@pytest.mark.slow
@given(program=programs())
def test_printed_program_parses_back_to_the_same_ast(program):
    text = program_text(program, full_parens=False)
    note(text)
    parsed = parse_model(text)
    assert [(s.target, strip_parens(s.expr)) for s in parsed.stmts] == [(s.target, s.expr) for s in program.stmts]
    assert parsed.decls == program.decls
    # Printing a parsed program adds no parentheses: it reads back identically.
    assert parse_model(to_source(parsed)) == parsed


@pytest.mark.slow
@given(program=programs())
def test_full_and_minimal_parenthesization_mean_the_same_program(program):
    full = parse_model(program_text(program, full_parens=True))
    assert [strip_parens(s.expr) for s in full.stmts] == [s.expr for s in program.stmts]


# ------------------------------------------------------------------ random edits
TOKEN = re.compile(r"\s+|//[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|.", re.S)
VOCABULARY = ["#", ".", "^", "[", "]", "(", ")", "+", "-", "*", "/", "=", ":", "var", "in", "out", "2", "1", "x", "exp",
              "[2 3]", "0", "$", "\n", ",", "sum(k)", "sum", "[i,j]", "delta[i,j]", "eps[i,j,k]", "i", "k", "[]"]


def tokens(text):
    return TOKEN.findall(text)


@st.composite
def edited_programs(draw):
    if EXAMPLES and draw(st.booleans()):
        text = draw(st.sampled_from(EXAMPLES)).read_text()
    else:
        text = program_text(draw(programs(max_depth=3, max_stmts=3)), full_parens=draw(st.booleans()))
    toks = tokens(text)
    return edit_tokens(draw, toks, VOCABULARY)


@pytest.mark.slow
@given(text=edited_programs(), seed=st.integers(0, 1000))
def test_edited_programs_raise_only_tensorlang_errors(text, seed, monkeypatch_budget):
    note(text)
    try:
        sizes = {name: 3 for name in tl.check(text).symbols}  # an edit may make a size
        kernel = tl.compile(text, params=sizes)
    except tl.TensorLangError as exc:
        assert exc.code in {"syntax", "redeclared", "undeclared-assign", "assign-shape", "undeclared",
                            "shape", "dim-range", "uninit", "read-only", "too-large",
                            "index-extent", "free-index", "repeated-index"}, exc
        assert exc.line is None or exc.line >= 1
        return
    names = dict.fromkeys((*kernel.inputs, *getattr(kernel, "required_inputs", ())))  # unqualified: read first
    if sum(int(np.prod(kernel.shapes[n], dtype=object)) for n in names) > 10**6:
        return  # an edit made an input huge: too big to draw random values for
    rng = np.random.default_rng(seed)
    inputs = {n: rng.uniform(-1, 1, size=kernel.shapes[n]) for n in names}
    try:
        results = kernel(**inputs)
    except tl.TensorLangError as exc:
        assert exc.code == "too-large", exc  # an edit can make an outer product huge
        return
    assert set(results) == set(kernel.outputs)
