"""Errors in the CFDlang dialect: the model language's codes, rules and spans (line:col
into the .cfd text), and never anything but a TensorLangError (the public compiler
aborts on an assertion).

Where a .cfd program and a model-language program are written with the same layout
(declarations without qualifiers are spelled alike, and ``[[0 5]]`` has the width of
``[[1 6]]``), both must fail with the same code, rule and position.
"""

from __future__ import annotations

import pytest

import tensorlang as tl
from tensorlang.cli import main

# (cfd program, code, line, col, rule or None, message fragment)
CASES = [
    # ---- syntax
    ("var x : [2]\nx = x +\n", "syntax", 2, 8, None, "end of input"),
    ("var x : [2]\nx = x $ x\n", "syntax", 2, 7, None, "unexpected character"),
    ("var x : [2]\nx = x ^ x\n", "syntax", 2, 9, None, "list of dimension pairs"),
    ("var x : [2 2]\nx = x . [[0 1 1]]\n", "syntax", 2, 10, None, "names two dimensions"),
    ("var x : [2 2]\nx = x ^ [[0]]\n", "syntax", 2, 10, None, "names two dimensions"),
    ("var x : [2]\nx = []\n", "syntax", 2, 5, "t-stack", "at least one operand"),
    ("var var : [2]\n", "syntax", 1, 5, None, "keyword"),
    ("var x : [2]\nx = x\nvar y : [2]\n", "syntax", 3, 1, None, "declarations must come before"),
    ("var x : [2]\nx = x\ntype t : [2]\n", "syntax", 3, 1, None, "declarations must come before"),
    # a doubled keyword with no statement anywhere is no misplaced declaration
    ("var var x : [2]\n", "syntax", 1, 5, None, "'var' is a keyword"),
    ("type T : [2]\nvar x : var\n", "syntax", 2, 9, None, "keyword"),  # a keyword as a type name
    ("var x : [2]\nelem [x] 5 last\nx = x\n", "syntax", 2, 1, None, "'elem' directive"),
    ("var x : [2.5]\n", "syntax", 1, 10, None, "whole number"),
    ("var x : [2]\nx = x . []\n", "syntax", 2, 9, None, "at least one pair"),
    # ---- undeclared
    ("var x : [2]\nx = y\n", "undeclared", 2, 5, "t-var", "'y' is not declared"),
    ("var x : T\n", "undeclared", 1, 9, None, "type 'T' is not declared"),
    ("type T : [2]\nvar x : T\nx = T\n", "undeclared", 3, 5, "t-var", "names a type"),
    ("var x : [2]\nvar y : x\n", "undeclared", 2, 9, "s-var", "is a variable, not a type"),
    # ---- undeclared-assign
    ("var x : [2]\ny = x\n", "undeclared-assign", 2, 1, "ok-stmt", "not declared"),
    ("type T : [2]\nvar x : T\nT = x\n", "undeclared-assign", 3, 1, "ok-stmt", "names a type"),
    ("var x : [2]\nx = x\nzz = x\n", "undeclared-assign", 3, 1, "ok-stmt", "'zz'"),
    # ---- redeclared
    ("var x : [2]\nvar x : [3]\n", "redeclared", 2, 5, "s-var", "declared twice"),
    ("type x : [2]\nvar x : [2]\n", "redeclared", 2, 5, "s-var", "declared twice"),
    ("var x : [2]\ntype x : [2]\n", "redeclared", 2, 6, "s-var", "declared twice"),
    ("type T : [2]\ntype T : [3]\n", "redeclared", 2, 6, "s-var", "first declared at line 1"),
    # ---- assign-shape
    ("var x : [2]\nvar y : [3]\ny = x\n", "assign-shape", 3, 1, "ok-stmt", "[3]"),
    ("var A : [2 3]\nvar B : [2 2]\nB = A # A . [[0 2]]\n", "assign-shape", 3, 1, "ok-stmt", "[3 3]"),
    ("var u : [2 2]\nvar D : [2 2]\nvar v : [2 2]\nv = [D#u.[[1 2]] D#u.[[1 2]]]\n",
     "assign-shape", 4, 1, "ok-stmt", "[2 2 2]"),
    # ---- shape
    ("var x : [2]\nvar y : [3]\nx = x + y\n", "shape", 3, 5, "t-elem", "no broadcasting"),
    ("var x : [2]\nvar y : [3]\nvar z : [2 2]\nz = [x y]\n", "shape", 4, 8, "t-stack", "equal types"),
    ("var x : [2 3]\nvar s : []\ns = x . [[0 1]]\n", "shape", 3, 10, "t-contr-group", "dimensions 0 and 1"),
    ("var x : [0 2]\n", "shape", 1, 1, "s-var", "positive"),
    ("var a : [2 3]\nvar b : [2 3]\nvar c : [2 3]\nc = a . b\n", "shape", 4, 5, "t-contr", "different extents"),
    ("var x : [2]\nvar y : [2 2]\ny = x / y\n", "shape", 3, 5, "t-sdiv", "scalar on the right"),
    # ---- dim-range (messages count dimensions from 0, as the program does)
    ("var x : [2 2]\nvar s : []\ns = x . [[0 2]]\n", "dim-range", 3, 10, "t-contr-group", "dimensions 0..1"),
    ("var x : [2 2]\nx = x ^ [[0 5]]\n", "dim-range", 2, 10, "t-trans", "names dimension 5"),
    ("var x : [2 2 2 2]\nvar s : []\ns = x . [[0 1] [1 2]]\n", "dim-range", 3, 16, "t-contr-group", "dimension 1 appears"),
    ("var x : [2 2]\nvar s : []\ns = x . [[1 1]]\n", "dim-range", 3, 10, "t-contr-group", "got [1 1]"),
    ("var a : []\nvar b : [2]\nvar c : [2]\nc = a . b\n", "dim-range", 4, 5, "t-contr", "scalar"),
    # ---- uninit
    ("var input x : [2]\nvar output y : [2]\nvar t : [2]\ny = t\n", "uninit", 4, 5, "uninit (000 §5)", "'t'"),
    ("var input x : [2]\nvar output y : [2]\n", "uninit", 2, 12, "uninit (000 §5)", "never assigned"),
    ("var input x : [2]\nvar output y : [2]\ny = y + x\n", "uninit", 3, 5, "uninit (000 §5)", "'y'"),
    # ---- read-only
    ("var input x : [2]\nx = x + x\n", "read-only", 2, 1, "d-in-var", "'x'"),
    ("var input x : [2]\nvar output y : [2]\ny = x\nx = y\n", "read-only", 4, 1, "d-in-var", "'x'"),
    ("type s : []\nvar input input x : s\nx = 2\n", "read-only", 3, 1, "d-in-var", "'x'"),
    # ---- too-large
    ("type big : [n n n n]\nvar x : big\n", "too-large", 2, 1, "s-var", "2^62"),
]


@pytest.mark.parametrize("text, code, line, col, rule, fragment", CASES)
def test_cfd_error_has_code_rule_and_span(text, code, line, col, rule, fragment):
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(text, lang="cfd", params={"n": 2**20} if "big" in text else None, backend="numpy")
    err = info.value
    assert (err.code, err.line, err.col) == (code, line, col), err.render()
    assert err.rule == rule, err.render()
    assert fragment in err.message, err.render()


def test_every_error_kind_has_three_cases():
    kinds = {}
    for case in CASES:
        kinds[case[1]] = kinds.get(case[1], 0) + 1
    assert {k for k, n in kinds.items() if n < 3} <= {"too-large"}, kinds


# (cfd program, model-language program with the same layout)
PAIRS = [
    ("var x : [2]\nx = y\n", "var x : [2]\nx = y\n"),
    ("var x : [2]\ny = x\n", "var x : [2]\ny = x\n"),
    ("var x : [2]\nvar x : [3]\n", "var x : [2]\nvar x : [3]\n"),
    ("var x : [2]\nvar y : [3]\ny = x\n", "var x : [2]\nvar y : [3]\ny = x\n"),
    ("var A : [2 3]\nvar B : [2 2]\nB = A # A . [[0 2]]\n", "var A : [2 3]\nvar B : [2 2]\nB = A # A . [[1 3]]\n"),
    ("var x : [2]\nvar y : [3]\nx = x + y\n", "var x : [2]\nvar y : [3]\nx = x + y\n"),
    ("var x : [2 3]\nvar s : []\ns = x . [[0 1]]\n", "var x : [2 3]\nvar s : []\ns = x . [[1 2]]\n"),
    ("var x : [0 2]\n", "var x : [0 2]\n"),
    ("var x : [2 2]\nvar s : []\ns = x . [[0 2]]\n", "var x : [2 2]\nvar s : []\ns = x . [[1 3]]\n"),
    ("var x : [2 2 2 2]\nvar s : []\ns = x . [[0 1] [1 2]]\n",
     "var x : [2 2 2 2]\nvar s : []\ns = x . [[1 2] [2 3]]\n"),
    ("var x : [2]\nx = x +\n", "var x : [2]\nx = x +\n"),
    ("var x : [2]\nx = x $ x\n", "var x : [2]\nx = x $ x\n"),
    ("var x : [2]\nvar y : [2 2]\ny = x / y\n", "var x : [2]\nvar y : [2 2]\ny = x / y\n"),
]


@pytest.mark.parametrize("cfd_text, tl_text", PAIRS)
def test_same_code_rule_and_span_as_the_model_language(cfd_text, tl_text):
    errors = []
    for text, lang in ((cfd_text, "cfd"), (tl_text, "tl")):
        with pytest.raises(tl.TensorLangError) as info:
            tl.check(text, lang=lang)
        errors.append(info.value)
    cfd_err, tl_err = errors
    assert (cfd_err.code, cfd_err.rule, cfd_err.span) == (tl_err.code, tl_err.rule, tl_err.span), (
        cfd_err.render() + "\n" + tl_err.render())


@pytest.mark.parametrize("params", [{"n": 0}, {"n": -3}, {"n": "5"}, {"n": True}, {"n": 2.0}, {"bad name": 2}, [1]])
def test_bad_params_are_input_errors(params):
    with pytest.raises(tl.TensorLangError) as info:
        tl.check("type T : [n]\nvar x : T\n", lang="cfd", params=params)
    assert info.value.code == "input"


def test_rendered_error_points_into_the_cfd_file(tmp_path, capsys):
    path = tmp_path / "bad.cfd"
    path.write_text("var x : [2 2]\nx = x ^ [[0 5]]\n")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2:10: error[dim-range]" in err
    assert "x = x ^ [[0 5]]" in err and "^~~~~" in err and "rule: t-trans" in err
    assert "Traceback" not in err
