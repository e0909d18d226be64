"""STUR's reciprocal of a zero (issue 41, class 6): ``T^-1`` is 1/T where T ≠ 0 and 0
where T = 0, so the reciprocal of a promised zero is 0 as in StructTensor
(docs/structure.md, "Reciprocals"); ``0^-1`` is 0.  Checked over generated structured
programs, on every target, against a dense oracle written here; and ``--emit tl|teil|core``
of a STUR program."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.cli import main
from tensorlang.errors import TensorLangError

#: unique sets of a matrix X(i, j) over N × N, with the mask each promises
UNIQUE = {
    "(i <= j)": lambda i, j, n: i <= j,
    "(i = j)": lambda i, j, n: i == j,
    "(i < j)": lambda i, j, n: i < j,
    "(j = 0)": lambda i, j, n: j == 0,
    "(0 <= i <= j < N) * (i + j < N)": lambda i, j, n: (i <= j) & (i + j < n),
}

#: factors of an elementwise product over (i, j): STUR text, and its dense value
FACTORS = ("X^-1(i, j)", "X(i, j)", "Y(i, j)", "Y^-1(i, j)", "2.5^-1", "0^-1", "-4")


def recip(a):
    with np.errstate(all="ignore"):
        return np.where(a == 0, 0.0, 1.0 / np.where(a == 0, 1.0, a))


def factor_value(text, x, y):
    return {"X^-1(i, j)": recip(x), "X(i, j)": x, "Y(i, j)": y, "Y^-1(i, j)": recip(y),
            "2.5^-1": 0.4, "0^-1": 0.0, "-4": -4.0}[text]


@st.composite
def programs(draw):
    """A structured program with reciprocals of promised zeros, its inputs (the promise
    kept: X is zero outside its unique set; ⊥, ±inf and ±0 inside it; Y finite outside
    X's unique set, so no target may drop a ⊥ by X's promise) and the dense oracle."""
    n = draw(st.integers(2, 4))
    unique = draw(st.sampled_from(sorted(UNIQUE)))
    products = draw(st.lists(st.lists(st.sampled_from(FACTORS), min_size=1, max_size=3), min_size=1, max_size=2))
    products = [p if any(f.startswith("X") for f in p) else p + ["X^-1(i, j)"] for p in products]
    chained = draw(st.booleans())  # C := A^-1 (A's zeros are inferred, not declared)
    contract = draw(st.booleans())  # B(i, j) := X^-1(i, k) * Y(k, j): a sum over promised zeros
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    inside = UNIQUE[unique](i, j, n)
    special = st.sampled_from([0.0, -0.0, np.nan, np.inf, -np.inf])
    ordinary = st.floats(-4, 4, allow_nan=False).filter(lambda v: abs(v) > 1e-3)
    xs = draw(st.lists(st.one_of(ordinary, special), min_size=n * n, max_size=n * n))
    x = np.where(inside, np.array(xs).reshape(n, n), 0.0)
    ys = draw(st.lists(st.one_of(ordinary, special), min_size=n * n, max_size=n * n))
    y = np.array(ys).reshape(n, n)
    y = np.where(inside & ~contract, y, np.where(np.isfinite(y), y, 1.5))  # a sum over k: Y's ⊥ is outside X's promise
    lines = ["symbols: N", "A(i, j) := " + " + ".join(" * ".join(p) for p in products)]
    outputs = ["A"]
    with np.errstate(all="ignore"):
        a = sum(np.prod([np.broadcast_to(factor_value(f, x, y), (n, n)) for f in p], axis=0) for p in products)
    expected = {"A": a}
    if chained:
        lines.append("C(i, j) := A^-1(i, j)")
        outputs.append("C")
        expected["C"] = recip(a)
    if contract:
        lines.append("B(i, j) := X^-1(i, k) * Y(k, j)")
        outputs.append("B")
        with np.errstate(all="ignore"):
            expected["B"] = np.einsum("ik,kj->ij", recip(x), y)
    lines.append("outputs: " + ", ".join(outputs))
    for name in ["X", "Y", *outputs]:
        lines.append(f"{name}:D(i, j) := (0 <= i < N) * (0 <= j < N)")
    lines.append(f"X:U(i, j) := {unique}")
    text = "\n".join(lines) + "\n"
    rules = text.split("outputs")[0]
    inputs = {"X": x, "Y": y} if "Y(" in rules or "Y^-1(" in rules else {"X": x}
    return text, n, inputs, expected


def same(got, want):
    """Equal up to rounding, ⊥ at exactly the same positions, infinities equal."""
    got, want = np.asarray(got), np.asarray(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    ok = ~np.isnan(want)
    assert np.allclose(got[ok], want[ok], rtol=1e-12, atol=0), (got, want)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(programs())
def test_reciprocals_of_promised_zeros_agree_on_every_target(case):
    text, n, inputs, expected = case
    for backend in ("interp", "numpy", "c"):
        results = tl.compile(text, lang="stur", params={"N": n}, backend=backend)(**inputs)
        for name, want in expected.items():
            same(results[name], want)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(programs())
def test_reciprocals_of_promised_zeros_reference_and_numpy(case):
    text, n, inputs, expected = case
    for backend in ("interp", "numpy"):
        results = tl.compile(text, lang="stur", params={"N": n}, backend=backend)(**inputs)
        for name, want in expected.items():
            same(results[name], want)


INVERSE_COMPLEX = """\
symbols: N
A(i, j) := B^-1(i, j) * 5^-1 * f^-1()
C(i, j) := A^-1(i, j)
X(i, j) := C^-1(i, j)
D(i, j) := B(i, j) * B^-1(i, j)
A:D(i, j) := (0 <= i < N) * (0 <= j < N)
B:D(i, j) := (0 <= i < N) * (0 <= j < N)
B:U(i, j) := (i = j)
C:D(i, j) := (0 <= i < N) * (0 <= j < N)
D:D(i, j) := (0 <= i < N) * (0 <= j < N)
X:D(i, j) := (0 <= i < N) * (0 <= j < N)
"""


@pytest.mark.parametrize("backend", ["interp", "numpy", "c"])
def test_a_diagonal_inverted_three_times_is_zero_off_the_diagonal(backend):
    """The shape of StructTensor's inverse-complex example (written here): every result
    is diagonal, as the tool's loops over B's unique set compute it."""
    b = np.diag([2.0, -4.0, 0.5])
    got = tl.compile(INVERSE_COMPLEX, lang="stur", params={"N": 3}, backend=backend)(B=b, f=np.float64(2.0))
    np.testing.assert_allclose(got["A"], np.diag([0.05, -0.025, 0.2]))  # 1 / (b · 5 · 2)
    np.testing.assert_allclose(got["C"], np.diag([20.0, -40.0, 5.0]))
    np.testing.assert_allclose(got["X"], np.diag([0.05, -0.025, 0.2]))
    np.testing.assert_array_equal(got["D"], np.eye(3))


def test_zero_to_the_minus_one_is_zero_also_in_a_redundancy_map():
    text = ("symbols: N\nO(i, j) := S(i, j) * 0^-1\nO:D(i, j) := (0 <= i < N) * (0 <= j < N)\n"
            "S:D(i, j) := (0 <= i < N) * (0 <= j < N)\nS:U(i, j) := (0 <= i <= j < N)\n"
            "S:R(i, j, ip, jp) := 0^-1 * (0 <= j < i < N) * (ip = j) * (jp = i)\n")
    s = np.triu(np.ones((3, 3)))
    for backend in ("interp", "numpy"):
        k = tl.compile(text, lang="stur", params={"N": 3}, backend=backend, check_structure=True)
        np.testing.assert_array_equal(k(S=s)["O"], np.zeros((3, 3)))


@pytest.mark.parametrize("stage", ["tl", "teil", "core"])
def test_emit_other_languages_of_a_stur_program(tmp_path, capsys, stage):
    path = tmp_path / "inv.stur"
    path.write_text(INVERSE_COMPLEX)
    code = main(["compile", str(path), "--param", "N=3", "--emit", stage])
    out, err = capsys.readouterr()
    assert "internal" not in err and "Traceback" not in err
    if stage == "tl":
        assert code == 0 and "A[i,j] =" in out.replace(" ", "").replace("A[i,j]=", "A[i,j] =")
        # what it prints is a model-language program that runs like the STUR one
        tl_path = tmp_path / "inv.tl"
        tl_path.write_text(out)
        got = tl.compile(str(tl_path), backend="numpy")(B=np.diag([2.0, -4.0, 0.5]), f=np.float64(2.0))
        np.testing.assert_allclose(got["C"], np.diag([20.0, -40.0, 5.0]))
    else:
        assert code != 0 and "error[backend]" in err and "TeIL" in err
    assert main(["compile", str(path), "--emit", stage]) != 0  # no value for N: a clear error
    assert "error[input]" in capsys.readouterr().err


def test_emit_tl_of_a_stur_program_without_values_is_a_clear_error():
    with pytest.raises(TensorLangError) as e:
        tl.compile(INVERSE_COMPLEX, lang="stur").ir("tl")
    assert e.value.code == "input"
