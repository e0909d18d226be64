"""The STUR front end: parsing, the stur-* rules, the dense reference semantics against
numpy, and the compiled targets against the reference (NaN, ±inf, ±0 among inputs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang import lang
from tensorlang.errors import TensorLangError
from tensorlang.ein import ir as ein_ir


STUR = lang.get("stur")

# ------------------------------------------------------------------ programs
# Small STUR programs written for these tests, each exercising a part of the syntax the
# public StructTensor examples use, with the sizes to run them at.


COVARIANCE = """\
symbols: R, F
cov(a, b) := data(r, a) * data(r, b)
cov:D(a, b) := (0 <= a < F) * (0 <= b < F)
data:D(r, a) := (0 <= r < R) * (0 <= a < F)
"""

DIAGONAL_MATVEC = """\
symbols: N
y(i) := M(i, j) * x(j)
M:D(i, j) := (0 <= i < N) * (0 <= j < N)
M:U(i, j) := (i = j)
x:D(j) := (0 <= j < N)
y:D(i) := (0 <= i < N)
"""

SYMMETRIC_COPY = """\
symbols: N
out(i, j) := S(i, j)
out:D(i, j) := (0 <= i < N) * (0 <= j < N)
S:D(i, j) := (0 <= i < N) * (0 <= j < N)
S:U(i, j) := (0 <= i <= j < N)
S:R(i, j, ip, jp) := (0 <= j < i < N) * (ip = j) * (jp = i)
"""

SCALARS_AND_INVERSES = """\
symbols: N
s() := 2.5 * -4 * v(k) * c() * 0.5^-1
w(i) := s() * v^-1(i) + (-1) * v(i) * N^-1()
w:D(i) := (0 <= i < N)
v:D(i) := (0 <= i < N)
"""

PREPROCESS_SLICE = """\
symbols: P, Q, K
@preprocess_start
row(l) := T(l, j) * (j = K)
T:D(l, j) := (0 <= l) * (l < P) * (0 <= j) * (j < Q)
row:D(l) := (0 <= l) * (l < P)
@preprocess_end
z(l) := row(l) * g(l)
g:D(l) := (0 <= l < P)
z:D(l) := (0 <= l < P)
"""

EXTRA_LOOP = """\
symbols: N
iters: t -> rep, i
t(i) := u(i) * (0 <= rep < 3)
t:D(i) := (0 <= i < N)
u:D(i) := (0 <= i < N)
"""

# a union unique set, a redundancy map with a factor, an offset dimension fact
BANDED = """\
symbols: W
y(i) := B(i, j) * x(j)
B:D(i, j) := (0 <= i) * (i < W) * (0 <= j) * (j < W)
B:U(i, j) := (i = 0) * (0 <= j) * (W > j) + (1 <= i) * (W > i) * (j = (i - 1))
B:R(i, j, ip, jp) := -2 * (0 <= j < i < W) * (ip = j) * (jp = i)
x:D(j) := (0 <= j) * (j < W)
y:D(i) := (0 <= i) * (i < W)
"""

# conditions the compiled targets cannot lower yet: a triangle and a packed index
PACKED_TRIANGLE = """\
symbols: N
packed(s) := U(i, j) * (i <= j) * (s = (N * i + j) - (i * (i + 1) / 2))
U:D(i, j) := (0 <= i < N) * (0 <= j < N)
U:U(i, j) := (i <= j)
packed:D(s) := (0 <= s) * (s < N * (N + 1) / 2)
"""

OUTER_THREE = """\
symbols: N
outputs: m3
m2(i, j) := f(i) * f(j)
m3(i, j, k) := m2(i, j) * f(k)
f:D(i) := (0 <= i < N)
m2:D(i, j) := (0 <= i < N) * (0 <= j < N)
m3:D(i, j, k) := (0 <= i < N) * (0 <= j < N) * (0 <= k < N)
"""

# head indices limited to part of their dimension: a fixed column, a range, and a sum of
# products over different parts (the compiled targets place each in a direct sum with
# zero pieces around it)
HEAD_FIXED = """\
symbols: N, J
A(i, j) := B(i, k) * C(k, j) * (j = J)
A:D(i, j) := (0 <= i < N) * (0 <= j < N)
B:D(i, k) := (0 <= i < N) * (0 <= k < N)
C:D(k, j) := (0 <= k < N) * (0 <= j < N)
"""

HEAD_PIECES = """\
symbols: W
A(i) := B(i, j) * C(j) * (i = 0) + B(i, k) * C(k) * (1 <= i) * (W - 1 > i) * (k = (i - 1))
A:D(i) := (0 <= i) * (i < W)
B:D(i, j) := (0 <= i < W) * (0 <= j < W)
C:D(j) := (0 <= j < W)
"""

HEAD_BOX = """\
symbols: N, M
A(i, j) := B(i, j) * (1 <= i < 3) * (2 <= j) * (j <= M - 2)
A:D(i, j) := (0 <= i < N) * (0 <= j < M)
B:D(i, j) := (0 <= i < N) * (0 <= j < M)
"""

# two head indices tied to each other: not a box of the head (interp only)
HEAD_DIAGONAL = """\
symbols: N
A(i, j, k) := B(i, k) * C(i, j, k) * (i = j)
A:D(i, j, k) := (0 <= i < N) * (0 <= j < N) * (0 <= k < N)
B:D(i, k) := (0 <= i < N) * (0 <= k < N)
C:D(i, j, k) := (0 <= i < N) * (0 <= j < N) * (0 <= k < N)
"""

HEAD_UPPER = """\
symbols: N
A(i, j) := B(i, j) * (i <= j) + C(i, j) * (j = i + 1) + B(i, j) * (i <= j) * (j <= i + 1)
A:D(i, j) := (0 <= i < N) * (0 <= j < N)
B:D(i, j) := (0 <= i < N) * (0 <= j < N)
C:D(i, j) := (0 <= i < N) * (0 <= j < N)
"""

#: name -> (program, params); all compile except where COMPILED says no.
PROGRAMS = {
    "covariance": (COVARIANCE, {"R": 5, "F": 3}),
    "diagonal_matvec": (DIAGONAL_MATVEC, {"N": 4}),
    "symmetric_copy": (SYMMETRIC_COPY, {"N": 3}),
    "scalars_and_inverses": (SCALARS_AND_INVERSES, {"N": 4}),
    "preprocess_slice": (PREPROCESS_SLICE, {"P": 3, "Q": 4, "K": 2}),
    "extra_loop": (EXTRA_LOOP, {"N": 3}),
    "banded": (BANDED, {"W": 4}),
    "packed_triangle": (PACKED_TRIANGLE, {"N": 3}),
    # past MAX_UNROLL values of i: not unrolled, interpreter only
    "packed_triangle_large": (PACKED_TRIANGLE, {"N": 40}),
    "outer_three": (OUTER_THREE, {"N": 3}),
    "head_fixed": (HEAD_FIXED, {"N": 4, "J": 2}),
    "head_fixed_last": (HEAD_FIXED, {"N": 3, "J": 2}),
    "head_pieces": (HEAD_PIECES, {"W": 5}),
    "head_box": (HEAD_BOX, {"N": 4, "M": 6}),
    "head_diagonal": (HEAD_DIAGONAL, {"N": 3}),
    "head_upper": (HEAD_UPPER, {"N": 4}),
}

#: programs the compiled targets cannot lower yet (error[backend]; interp runs them)
INTERP_ONLY = {"packed_triangle_large"}


def _check(text, params=None):
    return tl.check(text, lang="stur", params=params)


def _run_reference(text, params, inputs):
    return STUR.interpret(_check(text, params), inputs, np.float64)


def _random_inputs(checked, seed=0):
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(checked.context.shapes[n]) for n in checked.inputs}


# ------------------------------------------------------------------ registry
def test_stur_is_a_registered_front_end():
    assert lang.language_of("x.stur") == "stur"
    assert "stur" in lang.REGISTRY


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_program_checks_with_and_without_values(name):
    text, params = PROGRAMS[name]
    unbound = _check(text)
    bound = _check(text, params)
    assert set(bound.inputs) == set(unbound.inputs)
    assert all(isinstance(d, int) for shape in bound.context.shapes.values() for d in shape)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printer_round_trips(name):
    text, params = PROGRAMS[name]
    program = lang.parse(tl.errors.Source(text, "<t>"), "stur", params)
    again = lang.parse(tl.errors.Source(STUR.print(program), "<t>"), "stur", params)
    assert STUR.print(again) == STUR.print(program)
    assert [r.name for r in again.rules] == [r.name for r in program.rules]


# ------------------------------------------------------------------ semantics vs numpy
def test_covariance_is_xtx():
    text, params = PROGRAMS["covariance"]
    x = np.random.default_rng(1).standard_normal((5, 3))
    out = _run_reference(text, params, {"data": x})
    assert np.allclose(out["cov"], x.T @ x)


def test_diagonal_matvec_reads_the_dense_input():
    text, params = PROGRAMS["diagonal_matvec"]
    m, x = np.random.default_rng(2).standard_normal((4, 4)), np.arange(4.0)
    assert np.allclose(_run_reference(text, params, {"M": m, "x": x})["y"], m @ x)


def test_scalars_inverses_and_symbol_values():
    text, params = PROGRAMS["scalars_and_inverses"]
    v, c = np.array([1.0, 2.0, -4.0, 0.5]), np.array(3.0)
    out = _run_reference(text, params, {"v": v, "c": c})
    s = 2.5 * -4 * v.sum() * 3.0 * 2.0
    assert np.isclose(out["s"], s)
    assert np.allclose(out["w"], s / v - v / 4)


def test_preprocess_fixed_slice():
    text, params = PROGRAMS["preprocess_slice"]
    t, g = np.random.default_rng(3).standard_normal((3, 4)), np.arange(3.0)
    out = _run_reference(text, params, {"T": t, "g": g})
    assert set(out) >= {"z"}
    assert np.allclose(out["z"], t[:, 2] * g)
    assert _check(text, params).results == ("z",)  # preprocessing results are temporaries


def test_a_variable_only_in_a_condition_is_summed():
    text, params = PROGRAMS["extra_loop"]
    u = np.array([1.0, -2.0, 0.25])
    assert np.allclose(_run_reference(text, params, {"u": u})["t"], 3 * u)


def test_nonaffine_packed_index():
    text, params = PROGRAMS["packed_triangle"]
    u = np.arange(9.0).reshape(3, 3)
    out = _run_reference(text, params, {"U": u})["packed"]
    assert np.allclose(out, u[np.triu_indices(3)])
    for backend in [b for b in ("numpy", "c") if b in tl.available_backends()]:  # unrolled over i (step 6)
        k = tl.compile(text, lang="stur", params=params, backend=backend)
        assert np.array_equal(k(U=u)["packed"], u[np.triu_indices(3)])


def test_points_outside_the_conditions_are_not_summed():
    """An infinite entry where a condition fails does not reach the result (the rule's
    set of points excludes it; it is not multiplied by zero)."""
    text, params = PROGRAMS["preprocess_slice"]
    t = np.ones((3, 4))
    t[:, 0] = np.inf
    out = _run_reference(text, params, {"T": t, "g": np.ones(3)})
    assert np.all(np.isfinite(out["z"]))


# ------------------------------------------------------------------ compiled vs reference
@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - INTERP_ONLY))
def test_numpy_target_equals_reference(name):
    text, params = PROGRAMS[name]
    k = tl.compile(text, lang="stur", params=params, backend="numpy")
    inputs = _random_inputs(k.checked)
    ref = _run_reference(text, params, inputs)
    got = k(**inputs)
    for out in got:
        assert np.allclose(got[out], ref[out], equal_nan=True), out


@pytest.mark.parametrize("name", sorted(INTERP_ONLY))
def test_unlowerable_programs_are_backend_errors_and_run_on_interp(name):
    text, params = PROGRAMS[name]
    with pytest.raises(TensorLangError) as info:
        tl.compile(text, lang="stur", params=params, backend="numpy")
    assert info.value.code == "backend"
    k = tl.compile(text, lang="stur", params=params, backend="interp")
    inputs = _random_inputs(k.checked)
    got = k(**inputs)
    ref = _run_reference(text, params, inputs)
    assert all(np.allclose(got[n], ref[n]) for n in got)


_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 1e30])
_VALUES = st.one_of(st.floats(-1e3, 1e3, allow_nan=False), _SPECIAL)


@settings(max_examples=25)
@given(st.sampled_from(sorted(set(PROGRAMS) - INTERP_ONLY)), st.data())
def test_compiled_equals_reference_on_special_values(name, data):
    text, params = PROGRAMS[name]
    k = _kernel(name)
    inputs = {n: np.array(data.draw(st.lists(_VALUES, min_size=int(np.prod(s)), max_size=int(np.prod(s)))),
                          dtype=float).reshape(s)
              for n, s in ((n, k.checked.context.shapes[n]) for n in k.checked.inputs)}
    ref = _run_reference(text, params, inputs)
    got = k(**inputs)
    for out in got:
        _agree(got[out], ref[out], out)


def _agree(got, ref, name):
    """Finite entries agree to rounding; an entry is finite in both or in neither.  (The
    optimizer may hoist a scalar out of a sum, ``Σ_k v[k]·c = c·Σ_k v[k]``, which turns
    0·inf = ⊥ into ±inf: reassociation decides which non-finite value, never whether.)"""
    finite = np.isfinite(ref)
    assert np.array_equal(np.isfinite(got), finite), (name, got, ref)
    assert np.allclose(got[finite], ref[finite], rtol=1e-9, atol=1e-9 * (1 + np.abs(ref[finite]).max(initial=0))), \
        (name, got, ref)


_KERNELS: dict = {}


def _kernel(name):
    if name not in _KERNELS:
        text, params = PROGRAMS[name]
        _KERNELS[name] = tl.compile(text, lang="stur", params=params, backend="numpy")
    return _KERNELS[name]


def test_a_limited_head_index_lowers_to_a_direct_sum_with_zero_pieces():
    """Outside the part the conditions leave, the entries are exactly 0, also where the
    inputs hold NaN or inf (a select, never 0 · NaN)."""
    text, params = PROGRAMS["head_fixed"]
    k = tl.compile(text, lang="stur", params=params, backend="numpy")
    assert "concat(" in k.ir("ein")
    B = np.full((4, 4), np.nan)
    C = np.full((4, 4), np.inf)
    got = k(B=B, C=C)["A"]
    assert np.all(got[:, [0, 1, 3]] == 0) and np.all(np.isnan(got[:, 2]))
    for backend in [b for b in ("c", "interp") if b in tl.available_backends()]:
        other = tl.compile(text, lang="stur", params=params, backend=backend)(B=B, C=C)["A"]
        np.testing.assert_array_equal(other, got)


@st.composite
def _head_limited(draw):
    """A rule of one or two products, each limiting the head indices to random ranges
    (a fixed position, an interval, the whole range) and summing over k."""
    n, m, r = draw(st.integers(1, 6)), draw(st.integers(1, 6)), draw(st.integers(1, 4))

    def limits(index: str, extent: int) -> str:
        lo = draw(st.integers(0, extent - 1))
        hi = draw(st.integers(lo, extent - 1))
        kind = draw(st.sampled_from(["fixed", "range", "whole", "lower"]))
        if kind == "fixed":
            return f" * ({index} = {lo})"
        if kind == "range":
            return f" * ({lo} <= {index}) * ({index} <= {hi})"
        if kind == "lower":
            return f" * ({lo} <= {index} < {extent})"
        return ""

    products = [f"B(i, k) * C(k, j){limits('i', n)}{limits('j', m)}"
                for _ in range(draw(st.integers(1, 2)))]
    return (f"A(i, j) := {' + '.join(products)}\nA:D(i, j) := (0 <= i < {n}) * (0 <= j < {m})\n"
            f"B:D(i, k) := (0 <= i < {n}) * (0 <= k < {r})\nC:D(k, j) := (0 <= k < {r}) * (0 <= j < {m})\n")


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(_head_limited(), st.data())
def test_head_limited_products_compile_and_agree_with_the_reference(text, data):
    """Every compiled target (the product in a direct sum with zero pieces) gives the
    reference's entries: exact zeros outside each product's part, whatever the inputs."""
    checked = _check(text)
    inputs = {n: np.array(data.draw(st.lists(_VALUES, min_size=int(np.prod(s)), max_size=int(np.prod(s)))),
                          dtype=float).reshape(s)
              for n, s in ((n, checked.context.shapes[n]) for n in checked.inputs)}
    ref = STUR.interpret(checked, inputs, np.float64)
    for backend in [b for b in ("numpy", "c") if b in tl.available_backends()]:
        got = tl.compile(text, lang="stur", backend=backend)(**inputs)
        _agree(got["A"], ref["A"], f"A ({backend})")


def test_auto_runs_what_the_compiled_targets_cannot_lower_on_the_interpreter(capsys):
    text, params = PROGRAMS["packed_triangle_large"]
    with pytest.raises(TensorLangError) as info:
        tl.compile(text, lang="stur", params=params, backend="numpy")
    assert info.value.code == "backend"
    k = tl.compile(text, lang="stur", params=params)  # backend="auto"
    assert k.backend == "interp"
    assert "runs on the reference interpreter" in capsys.readouterr().err
    inputs = _random_inputs(k.checked)
    ref = _run_reference(text, params, inputs)
    got = k(**inputs)
    assert got and all(np.allclose(got[n], ref[n]) for n in got)


def test_a_symbolic_kernel_reports_the_interpreter_its_specialisations_fell_back_to(capsys):
    text, params = PROGRAMS["packed_triangle"]
    k = tl.compile(text, lang="stur")  # N symbolic, backend="auto"
    asked = k.backend
    assert asked in tl.available_backends() or asked == "auto"
    assert k.symbols == ("N",)  # packed's extent N*(N+1)/2 follows from N: no size of its own
    u = np.arange(25.0).reshape(5, 5)  # N bound from U's shape; packed then has 15 entries
    assert k(U=u)["packed"].tolist() == [u[i, j] for i in range(5) for j in range(i, 5)]
    assert k.backend != "interp"  # unrolled over i (step 6)
    spec = k.specialize(N=40)  # 40 values of i: past MAX_UNROLL
    assert spec.backend == "interp" and k.backend == "interp"
    assert "runs on the reference interpreter" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["head_diagonal", "head_upper"])
def test_a_condition_on_head_indices_is_a_select_with_exact_zeros(name):
    """``(i = j)`` and ``(i <= j)`` on head indices lower to a direct sum along the
    condition's value: the product is computed only where the condition holds, and the
    entries elsewhere are 0 even where every input is NaN (STUR's meaning, not 0·NaN)."""
    text, params = PROGRAMS[name]
    for backend in [b for b in ("numpy", "c") if b in tl.available_backends()]:
        k = tl.compile(text, lang="stur", params=params, backend=backend)
        assert k.backend == backend
        assert any(isinstance(node, ein_ir.Concat) for stmt in k.ein.statements for node in ein_ir.nodes(stmt.body))
        inputs = {n: np.full(k.checked.context.shapes[n], np.nan) for n in k.checked.accepted_inputs}
        got = k(**inputs)["A"]
        ref = _run_reference(text, params, inputs)["A"]
        assert np.array_equal(np.isnan(got), np.isnan(ref)) and np.isnan(got).any()
        assert np.all(got[~np.isnan(ref)] == 0)


def test_c_target_equals_reference():
    text, params = PROGRAMS["outer_three"]
    try:
        k = tl.compile(text, lang="stur", params=params, backend="c")
    except TensorLangError as exc:  # no C compiler on this machine
        pytest.skip(str(exc))
    inputs = {"f": np.array([1.5, -0.0, np.inf])}
    ref = _run_reference(text, params, inputs)
    got = k(**inputs)
    assert np.allclose(got["m3"], ref["m3"], equal_nan=True)


def test_symbolic_sizes_bind_from_inputs():
    text, _ = PROGRAMS["covariance"]
    k = tl.compile(text, lang="stur")
    x = np.random.default_rng(4).standard_normal((6, 2))
    assert np.allclose(k(data=x)["cov"], x.T @ x)


# ------------------------------------------------------------------ errors
BAD = {
    "syntax": ("A(i) := B(i) *\nA:D(i) := (0 <= i < 3)\n", "syntax"),
    "unknown fact": ("A:Q(i) := (0 <= i < 3)\n", "syntax"),
    "unbounded index": ("symbols: N\nA() := (0 <= k)\n", "free-index"),
    "no dimensions": ("A(i) := B(i)\nA:D(i) := (0 <= i < 3)\n", "undeclared"),
    "rank mismatch": ("A(i) := B(i) * B(i, j)\nA:D(i) := (0 <= i < 3)\nB:D(i) := (0 <= i < 3)\n", "shape"),
    "two rules": ("A() := 1\nA() := 2\n", "redeclared"),
    "repeated head index": ("A(i, i) := B(i)\nA:D(i, j) := (0 <= i < 2) * (0 <= j < 2)\nB:D(i) := (0 <= i < 2)\n",
                            "repeated-index"),
    "redundancy names": ("A(i, j) := B(i, j)\nA:D(i, j) := (0<=i<2)*(0<=j<2)\nB:D(i, j) := (0<=i<2)*(0<=j<2)\n"
                         "B:R(i, j, a, b) := (i = b)\n", "structure"),
    "cycle": ("A() := B()\nB() := A()\n", "uninit"),
    "unknown output": ("outputs: Z\nA() := 1\n", "undeclared"),
    "unknown name in a fact": ("A(i) := 1\nA:D(i) := (0 <= i < Q)\n", "undeclared"),
    "unbounded dimension": ("A(i) := 1\nA:D(i) := (0 <= i)\n", "shape"),
    "unclosed preprocess": ("@preprocess_start\nA() := 1\n", "syntax"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_errors(case):
    text, code = BAD[case]
    with pytest.raises(TensorLangError) as info:
        _check(text)
    assert info.value.code == code, str(info.value)


def test_each_error_is_reported_once():
    """Every problem the checker finds, each once (_check's collected errors were reported twice)."""
    with pytest.raises(TensorLangError) as info:
        _check("A:D(i) := (0 <= i < N)\nB(i) := A(i) * C(i)\nB(i) := A(i) * X(i)\n")
    assert [d.code for d in info.value.diagnostics] == ["undeclared", "redeclared"], str(info.value)


_HUGE = "symbols: N\nD(i, j) := B(i, j)\nB:D(i, j) := (0 <= i < N) * (0 <= j < N)\nB:U(i, j) := ({})\n" \
        "D:D(i, j) := (0 <= i < N) * (0 <= j < N)\n"


@pytest.mark.parametrize("condition", ["i * 99999999999999999999 <= j", "i <= j + 99999999999999999999999999/3",
                                       "i * 2999999999 <= j + 2999999999 * 2999999999",
                                       "99999999999/09999999999999999999999 <= i", "i <= 4611686018427387905 - j"])
@pytest.mark.parametrize("params", [None, {"N": 3}])
def test_an_index_constant_past_2_62_is_too_large_at_the_expression(condition, params):
    """Refused at compile time, or (symbolic N) when the sizes bind at the first call."""
    with pytest.raises(TensorLangError) as info:
        tl.compile(_HUGE.format(condition), lang="stur", params=params, backend="numpy")(B=np.ones((3, 3)))
    assert info.value.code == "too-large" and info.value.span is not None, str(info.value)


_REACH = "symbols: N\nD(i, j) := B(i, j) * ({})\nB:D(i, j) := (0 <= i < N) * (0 <= j < N)\n" \
         "D:D(i, j) := (0 <= i < N) * (0 <= j < N)\n"


@pytest.mark.parametrize("condition", [(f"i*{2**61} <= j*{2**61}", lambda i, j: i <= j),
                                       (f"i*{2**62} = j*{2**62}", lambda i, j: i == j),
                                       (f"i*{2**62} + j*{2**62} <= 1", lambda i, j: i + j <= 0),
                                       (f"i*i*{2**61} <= j", lambda i, j: i * i * 2**61 <= j),
                                       (f"{2**62} - j*{2**61} <= i*{2**61}", lambda i, j: 2 <= i + j)])
@pytest.mark.parametrize("backend", ["interp", "numpy"])
def test_a_condition_whose_values_reach_past_2_62_is_too_large_or_exact(condition, backend):
    """Its constants are under 2^62, its values over the indices need not be: never int64's
    wrap (the interpreter held i*2^62 <= j*2^62 at i = 2 everywhere, C lost a point at 2^61)."""
    text, holds = condition
    b = np.arange(1.0, 10.0).reshape(3, 3)
    try:
        got = tl.compile(_REACH.format(text), lang="stur", params={"N": 3}, backend=backend)(B=b)["D"]
    except TensorLangError as exc:
        assert exc.code == "too-large" and exc.span is not None, str(exc)
        return
    want = np.array([[b[i, j] if holds(i, j) else 0.0 for j in range(3)] for i in range(3)])
    np.testing.assert_array_equal(got, want)


def test_an_index_constant_under_2_62_still_runs():
    k = tl.compile(_HUGE.format("i * 2999999999 <= j + 2999999999"), lang="stur", params={"N": 3}, backend="numpy")
    assert k(B=np.ones((3, 3)))["D"].shape == (3, 3)


def test_unknown_param_is_an_input_error():
    with pytest.raises(TensorLangError) as info:
        _check(PROGRAMS["covariance"][0], {"Z": 3})
    assert info.value.code == "input"


def test_unbound_fixed_slice_symbol_is_an_input_error_at_run_time():
    text, _ = PROGRAMS["preprocess_slice"]
    with pytest.raises(TensorLangError) as info:
        k = tl.compile(text, lang="stur", params={"P": 3, "Q": 4}, backend="numpy")
        k(T=np.ones((3, 4)), g=np.ones(3))
    assert info.value.code == "input"


# a symbol outside every extent: only in a condition, a factor, or a preprocessing rule
_OUTSIDE = {
    "condition": (HEAD_FIXED, "J", lambda b, c, v: np.where(np.arange(b.shape[1]) == v, b @ c, 0.0)),
    "factor": ("symbols: N, S\nA(i) := B(i, k) * C(k, i) * S()\nA:D(i) := (0 <= i < N)\n"
               "B:D(i, k) := (0 <= i < N) * (0 <= k < N)\nC:D(k, i) := (0 <= k < N) * (0 <= i < N)\n",
               "S", lambda b, c, v: np.einsum("ik,ki->i", b, c) * v),
    "preprocess": ("symbols: N, P\n@preprocess_start\nT(i) := B(i, k) * (k = P)\n@preprocess_end\n"
                   "A(i, j) := T(i) * C(i, j)\nT:D(i) := (0 <= i < N)\nA:D(i, j) := (0 <= i < N) * (0 <= j < N)\n"
                   "B:D(i, k) := (0 <= i < N) * (0 <= k < N)\nC:D(i, j) := (0 <= i < N) * (0 <= j < N)\n",
                   "P", lambda b, c, v: b[:, v][:, None] * c),
}


@pytest.mark.parametrize("case", sorted(_OUTSIDE))
@pytest.mark.parametrize("backend", ["interp", "numpy", "c"])
def test_a_symbol_outside_every_extent_is_a_size_of_the_kernel(case, backend):
    """Bound by specialize, by params= (alone or with the others), asked for by name
    when a call cannot bind it; the results equal the dense meaning."""
    text, name, expect = _OUTSIDE[case]
    rng = np.random.default_rng(7)
    b, c = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    k = tl.compile(text, lang="stur", backend=backend)
    assert isinstance(k, tl.SymbolicKernel) and k.symbols == ("N", name)
    got = next(iter(k.specialize(N=4, **{name: 2})(B=b, C=c).values()))
    assert np.allclose(got, expect(b, c, 2))
    with pytest.raises(TensorLangError) as info:  # the shapes give N, nothing gives the other
        k(B=b, C=c)
    assert info.value.code == "input" and f"symbol {name!r} has no value" in info.value.message
    assert f"--param {name}=" in info.value.message and "sizes no tensor" in info.value.message
    with pytest.raises(TensorLangError) as info:
        k.specialize(N=4)
    assert info.value.code == "input" and name in info.value.message
    only = tl.compile(text, lang="stur", backend=backend, params={"N": 4})  # N given, the other still a size
    assert isinstance(only, tl.SymbolicKernel) and only.symbols == (name,)
    assert np.allclose(next(iter(only.specialize(**{name: 1})(B=b, C=c).values())), expect(b, c, 1))
    bound = tl.compile(text, lang="stur", backend=backend, params={name: 3})  # N from the shapes
    assert bound.symbols == ("N",) and np.allclose(next(iter(bound(B=b, C=c).values())), expect(b, c, 3))


def test_a_symbol_declared_and_never_used_needs_no_value():
    text = HEAD_FIXED.replace("symbols: N, J", "symbols: N, J, Unused")
    k = tl.compile(text, lang="stur", params={"J": 1}, backend="numpy")
    assert k.symbols == ("N",)
    b = np.arange(9.0).reshape(3, 3)
    assert np.allclose(k(B=b, C=np.eye(3))["A"][:, 1], b[:, 1])
    assert not isinstance(tl.compile(text, lang="stur", params={"N": 3, "J": 1}), tl.SymbolicKernel)


def test_the_cli_asks_for_a_symbol_outside_every_extent(tmp_path, capsys):
    from tensorlang.cli import main
    p = tmp_path / "fixed.stur"
    p.write_text(HEAD_FIXED)
    np.save(tmp_path / "B.npy", np.eye(3))
    np.save(tmp_path / "C.npy", np.eye(3))
    args = ["run", str(p), "--input", f"B={tmp_path / 'B.npy'}", "--input", f"C={tmp_path / 'C.npy'}"]
    assert main(args) != 0
    assert "error[input]" in capsys.readouterr().err
    assert main([*args, "--param", "J=1"]) == 0


def test_a_symbol_outside_every_extent_in_chunked_runs_and_cost_reports():
    text = "symbols: N, S\nA(i) := B(i) * S()\nA:D(i) := (0 <= i < N)\nB:D(i) := (0 <= i < N)\n"
    k = tl.compile(text, lang="stur", backend="numpy")
    b = np.arange(10.0)
    for attempt in (lambda: k.dask(B=b, chunks=3), k.cost_report):
        with pytest.raises(TensorLangError) as info:
            attempt()
        assert info.value.code == "input" and "'S'" in info.value.message and "--param S=" in info.value.message
    given = tl.compile(text, lang="stur", backend="numpy", params={"S": 4})
    assert np.array_equal(given.dask(B=b, chunks=3)["A"].compute(), 4 * b)  # a STUR program cut into chunks
    assert "flops N" in given.cost_report()


# ------------------------------------------------------------------ structure promises
def test_check_structure_accepts_a_kept_promise_and_reports_the_first_broken_entry():
    text, params = PROGRAMS["symmetric_copy"]
    k = tl.compile(text, lang="stur", params=params, backend="numpy", check_structure=True)
    s = np.array([[1.0, 2.0, 3.0], [2.0, 5.0, np.nan], [3.0, np.nan, 9.0]])
    assert np.allclose(k(S=s)["out"], s, equal_nan=True)
    broken = s.copy()
    broken[2, 0] = 4.0
    with pytest.raises(TensorLangError) as info:
        k(S=broken)
    assert info.value.code == "structure"
    assert "S(2, 0)" in str(info.value)
    assert tl.compile(text, lang="stur", params=params, backend="numpy")(S=broken)["out"][2, 0] == 4.0


def test_check_structure_zero_outside_the_unique_set_and_scaled_copies():
    text, params = PROGRAMS["diagonal_matvec"]
    k = tl.compile(text, lang="stur", params=params, backend="numpy", check_structure=True)
    k(M=np.diag([1.0, -0.0, np.inf, 2.0]), x=np.ones(4))
    bad = np.diag([1.0, 2.0, 3.0, 4.0])
    bad[1, 3] = -0.5
    with pytest.raises(TensorLangError) as info:
        k(M=bad, x=np.ones(4))
    assert info.value.code == "structure" and "M(1, 3)" in str(info.value)
    text, params = PROGRAMS["banded"]  # union unique set; copies scaled by -2 where not unique
    k = tl.compile(text, lang="stur", params=params, backend="numpy", check_structure=True)
    b = np.zeros((4, 4))
    b[0, :] = [1.0, 2.0, 3.0, 4.0]
    b[2, 1], b[3, 2] = 5.0, 6.0
    b[1, 0] = -2 * b[0, 1]  # (1, 0) is not unique: a copy of (0, 1) times -2
    b[2, 0], b[3, 0], b[3, 1] = -2 * b[0, 2], -2 * b[0, 3], -2 * b[1, 3]
    k(B=b, x=np.ones(4))
    b[3, 1] = 1.0
    with pytest.raises(TensorLangError) as info:
        k(B=b, x=np.ones(4))
    assert info.value.code == "structure" and "B(3, 1)" in str(info.value)


@pytest.mark.parametrize("seed", range(5))
def test_symmetric_inputs_keep_their_promise_on_every_target(seed):
    """Random inputs built to keep the promise (NaN, ±inf, ±0 included) pass the check,
    and the compiled result equals the reference."""
    text, params = PROGRAMS["symmetric_copy"]
    rng = np.random.default_rng(seed)
    upper = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -3.0], size=(3, 3))
    s = np.triu(upper) + np.triu(upper, 1).T
    s[np.tril_indices(3, -1)] = s.T[np.tril_indices(3, -1)]
    k = tl.compile(text, lang="stur", params=params, backend="numpy", check_structure=True)
    got = k(S=s)["out"]
    ref = _run_reference(text, params, {"S": s})["out"]
    assert np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[~np.isnan(got)], ref[~np.isnan(ref)])


def test_cli_runs_a_stur_file_with_params_and_checks_structure(tmp_path, capsys):
    from tensorlang.cli import main
    program = tmp_path / "sym.stur"
    program.write_text(PROGRAMS["symmetric_copy"][0])
    broken = np.arange(9.0).reshape(3, 3)
    np.save(tmp_path / "S.npy", broken)
    assert main(["run", str(program), "--param", "N=3", "--input", f"S={tmp_path / 'S.npy'}", "--backend", "numpy",
                 "-q", "--output", str(tmp_path / "o.npz")]) == 0
    assert main(["run", str(program), "--param", "N=3", "--input", f"S={tmp_path / 'S.npy'}", "--backend", "numpy",
                 "--check-structure"]) == 1
    assert "error[structure]" in capsys.readouterr().err


_EDITS = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(
    list("()*+:=<>-^,; \nijkNp01@") + [":=", "^-1", "<=", "symbols:", "outputs:", "iters:", "@preprocess_start", "D", "U",
                                        "R", ""])), min_size=1, max_size=4)


@settings(max_examples=150)
@given(st.sampled_from(sorted(PROGRAMS)), _EDITS)
def test_edited_programs_give_a_clear_error_or_run(name, edits):
    """Random edits of the programs above: every failure is a TensorLangError, never a
    traceback, and a program that checks runs on the reference interpreter."""
    text = PROGRAMS[name][0]
    for at, piece in edits:
        at %= len(text) + 1
        text = text[:at] + piece + text[at + (1 if piece == "" else 0):]
    try:
        checked = _check(text)
        params = {s: 3 for s in checked.program.ast.symbols}
        k = tl.compile(text, lang="stur", params=params, backend="interp")
        k(**{n: np.ones(k.checked.context.shapes[n]) for n in k.checked.inputs})
    except TensorLangError:
        pass
