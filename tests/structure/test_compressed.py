"""Compressed computation (003 §5.5) in the C back end: statements with a symmetric
result compute their unique set with triangular loops and reconstruct the rest; the
result equals the dense reference interpreter (003 Property 5) on random inputs that
keep their promise, NaN, ±inf and ±0 among them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import ir as loops
from tensorlang.schedule.steps import GramStep


@pytest.fixture(autouse=True)
def _no_gram_steps(monkeypatch):
    """These tests check the loops' own symmetry (triangular loops, then the rebuild): the
    Gram step, which takes a covariance or a third moment on a float64 C kernel, is off."""
    monkeypatch.setattr(GramStep, "why_not", lambda self, vector_bytes: "the loops' symmetry under test")

PROGRAMS = {
    "covariance": "in var X : [7 4]\nout var C : [4 4]\nC[j,k] = sum(i) X[i,j]*X[i,k]\n",
    "third moment": "in var F : [6 4]\nout var M3 : [4 4 4]\nM3[i,j,k] = sum(r) F[r,i]*F[r,j]*F[r,k]\n",
    "sum of outer products": "in var f : [5]\nin var g : [5]\nout var H : [5 5]\nH[i,j] = f[i]*f[j] - g[i]*g[j]\n",
    "symmetric input": "in var S : [4 4] symmetric\nin var U : [4 4]\nout var T : [4 4]\n"
                       "T[i,j] = S[i,j] * 2 + U[i,j]*U[j,i]\n",
    "partial symmetry": "in var f : [3]\nin var g : [2]\nout var T : [3 3 2]\nT[i,j,k] = f[i]*f[j]*g[k]\n",
    "chain through a temporary": "in var f : [4]\nin var w : [4]\nout var d : [4]\nout var c : [4 4]\n"
                                 "c[i,j] = f[i]*f[j] + 1\nd[i] = sum(j) c[i,j]*w[j]\n",
    "reads its own target": "inout var T : [3 3]\nT[i,j] = T[i,j] + T[j,i]\n",
}

_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5])
#: finite values far from underflow: a product of tiny ones is 0 in one association
#: and not in another, which reassociation may turn into 0 · inf (the optimizer's
#: freedom, not the structure's)
_MODERATE = st.one_of(st.floats(1e-3, 100), st.floats(-100, -1e-3))
_VALUES = st.one_of(_MODERATE, _SPECIAL)
_KERNELS: dict = {}


def _kernel(name):
    if name not in _KERNELS:
        try:
            _KERNELS[name] = tl.compile(PROGRAMS[name], backend="c")
        except TensorLangError as exc:  # no C compiler here
            pytest.skip(str(exc))
    return _KERNELS[name]


def _triangular_loops(nodes) -> int:
    found = 0
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, loops.Loop):
            found += isinstance(node.start, str)
            stack.extend(node.body)
        elif isinstance(node, loops.Nest):
            stack.extend(node.body)
    return found


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_symmetric_results_are_computed_with_triangular_loops(name):
    k = tl.compile(PROGRAMS[name], backend="numpy")
    assert _triangular_loops(k.loop_program.nests) > 0


def _keep(name, decl_structure, values):
    if decl_structure is not None and decl_structure.symmetric:
        return np.triu(values) + np.triu(values, 1).T
    return values


@pytest.mark.slow
@settings(max_examples=60)
@given(st.sampled_from(sorted(PROGRAMS)), st.data())
def test_compressed_plus_reconstruction_equals_the_dense_reference(name, data):
    k = _kernel(name)
    shapes = k.checked.context.shapes
    structures = {d.name: d.structure for d in k.ein.decls}
    inputs = {}
    for n in k.checked.accepted_inputs:
        size = int(np.prod(shapes[n]))
        raw = np.array(data.draw(st.lists(_VALUES, min_size=size, max_size=size)), dtype=float).reshape(shapes[n])
        inputs[n] = _keep(name, structures.get(n), raw)
    got = k(**inputs)
    ref = tl.compile(PROGRAMS[name], backend="interp")(**inputs)
    for out, value in got.items():
        expected = ref[out]
        assert np.array_equal(np.isnan(value), np.isnan(expected)), (out, value, expected)
        finite = np.isfinite(expected)
        assert np.array_equal(value[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)])
        assert np.allclose(value[finite], expected[finite], rtol=1e-12, atol=1e-9), (out, value, expected)


def test_the_loops_of_the_covariance_are_triangular_then_rebuild(tmp_path, capsys):
    from tensorlang.cli import main
    program = tmp_path / "cov.tl"
    program.write_text(PROGRAMS["covariance"])
    assert main(["compile", str(program), "--emit", "loops"]) == 0
    text = capsys.readouterr().out
    assert "for k in range(j, 4)" in text and "C[k,j] = C[j,k]" in text
    assert " if " not in text


# ------------------------------------------------------------------ supports (003 Table 1)
SUPPORTS = {
    "THP on a fixed slice": "in var B : [4 5 6] where i2 = 3\nin var C : [4 5 6]\nout var A : [4 5 6]\n"
                            "A[i,j,k] = B[i,j,k]*C[i,j,k]\n",
    "TTM on a diagonal plane": "in var B : [4 4 6] where i1 = i2\nin var C : [3 6]\nout var A : [4 4 3]\n"
                               "A[i,j,k] = sum(l) B[i,j,l]*C[k,l]\n",
    "MTTKRP on a fixed slice": "in var B : [4 5 6] where i1 = 2\nin var C : [5 3]\nin var D : [6 3]\nout var A : [4 3]\n"
                               "A[i,j] = sum(k,l) B[i,k,l]*C[k,j]*D[l,j]\n",
    "TTM on an upper half cube": "in var B : [4 4 6] where i1 <= i2\nin var C : [3 6]\nout var A : [4 4 3]\n"
                                 "A[i,j,k] = sum(l) B[i,j,l]*C[k,l]\n",
    "off-diagonal band": "in var B : [5 5] where i2 = i1 + 1\nin var C : [5 5]\nout var A : [5 5]\nA[i,j] = B[i,j]*C[i,j]\n",
}


@pytest.mark.parametrize("name", sorted(SUPPORTS))
def test_sparse_results_loop_over_their_support(name):
    from tensorlang.loops import loop_program
    k = tl.compile(SUPPORTS[name], backend="numpy")
    compressed = sum(loops.work(n.body) for n in k.loop_program.nests)
    dense = sum(loops.work(n.body) for n in loop_program(k.schedule, compressed=False).nests)
    fill = int(np.prod(k.checked.context.shapes["A"]))
    assert 4 * (compressed - fill) <= 3 * dense  # the zero fill aside, a quarter of the work saved at least


#: summations over a sparse summand (003's SpMV and MTTKRP with structured inputs)
SUMS = {
    "upper matrix times vector": "in var B : [6 6] upper\nin var C : [6]\nout var A : [6]\nA[i] = sum(j) B[i,j]*C[j]\n",
    "MTTKRP on a diagonal cube": "in var B : [5 5 5] where i1 = i2, i2 = i3\nin var C : [5 3]\nin var D : [5 3]\n"
                                 "out var A : [5 3]\nA[i,j] = sum(k,l) B[i,k,l]*C[k,j]*D[l,j]\n",
    "MTTKRP with a fixed column": "in var B : [4 5 6]\nin var C : [5 3]\nin var D : [6 3] where i2 = 2\nout var A : [4 3]\n"
                                  "A[i,j] = sum(k,l) B[i,k,l]*C[k,j]*D[l,j]\n",
    "row matrix times upper": "in var B : [5 5] where i1 = 3\nin var U : [5 5] upper\nout var A : [5 5]\n"
                              "A[i,k] = sum(j) B[i,j]*U[j,k]\n",
}


def test_a_sum_over_an_upper_matrix_starts_at_the_diagonal(tmp_path, capsys):
    from tensorlang.cli import main
    program = tmp_path / "spmv.tl"
    program.write_text(SUMS["upper matrix times vector"])
    assert main(["compile", str(program), "--emit", "loops"]) == 0
    assert "for j in range(i, 6)" in capsys.readouterr().out


_FINITE = st.one_of(_MODERATE, st.just(0.0))


_ALL_SPARSE = {**SUPPORTS, **SUMS}


@pytest.mark.slow
@settings(max_examples=60)
@given(st.sampled_from(sorted(_ALL_SPARSE)), st.data())
def test_support_loops_equal_the_dense_reference(name, data):
    """Promised zeros annihilate in a compressed product (003's semantics): one
    structured input carries NaN, ±inf and ±0 in its unique set, the others stay finite
    (where an operand is ⊥ at another's promised zero, the dense reference says ⊥ and
    the compressed loops say 0: docs/structure.md)."""
    try:
        k = _KERNELS.get(name) or tl.compile(_ALL_SPARSE[name], backend="c")
    except TensorLangError as exc:
        pytest.skip(str(exc))
    _KERNELS[name] = k
    structures = {d.name: d.structure for d in k.ein.decls}
    inputs = {}
    special = next((n for n in k.checked.inputs if structures.get(n) is not None), None)
    for n in k.checked.inputs:
        shape = k.checked.context.shapes[n]
        size = int(np.prod(shape))
        values = _VALUES if n == special else _FINITE
        raw = np.array(data.draw(st.lists(values, min_size=size, max_size=size)), dtype=float).reshape(shape)
        s = structures.get(n)
        inputs[n] = np.where(s.unique_mask(shape), raw, 0.0) if s is not None else raw
    got = k(**inputs)
    ref = tl.compile(_ALL_SPARSE[name], backend="interp")(**inputs)
    for out, value in got.items():
        expected = ref[out]
        assert np.array_equal(np.isnan(value), np.isnan(expected)), (out, value, expected)
        finite = np.isfinite(expected)
        assert np.array_equal(value[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)])
        assert np.allclose(value[finite], expected[finite], rtol=1e-12, atol=1e-9), (out, value, expected)


def test_only_promised_zeros_are_skipped():
    """A literal 0 or a δ is no promise: 0 · ⊥ stays ⊥ in the compiled loops."""
    for text in ("in var x : [4 4]\nout var y : [4 4]\ny[i,j] = 0 * x[i,j]\n",
                 "in var x : [4 4]\nout var y : [4 4]\ny[i,j] = delta[i,j] * x[i,j]\n"):
        try:
            k = tl.compile(text, backend="c")
        except TensorLangError as exc:
            pytest.skip(str(exc))
        x = np.full((4, 4), np.nan)
        ref = tl.compile(text, backend="interp")(x=x)["y"]
        assert np.array_equal(np.isnan(k(x=x)["y"]), np.isnan(ref))
