"""The Python API (SPEC section 7): compile, call, results, validation, limits."""

from __future__ import annotations

import pathlib
from types import MappingProxyType

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import TensorLangError
from tensorlang.errors import is_integer
from tensorlang.lang.tl.parser import parse_model

MATMUL = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n"


def rng(seed=0):
    return np.random.default_rng(seed)


def raises(code, fn, *args, **kwargs) -> TensorLangError:
    with pytest.raises(TensorLangError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, str(info.value)
    return info.value


@pytest.fixture
def ab():
    r = rng(1)
    return r.standard_normal((2, 3)), r.standard_normal((3, 4))


# --------------------------------------------------------------------------- compile
def test_compile_text_str_path_and_pathlib(tmp_path, ab):
    a, b = ab
    path = tmp_path / "mm.tl"
    path.write_text(MATMUL)
    results = [tl.compile(src)(A=a, B=b)["C"] for src in (MATMUL, str(path), path)]
    for c in results:
        np.testing.assert_allclose(c, a @ b, rtol=1e-12)
        assert c.dtype == np.float64 and c.shape == (2, 4)


def test_compile_missing_path_is_input_error(tmp_path):
    raises("input", tl.compile, tmp_path / "missing.tl")
    raises("input", tl.compile, str(tmp_path / "missing.tl"))


def test_compile_rejects_ill_formed_programs():
    err = raises("shape", tl.compile, "var a : [2]\nvar b : [3]\na = a + b\n")
    assert (err.line, err.col) == (3, 5)


def test_check_accepts_and_returns():
    assert tl.check(MATMUL) is not None


# --------------------------------------------------------------------------- results
def test_qualified_results_are_exactly_out_and_inout(ab):
    src = (
        "in var A : [2 3]\nin var B : [3 4]\nvar T : [2 4]\ninout var acc : [2 4]\nout var C : [2 4]\n"
        "T = A # B . [2 3]\nC = T * 2\nacc = acc + T\n"
    )
    a, b = ab
    acc = np.ones((2, 4))
    res = tl.compile(src)(A=a, B=b, acc=acc)
    assert set(res) == {"acc", "C"}
    np.testing.assert_allclose(res["C"], 2 * (a @ b), rtol=1e-12)
    np.testing.assert_allclose(res["acc"], 1 + a @ b, rtol=1e-12)


def test_unqualified_results_are_the_whole_store():
    src = "var s : []\nvar x : [3]\nvar y : [3]\nvar z : [3]\nvar unused : [2]\nz = s * x\n"
    x = np.array([1.0, 2.0, 3.0])
    res = tl.compile(src)(s=2.0, x=x)
    assert set(res) == {"s", "x", "y", "z", "unused"}
    np.testing.assert_array_equal(res["z"], [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(res["x"], x)
    assert res["s"].shape == () and float(res["s"]) == 2.0
    assert res["y"].shape == (3,) and np.isnan(res["y"]).all()  # unsupplied, unassigned: ⊥
    assert res["unused"].shape == (2,) and np.isnan(res["unused"]).all()


def test_unqualified_unsupplied_reads_propagate_bottom():
    src = "var x : [2]\nvar y : [2]\nvar z : [2]\nz = x + y\ny = x\n"
    with pytest.raises(tl.TensorLangError, match="missing input 'y'.*allow_missing=True"):
        tl.compile(src)(x=[1.0, 2.0])  # y is read before it is assigned: forgotten, says the kernel
    res = tl.compile(src, allow_missing=True)(x=[1.0, 2.0])
    assert np.isnan(res["z"]).all()  # y was ⊥ when z was computed
    np.testing.assert_array_equal(res["y"], [1.0, 2.0])  # assigned afterwards


def test_unqualified_program_without_any_input():
    res = tl.compile("var x : [2]\nvar y : [2]\ny = x * 0\n", allow_missing=True)()
    assert np.isnan(res["x"]).all() and np.isnan(res["y"]).all()  # ⊥ * 0 = ⊥


def test_ev_stmt_reads_the_old_value():
    src = "var y : [3 3]\nvar x : [3]\nx = (y # x) . [2 3]\n"
    r = rng(2)
    y, x = r.standard_normal((3, 3)), r.standard_normal(3)
    res = tl.compile(src)(y=y, x=x)
    np.testing.assert_allclose(res["x"], y @ x, rtol=1e-12)


def test_ev_stmt_whole_tensor_transpose_in_place():
    src = "var M : [3 3]\nM = M ^ [1 2]\nM = M - M ^ [1 2]\n"
    m = rng(3).standard_normal((3, 3))
    res = tl.compile(src)(M=m)
    np.testing.assert_allclose(res["M"], m.T - m, rtol=1e-12)


def test_statements_run_in_order():
    src = "in var a : [2]\nout var b : [2]\nb = a\nb = b * 2\nb = b + a\n"
    res = tl.compile(src)(a=[1.0, -3.0])
    np.testing.assert_array_equal(res["b"], [3.0, -9.0])


# --------------------------------------------------------------------------- division and ⊥
DIV = "var a : [6]\nvar b : [6]\nvar c : [6]\nc = a / b\n"


def test_controlled_division():
    inf = np.inf
    a = np.array([0.0, 0.0, 3.0, -3.0, 6.0, 0.0])
    b = np.array([0.0, 5.0, 0.0, 0.0, 4.0, -0.0])
    c = tl.compile(DIV)(a=a, b=b)["c"]
    assert c[0] == 0 and not np.isnan(c[0])  # 0 / 0 = 0
    assert c[1] == 0  # 0 / b = 0
    assert c[2] == inf and c[3] == -inf  # a / 0 follows IEEE for a != 0
    assert c[4] == 1.5
    assert c[5] == 0 and not np.isnan(c[5])  # 0 / -0 = 0


def test_division_bottom_propagates():
    nan = np.nan
    a = np.array([0.0, nan, nan, 1.0, 0.0, 2.0])
    b = np.array([nan, 0.0, 2.0, nan, np.inf, np.inf])
    c = tl.compile(DIV)(a=a, b=b)["c"]
    assert np.isnan(c[0])  # 0 / ⊥ = ⊥
    assert np.isnan(c[1]) and np.isnan(c[2]) and np.isnan(c[3])
    assert c[4] == 0 and c[5] == 0


def test_division_by_scalar_zero():
    src = "var a : [3]\nvar z : []\nvar c : [3]\nc = a / z\n"
    c = tl.compile(src)(a=[0.0, 2.0, -1.0], z=0.0)["c"]
    assert c[0] == 0 and c[1] == np.inf and c[2] == -np.inf


def test_division_float32():
    c = tl.compile(DIV, dtype="float32")(a=[0, 0, 1, -1, 3, 0], b=[0, 2, 0, 0, 2, np.nan])["c"]
    assert c.dtype == np.float32
    assert c[0] == 0 and c[1] == 0 and c[2] == np.inf and c[3] == -np.inf and c[4] == 1.5
    assert np.isnan(c[5])


def test_bottom_propagates_through_products():
    src = "var A : [2 2]\nvar x : [2]\nvar y : [2]\ny = (A # x) . [2 3]\n"
    res = tl.compile(src)(A=np.eye(2), x=[np.nan, 1.0])
    assert np.isnan(res["y"]).all()  # every y_i sums a term with ⊥ (even 0 * ⊥)


# --------------------------------------------------------------------------- input validation
def test_unknown_input_name(ab):
    a, b = ab
    raises("input", tl.compile(MATMUL), A=a, B=b, Z=a)


def test_missing_in_variable(ab):
    a, _ = ab
    err = raises("input", tl.compile(MATMUL), A=a)
    assert "'B'" in err.message
    assert err.line == 2  # points at B's declaration


def test_wrong_shape(ab):
    a, b = ab
    err = raises("input", tl.compile(MATMUL), A=a.T, B=b)
    assert "[3 2]" in err.message and "[2 3]" in err.message
    assert err.line == 1
    raises("input", tl.compile(MATMUL), A=a[None], B=b)
    raises("input", tl.compile(MATMUL), A=1.0, B=b)


@pytest.mark.parametrize(
    "bad",
    [
        np.ones((2, 3), dtype=complex),
        np.array([["a", "b", "c"], ["d", "e", "f"]]),
        np.array([[1, 2, None], [3, 4, 5]], dtype=object),
        np.ones((2, 3)).astype(object),
        [[1.0, 2.0, 3.0], [4.0, 5.0]],  # ragged
        "abc",
        {"not": "an array"},
    ],
    ids=["complex", "strings", "object-none", "object-floats", "ragged", "str", "dict"],
)
def test_bad_input_values(ab, bad):
    _, b = ab
    raises("input", tl.compile(MATMUL), A=bad, B=b)


def test_supplying_an_out_variable(ab):
    a, b = ab
    err = raises("input", tl.compile(MATMUL), A=a, B=b, C=np.zeros((2, 4)))
    assert "'C'" in err.message


def test_supplying_a_temporary(ab):
    src = "in var a : [2]\nvar t : [2]\nout var b : [2]\nt = a\nb = t\n"
    raises("input", tl.compile(src), a=[1.0, 2.0], t=[0.0, 0.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda a: np.asfortranarray(a),
        lambda a: np.ascontiguousarray(a.T).T,  # Fortran-ordered via a transposed view
        lambda a: np.repeat(np.repeat(a, 2, axis=0), 3, axis=1)[::2, ::3],  # strided slice
        lambda a: np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1],  # negative strides
        lambda a: np.broadcast_to(a, (4, 2, 3))[1],  # zero-stride view
    ],
    ids=["fortran", "transposed-view", "sliced", "reversed", "broadcast"],
)
def test_non_contiguous_inputs(ab, make):
    a, b = ab
    view = make(a)
    assert view.shape == a.shape
    np.testing.assert_array_equal(view, a)
    k = tl.compile(MATMUL)
    expected = k(A=a.copy(), B=b.copy())["C"]
    np.testing.assert_array_equal(k(A=view, B=np.asfortranarray(b))["C"], expected)
    np.testing.assert_allclose(expected, a @ b, rtol=1e-12)


def test_transposed_view_of_another_matrix():
    k = tl.compile(MATMUL)
    at = rng(4).standard_normal((3, 2))
    b = rng(5).standard_normal((3, 4))
    np.testing.assert_allclose(k(A=at.T, B=b)["C"], at.T @ b, rtol=1e-12)


def test_python_lists_scalars_and_ints():
    src = "in var s : []\nin var M : [2 2]\nin var v : [2]\nout var w : [2]\nw = s * (M # v) . [2 3]\n"
    k = tl.compile(src)
    expected = 3 * np.array([[1, 2], [3, 4]]) @ np.array([5, 6])
    for s, m, v in [
        (3, [[1, 2], [3, 4]], [5, 6]),
        (3.0, [[1.0, 2.0], [3.0, 4.0]], (5.0, 6.0)),
        (np.int64(3), np.array([[1, 2], [3, 4]]), np.array([5, 6], dtype=np.int32)),
        (np.array(3.0), np.array([[1, 2], [3, 4]], dtype=np.uint8), np.array([5, 6], dtype=np.float32)),
    ]:
        w = k(s=s, M=m, v=v)["w"]
        assert w.dtype == np.float64
        np.testing.assert_array_equal(w, expected)


def test_int_division_is_not_integer_division():
    src = "in var a : [2]\nin var b : [2]\nout var c : [2]\nc = a / b\n"
    c = tl.compile(src)(a=np.array([1, 7]), b=np.array([2, 2]))["c"]
    np.testing.assert_array_equal(c, [0.5, 3.5])


def test_caller_inputs_are_never_modified():
    src = "inout var x : [3]\nin var y : [3]\nout var z : [3]\nx = x * 2\nz = x + y\nx = x + z\n"
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([10.0, 20.0, 30.0])
    x0, y0 = x.copy(), y.copy()
    res = tl.compile(src)(x=x, y=y)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(res["z"], 2 * x0 + y0)
    np.testing.assert_array_equal(res["x"], 2 * x0 + 2 * x0 + y0)
    assert res["x"] is not x


def test_caller_inputs_not_modified_in_unqualified_programs():
    src = "var x : [3]\nx = x / 0\nx = -x\n"
    x = np.array([0.0, 1.0, -1.0])
    x0 = x.copy()
    res = tl.compile(src)(x=x)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(res["x"], [-0.0, -np.inf, np.inf])


# --------------------------------------------------------------------------- out=
def test_out_writes_in_place(ab):
    a, b = ab
    c = np.full((2, 4), 123.0)
    res = tl.compile(MATMUL)(A=a, B=b, out={"C": c})
    assert res["C"] is c
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


def test_out_into_a_view_writes_through(ab):
    a, b = ab
    big = np.zeros((4, 8))
    view = big[::2, ::2]
    res = tl.compile(MATMUL)(A=a, B=b, out={"C": view})
    assert res["C"] is view
    np.testing.assert_allclose(big[::2, ::2], a @ b, rtol=1e-12)
    assert (big[1::2] == 0).all() and (big[:, 1::2] == 0).all()


def test_out_float32(ab):
    a, b = ab
    c = np.zeros((2, 4), dtype=np.float32)
    res = tl.compile(MATMUL, dtype="float32")(A=a, B=b, out={"C": c})
    assert res["C"] is c
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "target",
    [
        np.zeros((4, 2)),
        np.zeros((2, 4, 1)),
        np.zeros((2, 4), dtype=np.float32),
        np.zeros((2, 4), dtype=np.int64),
        [[0.0] * 4] * 2,
    ],
    ids=["shape", "rank", "dtype-f32", "dtype-int", "list"],
)
def test_out_wrong_target(ab, target):
    a, b = ab
    raises("input", tl.compile(MATMUL), A=a, B=b, out={"C": target})


def test_out_read_only(ab):
    a, b = ab
    c = np.zeros((2, 4))
    c.flags.writeable = False
    raises("input", tl.compile(MATMUL), A=a, B=b, out={"C": c})
    assert (c == 0).all()


def test_out_names_a_non_result(ab):
    a, b = ab
    raises("input", tl.compile(MATMUL), A=a, B=b, out={"A": np.zeros((2, 3))})
    raises("input", tl.compile(MATMUL), A=a, B=b, out={"Z": np.zeros((2, 4))})


def test_out_errors_leave_the_other_targets_alone(ab):
    a, b = ab
    src = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nout var D : [2 4]\nC = A # B . [2 3]\nD = C * 2\n"
    c = np.full((2, 4), 7.0)
    raises("input", tl.compile(src), A=a, B=b, out={"C": c, "D": np.zeros((4, 2))})
    assert (c == 7.0).all()  # validation happens before anything is written


def test_same_array_as_input_and_out_transpose():
    src = "in var A : [3 3]\nout var B : [3 3]\nB = A ^ [1 2]\n"
    m = rng(6).standard_normal((3, 3))
    m0 = m.copy()
    res = tl.compile(src)(A=m, out={"B": m})
    assert res["B"] is m
    np.testing.assert_array_equal(m, m0.T)


def test_same_array_as_input_and_out_product():
    src = "in var A : [3 3]\nout var B : [3 3]\nB = A # A . [2 3]\n"
    m = rng(7).standard_normal((3, 3))
    m0 = m.copy()
    tl.compile(src)(A=m, out={"B": m})
    np.testing.assert_allclose(m, m0 @ m0, rtol=1e-12)


def test_same_array_for_inout_and_out_gives_ev_stmt():
    src = "in var y : [3 3]\ninout var x : [3]\nx = (y # x) . [2 3]\n"
    y = rng(8).standard_normal((3, 3))
    x = rng(9).standard_normal(3)
    x0 = x.copy()
    res = tl.compile(src)(y=y, x=x, out={"x": x})
    assert res["x"] is x
    np.testing.assert_allclose(x, y @ x0, rtol=1e-12)


# --------------------------------------------------------------------------- dtype and back end
def test_float32_kernels_return_float32(ab):
    a, b = ab
    src = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nout var n : [2 2]\n" \
          "C = A # B . [2 3]\nn = (C # C) . [2 4] / 2 - (C # C) . [2 4] * 3\n"
    res = tl.compile(src, dtype="float32")(A=a, B=b)
    assert res["C"].dtype == np.float32 and res["n"].dtype == np.float32
    np.testing.assert_allclose(res["C"], a @ b, rtol=1e-5, atol=1e-6)
    c = a @ b
    np.testing.assert_allclose(res["n"], c @ c.T / 2 - 3 * (c @ c.T), rtol=1e-5, atol=1e-5)
    res64 = tl.compile(src, dtype=np.float64)(A=a, B=b)
    assert res64["n"].dtype == np.float64


def test_float32_as_numpy_dtype(ab):
    a, b = ab
    assert tl.compile(MATMUL, dtype=np.float32)(A=a, B=b)["C"].dtype == np.float32


@pytest.mark.parametrize("dtype", ["int8", "float16", "complex128", "int", "nonsense", np.int32])
def test_unsupported_dtype(dtype):
    raises("input", tl.compile, MATMUL, dtype=dtype)


@pytest.mark.parametrize("backend", ["cuda", "C", "", None, 3, ["c"], np.array([1, 2])], ids=repr)
def test_unknown_backend(backend):
    raises("backend", tl.compile, MATMUL, backend=backend)


def test_auto_picks_the_fastest_working_backend():
    from tensorlang.targets.c import build as c_build

    expected = "c" if c_build.find_compiler() is not None else "numpy"
    assert tl.compile(MATMUL).backend == expected


@pytest.mark.parametrize("backend", ["auto", "interp", "numpy", "c"])
def test_available_backends(ab, backend):
    a, b = ab
    np.testing.assert_allclose(tl.compile(MATMUL, backend=backend)(A=a, B=b)["C"], a @ b, rtol=1e-12)


def test_the_interp_target_runs_the_front_ends_own_semantics(ab):
    """backend="interp" is the oracle: the language's interpret on the checked program,
    never the EIN program or a schedule."""
    import types

    a, b = ab
    k = tl.compile(MATMUL, backend="interp")
    calls = []
    interpret = k.language.interpret
    k.language = types.SimpleNamespace(interpret=lambda *args: calls.append(args) or interpret(*args))
    np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b, rtol=1e-12)
    assert len(calls) == 1 and calls[0][0] is k.checked


# --------------------------------------------------------------------------- limits
OUTER = "in var A : [10 10]\nin var B : [10 10]\nout var s : []\ns = A # B . [[1 3] [2 4]]\n"


def test_outer_product_over_budget_is_too_large(monkeypatch):
    a, b = np.ones((10, 10)), np.full((10, 10), 2.0)
    k = tl.compile(OUTER, backend="interp")  # the interpreter materializes A # B
    # control: the store (201 float64 = 1608 bytes) and the 10^4-element outer product fit
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(10**6))
    assert float(k(A=a, B=b)["s"]) == 200.0
    # the store still fits in 20000 bytes, but the outer product's 80000 bytes do not
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "20000")
    err = raises("too-large", k, A=a, B=b)
    assert err.line == 4


def test_store_over_budget_is_too_large(monkeypatch):
    """The compiled targets refuse at compile time, before their build allocates anything
    (the optimized program's buffers, pipeline.check_memory); the interpreter, which
    allocates only when it runs, at the first call."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "1000")
    for backend in ("numpy", *(("c",) if "c" in tl.available_backends() else ())):
        raises("too-large", tl.compile, OUTER, backend=backend)
    k = tl.compile(OUTER, backend="interp")
    raises("too-large", k, A=np.ones((10, 10)), B=np.ones((10, 10)))


def test_buffers_over_budget_are_refused_before_the_target_builds(monkeypatch):
    """The check is on the schedule's buffers (the optimized program's variables and
    temporaries), before the target's build stage runs: a target whose build would
    allocate is never reached."""
    import dataclasses

    from tensorlang import targets

    built = []

    def build(*args, **kwargs):
        built.append(args)
        raise TensorLangError("backend", "the build stage ran")

    for name in ("numpy", *(("c",) if "c" in tl.available_backends() else ())):
        monkeypatch.setitem(targets.REGISTRY, name, dataclasses.replace(targets.REGISTRY[name], build=build))
        monkeypatch.setenv("TENSORLANG_MAX_BYTES", "1000")
        raises("too-large", tl.compile, OUTER, backend=name)
        assert built == []
        monkeypatch.delenv("TENSORLANG_MAX_BYTES")
        raises("backend", tl.compile, OUTER, backend=name)  # within the budget, it builds
        assert len(built) == 1
        built.clear()


def test_absurd_declaration_is_too_large():
    err = raises("too-large", tl.check, "var x : [2]\nvar big : [100000000000 100000000000 100000000000]\n")
    assert err.line == 2
    raises("too-large", tl.compile, "var big : [100000000000 100000000000 100000000000]\n")


def test_deeply_nested_parentheses_are_a_syntax_error():
    src = "var x : []\nx = " + "(" * 300 + "x" + ")" * 300 + "\n"
    err = raises("syntax", tl.check, src)
    assert err.line == 2
    raises("syntax", tl.compile, src)


def test_moderate_nesting_works():
    src = "var x : []\nx = " + "(" * 150 + "x * 2" + ")" * 150 + "\n"
    assert float(tl.compile(src)(x=1.5)["x"]) == 3.0


@pytest.mark.slow
@pytest.mark.parametrize("terms", [3000, 20000])
def test_very_long_chain_is_an_error_not_a_recursion_error(terms):
    src = "var x : []\nx = " + " + ".join(["x"] * terms) + "\n"
    with pytest.raises(TensorLangError):
        tl.check(src)
    with pytest.raises(TensorLangError):
        tl.compile(src)


def test_very_long_unary_chain_is_an_error_not_a_recursion_error():
    src = "var x : []\nx = " + "-" * 3000 + "x\n"
    with pytest.raises(TensorLangError):
        tl.compile(src)


def test_long_chain_within_limits_runs():
    src = "var x : []\nx = " + " + ".join(["x"] * 300) + "\n"
    assert float(tl.compile(src)(x=0.5)["x"]) == 150.0


def test_ir_of_a_long_accepted_chain():
    src = "var x : []\nx = " + " + ".join(["x"] * 600) + "\n"
    k = tl.compile(src)
    assert float(k(x=1.0)["x"]) == 600.0
    assert k.ir("ast") == src  # printed back exactly (comparing ASTs would recurse too deep here)


def test_ir_ast_round_trips():
    k = tl.compile(MATMUL)
    assert parse_model(k.ir("ast")) == parse_model(MATMUL)


def test_paths_given_as_pathlib_objects_of_any_suffix(tmp_path, ab):
    a, b = ab
    p = pathlib.Path(tmp_path) / "prog.txt"
    p.write_text(MATMUL)
    np.testing.assert_allclose(tl.compile(p)(A=a, B=b)["C"], a @ b, rtol=1e-12)


@pytest.mark.parametrize("name", ["out", "self"])
@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_inputs_may_be_named_out_or_self(name, backend):
    # the model language reserves `out`; CFDlang does not
    k = tl.compile(f"var input {name} : [2]\nvar output y : [2]\ny = {name} + {name}\n", lang="cfd", backend=backend)
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(k(**{name: x})["y"], 2 * x)
    np.testing.assert_array_equal(k.run({name: x})["y"], 2 * x)
    target = np.zeros(2)
    assert k.run({name: x}, out={"y": target})["y"] is target


def test_run_takes_a_dict_of_inputs():
    k = tl.compile(MATMUL)
    a, b = np.ones((2, 3)), np.ones((3, 4))
    np.testing.assert_array_equal(k.run({"A": a, "B": b})["C"], a @ b)
    with pytest.raises(tl.TensorLangError) as info:
        k.run([a, b])
    assert info.value.code == "input"


def test_available_backends_is_public():
    """``tl.available_backends()``: the back ends that work here, in ``auto``'s order."""
    from tensorlang.targets import KNOWN
    from tensorlang.targets.c import build as c_build

    assert "available_backends" in tl.__all__
    expected = KNOWN if c_build.find_compiler() is not None else ("numpy", "interp")
    assert tl.available_backends() == expected
    for backend in tl.available_backends():
        assert tl.compile(MATMUL, backend=backend).backend == backend


# ------------------------------------------------------------------ the shared argument checks
# errors.is_integer and ProgramInterface._inputs_dict: every caller refuses what the others refuse,
# each with its own message, and takes numpy's integers and any mapping alike.
FIXED = "in var A : [2 2]\nout var B : [2 2]\nB = 2 * A\n"
SYMBOLIC = "in var A : [n n]\nout var B : [n n]\nB = 2 * A\n"


@pytest.mark.parametrize("value, low, high, expected", [
    (3, 1, 5, True), (np.int64(3), 1, 5, True), (1, 1, 1, True), (10**30, 0, float("inf"), True),
    (0, 1, 5, False), (6, 1, 5, False), (True, 0, 5, False), (np.bool_(True), 0, 5, False),
    (2.0, 0, 5, False), ("2", 0, 5, False), (None, 0, 5, False)])
def test_is_integer_takes_integers_in_range_and_never_a_bool(value, low, high, expected):
    assert is_integer(value, low, high) is expected


@pytest.mark.parametrize("program", [FIXED, SYMBOLIC], ids=["kernel", "symbolic"])
@pytest.mark.parametrize("inputs", [[np.ones((2, 2))], np.ones((2, 2)), "A", None], ids=["list", "array", "str", "None"])
def test_run_refuses_inputs_that_are_no_mapping(program, inputs):
    k = tl.compile(program, backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k.run(inputs)
    assert info.value.code == "input"
    assert f"inputs must be a dict from variable names to arrays, got {type(inputs).__name__}" in info.value.message


@pytest.mark.parametrize("program", [FIXED, SYMBOLIC], ids=["kernel", "symbolic"])
def test_run_takes_any_mapping(program):
    a = np.arange(4.0).reshape(2, 2)
    result = tl.compile(program, backend="numpy").run(MappingProxyType({"A": a}))
    np.testing.assert_array_equal(result["B"], 2 * a)


@pytest.mark.parametrize("value", [0, -1, True, 2.5, "4"])
def test_params_refuse_what_is_no_positive_integer(value):
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(SYMBOLIC, backend="numpy", params={"n": value})
    assert info.value.code == "input"
    assert f"parameter 'n' must be a positive integer, got {value!r}" in info.value.message


def test_params_take_numpy_integers():
    k = tl.compile(SYMBOLIC, backend="numpy", params={"n": np.int64(2)})
    assert k.sizes == {"n": 2} and type(k.sizes["n"]) is int


@pytest.mark.parametrize("value", [0, -3, True, 2.0, "2"])
def test_specialize_refuses_what_is_no_positive_integer(value):
    k = tl.compile(SYMBOLIC, backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k.specialize(n=value)
    assert info.value.code == "input"
    assert f"size 'n' must be a positive integer, got {value!r}" in info.value.message


def test_specialize_takes_numpy_integers():
    assert tl.compile(SYMBOLIC, backend="numpy").specialize(n=np.int64(3)).sizes == {"n": 3}


@pytest.mark.parametrize("shape", [(2, True), (2, -1), (2, 1.5), ("2", 3)])
def test_contract_expression_refuses_shapes_of_no_integers(shape):
    with pytest.raises(tl.EinsumError, match="a shape is a tuple of non-negative integers"):
        tl.contract_expression("ij,jk->ik", shape, (3, 4), backend="numpy")


@pytest.mark.parametrize("position", [2, -1, True, 1.0])
def test_contract_expression_refuses_constants_that_are_no_position(position):
    with pytest.raises(tl.EinsumError, match=r"constants lists operand positions 0\.\.1"):
        tl.contract_expression("ij,jk->ik", (2, 3), np.ones((3, 4)), constants=[position], backend="numpy")


def test_contract_expression_takes_a_numpy_integer_position():
    b = np.arange(12.0).reshape(3, 4)
    expr = tl.contract_expression("ij,jk->ik", (2, 3), b, constants=[np.int64(1)], backend="numpy")
    a = np.ones((2, 3))
    np.testing.assert_allclose(expr(a), a @ b)
