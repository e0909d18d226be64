"""Issue 41, sixth sweep: hostile inputs found by differential fuzzing of the Diderot
executors (interpreter against C) and of ``tl.einsum`` against numpy, each fixed at its
cause and covered here by its class.

* ``•`` and ``:`` with an overflowing product: the interpreter summed through BLAS
  (``np.tensordot``), which may fuse a product into the running sum, so ``inf + (-x0·2)``
  with ``x0·2`` past 1e308 was ``inf`` there and ⊥ (inf − inf) in C.  Both now round each
  product and add them one at a time, in the same order.
* Int ``abs`` and ``|n|`` of -2^63: the interpreter's Python int grew to 2^63, which no
  int64 output holds (an OverflowError traceback), and C's ``-a`` overflowed (undefined
  behaviour).  Both wrap to -2^63, as every other int operation does.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorlang.lang.diderot import parse_program, strands, typecheck
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

#: values whose products overflow, cancel to ⊥, or are signed zeros
EDGE = [np.inf, -np.inf, np.nan, 1e308, -1e308, 1.7e308, 1e-320, 0.0, -0.0, 1.0, -2.0, 3.5]

PRODUCTS = """#version 2.0
input vec3 u = [1.0, 2.0, 3.0];
input vec3 v = [1.0, 2.0, 3.0];
input tensor[3,3] M = identity[3];
input tensor[3,3] N = identity[3];
strand s (int i) {
  output real d = 0.0;
  output real c = 0.0;
  output vec3 mv = [0.0, 0.0, 0.0];
  output vec3 vm = [0.0, 0.0, 0.0];
  output tensor[3,3] mm = identity[3];
  update { real k = real(i) + 1.0; d = u • (k * v); c = M : N; mv = M • v; vm = u • (k * N); mm = M • N; stabilize; }
}
initially [ s(i) | i in 0..1 ];
"""


@functools.lru_cache(maxsize=None)
def _program(text: str):
    return strands(typecheck(parse_program(text)), ".")


def _sequential(a, b, n: int) -> np.ndarray:
    """The contraction as the semantics states it: each product rounded, added left to right."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    rows = a.reshape(a.shape[:a.ndim - n] + (-1,))
    cols = b.reshape((-1,) + b.shape[n:])
    with np.errstate(all="ignore"):
        acc = np.multiply.outer(rows[..., 0], cols[0])
        for c in range(1, rows.shape[-1]):
            acc = acc + np.multiply.outer(rows[..., c], cols[c])
    return np.asarray(acc)


def _same(x, y) -> bool:
    """⊥ at the same places, infinities with the same sign, finite values to rounding."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    nan = np.isnan(x)
    if not np.array_equal(nan, np.isnan(y)):
        return False
    inf = np.isinf(x)
    if not np.array_equal(inf, np.isinf(y)) or not np.array_equal(x[inf], y[inf]):
        return False
    fin = ~nan & ~inf
    return bool(np.allclose(x[fin], y[fin], rtol=1e-12, atol=1e-300))


VEC = st.lists(st.sampled_from(EDGE), min_size=3, max_size=3)
MAT = st.lists(st.sampled_from(EDGE), min_size=9, max_size=9).map(lambda xs: np.reshape(xs, (3, 3)))


def _expected(u, v, M, N, k: float) -> dict:
    with np.errstate(all="ignore"):
        kv, kN = k * np.asarray(v, float), k * np.asarray(N, float)
    return {"d": _sequential(u, kv, 1), "c": _sequential(M, N, 2), "mv": _sequential(M, v, 1),
            "vm": _sequential(u, kN, 1), "mm": _sequential(M, N, 1)}


@settings(max_examples=60, deadline=None)
@given(VEC, VEC, MAT, MAT)
def test_the_interpreters_products_round_each_term_and_add_in_order(u, v, M, N):
    res = _program(PRODUCTS).run({"u": u, "v": v, "M": M, "N": N}, backend="interp").outputs
    for i in (0, 1):
        want = _expected(u, v, M, N, float(i + 1))
        for name, value in want.items():
            assert _same(res[name][i], value), (name, i, res[name][i], value)


@needs_cc
@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(VEC, VEC, MAT, MAT)
def test_products_with_overflow_and_nan_agree_between_the_executors(u, v, M, N):
    p = _program(PRODUCTS)
    values = {"u": u, "v": v, "M": M, "N": N}
    a, b = p.run(values, backend="interp").outputs, p.run(values, backend="c").outputs
    for name in a:
        assert _same(a[name], b[name]), (name, a[name], b[name])


def test_the_overflowing_dot_that_blas_fused_is_bottom():
    """The first input found: [inf, -x0, 0] • [1, 2, 3] with 2·x0 past the largest double."""
    res = _program(PRODUCTS).run({"u": [np.inf, -1e308, 0.0], "v": [1.0, 2.0, 3.0]}, backend="interp").outputs
    assert np.isnan(res["d"]).all()


INTS = """#version 2.0
input int n = 0;
strand s (int i) {
  output int a = 0;
  output int b = 0;
  output int neg = 0;
  output int m = 0;
  update { a = abs(n - i); b = |n - i|; neg = 1 if abs(n - i) < 0 else 0; m = max(abs(n + i), -abs(n)); stabilize; }
}
initially [ s(i) | i in 0..2 ];
"""


def _wrap(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


@pytest.mark.parametrize("n", [-2**63, -2**63 + 1, -2**63 + 2, 2**63 - 1, 2**63 - 2, -1, 0, 1])
def test_int_abs_wraps_at_the_edges_in_the_interpreter(n):
    res = _program(INTS).run({"n": n}, backend="interp").outputs
    for i in range(3):
        x = _wrap(n - i)
        assert res["a"][i] == res["b"][i] == _wrap(abs(x))
        assert res["neg"][i] == int(_wrap(abs(x)) < 0)
        assert res["m"][i] == max(_wrap(abs(_wrap(n + i))), _wrap(-_wrap(abs(n))))


@needs_cc
@pytest.mark.parametrize("n", [-2**63, -2**63 + 1, 2**63 - 1, 0])
def test_int_abs_at_the_edges_agrees_between_the_executors(n):
    p = _program(INTS)
    a, b = p.run({"n": n}, backend="interp").outputs, p.run({"n": n}, backend="c").outputs
    for name in a:
        assert np.array_equal(a[name], b[name]), (name, a[name], b[name])


GROWING = """#version 2.0
strand S (int i) {
  real{} s = {1.0};
  output real x = 0.0;
  update { s = GROW; x = real(length(s)); }
}
initially [ S(i) | i in 0..1 ];
"""


@pytest.mark.parametrize("grow", ["s @ s", "(s @ s) @ s", "s @ (s @ 1.0)", "{ r | r in s } @ s"])
def test_a_sequence_that_grows_by_at_each_step_meets_the_memory_budget(grow, monkeypatch):
    """``s = s @ s`` doubles each super-step: the interpreter refuses the append that would
    pass the memory budget (error[too-large]) instead of growing until memory runs out."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "4000000")
    p = strands(typecheck(parse_program(GROWING.replace("GROW", grow))), ".")
    with pytest.raises(Exception) as info:
        p.run({}, backend="interp", limit=200)
    assert getattr(info.value, "code", None) == "too-large", info.value


def test_a_sequence_made_by_at_below_the_budget_is_whole():
    p = strands(typecheck(parse_program(GROWING.replace("GROW", "s @ s"))), ".")
    assert p.run({}, backend="interp", limit=10).outputs["x"].tolist() == [1024.0, 1024.0]


RECURSIVE = [
    "function real f(real a) = f(a) + 1.0;",
    "function real f(real a) = f(a - 1.0) + f(a - 2.0);",
    "function real f(real a) { return f(a - 1.0); }",
    "function real f(real a) { if (a < -1e300) return 0.0; real b = f(a - 1.0); return b; }",
    "function real f(real a) = 1.0 if a < 0.0 else f(a - 1.0);",
]


@pytest.mark.parametrize("where", ["update", "initially", "global", "input"])
@pytest.mark.parametrize("fn", RECURSIVE)
def test_a_function_that_calls_itself_without_end_is_too_large(fn, where):
    """Recursion runs on the interpreter's Python stack: one that does not end (or ends
    past the stack) was a RecursionError traceback; it is error[too-large] wherever the
    call is (a strand's update, its initialization, a global, an input's default)."""
    call = "f(1.0e6)"
    decl = {"global": f"real q = {call};", "input": f"input real q = {call};"}.get(where, "")
    init = call if where == "initially" else "0.0"
    body = {"update": f"x = {call};"}.get(where, "x = q;" if decl else "")
    src = (f"#version 2.0\n{fn}\n{decl}\nstrand S (int i) {{ output real x = {init}; update {{ {body} stabilize; }} }}\n"
           "initially [ S(i) | i in 0..0 ];\n")
    with pytest.raises(Exception) as info:
        strands(typecheck(parse_program(src)), ".").run({}, backend="interp")
    assert getattr(info.value, "code", None) == "too-large", repr(info.value)


def test_a_shallow_recursion_still_runs():
    src = ("#version 2.0\nfunction real f(int n) { if (n <= 0) return 1.0; return 1.0 + f(n - 1); }\n"
           "strand S (int i) { output real x = 0.0; update { x = f(50 + i); stabilize; } }\ninitially [ S(i) | i in 0..1 ];\n")
    p = strands(typecheck(parse_program(src)), ".")
    assert p.run({}).outputs["x"].tolist() == [51.0, 52.0]


# ------------------------------------------------------------------ tl.padded_empty
@pytest.mark.parametrize("rank", [65, 70, 200, 5000])
@pytest.mark.parametrize("pad", [1, 2, 64])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_padded_empty_of_more_dimensions_than_numpy_is_too_large(rank, pad, dtype):
    """A shape of rank past numpy's 64 was an internal error (numpy's ValueError)."""
    import tensorlang as tl
    with pytest.raises(tl.TensorLangError) as info:
        tl.padded_empty((1,) * rank, pad, dtype)
    assert info.value.code == "too-large"


@pytest.mark.parametrize("rank", [0, 1, 32, 64])
def test_padded_empty_up_to_numpy_s_rank_is_made(rank):
    import tensorlang as tl
    assert tl.padded_empty((1,) * rank, 8).shape == (1,) * rank


# ------------------------------------------------------------------ names that are expressions
def _positions(word: str) -> dict[str, str]:
    w = word
    tail = "initially [ S(i) | i in 0..0 ];\n"
    return {
        "local": f"strand S (int i) {{ output real x = 0.0; update {{ real {w} = 2.0; x = 1.0; stabilize; }} }}\n{tail}",
        "global": f"real {w} = 2.0;\nstrand S (int i) {{ output real x = 0.0; update {{ stabilize; }} }}\n{tail}",
        "input": f"input real {w} = 2.0;\nstrand S (int i) {{ output real x = 0.0; update {{ stabilize; }} }}\n{tail}",
        "state": f"strand S (int i) {{ output real {w} = 0.0; update {{ stabilize; }} }}\n{tail}",
        "param": f"strand S (int {w}) {{ output real x = 0.0; update {{ stabilize; }} }}\ninitially [ S(i) | i in 0..0 ];\n",
        "function": f"function real {w}(real a) = a;\nstrand S (int i) {{ output real x = 0.0; update {{ stabilize; }} }}\n{tail}",
        "argument": f"function real f(real {w}) = 1.0;\nstrand S (int i) {{ output real x = 0.0; update {{ stabilize; }} }}\n{tail}",
        "foreach": f"strand S (int i) {{ output real x = 0.0; update {{ foreach (int {w} in 0..2) x += 1.0; stabilize; }} }}\n{tail}",
        "iterator": f"strand S (int i) {{ output real x = 0.0; update {{ stabilize; }} }}\ninitially [ S({w}) | {w} in 0..0 ];\n",
    }


@pytest.mark.parametrize("position", list(_positions("w")))
@pytest.mark.parametrize("word", ["nan", "true", "false"])
def test_a_name_that_reads_as_a_constant_is_refused_where_it_is_declared(word, position):
    """`real nan = 2.0; x = nan;` gave ⊥: the lexer took the declaration's `nan` as a name
    and the use's as the constant.  A declaration spelled so is error[syntax] now."""
    import tensorlang as tl
    with pytest.raises(tl.TensorLangError) as info:
        parse_program("#version 2.0\n" + _positions(word)[position])
    assert info.value.code == "syntax" and word in info.value.message


@pytest.mark.parametrize("word", ["in", "start", "update", "image", "identity", "nana", "true_", "False"])
def test_other_words_stay_names_where_the_grammar_allows(word):
    """Diderot's examples name an output `in`; only the three expression words are refused."""
    parse_program("#version 2.0\n" + _positions(word)["state"])


# ------------------------------------------------------------------ pow at its edges
POW = """#version 2.0
input real{} xs = {1.0};
input real{} ys = {1.0};
strand S (int i) {
  output real p = 0.0;
  output real q = 0.0;
  update { p = pow(xs{i}, ys{i}); q = xs{i} ^ ys{i}; stabilize; }
}
initially [ S(i) | i in 0..N ];
"""
POW_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, -10.0, 1.5, -1.5, 3.0, -3.0, 309.0, -309.0, 1e-310,
             np.inf, -np.inf, np.nan]


def _pow_program():
    pairs = [(x, y) for x in POW_EDGES for y in POW_EDGES]
    xs, ys = (np.array(v, dtype=float) for v in zip(*pairs))
    return _program(POW.replace("N", str(len(pairs) - 1))), xs, ys


def _bits_equal(x, y) -> bool:
    x, y = np.asarray(x, float), np.asarray(y, float)
    nan = np.isnan(x)
    return bool(np.array_equal(nan, np.isnan(y)) and np.array_equal(x[~nan], y[~nan])
                and np.array_equal(np.signbit(x[~nan]), np.signbit(y[~nan])))


def test_the_interpreters_pow_is_c_s_at_every_edge():
    """pow and a real ^: 0^-1, -0^-1 (±inf, was a ZeroDivisionError taken as +inf), (-10)^309
    (-inf, was an OverflowError taken as +inf), (-inf)^-1.5 (+0, was ⊥): C's pow, bit for bit."""
    p, xs, ys = _pow_program()
    res = p.run({"xs": xs, "ys": ys}, backend="interp").outputs
    with np.errstate(all="ignore"):
        want = np.power(xs, ys)
    assert _bits_equal(res["p"], want) and _bits_equal(res["q"], want)


@needs_cc
@pytest.mark.slow
def test_pow_at_every_edge_agrees_between_the_executors():
    p, xs, ys = _pow_program()
    a = p.run({"xs": xs, "ys": ys}, backend="interp").outputs
    b = p.run({"xs": xs, "ys": ys}, backend="c").outputs
    for name in a:
        assert _bits_equal(a[name], b[name]), name


# ------------------------------------------------------------------ StrandProgram.run's arguments
ARGS = """#version 2.0
input real a = 1.0;
input int n = 1;
input vec3 v = [1.0, 2.0, 3.0];
input real{} t = {1.0};
strand S (int i) { output real x = 0.0; update { x = a + real(n) + v[0] + t{0}; stabilize; } }
initially [ S(i) | i in 0..1 ];
"""

BAD_VALUES = [{"a": complex(1, 2)}, {"a": "1.0"}, {"a": None}, {"a": [1.0]}, {"a": 10**400},
              {"n": 2**64}, {"n": -2**63 - 1}, {"n": 1.5}, {"n": "3"}, {"n": np.uint64(2**63)},
              {"v": [1, 2]}, {"v": np.ones((3, 1))}, {"v": ["a", "b", "c"]}, {"v": [complex(1), 2, 3]},
              {"v": np.array([1, 2, 3], object)}, {"t": np.ones((2, 2))}, {"t": ["x"]}, {"t": [complex(1)]},
              {"t": [None]}, {"t": [[1.0], [2.0, 3.0]]}]


@pytest.mark.parametrize("values", BAD_VALUES, ids=repr)
def test_a_value_that_does_not_fit_its_input_is_an_input_error(values):
    """``p.run(values)`` (docs/diderot-compiled.md) gave TypeError, OverflowError or a
    traceback in the middle of the run for these; ``tl.compile``'s StrandRun refused them."""
    import tensorlang as tl
    with pytest.raises(tl.TensorLangError) as info:
        _program(ARGS).run(values, backend="interp")
    assert info.value.code == "input", info.value


@pytest.mark.parametrize("kw", [{"limit": 2.5}, {"limit": "3"}, {"limit": True}, {"snapshot": 1.0},
                                {"snapshot": "2"}, {"threads": 2.0}, {"threads": None}], ids=repr)
def test_a_count_that_is_no_integer_is_an_input_error(kw):
    import tensorlang as tl
    with pytest.raises(tl.TensorLangError) as info:
        _program(ARGS).run({}, backend="interp", **kw)
    assert info.value.code == "input"


@pytest.mark.parametrize("values", [{"n": 2**63 - 1}, {"n": np.int8(3)}, {"t": range(4)}, {"t": iter([2.0])},
                                    {"v": np.array([1, 2, 3], np.int32)}, {"a": np.float32(0.5)}],
                         ids=["int64-max", "np.int8", "range", "iterator", "int32-array", "np.float32"])
def test_values_that_fit_still_run(values):
    assert _program(ARGS).run(values, backend="interp", limit=2**70).outputs["x"].shape == (2,)


# ------------------------------------------------------------------ tl.transpose's arguments
@pytest.mark.parametrize("args", [(0, 0), (1, 2), (0, 7), ((1, 2), (1, 2)), (1, 2, 3)], ids=repr)
def test_transpose_with_dimensions_not_given_as_one_pair_is_an_argument_error(args):
    """``tl.transpose(e, 0, 7)`` was a TypeError from an inner function's signature."""
    import tensorlang as tl
    with pytest.raises(tl.ArgumentError) as info:
        tl.transpose(tl.var("a", (2, 3)), *args)
    assert info.value.code == "input" and isinstance(info.value, TypeError)


@pytest.mark.parametrize("args", [((1, 2),), (1,), ("x",)], ids=repr)
def test_transpose_of_a_field_with_dimensions_is_an_argument_error(args):
    import tensorlang as tl
    H = tl.hessian(tl.field(np.arange(64.0).reshape(8, 8) ** 2, "bspln3"))
    with pytest.raises(tl.ArgumentError):
        tl.transpose(H, *args)


def test_transpose_with_one_pair_or_none_still_builds():
    import tensorlang as tl
    a = tl.var("a", (2, 3))
    assert tl.transpose(a).shape == tl.transpose(a, (1, 2)).shape == (3, 2)
    img = np.sin(np.arange(64.0)).reshape(8, 8)
    J = tl.outer(tl.grad(tl.field(img, "bspln3")), tl.grad(tl.field(img.T ** 3, "ctmr")))
    np.testing.assert_allclose(tl.transpose(J)([[3.5, 3.2]]), np.swapaxes(J([[3.5, 3.2]]), -1, -2))


def test_a_sequence_input_beyond_the_memory_budget_is_too_large(monkeypatch):
    """A 10^7-item array given as a ``real{}`` input became a tuple of Python floats
    (64 bytes an item) without a bound."""
    import tensorlang as tl
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "1000000")
    with pytest.raises(tl.TensorLangError) as info:
        _program(ARGS).run({"t": np.ones(10**7)}, backend="interp")
    assert info.value.code == "too-large"
    assert _program(ARGS).run({"t": np.ones(1000)}, backend="interp").outputs["x"].tolist() == [4.0, 4.0]


# ------------------------------------------------------------------ strand C under UBSan
INT_EDGES_UB = """#version 2.0
input int n = 0;
strand S (int i) {
  output int k = 0;
  update { k = abs(n + i) + |n - i| + (-(n + i)) + (n / (-1 + 0 * i)) + (n % (-1 + 0 * i)) + (n * (i + 2)) + (n - i); stabilize; }
}
initially [ S(i) | i in 0..2 ];
"""

UBSAN_SCRIPT = """
import sys
from tensorlang.lang.diderot import parse_program, strands, typecheck
p = strands(typecheck(parse_program(sys.argv[1])), ".")
for n in (-2**63, -2**63 + 1, 2**63 - 1, -1, 0):
    print(n, p.run({"n": n}, backend="c").outputs["k"].tolist())
"""


@needs_cc
@pytest.mark.slow
def test_int_arithmetic_at_the_edges_is_defined_behaviour_in_the_strand_c(tmp_path):
    """Every int operation of the C executor at -2^63 and 2^63-1 runs clean under UBSan
    (``abs`` negated -2^63: signed overflow, undefined behaviour)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from hostile.test_robustness_generated import _gcc_runtime
    asan = _gcc_runtime("libasan.so")
    if asan is None:
        pytest.skip("gcc's ASan runtime is not installed")
    src = Path(__file__).resolve().parents[2] / "src"
    env = dict(os.environ, CC="gcc -fsanitize=address,undefined -fno-sanitize-recover=all",
               LD_PRELOAD=asan, ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               TENSORLANG_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(src))
    ran = subprocess.run([sys.executable, "-c", UBSAN_SCRIPT, INT_EDGES_UB], env=env, capture_output=True,
                         text=True, timeout=300)
    report = ran.stdout + ran.stderr
    assert ran.returncode == 0 and "runtime error" not in report, report[-3000:]
    objects = list((tmp_path / "cache").rglob("*.so"))
    assert objects and any(b"__ubsan" in path.read_bytes() for path in objects)
    interp = _program(INT_EDGES_UB)
    for line in ran.stdout.splitlines():
        n, got = line.split(" ", 1)
        assert got == str(interp.run({"n": int(n)}, backend="interp").outputs["k"].tolist()), line


@pytest.mark.parametrize("create", [
    "initially [ S(i) | i in 0..4294967295, j in 0..4294967296 ];",
    "initially { S(i) | i in 0..4294967295, j in 0..4294967296 };",
    "initially [ S(i) | i in 0..999999999, j in 0..0 ];",
    "initially [ S(i) | i in -9223372036854775807..9223372036854775806, j in 0..1 ];",
])
def test_a_grid_whose_ranges_are_huge_is_too_large_before_any_is_made(create, monkeypatch):
    """The interpreter made each range of the grid as a list before checking the strands'
    count against the budget: 2^32 × 2^32 strands was a MemoryError."""
    import tensorlang as tl
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "100000000")
    src = ("#version 2.0\nstrand S (int i) { output real x = 0.0; update { stabilize; } }\n"
           + create.replace("S(i)", "S(i + j)") + "\n")
    with pytest.raises(tl.TensorLangError) as info:
        strands(typecheck(parse_program(src)), ".").run({}, backend="interp")
    assert info.value.code == "too-large"
