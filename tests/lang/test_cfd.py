"""The CFDlang dialect (``.cfd``, docs/cfdlang.md): its kernels against numpy, every
feature of the dialect, and the model language it turns into.

Expected values are written directly in numpy (einsum, stack), never through tensorlang.
"""

from __future__ import annotations


import numpy as np
import pytest

import tensorlang as tl
from tensorlang.lang.cfd import parse_cfd, to_cfd_source
from tensorlang.lang.tl import ast
from tensorlang.lang.tl.model_source import to_model_source

from corpus import CFD_KERNELS, helmholtz_case
from corpus import ROOT

EXAMPLES = ROOT / "examples" / "cfd"
BACKENDS = ["interp", "numpy"]


def cfd(text: str, backend: str = "interp", **params):
    return tl.compile(text, backend=backend, lang="cfd", params=params or None)


def rand(rng, *shape):
    return rng.standard_normal(shape)


def close(got, expected):
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


KERNELS = CFD_KERNELS


def test_every_cfd_example_is_covered():
    assert {p.name for p in EXAMPLES.glob("*.cfd")} == set(KERNELS)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_cfd_kernel_matches_numpy(name, backend):
    make, params = KERNELS[name]
    inputs, expected = make(np.random.default_rng(7))
    kernel = tl.compile(EXAMPLES / name, backend=backend, params=params or None)
    assert set(kernel.inputs) == set(inputs) and set(kernel.outputs) == set(expected)
    results = kernel(**inputs)
    for key, value in expected.items():
        close(results[key], value)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_emitted_model_program_computes_the_same(name):
    make, params = KERNELS[name]
    inputs, expected = make(np.random.default_rng(8))
    kernel = tl.compile(EXAMPLES / name, params=params or None, backend="numpy")
    text = to_model_source(kernel.program)
    again = tl.compile(text, backend="numpy")  # the model language
    assert again.program.lang == "tl"
    for key, value in expected.items():
        close(again(**inputs)[key], value)


def test_helmholtz_size_comes_from_params():
    k4 = tl.compile(EXAMPLES / "inverse_helmholtz.cfd", params={"n": 4}, backend="numpy")
    k6 = tl.compile(EXAMPLES / "inverse_helmholtz.cfd", params={"n": 6}, backend="numpy")
    assert k4.shapes["D"] == (4, 4, 4) and k6.shapes["A"] == (6, 6)
    inputs, expected = helmholtz_case(np.random.default_rng(9), n=6)
    close(k6(**inputs)["v"], expected["v"])


# --------------------------------------------------------------------------- declarations
def test_type_aliases_and_qualifiers():
    k = cfd(
        "type m : [2 3]\ntype s : []\n"
        "var input a : m\nvar input output b : m\nvar output input c : m\n"
        "var input input d : s\nvar output output e : m\nvar f : m\n"
        "f = a\nb = f + b\nc = c * d\ne = b\n"
    )
    quals = {d.name: d.qual for d in k.program.decls}
    assert quals == {"a": "in", "b": "inout", "c": "inout", "d": "in", "e": "out", "f": None}
    assert k.shapes["a"] == (2, 3) and k.shapes["d"] == ()
    rng = np.random.default_rng(0)
    a, b, c = rand(rng, 2, 3), rand(rng, 2, 3), rand(rng, 2, 3)
    res = k(a=a, b=b, c=c, d=2.0)
    close(res["b"], a + b)
    close(res["c"], 2 * c)
    close(res["e"], a + b)
    assert set(res) == {"b", "c", "e"}


def test_no_qualifiers_means_every_variable_is_inout():
    k = cfd("var x : [2]\nvar y : [2]\ny = x + x\n")
    res = k(x=np.array([1.0, 2.0]))
    close(res["y"], [2.0, 4.0])
    close(res["x"], [1.0, 2.0])


def test_symbolic_sizes_and_unused_params():
    k = cfd("type t : [n m n]\nvar x : t\nvar y : [m]\ny = x . [[0 2]]\n", n=2, m=3)
    assert k.shapes == {"x": (2, 3, 2), "y": (3,)}
    x = rand(np.random.default_rng(1), 2, 3, 2)
    close(k(x=x)["y"], np.einsum("aja->j", x))
    # a size the program does not use is a mistake (a misspelt name), not silence
    with pytest.raises(tl.TensorLangError) as info:
        cfd("type t : [n m n]\nvar x : t\nvar y : [m]\ny = x . [[0 2]]\n", n=2, m=3, unused=9)
    assert info.value.code == "input" and "'unused'" in str(info.value) and "n, m" in str(info.value)


def test_a_file_with_a_utf8_byte_order_mark_reads_as_without(tmp_path):
    # editors on Windows write a BOM; CFDlang's flex scanner skips it, and so do we
    path = tmp_path / "bom.cfd"
    path.write_bytes(b"\xef\xbb\xbfvar input A : [2 2]\nvar output b : []\nb = A . [[0 1]]\n")
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    close(tl.compile(path, backend="numpy")(A=a)["b"], np.trace(a))
    path.write_bytes(b"\xef\xbb\xbfvar x : [2]\nx = y\n")
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(path)
    assert (info.value.code, info.value.line, info.value.col) == ("undeclared", 2, 5)


def test_numpy_integer_params_are_accepted():
    # a size computed with numpy (x.shape[0], np.int64) is an integer like any other
    n = np.int64(3)
    k = cfd("type t : [n]\nvar x : t\nvar y : [n]\ny = x + x\n", n=n)
    assert k.shapes == {"x": (3,), "y": (3,)} and type(k.shapes["x"][0]) is int


def test_params_bind_model_language_sizes_and_unknown_names_are_errors():
    k = tl.compile("var x : [n]\nx = x + x\n", params={"n": 2}, backend="numpy")
    close(k(x=[1.0, 2.0])["x"], [2.0, 4.0])
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile("var x : [2]\nx = x + x\n", params={"n": 3}, backend="numpy")
    assert info.value.code == "input" and "no symbolic sizes" in str(info.value)


def test_comments_decimals_and_keywords_as_plain_words():
    # 'in', 'out' and 'sum' are not keywords of CFDlang: they name variables here
    k = cfd("// a comment\nvar input in : [2] // here too\nvar output out : [2]\nvar sum : []\n"
            "sum = 2.5\nout = sum * in\n")
    close(k(**{"in": np.array([1.0, 2.0])})["out"], [2.5, 5.0])
    text = to_model_source(k.program)
    assert "in_" in text and "sum_" in text and "renamed" in text
    again = tl.compile(text, backend="numpy")
    close(again(in_=np.array([1.0, 2.0]))["out_"], [2.5, 5.0])
    ein = k.ir("ein")  # the EIN stage prints a .tl program too: the same renaming
    assert "renamed: in -> in_" in ein
    close(tl.compile(ein, backend="numpy")(in_=np.array([1.0, 2.0]))["out_"], [2.5, 5.0])


# --------------------------------------------------------------------------- operators
@pytest.fixture
def rng():
    return np.random.default_rng(3)


def test_contraction_lists_are_zero_based_and_applied_at_once(rng):
    k = cfd("var input x : [2 3 2 3]\nvar output y : []\ny = x . [[0 2] [1 3]]\n")
    (contract,) = [k.program.stmts[0].expr]
    assert [(p.first, p.second) for p in contract.pairs] == [(1, 3), (2, 4)] and contract.grouped
    x = rand(rng, 2, 3, 2, 3)
    close(k(x=x)["y"], np.einsum("abab->", x))


def test_empty_dimension_lists_are_skipped_as_cfdlang_does(rng):
    k = cfd("var input x : [2 2]\nvar output y : [2 2]\nvar output z : []\ny = x . [[]]\nz = x . [[] [0 1]]\n")
    x = rand(rng, 2, 2)
    res = k(x=x)
    close(res["y"], x)
    close(res["z"], np.trace(x))


def test_transposition_lists(rng):
    k = cfd("var input x : [2 3 4 5]\nvar output y : [3 2 5 4]\nvar output z : [3 4 2]\n"
            "var input w : [2 3 4]\n"
            "y = x ^ [[0 1] [2 3]]\n"          # two disjoint swaps, all at once
            "z = w ^ [[0 1] [1 2]]\n")         # overlapping: one after the other
    x, w = rand(rng, 2, 3, 4, 5), rand(rng, 2, 3, 4)
    res = k(x=x, w=w)
    close(res["y"], np.einsum("abcd->badc", x))
    close(res["z"], np.swapaxes(np.swapaxes(w, 0, 1), 1, 2))


def test_hash_and_caret_bind_tighter_than_dot(rng):
    # A # u ^ [[0 1]] . [[1 2]]: the transposition applies to u alone, then the contraction
    k = cfd("var input A : [2 3]\nvar input u : [3 4]\nvar output v : [2 4]\nv = A # u ^ [[0 1]] . [[1 3]]\n")
    A, u = rand(rng, 2, 3), rand(rng, 3, 4)
    close(k(A=A, u=u)["v"], np.einsum("ia,ja->ij", A, u.T))


def test_dot_binds_tighter_than_times(rng):
    # the Helmholtz kernel without its parentheses means the same as in CFDlang
    k = cfd("var input D : [3 3]\nvar input A : [3 3]\nvar input u : [3 3]\nvar output t : [3 3]\n"
            "t = D * A # u . [[0 2]] * 2\n")
    D, A, u = rand(rng, 3, 3), rand(rng, 3, 3), rand(rng, 3, 3)
    close(k(D=D, A=A, u=u)["t"], D * np.einsum("ai,aj->ij", A, u) * 2)


def test_operators_are_left_associative_unlike_the_public_grammar():
    k = cfd("var a : []\nvar b : []\nvar c : []\nvar d : []\nvar e : []\n"
            "d = a - b - c\ne = a / b / c + a - b + c\n")
    res = k(a=8.0, b=4.0, c=2.0)
    assert float(res["d"]) == 2.0  # (8 - 4) - 2; the public compiler reads 8 - (4 - 2) = 6
    assert float(res["e"]) == 8 / 4 / 2 + 8 - 4 + 2


def test_tensor_contraction_between_two_tensors(rng):
    k = cfd("var input a : [2 3 4]\nvar input b : [4 5]\nvar output c : [2 3 5]\nc = a . b\n")
    a, b = rand(rng, 2, 3, 4), rand(rng, 4, 5)
    close(k(a=a, b=b)["c"], np.tensordot(a, b, axes=1))


def test_scalars_and_arithmetic(rng):
    k = cfd("var input x : [3]\nvar input s : []\nvar output y : [3]\ny = 2 * x / s + x * x - 1.5 * x\n")
    x = rand(rng, 3)
    close(k(x=x, s=4.0)["y"], 2 * x / 4 + x * x - 1.5 * x)


# --------------------------------------------------------------------------- stacking
@pytest.mark.parametrize("backend", BACKENDS)
def test_stacking_is_numpy_stack(backend, rng):
    k = cfd("var input a : [2 3]\nvar input b : [2 3]\nvar output s : [3 2 3]\nvar output t : [2 2 3]\n"
            "var output c : [4]\nvar input x : []\n"
            "s = [a b a + b]\nt = [a (b)] . [[]]\nc = [1 x 2.5 x * x]\n", backend)
    a, b = rand(rng, 2, 3), rand(rng, 2, 3)
    res = k(a=a, b=b, x=3.0)
    close(res["s"], np.stack([a, b, a + b]))
    close(res["t"], np.stack([a, b]))
    close(res["c"], [1, 3, 2.5, 9])


@pytest.mark.parametrize("backend", BACKENDS)
def test_stacking_is_exact_nan_and_inf_stay_in_their_slice(backend):
    k = cfd("var input a : [2]\nvar input b : [2]\nvar output s : [2 2]\nvar output g : [2 2]\n"
            "var input M : [2 2]\n"
            "s = [a b]\ng = [M#a.[[1 2]] M#b.[[1 2]]]\n", backend)
    a = np.array([np.nan, 1.0])
    b = np.array([2.0, np.inf])
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    res = k(a=a, b=b, M=M)
    np.testing.assert_array_equal(res["s"], np.stack([a, b]))
    # the rows are M a and M b: the NaN of a spoils row 0 only, the inf of b row 1 only
    assert np.isnan(res["g"][0]).all()
    np.testing.assert_array_equal(res["g"][1], [np.inf, np.inf])


def test_stack_in_model_language_and_index_form():
    text = ("var a : [2]\nvar b : [2]\nvar s : [2 2]\nvar d : [2]\n"
            "s = [a, b * 2]\nd[i] = [a[i], b[i]][i]\n")
    for backend in BACKENDS:
        res = tl.compile(text, backend=backend)(a=[1.0, 2.0], b=[3.0, 4.0])
        close(res["s"], [[1, 2], [6, 8]])
        close(res["d"], [1, 4])
    kernel = tl.compile(text, backend="numpy")
    assert "[a[j], b[j] * 2][i]" in kernel.ir("ein")
    assert tl.compile(kernel.ir("ein"), backend="numpy").ein == kernel.ein


# --------------------------------------------------------------------------- printing
def test_cfd_printer_round_trip_of_the_examples():
    for path in EXAMPLES.glob("*.cfd"):
        sizes = {name: 3 for name in tl.check(path).symbols}
        kernel = tl.compile(path, params=sizes, backend="numpy")
        text = to_cfd_source(kernel.program)
        assert tl.compile(text, lang="cfd", backend="numpy").ein == kernel.ein, text
        assert to_cfd_source(parse_cfd(text)) == text


def test_cfd_printer_refuses_what_cfdlang_cannot_say():
    program = tl.compile("var x : [2]\nx = exp(x)\n", backend="numpy").program
    with pytest.raises(ValueError, match="no functions"):
        to_cfd_source(program)
    neg = tl.compile("var x : [2]\nx = -x\n", backend="numpy").program
    assert "(0 - 1) * x" in to_cfd_source(neg)


def test_parse_cfd_spans_point_into_the_cfd_text():
    program = parse_cfd("var x : [2 2]\nx = x ^ [[0 1]]\n")
    stmt = program.stmts[0]
    assert isinstance(stmt.expr, ast.Transpose)
    assert (stmt.expr.pair.span.line, stmt.expr.pair.span.col) == (2, 10)
    assert program.lang == "cfd"


@pytest.mark.parametrize("text, code, line, col, rule", [
    ("var a : [2]\nvar y : [3]\nvar s : [2 2]\ns = [a, y]\n", "shape", 4, 9, "t-stack"),
    ("var a : [2]\nvar s : [2 2]\ns = []\n", "syntax", 3, 6, None),
    ("var a : [2]\nvar s : [3 2]\ns = [a, a]\n", "assign-shape", 3, 1, "ok-stmt"),
    ("var a : [2]\nvar d : [2]\nd[i] = [a[i], a[i]][k]\n", "free-index", 3, 21, "free-index"),
    ("var a : [2]\nvar d : [2]\nd[i] = [a[i], a[i], a[i]][i]\n", "index-extent", 3, 27, "index-extent"),
])
def test_stack_errors_in_the_model_language(text, code, line, col, rule):
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(text)
    err = info.value
    assert (err.code, err.line, err.col, err.rule) == (code, line, col, rule), err.render()


def test_sum_extent_inferred_from_a_stack_index():
    text = "var a : [2]\nvar b : [2]\nvar s : []\ns[] = sum(k) [a[1], b[2]][k]\n"
    for backend in BACKENDS:
        res = tl.compile(text, backend=backend)(a=[1.0, 2.0], b=[3.0, 4.0])
        close(res["s"], 1.0 + 4.0)
