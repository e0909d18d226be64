"""The builder (tl.var, tl.outer, tl.contract, tl.transpose, + - * /, tl.kron, tl.build):
the same EIN as the model language's text, results against numpy, shape errors where
an expression is built."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang import builder

RNG = np.random.default_rng(15)


def _ein(text: str) -> str:
    return tl.compile(text, backend="numpy").ir("ein")


def test_a_matrix_product_has_the_texts_ein():
    A, B = tl.var("A", (2, 3)), tl.var("B", (3, 4))
    built = tl.build({"C": tl.contract(tl.outer(A, B), (2, 3))}, backend="numpy")
    text = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n"
    assert built.ir("ein") == _ein(text)


def test_the_tensor_product_operator_is_the_interpolation():
    n = 3
    A, B, C = (tl.var(name, (n, n)) for name in "ABC")
    u = tl.var("u", (n, n, n))
    built = tl.build({"v": tl.kron(A, B, C)(u)}, backend="numpy")
    text = ("in var A : [3 3]\nin var B : [3 3]\nin var C : [3 3]\nin var u : [3 3 3]\nout var v : [3 3 3]\n"
            "v = A # B # C # u . [[2 7] [4 8] [6 9]]\n")
    assert built.ir("ein") == _ein(text)
    a, b, c, x = (RNG.standard_normal(s) for s in [(n, n)] * 3 + [(n, n, n)])
    got = built(A=a, B=b, C=c, u=x)["v"]
    np.testing.assert_allclose(got, np.einsum("ia,jb,kc,abc->ijk", a, b, c, x))


def test_arithmetic_transpose_and_several_outputs():
    A, B = tl.var("A", (3, 3)), tl.var("B", (3, 3))
    s = tl.var("s", ())
    k = tl.build({"S": (A + tl.transpose(A)) / 2, "D": s * A - B * 2.0, "N": -A}, backend="numpy")
    a, b = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    r = k(A=a, B=b, s=np.array(1.5))
    np.testing.assert_allclose(r["S"], (a + a.T) / 2)
    np.testing.assert_allclose(r["D"], 1.5 * a - 2 * b)
    np.testing.assert_allclose(r["N"], -a)
    text = ("in var A : [3 3]\nin var s : []\nin var B : [3 3]\nout var S : [3 3]\nout var D : [3 3]\n"
            "out var N : [3 3]\nS = (A + A ^ [1 2]) / 2.0\nD = s * A - B * 2.0\nN = -A\n")
    assert k.ir("ein") == _ein(text)


def test_one_expression_or_a_list_and_the_c_target():
    A = tl.var("A", (2, 2))
    k = tl.build(tl.contract(tl.outer(A, A), (2, 3)))
    a = RNG.standard_normal((2, 2))
    np.testing.assert_allclose(k(A=a)["R"], a @ a)
    k2 = tl.build([A * 2, A + A], backend="numpy")
    np.testing.assert_allclose(k2(A=a)["R0"], 2 * a)
    assert "R1 = A + A" in builder.source([A * 2, A + A])


@pytest.mark.parametrize("make, code", [
    (lambda A, v: A + v, "shape"),
    (lambda A, v: v / A, "shape"),
    (lambda A, v: tl.contract(A, (1, 3)), "dim-range"),
    (lambda A, v: tl.contract(tl.outer(A, v), (1, 3)), "shape"),
    (lambda A, v: tl.transpose(v, (1, 2)), "dim-range"),
    (lambda A, v: tl.kron(A)(A), "shape"),
    (lambda A, v: A + "x", "input"),
    (lambda A, v: A * float("nan"), "input"),
    (lambda A, v: tl.var("1x", (2,)), "input"),
    (lambda A, v: tl.var("x", (0,)), "shape"),
])
def test_bad_expressions_are_errors_where_they_are_built(make, code):
    A, v = tl.var("A", (2, 3)), tl.var("v", (4,))
    with pytest.raises(tl.TensorLangError) as caught:
        make(A, v)
    assert caught.value.code == code


def test_bad_outputs_are_errors():
    A = tl.var("A", (2,))
    with pytest.raises(tl.TensorLangError):
        tl.build({"A": A * 2})  # an output named like an input
    with pytest.raises(tl.TensorLangError):
        tl.build({"C": A + tl.var("A", (3,))})  # two variables called A
    with pytest.raises(tl.TensorLangError):
        tl.build(42)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["outer", "add", "mul", "scale", "transpose", "neg"]), min_size=1, max_size=5),
       st.integers(0, 2**31))
def test_random_builder_programs_match_the_interpreter(steps, seed):
    """A built program runs the same on the numpy target as on the reference interpreter
    (the model language's semantics) and as numpy computes it directly."""
    rng = np.random.default_rng(seed)
    A = tl.var("A", (2, 2))
    a = rng.uniform(-1, 1, (2, 2))
    e, value = A, a
    for step in steps:
        if step == "outer" and len(e.shape) == 2:
            e, value = tl.contract(tl.outer(e, A), (2, 3)), value @ a
        elif step == "add":
            e, value = e + A, value + a
        elif step == "mul":
            e, value = e * A, value * a
        elif step == "scale":
            e, value = 0.5 * e, 0.5 * value
        elif step == "transpose":
            e, value = tl.transpose(e), value.T
        elif step == "neg":
            e, value = -e, -value
    for backend in ("numpy", "interp"):
        np.testing.assert_allclose(tl.build({"Y": e}, backend=backend)(A=a)["Y"], value, rtol=1e-12, atol=1e-12)
