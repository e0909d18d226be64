"""TeIL on random well-typed programs: the Figure 6 semantics is the oracle.

* the EIN lowering agrees with it, run by the NumPy back end (the TeIL kernel itself) and
  by the model language's interpreter (the EIN printed as a ``.tl`` program);
* ``--emit tl`` gives a model-language program that computes the same;
* operator-form model-language programs (paper 000's generator, restricted to the
  operators TeIL has) convert to TeIL programs that compute the same;
* the Core-TeIL rewriter's output passes the Core check and computes the same;
* printing and parsing TeIL gives back the same AST.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st

import pytest
import tensorlang as tl
from tensorlang.lang.tl import ast as tl_ast
from tensorlang.lang.teil.parser import parse_teil
from tensorlang.lang.teil.printer import to_teil_source

from properties.generators import program_text, programs, random_inputs
from properties.teil_generators import teil_inputs, teil_programs

RTOL, ATOL = 1e-9, 1e-9


def _same(expected: dict, got: dict, who: str) -> None:
    assert set(expected) == set(got), f"{who}: results {sorted(got)} != {sorted(expected)}"
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=RTOL, atol=ATOL, err_msg=f"{who}: {name}")


def _case(draw):
    program = draw(teil_programs())
    text = to_teil_source(program)
    inputs = teil_inputs(program, draw(st.integers(0, 2**32 - 1)))
    expected = tl.compile(text, lang="teil", backend="interp")(**inputs)  # 001 Figure 6
    return program, text, inputs, expected


@pytest.mark.slow
@settings(max_examples=120)
@given(data=st.data())
def test_teil_lowering_matches_figure6_semantics(data):
    program, text, inputs, expected = _case(data.draw)
    note(text)
    kernel = tl.compile(text, lang="teil", backend="numpy")
    _same(expected, kernel(**inputs), "numpy (EIN)")
    ein_text = kernel.ir("ein")
    note(ein_text)
    _same(expected, tl.compile(ein_text, backend="interp")(**inputs), "EIN as .tl, interp")


@pytest.mark.slow
@settings(max_examples=120)
@given(data=st.data())
def test_teil_to_model_language_computes_the_same(data):
    program, text, inputs, expected = _case(data.draw)
    tl_text = tl.compile(text, lang="teil", backend="interp").ir("tl")
    note(text)
    note(tl_text)
    _same(expected, tl.compile(tl_text, backend="interp")(**inputs), "--emit tl")


@pytest.mark.slow
@settings(max_examples=120)
@given(data=st.data())
def test_core_rewriter_output_is_core_and_computes_the_same(data):
    program, text, inputs, expected = _case(data.draw)
    core_text = tl.compile(text, lang="teil", backend="interp").ir("core")
    note(text)
    note(core_text)
    tl.check(core_text, lang="teil", core=True)
    _same(expected, tl.compile(core_text, lang="teil", backend="interp")(**inputs), "--emit core")


@pytest.mark.slow
@given(program=teil_programs())
def test_teil_printer_round_trips(program):
    text = to_teil_source(program)
    assert parse_teil(text) == program, text


# ---------------------------------------------------------------- model language -> TeIL
def _teil_subset(program: tl_ast.Program) -> tl_ast.Program:
    """The generated program with every operator TeIL lacks replaced by one it has, at the
    same type: -e and f(e) by e, '-' by '+', '/' by '*' (also valid at both of t-sdiv's
    types), each number literal by a scalar input variable, and a stack by the outer
    product of a vector input with its first item."""
    literals: list[str] = []
    vectors: list[tuple[str, tuple[int, ...]]] = []

    def go(e):
        if isinstance(e, tl_ast.Var):
            return e
        if isinstance(e, tl_ast.Number):
            literals.append(f"lit{len(literals)}")
            return tl_ast.Var(literals[-1])
        if isinstance(e, (tl_ast.Neg, tl_ast.Paren)):
            return go(e.expr)
        if isinstance(e, tl_ast.Call):
            return go(e.arg)
        if isinstance(e, tl_ast.Binary):
            return tl_ast.Binary({"-": "+", "/": "*"}.get(e.op, e.op), go(e.left), go(e.right))
        if isinstance(e, tl_ast.Outer):
            return tl_ast.Outer(go(e.left), go(e.right))
        if isinstance(e, tl_ast.Transpose):
            return tl_ast.Transpose(go(e.expr), e.pair)
        if isinstance(e, tl_ast.Contract):
            return tl_ast.Contract(go(e.expr), e.pairs, e.grouped)
        if type(e).__name__ == "Stack":  # CFDlang's stacking: a vector input # the first item
            vectors.append((f"stk{len(vectors)}", (len(e.items),)))
            return tl_ast.Outer(tl_ast.Var(vectors[-1][0]), go(e.items[0]))
        raise AssertionError(e)

    stmts = tuple(tl_ast.Assign(s.target, go(s.expr)) for s in program.stmts)
    qual = "in" if program.qualified else None
    decls = program.decls + tuple(tl_ast.Decl(name, (), qual) for name in literals)
    decls += tuple(tl_ast.Decl(name, shape, qual) for name, shape in vectors)
    return tl_ast.Program(decls, stmts)


@settings(max_examples=120)
@given(program=programs(max_depth=3, max_stmts=3, direct_sums=False), seed=st.integers(0, 2**32 - 1))
def test_model_language_to_teil_computes_the_same(program, seed):
    program = _teil_subset(program)
    text = program_text(program, full_parens=False)
    inputs = random_inputs(program, seed)
    kernel = tl.compile(text, backend="interp")
    teil_text = kernel.ir("teil")
    note(text)
    note(teil_text)
    _same(kernel(**inputs), tl.compile(teil_text, lang="teil", backend="interp")(**inputs), "--emit teil")
