"""Properties of the CFDlang dialect front end.

* Any operator-form model-language program (from the generator, stacks included),
  printed in the CFDlang dialect and read back, computes exactly what the model
  program computes.  CFDlang has no functions, so they are dropped from the generated
  program first (both sides then run the same program without them).
* No edit of a CFDlang program makes the front end, the checker or a run raise
  anything but a TensorLangError.
"""

import re
from pathlib import Path

import numpy as np
from hypothesis import given, note, settings, strategies as st

import pytest
import tensorlang as tl
from properties.generators import edit_tokens, programs, random_inputs
from tensorlang.lang.cfd import to_cfd_source
from tensorlang.lang.tl import ast

EXAMPLES = sorted((Path(__file__).parents[2] / "examples" / "cfd").glob("*.cfd"))


def without_functions(e):
    """``e`` with every function call replaced by its argument (CFDlang has none)."""
    if isinstance(e, ast.Call):
        return without_functions(e.arg)
    if isinstance(e, (ast.Var, ast.Number)):
        return e
    if isinstance(e, ast.Paren):
        return ast.Paren(without_functions(e.expr))
    if isinstance(e, ast.Neg):
        return ast.Neg(without_functions(e.expr))
    if isinstance(e, ast.Outer):
        return ast.Outer(without_functions(e.left), without_functions(e.right))
    if isinstance(e, ast.Binary):
        return ast.Binary(e.op, without_functions(e.left), without_functions(e.right))
    if isinstance(e, ast.Contract):
        return ast.Contract(without_functions(e.expr), e.pairs, e.grouped)
    if isinstance(e, ast.Transpose):
        return ast.Transpose(without_functions(e.expr), e.pair)
    if isinstance(e, ast.Stack):
        return ast.Stack(tuple(without_functions(i) for i in e.items))
    raise AssertionError(e)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(program=programs(max_extent=3, direct_sums=False), seed=st.integers(0, 2**16))
def test_model_program_printed_as_cfd_computes_the_same(program, seed):
    program = ast.Program(program.decls, tuple(ast.Assign(s.target, without_functions(s.expr)) for s in program.stmts))
    text = to_cfd_source(program)
    note(text)
    kernel = tl.compile(text, lang="cfd", backend="interp")
    assert kernel.program.lang == "cfd"
    assert kernel.shapes == {d.name: d.shape for d in program.decls}
    assert {d.name: d.qual for d in kernel.program.decls} == {d.name: d.qual for d in program.decls}
    model = tl.compile(program_text(program), backend="interp")
    inputs = random_inputs(program, seed)
    expected, got = model(**inputs), kernel(**inputs)
    assert set(got) == set(expected)
    for name in expected:  # the same operations in the same order: the same numbers
        np.testing.assert_array_equal(got[name], expected[name])


def program_text(program):
    from tensorlang.lang.tl.printer import to_source

    return to_source(program)


# ------------------------------------------------------------------ random edits
TOKEN = re.compile(r"\s+|//[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?|.", re.S)
VOCABULARY = ["#", ".", "^", "[", "]", "(", ")", "+", "-", "*", "/", "=", ":", "var", "input", "output", "type",
              "elem", "2", "1", "0", "7", "x", "n", "[[0 1]]", "[[0 1] [2 3]]", "[[]]", "[]", "[0 1]", "$", "\n",
              "2.5", "T", "in", "sum"]


@st.composite
def edited_cfd_programs(draw):
    if draw(st.booleans()):
        text = draw(st.sampled_from(EXAMPLES)).read_text()
    else:
        program = draw(programs(max_depth=3, max_stmts=3, direct_sums=False))
        program = ast.Program(program.decls, tuple(ast.Assign(s.target, without_functions(s.expr))
                                                   for s in program.stmts))
        text = to_cfd_source(program)
    toks = TOKEN.findall(text)
    return edit_tokens(draw, toks, VOCABULARY)


@pytest.mark.slow
@settings(deadline=None)
@given(text=edited_cfd_programs(), seed=st.integers(0, 1000))
def test_edited_cfd_programs_raise_only_tensorlang_errors(text, seed, monkeypatch_budget):
    note(text)
    try:
        sizes = {name: 3 for name in tl.check(text, lang="cfd").symbols}  # every symbolic size at 3
        kernel = tl.compile(text, lang="cfd", params=sizes, backend="numpy")
    except tl.TensorLangError as exc:
        assert exc.code in {"syntax", "redeclared", "undeclared-assign", "assign-shape", "undeclared",
                            "shape", "dim-range", "uninit", "read-only", "too-large", "input"}, exc
        assert exc.line is None or exc.line >= 1
        return
    if sum(int(np.prod(shape, dtype=object)) for shape in kernel.shapes.values()) > 10**6:
        return  # an edit made an input huge: too big to draw random values for
    rng = np.random.default_rng(seed)
    names = kernel.inputs or kernel.optional_inputs
    inputs = {n: rng.uniform(-1, 1, size=kernel.shapes[n]) for n in names}
    try:
        results = kernel(**inputs)
    except tl.TensorLangError as exc:
        assert exc.code == "too-large", exc  # an edit can make an outer product huge
        return
    assert set(results) == set(kernel.outputs)
