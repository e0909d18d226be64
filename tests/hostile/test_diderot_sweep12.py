"""Diderot programs written as a user would, with features in unusual places (issue
[diderot], "programs you have not seen"): each runs on the strand interpreter and on the C
executor, which must agree, and with the values the executable ``diderotc --double --exec``
made from the same program printed or wrote on this machine."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def program(text: str):
    return strands(check(parse_program(text)))


def both(text: str, values=None, **run):
    """The interpreter's result and the C executor's, after checking the C executor ran."""
    p = program(text)
    a = p.run(values or {}, backend="interp", **run)
    b = p.run(values or {}, backend="c", **run)
    assert p.executor_note is None, p.executor_note
    return a, b


# A local declared in an inner block (or a loop's variable) shadows an outer local of the
# same name until the block ends (diderotc's scoping, which the checker and the C executor
# followed): the interpreter kept the inner value after the block.
SHADOWS = """#version 2.0
function real f(real x0) { real x = x0; real y = x; if (x > 0.0) { real y = 2.0*x; x = y; } return x + y; }
strand S (int i) {
  output vec3 r = [0.0, 0.0, 0.0];
  real y = 5.0;
  update {
    real t = real(i);
    if (i > 1) { real t = 100.0; y = t; }
    foreach (int k in 0..i) { real t = t + real(k); y += t; }
    r = [t, y, f(real(i) - 1.5)];
    stabilize;
  }
}
create_collection { S(i) | i in 0..3 };
"""

#: what diderotc's executable wrote for SHADOWS
SHADOWS_DIDEROTC = [[0, 5, -3], [1, 8, -1], [2, 109, 1.5], [3, 118, 4.5]]

LOOPS = """#version 2.0
strand S (int i) {
  output vec4 r = [0.0, 0.0, 0.0, 0.0];
  real y = 1.0;
  update {
    int k = 7;
    real acc = 0.0;
    foreach (int k in 0..i) { acc += real(k); real y = 3.0; acc += y; }
    { real y = 10.0; acc += y; }
    foreach (int j in 0..2) { real z = real(j); if (j > 0) { real z = -1.0; acc += z; } acc += z; }
    r = [real(k), acc, y, real(i)];
    stabilize;
  }
}
create_collection { S(i) | i in 0..3 };
"""

#: what diderotc's executable wrote for LOOPS
LOOPS_DIDEROTC = [[7, 14, 1, 0], [7, 18, 1, 1], [7, 23, 1, 2], [7, 29, 1, 3]]


@pytest.mark.parametrize("text, want", [(SHADOWS, SHADOWS_DIDEROTC), (LOOPS, LOOPS_DIDEROTC)],
                         ids=["blocks", "loops"])
def test_an_inner_declaration_shadows_until_its_block_ends_in_the_interpreter(text, want):
    got = program(text).run({}, backend="interp")
    assert np.array_equal(got.outputs["r"], np.array(want, dtype=np.float64))


@needs_cc
def test_an_inner_declaration_shadows_until_its_block_ends_in_c():
    a, b = both(SHADOWS)
    assert np.array_equal(a.outputs["r"], b.outputs["r"])


# C's pow, fmod, sin, cos and tan give the processor's default NaN for an invalid operand (on
# x86 its sign bit is set: Diderot's executables and the C executor print -nan); the interpreter
# gave a NaN without its sign bit, so the two printed different text.
INVALID = """#version 2.0
input real zz = 0.0;
input real mm = 1.0;
strand S (int i) {
  output real r = 0.0;
  update {
    real big = 1.0 / zz;
    real neg = 0.0 - mm;
    print(sqrt(neg), " ", log(neg), " ", acos(2.0 + mm), " ", fmod(1.0, zz), " ", (-8.0 - zz)^(1.0/3.0), " ",
          neg^0.5, " ", big - big, " ", zz / zz, " ", sin(big), " ", cos(big), " ", tan(big), " ", pow(neg, 0.5), "\\n");
    r = fmod(1.0, zz);
    stabilize;
  }
}
create_collection { S(i) | i in 0..0 };
"""


def test_an_invalid_operand_gives_the_processors_nan_in_the_interpreter():
    default = "-nan" if math.copysign(1.0, math.inf - math.inf) < 0 else "nan"
    got = program(INVALID).run({}, backend="interp")
    words = got.printed.split()
    # sqrt (tl_sqrt), acos and 0/0 (tl_div) give nan; the others the processor's default NaN
    assert [words[0], words[2], words[7]] == ["nan", "nan", "nan"]
    assert [words[i] for i in (3, 4, 5, 8, 9, 10, 11)] == [default] * 7
    assert math.copysign(1.0, float(got.outputs["r"][0])) == math.copysign(1.0, math.inf - math.inf)


# sgn (tensorlang's, diderotc has none) of -0.0 gave +0 in the interpreter (numpy's sign) and -0
# in the C executor (tl_sgn keeps a zero and ⊥ as they are): print wrote 0 and -0.
SIGNS = """#version 2.0
input real zz = 0.0;
strand S (int i) {
  output real r = 0.0;
  update {
    real nz = -zz;
    print(sgn(nz), " ", sgn(zz), " ", sgn(zz / zz), " ", sgn(-2.5), " ", sgn(1.0e-300), "\\n");
    r = sgn(nz);
    stabilize;
  }
}
create_collection { S(i) | i in 0..0 };
"""


def test_sgn_keeps_the_sign_of_a_zero_in_the_interpreter():
    got = program(SIGNS).run({}, backend="interp")
    assert got.printed == "-0 0 nan -1 1\n"
    assert math.copysign(1.0, float(got.outputs["r"][0])) == -1.0


# |v| of a vector with ⊥ and log10 of a negative real: the C executor gives ⊥ without its sign
# bit (tl_sqrt, C's log10), the interpreter gave it with (math.sqrt of -nan, numpy's log10).
SPECIALS = """#version 2.0
input real zz = 0.0;
input real mm = 1.0;
strand S (int i) {
  output real r = 0.0;
  update {
    real nz = -zz;
    real neg = -mm;
    real big = mm / zz;
    real nn = big - big;
    print(log2(neg), " ", log10(neg), " ", log(nz), " ", sinh(big), " ", cosh(nn), " ", tanh(nz), " ", erf(nz), " ",
          erfc(big), " ", exp(nn), " ", asin(nz), " ", acos(nn), " ", sqrt(nz), " ", atan2(big, big), " ", tan(nz), "\\n");
    print(clamp(nn, 0.0, 1.0), " ", lerp(0.0, 1.0, nn), " ", normalize([nz, zz]), " ", |[nz, nn]|, " ", |nn|, " ",
          modulate([nz, 1.0], [1.0, nn]), " ", round(nz), " ", (-1.0)^big, " ", 1.0^nn, " ", nz^0.5, " ", big^0.5, "\\n");
    r = |[nz, nn]|;
    stabilize;
  }
}
create_collection { S(i) | i in 0..0 };
"""


def test_norm_and_log10_of_invalid_operands_give_the_c_executors_nan_in_the_interpreter():
    got = program(SPECIALS).run({}, backend="interp")
    first, second = (line.split() for line in got.printed.splitlines())
    assert first[1] == "nan" and second[3] == "nan"


@needs_cc
@pytest.mark.parametrize("text", [INVALID, SIGNS, SPECIALS], ids=["invalid-operands", "sgn", "special-values"])
def test_special_values_print_the_same_in_c_and_the_interpreter(text):
    a, b = both(text)
    assert a.printed == b.printed
    assert np.array_equal(a.outputs["r"], b.outputs["r"], equal_nan=True)
    assert np.array_equal(np.signbit(a.outputs["r"]), np.signbit(b.outputs["r"]))
