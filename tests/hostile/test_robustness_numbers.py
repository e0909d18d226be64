"""Issue 16 (robustness): numbers at their edges.

* Signed zeros, infinities and NaN: the optimized numpy and C programs give the
  interpreter's value bit for bit in the sign of a zero and of an infinity (the
  optimizer's identities are exact in IEEE arithmetic; value numbering tells 0 from -0;
  constants are not folded across an operand when that reassociates).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.ein import ir

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 1.5])


def _same_bits(got, ref) -> bool:
    """Equal values, the sign of zeros and infinities included; any NaN equals any NaN."""
    got, ref = np.asarray(got, dtype=float), np.asarray(ref, dtype=float)
    nan = np.isnan(ref)
    return (np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan], ref[~nan])
            and np.array_equal(np.signbit(got[~nan]), np.signbit(ref[~nan])))


def _agree(body: str, extra: str = "", **outs):
    src = f"in var x : [{len(EDGES)}]\nout var y : [{len(EDGES)}]\n{extra}y[i] = {body}\n"
    expected = tl.compile(src, backend="interp")(x=EDGES)
    for backend in ("numpy", "c"):
        for opt in (True, False):
            got = tl.compile(src, backend=backend, opt=opt)(x=EDGES)
            for name, value in expected.items():
                assert _same_bits(got[name], value), (body, backend, opt, name, got[name], value)


@pytest.mark.parametrize("body", [
    "1/(0-x[i])", "1/(x[i]+0)", "1/(0+x[i])", "1/(x[i]-0)", "1/(x[i]/-1)", "1/(x[i]/1)", "1/-(-x[i])",
    "1/(x[i]*-1)", "1/(-1*x[i])", "1/(x[i]*1)", "1/(-0-x[i])", "1/(x[i]+-0)", "1/(-0+x[i])", "1/(x[i]-(-0))",
    "1/(x[i]*0)", "1/(x[i]*-0)", "1/(x[i]*2*3)", "1/(0*x[i]*-1)", "1/(2*(x[i]*0.5))",
    "1e300*x[i]*1e-300", "1/(1e300*x[i]*1e-300)",
    "1e-300*(x[i]*1e300)", "1e-300*(x[i]*x[i]*1e300)", "(1e300*x[i])*x[i]*1e-300",
    "1/(sum(j:1) -x[i])", "1/(sum(j:2) -x[i])", "1/(sum(j:3) (0*x[i]))", "1/(sum(j:2) 2*x[i])", "1/(x[i]*x[i]*-1*x[i])",
    "1/(sum(j:2) -2*x[i])",
])
def test_optimized_targets_keep_signed_zeros_infinities_and_overflow(body):
    _agree(body)


def test_value_numbering_does_not_merge_times_zero_with_times_minus_zero():
    src = ("in var x : [8]\nout var y : [8]\nout var z : [8]\n"
           "y[i] = 1/(x[i]*0)\nz[i] = 1/(x[i]*-0)\n")
    expected = tl.compile(src, backend="interp")(x=EDGES)
    assert _same_bits(expected["z"][:2], [-np.inf, np.inf])
    for backend in ("numpy", "c"):
        got = tl.compile(src, backend=backend, opt=True)(x=EDGES)
        assert _same_bits(got["y"], expected["y"]) and _same_bits(got["z"], expected["z"]), backend


def test_numbers_are_equal_by_their_ieee_value():
    assert ir.Const(0.0) != ir.Const(-0.0)
    assert len({ir.Const(0.0), ir.Const(-0.0)}) == 2
    assert ir.Const(float("nan")) == ir.Const(float("nan"))  # ⊥ is one value
    assert ir.Const(1.0) == ir.Const(1.0) and hash(ir.Const(2.0)) == hash(ir.Const(2.0))


# ---------------------------------------------------------------- integers beyond any size
BIG = "9" * 5000  # past Python's 4300-digit limit on converting a string to an int

BIG_PROGRAMS = [
    ("tl", f"in var A : [{BIG}]\nout var y : []\ny = 1\n"),
    ("tl", f"in var A : [3 3]\nout var y : [3]\ny = A . [1 {BIG}]\n"),
    ("tl", f"in var A : [3 3]\nout var y : [3 3]\ny = A ^ [{BIG} 1]\n"),
    ("tl", f"in var x : [3]\nout var y : [3]\ny[i] = x[{BIG}]\n"),
    ("tl", f"in var x : [3]\nout var y : [3]\ny[i] = delta[i,{BIG}] * x[i]\n"),
    ("tl", f"in var x : [3]\nout var y : [3]\ny[i] = x[{BIG}*i+1]\n"),
    ("tl", f"in var x : [3]\nout var y : [3]\ny[i] = sum(k:{BIG}) x[i]\n"),
    ("teil", f"in alloc B : [{BIG}]\nout alloc A : [6]\nA = B\n"),
    ("teil", f"in alloc B : [2 3]\nout alloc A : [2]\nA = red+ {BIG} B\n"),
    ("cfd", f"var input u : [{BIG}]\nvar output v : [{BIG}]\nv = u\n"),
    ("cfd", f"var input u : [3 3]\nvar output v : []\nv = u . [[0 {BIG}]]\n"),
]


@pytest.mark.parametrize("lang, text", BIG_PROGRAMS)
def test_an_integer_of_5000_digits_is_too_large_at_its_token(lang, text):
    with pytest.raises(tl.TensorLangError) as caught:
        tl.check(text, lang=lang)
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code == "too-large", caught.value.render()
    assert diagnostic.span is not None and "5000 digits" in diagnostic.message


# ---------------------------------------------------------------- ranks beyond numpy's 64
def _too_large(text: str, lang: str = "tl") -> str:
    with pytest.raises(tl.TensorLangError) as caught:
        tl.check(text, lang=lang)
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code == "too-large", caught.value.render()
    assert diagnostic.span is not None
    return diagnostic.message


def test_a_declaration_of_rank_65_is_too_large_and_64_is_fine():
    assert "at most 64" in _too_large("in var A : [" + " ".join(["1"] * 65) + "]\nout var y : []\ny = 1\n")
    kernel = tl.compile("in var A : [" + " ".join(["1"] * 64) + "]\nout var y : []\ny = 1\n", backend="numpy")
    assert kernel(A=np.zeros((1,) * 64))["y"] == 1


def test_an_outer_product_or_stack_of_rank_65_is_too_large():
    decl = "in var A : [" + " ".join(["1"] * 33) + "]\nin var B : [" + " ".join(["1"] * 32) + "]\nout var y : []\n"
    assert "65 dimensions" in _too_large(decl + "y = A # B # A . [1 2]\n")
    decl = "in var A : [" + " ".join(["1"] * 64) + "]\nout var y : []\n"
    assert "65 dimensions" in _too_large(decl + "y = [A, A] . [1 2]\n")


def test_a_teil_product_of_rank_65_is_too_large():
    decl = "in alloc A : [" + " ".join(["1"] * 33) + "]\nin alloc B : [" + " ".join(["1"] * 32) + "]\nout alloc y : [1]\n"
    assert "65 dimensions" in _too_large(decl + "y = red+ 1 (prod A B)\n", lang="teil")


# ---------------------------------------------------------------- δ positions
def test_a_delta_position_of_2_to_the_62_or_more_is_too_large():
    assert "2^62" in _too_large("in var x : [3]\nout var y : [3]\ny[i] = delta[i, 18446744073709551618] * x[i]\n")
    assert "2^62" in _too_large(f"in var x : [3]\nout var y : [3]\ny[i] = delta[{2**62}, i] * x[i]\n")


def test_a_delta_position_beyond_the_extent_is_zero_on_every_target():
    far = 2**62 - 1
    src = f"in var x : [3]\nout var y : [3]\nout var z : []\ny[i] = delta[i, {far}] + x[i]\nz[] = sum(k:3) delta[k, {far}]\n"
    x = np.array([1.0, -0.0, 2.0])
    expected = tl.compile(src, backend="interp")(x=x)
    np.testing.assert_array_equal(expected["y"], x)
    assert expected["z"] == 0
    for backend in ("numpy", "c"):
        for opt in (True, False):
            got = tl.compile(src, backend=backend, opt=opt)(x=x)
            for name, value in expected.items():
                assert _same_bits(got[name], value), (backend, opt, name, got[name], value)


def test_a_cfdlang_size_parameter_of_5000_digits_is_too_large_at_its_use():
    text = "var input u : [n]\nvar output v : [n]\nv = u\n"
    with pytest.raises(tl.TensorLangError) as caught:
        tl.check(text, lang="cfd", params={"n": 10**5000})
    assert caught.value.diagnostics[0].code == "too-large", caught.value.render()
    assert caught.value.diagnostics[0].span is not None


# ---------------------------------------------------------------- reassociation on cancelling data
def _exact(f) -> float:
    """``f`` evaluated in exact rational arithmetic, rounded once."""
    from fractions import Fraction

    return float(f(Fraction))


@pytest.mark.parametrize("seed", range(3))
def test_a_sum_over_a_difference_of_cancelling_terms_keeps_its_digits(seed):
    # Σ_k (x a_k − x b_k) -> x Σa − x Σb lost 5 digits here (issue 16): a ≈ b, x exact
    src = "in var x : []\nin var a : [50]\nin var b : [50]\nout var y : []\ny[] = sum(k) (x[] * a[k] - x[] * b[k])\n"
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, 50) * 1e8
    b = a * (1 + 1e-12 * rng.uniform(-1, 1, 50))
    x = np.array(0.5)
    exact = _exact(lambda F: sum(F(0.5) * F(float(p)) - F(0.5) * F(float(q)) for p, q in zip(a, b)))
    for backend in tl.available_backends():
        got = float(tl.compile(src, backend=backend)(x=x, a=a, b=b)["y"])
        assert abs(got - exact) <= 1e-12 * abs(exact), (backend, got, exact)


def test_a_sum_over_a_sum_with_a_constant_term_keeps_its_digits():
    src = "in var M : [4 30]\nin var t : [4]\nout var y : [4]\ny[i] = sum(j) (M[i,j] + t[i])\n"
    rng = np.random.default_rng(1)
    t = rng.uniform(-1, 1, 4) * 1e9
    M = -t[:, None] + rng.uniform(-1, 1, (4, 30))  # each term is small, ΣM and 30 t are huge
    for backend in tl.available_backends():
        got = tl.compile(src, backend=backend)(M=M, t=t)["y"]
        for i in range(4):
            exact = _exact(lambda F, i=i: sum(F(float(M[i, j])) + F(float(t[i])) for j in range(30)))
            assert abs(got[i] - exact) <= 1e-12 * abs(exact) + 1e-300, (backend, i, got[i], exact)


def test_a_factor_outside_a_sum_stays_outside_on_the_numpy_target():
    # x * Σ_k a_k as one einsum was Σ_k x·a_k: ⊥ for x = inf (from 1/0) and a = [-2, 1, -1],
    # where the interpreter gives -inf (found by the float32 fuzzer on a CFDlang program)
    src = "in var a : [3]\nin var x : [1]\nout var y : [1]\ny[i] = (sum(k) a[k]) * (1 / (x[i] - x[i]))\n"
    a, x = np.array([-2.0, 1.0, -1.0]), np.array([0.5])
    for backend in tl.available_backends():
        for opt in (True, False):
            got = tl.compile(src, backend=backend, opt=opt)(a=a, x=x)["y"]
            assert _same_bits(got, [-np.inf]), (backend, opt, got)
