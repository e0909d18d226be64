"""Size expressions in declarations (docs/language.md, "Size expressions"): an extent
written as + - * and parentheses over symbolic sizes and integers (``[M p+p*p]``), and the
symbolic concat and vec whose extents are such expressions."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import lang
from tensorlang.errors import Source
from tensorlang.semantics.sizes import Sym, extent_of, poly_of, size_arith

from corpus import EXAMPLES

QUADRATIC = (EXAMPLES / "sizes" / "quadratic_features.tl").read_text()


def features(F):
    return np.concatenate([F, np.einsum("mi,mj->mij", F, F).reshape(len(F), -1)], axis=1)


def shapes(text: str, **params):
    program = lang.parse(Source(text, "t.tl"), "tl", params)
    return {d.name: d.shape for d in program.decls}


@pytest.mark.parametrize("written, normal", [
    ("p+p*p", "p+p*p"), ("p + p*p", "p+p*p"), ("p*(p+1)", "p+p*p"), ("(p+1)*p", "p+p*p"),
    ("p*2-p+n", "n+p"), ("2*p-p", "p"), ("(p)", "p"), ("n*m+2*n-1", "2*n+m*n-1"),
])
def test_a_size_expression_is_one_symbol_per_polynomial(written, normal):
    got = shapes(f"in var x : [M {written}]\nin var y : [p m n]\n")["x"]
    assert got[0] == Sym("M") and len(got) == 2
    assert str(got[1]) == normal


def test_integer_arithmetic_is_folded_and_dimensions_are_apart_where_no_operator_joins():
    assert shapes("in var x : [2*3 4 (1+1)*2]\n")["x"] == (6, 4, 4)
    assert shapes("in var x : [n m]\n")["x"] == (Sym("n"), Sym("m"))
    assert shapes("in var x : [n - m]\n")["x"] == (Sym("n-m"),)


def test_params_evaluate_a_size_expression():
    assert shapes(QUADRATIC, p=3)["Z"] == (Sym("M"), 12)
    assert shapes(QUADRATIC, p=3, M=5)["Z"] == (5, 12)
    assert shapes("in var x : [n-2*m]\nin var y : [n m]\n", n=7)["x"] == (Sym("7-2*m"),)


def test_the_printed_program_parses_back_to_the_same_declarations():
    program = lang.parse(Source(QUADRATIC, "q.tl"), "tl")
    printed = lang.get("tl").print(program)
    assert "[M p+p*p]" in printed
    assert lang.parse(Source(printed, "r.tl"), "tl").decls == program.decls


@pytest.mark.parametrize("text, params, words", [
    ("in var x : [M q]\nout var y : [M p+p*p]\ny[m,i] = 1\n", {}, ["'p'", "only in the size expression", "--param p"]),
    ("in var x : [n]\nout var y : [n-4]\ny[i] = x[i]\n", {"n": 3}, ["n-4", "-1", "n = 3"]),
    ("in var x : [n]\nout var y : [n-2*n]\ny[i] = 1\n", {}, ["below 1 for every value"]),
])
def test_an_unknown_size_or_a_size_below_one_is_error_shape(text, params, words):
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(text, params=params) if params else tl.check(text)
    assert info.value.code == "shape"
    assert all(w in info.value.message for w in words), info.value.message


def test_symbolic_concat_and_vec_have_expression_extents():
    tl.check("in var F : [M p]\nout var C : [M 2*p]\nC = concat(F, F)\n")
    k = tl.compile("in var F : [M p]\nin var G : [M p q]\nout var V : [M p*q]\nV = vec(G)\n", backend="numpy")
    g = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(k(F=np.ones((2, 3)), G=g)["V"], g.reshape(2, 12))
    with pytest.raises(tl.TensorLangError) as info:  # q*p is p*q: one polynomial; p+q is not
        tl.check("in var G : [M p q]\nout var V : [M p+q]\nV = vec(G)\n")
    assert info.value.code == "assign-shape" and "p*q" in info.value.message


def test_size_arithmetic_on_extents():
    assert size_arith("+", Sym("p"), Sym("p*p")) == Sym("p+p*p")
    assert size_arith("*", 3, 4) == 12
    assert size_arith("+", Sym("N*(N+1)/2"), 1) is None  # STUR's derived names stay opaque
    assert extent_of(poly_of(Sym("p*(p+1)-p*p"))) == Sym("p")


@pytest.mark.parametrize("backend", tl.available_backends())
def test_quadratic_features_run_on_every_back_end_as_the_interpreter(backend):
    rng = np.random.default_rng(4)
    k = tl.compile(QUADRATIC, backend=backend)
    reference = tl.compile(QUADRATIC, backend="interp")
    for M, p in ((3, 2), (5, 4)):
        F = rng.uniform(-1, 1, (M, p))
        got = k(F=F)["Z"]
        assert got.shape == (M, p + p * p)
        np.testing.assert_allclose(got, reference(F=F)["Z"], rtol=1e-12, atol=0)
        np.testing.assert_allclose(got, features(F), rtol=1e-12, atol=0)


def test_a_size_expression_is_checked_against_the_input_shape_once_its_sizes_are_known():
    k = tl.compile("in var F : [M p]\nin var A : [M p+p*p]\nout var B : [M p+p*p]\nB = A + A\n")
    a = np.ones((2, 6))
    np.testing.assert_array_equal(k(F=np.ones((2, 2)), A=a)["B"], 2 * a)
    with pytest.raises(tl.TensorLangError) as info:
        k(F=np.ones((2, 3)), A=a)  # p = 3 makes A's second extent 12
    assert info.value.code == "input" and "'A'" in info.value.message


def test_the_documented_example_is_the_tested_file():
    page = (EXAMPLES.parent / "docs" / "language.md").read_text()
    section = page.split("### Size expressions", 1)[1]
    shown = section.split("```\n", 2)[1]
    assert shown in QUADRATIC


@pytest.mark.parametrize("extent", [
    "+".join(f"a{i}" for i in range(100)),            # too many terms
    "*".join(["(a+b+c+d+e+f+g+h)"] * 40),             # a product that would explode
    "*".join(["p"] * 100),                           # a degree above the bound
    "*".join(["99999"] * 40) + "*p",                 # a coefficient past 2^124
])
def test_a_hostile_size_expression_is_error_too_large_at_its_text(extent):
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(f"in var x : [{extent}]\n")
    assert info.value.code == "too-large"
    assert info.value.diagnostics[0].span.line == 1 and info.value.diagnostics[0].span.col == 13


# ------------------------------------------------------------------ analyze and .symbols (issue 43)
def test_check_symbols_are_the_free_sizes_and_the_expressions_apart():
    checked = tl.check(QUADRATIC)
    assert checked.symbols == ("M", "p")  # names to bind: every one an identifier
    assert checked.derived_symbols == ("p+p*p",)
    bound = tl.check(QUADRATIC, params=dict.fromkeys(checked.symbols, 3))
    assert bound.symbols == () and bound.derived_symbols == ()
    only = tl.check("in var x : [n m]\nout var y : [n m]\ny = x * 2\n")
    assert only.symbols == ("n", "m") and only.derived_symbols == ()


def test_analyze_reads_a_size_expression_back_as_its_polynomial(capsys, tmp_path):
    from tensorlang.cli import main

    path = tmp_path / "joined.tl"
    path.write_text("in var x : [M p]\nin var y : [M q]\nout var z : [M p+q]\nout var s : [M]\n"
                    "z = concat(x, y)\ns[m] = sum(i) z[m,i]\n")
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "z : [M p + q]" in out and "s : [M]   flops M*p + M*q   bytes 8*M*p + 8*M*q + 8*M" in out
    assert tl.compile(path).cost_report() == out
    assert main(["analyze", str(path), "--param", "M=5", "--param", "p=3", "--param", "q=2"]) == 0
    assert "z : [5 5]" in capsys.readouterr().out


def test_analyze_names_the_size_whose_value_changes_the_programs_form(capsys, tmp_path):
    """``vec`` of a computed ``[M p p]`` lowers to one piece per row, each with its own
    work: no polynomial in p counts that, so analyze asks for p's value."""
    from tensorlang.cli import main

    path = tmp_path / "scaled.tl"
    path.write_text(QUADRATIC.replace("vec(Q)", "vec(Q * 2)"))
    assert main(["analyze", str(path)]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "give --param p=VALUE" in err and "M may stay symbolic" in err
    assert "Traceback" not in err
    with pytest.raises(tl.TensorLangError, match="no polynomials in p") as info:
        tl.compile(path).cost_report()
    assert info.value.code == "input"
    assert main(["analyze", str(path), "--param", "p=3"]) == 0
    out = capsys.readouterr().out
    assert "Z : [M 12]" in out and "symbolic sizes: M" in out


def test_analyze_costs_a_vec_of_copies_as_polynomials():
    """The pieces of ``vec(Q)`` are copies (no flops), so the costs are polynomials
    whatever form p gives the lowered program."""
    report = tl.compile(QUADRATIC).cost_report()
    assert "Q : [M p p]   flops M*p^2" in report
    assert "Z : [M p^2 + p]   flops 0   bytes 16*M*p^2 + 16*M*p" in report


def test_analyze_without_values_that_cannot_lower_says_which_values_to_give():
    """No costs is never a report with exit status 0: a STUR position symbol is named, a
    program that does not lower at the stand-in sizes says so and asks for the sizes."""
    position = ("symbols: P, Q, K\nA(i, j) := X(i, j) * (i = K)\nA:D(i, j) := (0 <= i < P) * (0 <= j < Q)\n"
                "X:D(i, j) := (0 <= i < P) * (0 <= j < Q)\n")
    k = tl.compile(position, lang="stur", backend="numpy")
    assert isinstance(k, tl.SymbolicKernel) and k.symbols == ("P", "Q", "K")  # K, a position, is bound by specialize(K=...)
    with pytest.raises(tl.TensorLangError, match="'K'") as info:
        k.cost_report()
    assert info.value.code == "input"
    packed = ("symbols: N\npacked(s) := U(i, j) * (i <= j) * (s = (N * i + j) - (i * (i + 1) / 2))\n"
              "U:D(i, j) := (0 <= i < N) * (0 <= j < N)\nU:U(i, j) := (i <= j)\n"
              "packed:D(s) := (0 <= s) * (s < N * (N + 1) / 2)\n")
    k = tl.compile(packed, lang="stur", backend="numpy")
    with pytest.raises(tl.TensorLangError, match=r"stand-in sizes \(N = \d+\).*give --param N=VALUE"):
        k.cost_report()
