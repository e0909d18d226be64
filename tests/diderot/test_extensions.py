"""Programs written for research branches of Diderot's compiler (closed-form, polynomial
and finite-element fields, field max/min, ``#version 3.0``) are refused with an error
code at the name that only such a branch knows, saying so (docs/diderot.md, "Programs
from other corpora")."""

from __future__ import annotations

import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program
from tensorlang.lang.diderot import typecheck as check

STRAND = """
strand s (int i) {
  output real out = 0;
  update { stabilize; }
}
initially [ s(i) | i in 0..1 ];
"""


def refusal(text: str) -> TensorLangError:
    with pytest.raises(TensorLangError) as info:
        check(parse_program(text))
    return info.value


@pytest.mark.parametrize("decl, code, col, word", [
    ("ofield#1(2)[] F = g(x, x[0]);", "syntax", 1, "ofield"),
    ("input fem#1(2)[] F;", "syntax", 7, "fem"),
    ("poly#1(2)[] F = g(x, x[0]);", "syntax", 1, "poly"),
    ("mesh m = unitMesh(2, 2);", "syntax", 1, "mesh"),
    ("field#1(2)[] F = cfexp(img, 1.0);", "undeclared", 18, "cfexp"),
    ("field#1(2)[] F = maxF(bspln3 ⊛ img, bspln3 ⊛ img);", "undeclared", 18, "maxF"),
    ("field#1(2)[] F = max(bspln3 ⊛ img, bspln3 ⊛ img);", "shape", 18, "max"),
])
def test_a_research_branch_feature_is_named_at_its_position(decl, code, col, word):
    err = refusal("#version 2.0\ninput image(2)[] img;\n" + decl + STRAND)
    assert (err.code, err.line, err.col) == (code, 3, col)
    assert word in err.message and "research branch" in err.message


def test_a_research_type_right_after_the_version_line_is_named():
    err = refusal("#version 2.0\n\n// a comment\nofield#1(1,1)[] F (real a)(real b) = a*b;" + STRAND)
    assert (err.code, err.line, err.col) == ("syntax", 4, 1) and "research branch" in err.message


def test_a_name_of_ours_spelled_like_a_research_word_stays_a_name():
    # `mesh` and `cell` are ordinary names where a declaration or an assignment can use them
    check(parse_program("#version 2.0\nreal mesh = 1;\nint cell = 2;" + STRAND))


def test_an_unknown_function_that_no_branch_defines_says_nothing_of_branches():
    err = refusal("#version 2.0\nreal y = frobnicate(1.0);" + STRAND)
    assert err.code == "undeclared" and "research" not in err.message


def test_version_3_is_refused_at_the_version_line():
    err = refusal("#version 3.0\nreal y = 1;" + STRAND)
    assert (err.code, err.line) == ("syntax", 1)
