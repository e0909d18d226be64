"""A review's findings (rev57): the C printer's zero operands, start births and sequence
parameters in C, NRRD outputs."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl

HAVE_C = "c" in tl.available_backends()
needs_c = pytest.mark.skipif(not HAVE_C, reason="no C compiler")


@needs_c
def test_a_value_minus_minus_zero_is_plus_zero_in_c():
    """-abs(x) - -0 is -abs(x) + 0, +0 at x = ±0; GCC 12 folds it as it folds -fabs(x) + 0.0
    (to -fabs(x), -0): the printer writes tl_zadd for x - -0 too."""
    text = "in var x : [2]\nout var y : [2]\ny[i] = -abs(x[i]) - -0\n"
    x = np.array([0.0, -0.0])
    want = tl.compile(text, backend="interp")(x=x)["y"]
    got = tl.compile(text, backend="c")(x=x)["y"]
    assert not np.signbit(want).any()
    assert np.array_equal(np.signbit(got), np.signbit(want))


ZERO_MINUS = """#version 2.0
input real z = 0.0;
strand S (int i) {
  output real y = 0.0;
  output vec2 v = [1.0, 1.0];
  update {
    real x = z * real(i);
    y = 0.0 - |x|;
    v = [-|x| + 0.0, -|x| - -(-(-0.0))] + [0.0, 0.0] - [0.0, -(-0.0)];
    print(0.0 - |x|, " ", -|x| + 0.0, " ", -|x| - -0.0, " ", 0.0 + -|x|, " ", -(-0.0) - |x|, " ", -0.0 - |x|, "\\n");
    print(0 - |x|, " ", -|x| + real(0), " ", -|x| + 0, " ", (1.0 - 1.0) - |x|, " ", -|x| + 0.0 * 2.0, "\\n");
    stabilize;
  }
}
create_collection { S(i) | i in 0..1 };
"""


@needs_c
def test_zero_minus_an_absolute_value_is_plus_zero_in_the_c_executor():
    """0.0 - |x|, -|x| + 0.0 and -|x| - -0.0 at x = 0 are +0 (diderotc --double --exec prints
    "0 0 0 0 0 -0", and 0 for 0 - |x|, an int zero promoted, and (1.0 - 1.0) - |x|); the C executor printed
    -0 (GCC 12's fold): tl_z0 around them, and -0.0 and a real + - * of two numbers are numbers in the lowering (the
    printer saw no zero in -(0.0) or 1.0 - 1.0, which GCC folds before it folds the difference)."""
    from tensorlang.lang.diderot import parse_program, strands, typecheck
    p = strands(typecheck(parse_program(ZERO_MINUS)))
    a, c = p.run({}, backend="interp"), p.run({}, backend="c")
    assert a.printed == c.printed == "0 0 0 0 0 -0\n0 0 0 0 0\n" * 2
    for name in ("y", "v"):
        assert not np.signbit(c.outputs[name]).any() and not np.signbit(a.outputs[name]).any(), name
