"""The builder (tl.var, tl.outer, tl.contract, tl.transpose, + - * /, tl.kron, tl.build):
the same EIN as the model language's text, results against numpy, shape errors where
an expression is built; no text is parsed, a shared subexpression is lowered once, and
building from many threads at once gives every thread its kernel."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang import builder
from tensorlang.lang.builder import Var

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


def test_a_number_on_the_left_stays_on_the_left():
    """``2 - s``, ``1 / s``, ``3 + s`` and ``0.5 * A`` (the reflected methods) keep their
    operands in the order written: the text's EIN and numpy's values."""
    A, s = tl.var("A", (2, 2)), tl.var("s", ())
    k = tl.build({"D": 2 - s, "Q": 1 / s, "P": 3 + s, "M": 0.5 * A}, backend="numpy")
    text = ("in var s : []\nin var A : [2 2]\nout var D : []\nout var Q : []\nout var P : []\n"
            "out var M : [2 2]\nD = 2.0 - s\nQ = 1.0 / s\nP = 3.0 + s\nM = 0.5 * A\n")
    assert k.ir("ein") == _ein(text)
    a = RNG.standard_normal((2, 2))
    r = k(A=a, s=np.array(4.0))
    assert (r["D"], r["Q"], r["P"]) == (-2.0, 0.25, 7.0)
    np.testing.assert_allclose(r["M"], 0.5 * a)


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
    (lambda A, v: tl.kron(A, A)(v), "shape"),  # rank 1 < 2 (a higher rank has batch axes: kron(A)(A) is A A^T)
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


def _text(outputs: dict) -> str:
    """The program as the builder once printed it to parse it (fully parenthesized
    operator form, inputs in order of first use): the oracle for its direct lowering."""
    declared: dict = {}

    def walk(e):
        if isinstance(e, Var):
            declared.setdefault(e.name, e)
        for child in (getattr(e, "left", None), getattr(e, "right", None), getattr(e, "operand", None)):
            if child is not None:
                walk(child)

    for e in outputs.values():
        walk(e)
    lines = [f"in var {v.name} : [{' '.join(map(str, v.shape))}]" for v in declared.values()]
    lines += [f"out var {name} : [{' '.join(map(str, e.shape))}]" for name, e in outputs.items()]
    lines += [f"{name} = {e.text()}" for name, e in outputs.items()]
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["outer", "add", "sub", "mul", "div", "scale", "negative", "transpose", "neg"]),
                min_size=1, max_size=6))
def test_random_builder_programs_have_their_texts_ein(steps):
    """Without a shared subexpression (those become temporaries) a built program's EIN
    is, node for node, its text's."""
    A, s = tl.var("A", (2, 2)), tl.var("s", ())

    def make():
        e = A
        for step in steps:
            if step == "outer" and len(e.shape) == 2:
                e = tl.contract(tl.outer(A, e), (2, 3))
            elif step in ("add", "sub", "mul", "div"):
                e = {"add": e + A, "sub": A - e, "mul": e * A, "div": e / s}[step]
            elif step == "scale":
                e = 0.5 * e
            elif step == "negative":
                e = e * -2.5 - 0.0 * A - A * -0.0
            elif step == "transpose":
                e = tl.transpose(e)
            elif step == "neg":
                e = -e
        return e

    outputs = {"Y": make(), "Z": make() * s}
    assert tl.build(outputs, backend="numpy").ein == tl.compile(_text(outputs), backend="numpy").ein


def test_building_parses_no_text(monkeypatch):
    from tensorlang.lang import lark_support

    monkeypatch.setattr(lark_support, "parse", lambda *args: pytest.fail("parsed program text"))
    A, B = tl.var("A", (2, 3)), tl.var("B", (3, 4))
    k = tl.build({"C": tl.contract(tl.outer(A, B), (2, 3))}, backend="numpy")
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b)


@pytest.mark.parametrize("shape", [(3,), ()], ids=["vector", "scalar"])
def test_a_shared_subexpression_is_lowered_once(shape):
    """``e + e`` doubled twenty times is 21 nodes (2^20 leaves as a tree): one temporary
    per shared node, so building, checking and lowering are linear (this once printed
    2^20 leaves and never finished)."""
    x = tl.var("x", shape)
    e = x
    for _ in range(20):
        e = e + e
    text = builder.source({"y": e})
    assert text.count(" + ") == 20
    a = RNG.standard_normal(shape)
    for backend in ("numpy", "interp"):
        k = tl.build({"y": e}, backend=backend)
        assert len(k.ein.statements) == 20
        np.testing.assert_allclose(k(x=a)["y"], a * 2.0**20)
    # a node shared between outputs is computed once too, and both outputs read it
    both = tl.build({"P": e * x, "Q": -e}, backend="numpy")
    np.testing.assert_allclose(both(x=a)["P"], a * a * 2.0**20)
    np.testing.assert_allclose(both(x=a)["Q"], -a * 2.0**20)


def test_building_one_expression_from_six_threads_at_once():
    """No state is shared between builds: every thread gets its kernel and its result
    (a spurious error[shape] was once reported under this load)."""
    n = 3
    A, B, C = (tl.var(name, (n, n)) for name in "ABC")
    u = tl.var("u", (n, n, n))
    shared = {"v": tl.kron(A, B, C)(u), "S": (A + tl.transpose(A)) / 2}
    a, b, c = (RNG.standard_normal((n, n)) for _ in range(3))
    x = RNG.standard_normal((n, n, n))
    expected = np.einsum("ia,jb,kc,abc->ijk", a, b, c, x)
    start = threading.Barrier(6)
    failures: list = []

    def work(fresh: bool) -> None:
        try:
            start.wait()
            for _ in range(8):
                outputs = shared
                if fresh:  # the same expression, built in this thread
                    P, Q, R = (tl.var(name, (n, n)) for name in "ABC")
                    outputs = {"v": tl.kron(P, Q, R)(tl.var("u", (n, n, n))), "S": (P + tl.transpose(P)) / 2}
                result = tl.build(outputs, backend="numpy")(A=a, B=b, C=c, u=x)
                np.testing.assert_allclose(result["v"], expected)
                np.testing.assert_allclose(result["S"], (a + a.T) / 2)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(k % 2 == 0,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_symbolic_sizes_specialise_from_the_printed_program():
    A = tl.var("A", ("n", "n"))
    k = tl.build({"C": tl.contract(tl.outer(A, A), (2, 3)) + A}, backend="numpy")
    for n in (2, 5):
        a = RNG.standard_normal((n, n))
        np.testing.assert_allclose(k(A=a)["C"], a @ a + a)


_A, _X, _S = tl.var("A", (3, 3)), tl.var("x", (3,)), tl.var("s", ())


@pytest.mark.parametrize("numpy_form, python_form", [
    (lambda: np.add(np.float64(2), _S), lambda: 2.0 + _S),
    (lambda: np.float64(1) - _S, lambda: 1.0 - _S),
    (lambda: np.subtract(_A, _A), lambda: _A - _A),
    (lambda: np.multiply(_A, np.array(2.0)), lambda: _A * 2.0),
    (lambda: np.divide(_A, np.float32(2)), lambda: _A / 2.0),
    (lambda: np.true_divide(np.float64(2), _S), lambda: 2.0 / _S),
    (lambda: np.matmul(_A, _X), lambda: _A @ _X),
    (lambda: np.matmul(_X, _A), lambda: _X @ _A),
    (lambda: np.negative(_A), lambda: -_A),
    (lambda: np.power(_A, 3), lambda: _A ** 3),
    (lambda: np.abs(_A), lambda: abs(_A)),
])
def test_numpys_operator_ufuncs_build_what_pythons_operators_do(numpy_form, python_form):
    built, expected = numpy_form(), python_form()
    assert (built.text(), built.shape) == (expected.text(), expected.shape)


def test_unary_plus_is_the_expression_itself_from_python_and_numpy():
    assert +_A is _A and np.positive(_A) is _A
    assert (-_A).text() == "(-A)" and abs(_A).text() == "abs(A)"
