"""The padding rules of schedule/padding.py on programs chosen to break them: each
statement kind where zero padding is *not* exact (a function with f(0) != 0, a literal
added, max/min/prod reductions, an outer product whose other factor is inf, δ, ε, an
affine index, a statement that reads its target elsewhere) runs on the padded C back end
for pad 2, 4 and 8 with NaN, ±inf and ±0 among the inputs, and must equal the reference
interpreter with the padding zero afterwards."""

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.ein import ir
from tensorlang.schedule.padding import PADDED, REZEROED, TRUE, decide, padded, padded_shape, vanishes
from tensorlang.targets.c import build as c_build

from test_padding_theorem3 import padded_run

needs_c = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

PROGRAMS = {
    "sum of exp": "in var A : [7 5]\nout var y : [7]\ny[i] = sum(k) exp(A[i,k])",
    "literal added": "in var A : [7 5]\nout var y : [7 5]\ny[i,j] = A[i,j] + 1",
    "cos and log": "in var A : [3 5]\nout var y : [3 5]\ny[i,j] = cos(A[i,j]) * log(A[i,j])",
    "matrix-vector": "in var A : [7 5]\nin var x : [5]\nout var y : [7]\ny[i] = sum(k) A[i,k] * x[k]",
    "outer product": "in var a : [3]\nin var b : [5]\nout var y : [3 5]\ny[i,j] = a[i] * b[j]",
    "max": "in var A : [7 5]\nout var y : [7]\ny[i] = max(k) A[i,k]",
    "min of a product": "in var A : [7 5]\nout var y : [7]\ny[i] = min(k) prod(j) A[i,k] * A[i,j]",
    "division": "in var A : [7 5]\nin var B : [7 5]\nout var y : [7 5]\ny[i,j] = A[i,j] / B[i,j]",
    "division by a vector": "in var A : [7 5]\nin var b : [5]\nout var y : [7 5]\ny[i,j] = A[i,j] / b[j]",
    "delta": "in var A : [5 5]\nout var y : [5 5]\ny[i,j] = A[i,j] * delta[i,j] + delta[i,2]",
    "delta past the extent": "out var y : [1]\ny[i] = delta[2,i]",
    "affine": "in var A : [9]\nout var y : [7]\ny[i] = A[i+2] * 3",
    "eps": "in var A : [3 3]\nout var y : [3]\ny[i] = sum(j,k) eps[i,j,k] * A[j,k]",
    "transpose in place": "inout var x : [3 5]\ninout var z : [5 5]\nz[i,j] = z[j,i] * x[1,i] + 2",
    "chain": ("in var A : [7 5]\nin var x : [5]\nout var y : [7]\nvar t : [7]\n"
              "t[i] = sum(k) A[i,k] * x[k]\ny[i] = sqrt(t[i]) - t[i] * 2"),
    "concat": "in var a : [3]\nin var b : [2]\nout var y : [5]\ny = concat(a, b)",
    "vec": "in var A : [3 5]\nout var y : [15]\ny = vec(A)",
    "contraction": ("in var A : [9 13]\nin var u : [13 13 2]\nout var v : [9 13 2]\n"
                    "v[l,j,e] = sum(i) A[l,i] * u[i,j,e]"),
}

SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0)


def _inputs(kernel, seed: int, specials: bool) -> dict:
    rng = np.random.default_rng(seed)
    arrays = {}
    for name in kernel.inputs:
        value = rng.uniform(-1, 1, size=kernel.shapes[name])
        if specials and value.size:
            flat = value.reshape(-1)
            for special in SPECIALS:
                flat[rng.integers(flat.size)] = special
        arrays[name] = value
    return arrays


@needs_c
@pytest.mark.parametrize("pad", [2, 4, 8])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_padded_program_equals_reference(name, pad):
    text = PROGRAMS[name]
    reference = tl.compile(text, backend="interp")
    for seed, specials in ((0, False), (1, True), (2, True)):
        inputs = _inputs(reference, seed, specials)
        expected = reference(**inputs)
        kernel, results, store = padded_run(text, inputs, pad)  # checks the padding is zero
        for var, value in expected.items():
            np.testing.assert_allclose(results[var], value, rtol=1e-12, atol=1e-14, equal_nan=True, err_msg=var)


def _stmt(text: str) -> ir.Statement:
    return tl.compile(text, backend="interp").ein.statements[-1]


def test_modes():
    assert decide(_stmt(PROGRAMS["division"]), 4).mode == PADDED
    assert decide(_stmt(PROGRAMS["literal added"]), 4).mode == REZEROED
    # i indexes A's first dimension, not padded in tensorlang's layout: i keeps its extent
    assert decide(_stmt(PROGRAMS["matrix-vector"]), 4).mode == TRUE
    assert decide(_stmt(PROGRAMS["division"]), 1).mode == TRUE
    assert decide(_stmt(PROGRAMS["affine"]), 4).mode == TRUE
    for name in ("concat", "vec"):  # the last piece is read at i - S_k: past its own buffer when padded
        assert decide(_stmt(PROGRAMS[name]), 4).mode == TRUE, name
    chosen = decide(_stmt(PROGRAMS["matrix-vector"]), 4)
    assert chosen.extent("k", 5) == 8 and chosen.extent("i", 7) == 7 and not chosen.rezero
    summed = decide(_stmt(PROGRAMS["sum of exp"]), 4)
    assert summed.extent("k", 5) == 5  # exp(0) = 1 would be added for every padded k
    outer = decide(_stmt(PROGRAMS["division"]), 4)  # only the contiguous (last) index runs padded
    assert outer.extent("i", 7) == 7 and outer.extent("j", 5) == 8 and outer.rezero == ()
    assert decide(_stmt(PROGRAMS["literal added"]), 4).rezero == (1,)
    assert decide(_stmt(PROGRAMS["transpose in place"]), 4, in_place=False).rezero == (0, 1)  # the scratch copy


def test_vanishing_rules():
    a, b = ir.Tensor("A", ("i", "k")), ir.Tensor("x", ("k",))
    assert vanishes(ir.BinOp("*", a, b), "k") and not vanishes(ir.BinOp("*", a, b), "i")
    assert vanishes(ir.BinOp("*", a, ir.Const(2.0)), "i")
    assert not vanishes(ir.BinOp("*", a, ir.Const(float("inf"))), "i")
    assert not vanishes(ir.BinOp("+", a, ir.Const(1.0)), "i")
    assert vanishes(ir.Apply("sin", a), "i") and not vanishes(ir.Apply("exp", a), "i")
    assert vanishes(ir.BinOp("/", a, ir.Const(3.0)), "i") and not vanishes(ir.BinOp("/", a, b), "i")
    assert vanishes(ir.BinOp("/", a, a), "i")  # controlled division: 0 / 0 := 0
    assert not vanishes(ir.Sum((("i", 7),), a), "i")  # i rebound inside
    assert not vanishes(ir.Delta("i", 2), "i") and not vanishes(ir.Delta("i", "j"), "i")


def test_padded_extents():
    assert [padded(n, 4) for n in (1, 4, 5, 7, 8, 9)] == [4, 4, 8, 8, 8, 12]
    assert padded(7, 1) == 7
    assert padded_shape((3, 7, 5), 4) == (3, 7, 8) and padded_shape((), 4) == () and padded_shape((3, 5), 1) == (3, 5)
