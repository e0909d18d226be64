"""The basis library's rounding and trigonometric functions at ±inf and ⊥ (NaN): IEEE
results in the interpreter (no Python OverflowError/ValueError) and the same in C."""

import math

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands, typecheck
from tensorlang.targets.c import build as c_build

PROGRAM = """input real a = 1.0;
strand s (int i) {
   output vec4 x = [0.0, 0.0, 0.0, 0.0];
   output vec4 y = [0.0, 0.0, 0.0, 0.0];
   update {
      real z = a / 0.0;
      real w = z - z;
      x = [floor(z) + 0.0*i, ceil(-z), trunc(z), round(-z)];
      y = [sin(z), cos(w), sinh(1000.0*a), floor(w)];
      stabilize;
   }
}
initially [ s(i) | i in 0..1 ];
"""


@pytest.mark.parametrize("a", [1.0, -1.0])
def test_nonfinite_arguments_follow_ieee(a):
    p = strands(typecheck(parse_program(PROGRAM)), ".")
    got = p.run({"a": a}, backend="interp").outputs
    inf = math.copysign(math.inf, a)
    assert got["x"][0].tolist() == [inf, -inf, inf, -inf]
    assert np.isnan(got["y"][0, [0, 1, 3]]).all() and got["y"][0, 2] == inf
    if c_build.find_compiler() is not None:
        c = p.run({"a": a}, backend="c").outputs
        for name in ("x", "y"):
            np.testing.assert_array_equal(c[name], got[name])
