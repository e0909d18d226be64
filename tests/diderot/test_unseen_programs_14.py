"""A thirteenth round of programs written as users would (scratch programs run against ``diderotc --double --exec``):
third-order tensors with ``⊗ • :`` and slices, int division and ``%=``/``/=`` of every sign, rounding functions at
halves, printing of ∞, NaN and -0, reductions over strands, ``det``/``inv``/``evals``/``evecs``, ``×`` of 2- and
3-vectors, conditional expressions, start/update/stabilize methods with ``new`` and ``die``, vector, matrix and 3-D
fields, sequences, shadowed names, operator precedence, ``^`` of negative exponents and of fields.  All agreed with
diderotc's executables but ``F^n`` of a scalar field (fixed: below); the expected values are computed here
(diderotc is not run by the tests)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build
from unseen10_inputs import make  # img2.nrrd: an 11 × 10 image, bspln3 probes inside [-1.5, 1.5] × [-1.25, 1.25]

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BACKENDS = ["interp", pytest.param("c", marks=needs_cc)]


def _ipow(x: float, n: int) -> float:
    """x^n by repeated squaring, bits high to low: Diderot's intPow (``x^n`` of reals and ``F^n`` of fields)."""
    r = 1.0
    for bit in bin(n)[2:]:
        r = r * r
        if bit == "1":
            r = r * x
    return r


_POWERS = """#version 2.0
input image(2)[] img = load_image("img2.nrrd");
field#2(2)[] F = bspln3 ⊛ img;
strand s (int k) {
  vec2 p = [0.1 * real(k) - 0.6, 0.07 * real(k) - 0.4];
  output real f = F(p);
  output vec3 pw = [(F ^ 3)(p), (F ^ 5)(p), (F ^ 7)(p)];
  output vec3 d = [(F ^ 3)(p) - F(p) ^ 3, (F ^ 5)(p) - F(p) ^ 5, (F ^ 7)(p) - F(p) ^ 7];
  output vec2 g3 = ∇(F ^ 3)(p);
  output vec2 g = ∇F(p);
  update { stabilize; }
}
create_collection { s(k) | k in 0..12 }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_power_of_a_field_is_the_power_of_its_value_by_repeated_squaring(backend, tmp_path, monkeypatch):
    """``(F^n)(p)`` was ``pow(F(p), n)`` (numpy's, C's ``pow``), an ulp off ``F(p)^n`` (repeated squaring, as
    Diderot's executables compute both) at some points: ``(F^3)(p) - F(p)^3`` was ±2.2e-16 where diderotc's is 0.
    Now the power and its derivatives' powers square as ``x^n`` does, on both executors."""
    make(tmp_path)
    monkeypatch.chdir(tmp_path)
    res = strands(check(parse_program(_POWERS))).run({}, backend=backend)
    f, pw, d, g3, g = (np.asarray(res.outputs[k]) for k in ("f", "pw", "d", "g3", "g"))
    assert np.all(d == 0.0)
    for k in range(len(f)):
        want = [_ipow(float(f[k]), n) for n in (3, 5, 7)]
        assert list(pw[k]) == want
        assert list(g3[k]) == [3 * _ipow(float(f[k]), 2) * float(x) for x in g[k]]
    # the points are ones where pow rounds otherwise: the test can fail
    assert any(math.pow(float(x), n) != _ipow(float(x), n) for x in f for n in (3, 5, 7))
