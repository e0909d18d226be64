"""Fuzzing every front end (issue 16): grammar-drawn text, well-typed generated programs
and random edits of them, in the model language (both statement forms), TeIL and
CFDlang.  Each input either is rejected with a TensorLangError (never ``internal``, never
another exception, never a hang) or checks and then runs on every available target,
optimized and not, agreeing with the front end's interpreter on inputs with ⊥, ±inf and
±0 (oracle.assert_targets_agree).

CI runs a few examples of each (about 15 s in all); ``TENSORLANG_FUZZ_EXAMPLES=500``
runs longer locally."""

from __future__ import annotations

import re

from hypothesis import given, note, strategies as st

import pytest
from fuzz.grammars import grammar_programs
from fuzz.oracle import assert_targets_agree, fuzz_settings, no_hang
from properties.generators import edit_tokens, map_children, program_text, programs
from properties.harness import index_programs
from properties.teil_generators import teil_programs, to_teil_source
from tensorlang.ein.printer import to_text
from tensorlang.lang.cfd import to_cfd_source
from tensorlang.lang.tl import ast

MODES = st.sampled_from(["finite", "cancel", "edges"])
TOKEN = re.compile(r"\s+|//[^\n]*|[A-Za-z_][A-Za-z0-9_+*]*|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|.", re.S)
VOCABULARY = {
    "tl": ["#", ".", "^", "[", "]", "(", ")", "+", "-", "*", "/", "=", ":", ",", "var", "in", "out", "inout",
           "0", "1", "2", "-0", "1e308", "x", "i", "k", "sum(k)", "sum(k:2)", "prod(k)", "max(k)", "delta[i,k]",
           "eps[i,k]", "exp", "[1 2]", "[[1 2] [3 4]]", "[2 3]", "i+1", "2*i", "\n"],
    "teil": ["add", "mul", "prod", "red+", "red*", "redmax", "transp", "diag", "expa", "proj", "contr", "(", ")",
             "=", "1", "2", "3", "0", "alloc", "in", "out", "[2 3]", "[]", "t0", "\n"],
    "cfd": ["#", ".", "^", "[", "]", "(", ")", "+", "-", "*", "/", "=", ":", "var", "input", "output", "type",
            "0", "1", "2", "n", "[[0 1]]", "[[0 1] [2 3]]", "[]", "2.5", "\n"],
}


def _strip_functions(e):
    """CFDlang has no functions: the model expression without them."""
    if isinstance(e, ast.Call):
        return _strip_functions(e.arg)
    return map_children(e, _strip_functions)


@st.composite
def generated(draw, lang: str) -> str:
    """A well-typed program of ``lang`` as text, edited at random one time in two."""
    if lang == "tl-operator":
        text = program_text(draw(programs(max_depth=3, max_stmts=3)), full_parens=draw(st.booleans()))
    elif lang == "tl-index":
        text = to_text(draw(index_programs(max_depth=3, max_stmts=3, max_extent=4)))
    elif lang == "teil":
        text = to_teil_source(draw(teil_programs(max_depth=3, max_stmts=3)))
    else:
        program = draw(programs(max_depth=3, max_stmts=3, direct_sums=False))
        text = to_cfd_source(ast.Program(program.decls, tuple(ast.Assign(s.target, _strip_functions(s.expr))
                                                              for s in program.stmts)))
    if draw(st.booleans()):
        text = edit_tokens(draw, TOKEN.findall(text), VOCABULARY[lang.split("-")[0]])
    return text


def _lang(kind: str) -> str:
    return kind.split("-")[0]


@pytest.mark.slow
@fuzz_settings(25)
@given(data=st.data(), kind=st.sampled_from(["tl", "teil", "cfd"]), seed=st.integers(0, 2**16), mode=MODES)
def test_grammar_drawn_text_is_rejected_cleanly_or_runs_alike_everywhere(data, kind, seed, mode, monkeypatch_budget):
    text = data.draw(grammar_programs(kind))
    note(text)
    with no_hang(f"{kind} program"):
        assert_targets_agree(text, kind, seed, mode, params={"n": 3} if kind == "cfd" else None)


@pytest.mark.slow
@fuzz_settings(40)
@given(data=st.data(), kind=st.sampled_from(["tl-operator", "tl-index", "teil", "cfd"]), seed=st.integers(0, 2**16),
       mode=MODES)
def test_generated_and_edited_programs_run_alike_everywhere(data, kind, seed, mode, monkeypatch_budget):
    text = data.draw(generated(kind))
    note(text)
    with no_hang(f"{kind} program"):
        assert_targets_agree(text, _lang(kind), seed, mode, params={"n": 3} if kind == "cfd" else None)


@pytest.mark.slow
@fuzz_settings(12)
@given(data=st.data(), kind=st.sampled_from(["tl-operator", "tl-index", "teil", "cfd"]), seed=st.integers(0, 2**16),
       mode=MODES)
def test_float32_programs_run_alike_everywhere(data, kind, seed, mode, monkeypatch_budget):
    text = data.draw(generated(kind))
    note(text)
    with no_hang(f"{kind} program"):
        assert_targets_agree(text, _lang(kind), seed, mode, params={"n": 3} if kind == "cfd" else None,
                             dtype="float32")
