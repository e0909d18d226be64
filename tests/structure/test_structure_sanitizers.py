"""Structured programs (003) in generated C under AddressSanitizer and UBSan.

The loops of a structured statement are the riskiest the C target writes: bounds from a
declared support (a fixed slice, an equal or offset index, a triangle, a band), a summed
loop replaced by its one value, packed copies of blocked dimensions, orbit copies that
rebuild a symmetric result.  Random programs from templates (matrix products, MTTKRP,
TTM, Hadamard products, reductions, self outer products, 003's polynomial regression),
each operand declared with a random structure, are compiled as loop nests (no BLAS: every access is generated code)
with ``-fsanitize=address,undefined`` on heap buffers of exactly their sizes; inputs keep
their promise (zero outside the unique set, symmetric where declared) and the results
must equal the reference interpreter's."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from properties.test_c_sanitizers import pytestmark, run_sanitized  # noqa: F401 - skipped where ASan does not work


def _square(n: int) -> st.SearchStrategy[str]:
    """A structure for an n x n matrix (empty: dense)."""
    offsets = st.integers(0, max(n - 1, 0))
    positions = st.integers(1, n)
    return st.one_of(
        st.sampled_from(["", "symmetric", "diagonal", "upper", "lower", "where i1 <= i2", "where i1 + i2 <= " + str(n)]),
        positions.map(lambda r: f"row({r})"), positions.map(lambda c: f"col({c})"),
        positions.map(lambda c: f"where i1 = {c}"), positions.map(lambda c: f"where i2 = {c}"),
        offsets.map(lambda o: f"where i2 = i1 + {o}"), offsets.map(lambda o: f"where i1 = i2 + {o}"),
    )


def _cube(n: int) -> st.SearchStrategy[str]:
    positions = st.integers(1, n)
    return st.one_of(
        st.sampled_from(["", "where i1 = i2", "where i2 = i3", "where i1 = i2, i2 = i3", "where i1 <= i2 <= i3",
                         "where i1 <= i2"]),
        positions.map(lambda c: f"where i1 = {c}"), positions.map(lambda c: f"where i3 = {c}"),
    )


@st.composite
def structured_programs(draw) -> str:
    n = draw(st.integers(1, 9))
    kind = draw(st.sampled_from(["matmul", "matmul-right", "matvec", "hadamard", "transpose-add", "total",
                                 "mttkrp", "ttm", "moment3", "covariance", "gram-structured", "polyreg2",
                                 "polyreg3"]))
    a, b = draw(_square(n)), draw(_square(n))
    if kind == "matmul":
        return f"in var B : [{n} {n}] {a}\nin var C : [{n} {n}]\nout var A : [{n} {n}]\nA[i,j] = sum(k) B[i,k] * C[k,j]\n"
    if kind == "matmul-right":
        return (f"in var B : [{n} {n}] {a}\nin var C : [{n} {n}] {b}\nout var A : [{n} {n}]\n"
                "A[i,j] = sum(k) C[i,k] * B[k,j]\n")
    if kind == "matvec":
        return f"in var B : [{n} {n}] {a}\nin var x : [{n}]\nout var y : [{n}]\ny[i] = sum(k) B[i,k] * x[k]\n"
    if kind == "hadamard":
        return f"in var B : [{n} {n}] {a}\nin var C : [{n} {n}] {b}\nout var A : [{n} {n}]\nA[i,j] = B[i,j] * C[i,j]\n"
    if kind == "transpose-add":
        return f"in var B : [{n} {n}] {a}\nin var C : [{n} {n}]\nout var A : [{n} {n}]\nA[i,j] = B[j,i] * 2 + C[i,j]\n"
    if kind == "total":
        return f"in var B : [{n} {n}] {a}\nout var s : []\ns = sum(i,j) B[i,j]\n"
    m = draw(st.integers(1, 12))
    if kind == "moment3":
        return f"in var F : [{m} {n}]\nout var M : [{n} {n} {n}]\nM[i,j,k] = sum(r) F[r,i] * F[r,j] * F[r,k]\n"
    if kind == "covariance":
        return f"in var X : [{m} {n}]\nout var C : [{n} {n}]\nC[i,j] = sum(r) X[r,i] * X[r,j]\n"
    if kind == "gram-structured":
        return f"in var S : [{n} {n}] {a}\nout var C : [{n} {n}]\nC[i,j] = sum(r) S[r,i] * S[r,j]\n"
    if kind == "polyreg2":
        n = min(n, 6)
        return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\nvar X : [{m} {n + n * n}]\n"
                f"out var C : [{n + n * n} {n + n * n}]\nG[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\n"
                "C[p,q] = sum(r) X[r,p] * X[r,q]\n")
    if kind == "polyreg3":
        n = min(n, 3)
        k = n + n * n + n ** 3
        return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\nvar H : [{m} {n} {n} {n}]\nvar X : [{m} {k}]\n"
                f"out var C : [{k} {k}]\nG[r,i,j] = F[r,i] * F[r,j]\nH[r,i,j,k] = G[r,i,j] * F[r,k]\n"
                "X = concat(F, vec(G), vec(vec(H)))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n")
    c = draw(_cube(n))
    if kind == "mttkrp":
        return (f"in var B : [{n} {n} {n}] {c}\nin var C : [{n} {n}]\nin var D : [{n} {n}]\nout var A : [{n} {n}]\n"
                "A[i,j] = sum(k,l) B[i,k,l] * C[k,j] * D[l,j]\n")
    return (f"in var B : [{n} {n} {n}] {c}\nin var C : [{n} {n}]\nout var A : [{n} {n} {n}]\n"
            "A[i,j,k] = sum(l) B[i,j,l] * C[k,l]\n")


def _keeping_promise(kernel, seed: int) -> dict:
    """Inputs in [-2, 2] that keep their declarations' promises."""
    rng = np.random.default_rng(seed)
    structures = {d.name: d.structure for d in kernel.ein.decls}
    inputs = {}
    for name in kernel.inputs:
        shape = kernel.shapes[name]
        value = rng.uniform(-2, 2, shape)
        s = structures.get(name)
        if s is not None and s.symmetric:
            value = np.triu(value) + np.triu(value, 1).T
        elif s is not None:
            value = np.where(s.unique_mask(shape), value, 0.0)
        inputs[name] = value
    return inputs


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(text=structured_programs(), seed=st.integers(0, 2 ** 32 - 1))
def test_structured_c_is_clean_under_sanitizers(text, seed):
    note(text)
    reference = tl.compile(text, backend="interp")
    inputs = _keeping_promise(reference, seed)
    expected = reference(**inputs)
    with tempfile.TemporaryDirectory() as tmp:
        results = run_sanitized(text, inputs, "float64", Path(tmp))
    for name, value in expected.items():
        np.testing.assert_allclose(results[name], value, rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.slow
@pytest.mark.parametrize("name, n", [("head_diagonal", 3), ("head_upper", 4), ("head_upper", 1),
                                     ("packed_triangle", 3), ("packed_triangle", 5)])
def test_stur_selects_and_unrolled_cases_are_clean_under_sanitizers(name, n):
    """STUR's step 5 (a condition between head indices: a select along its affine value)
    and step 6 (a non-affine condition unrolled over one variable) in generated C, on
    NaN inputs: in bounds, and zero exactly where the reference says."""
    from lang.stur.test_stur import PROGRAMS, _run_reference
    text = PROGRAMS[name][0]
    params = {"N": n}
    k = tl.compile(text, lang="stur", params=params, backend="interp")
    rng = np.random.default_rng(n)
    inputs = {v: np.where(rng.random(k.checked.context.shapes[v]) < 0.3, np.nan,
                          rng.uniform(-2, 2, k.checked.context.shapes[v])) for v in k.checked.accepted_inputs}
    with tempfile.TemporaryDirectory() as tmp:
        results = run_sanitized(text, inputs, "float64", Path(tmp), lang="stur", params=params)
    ref = _run_reference(text, params, inputs)
    for out, value in results.items():
        assert np.array_equal(np.isnan(value), np.isnan(ref[out])), out
        assert np.allclose(value, ref[out], equal_nan=True), out
