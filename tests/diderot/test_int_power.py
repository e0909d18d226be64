"""``x ^ n`` with an int exponent: repeated squaring in both executors, as Diderot's own
executables compute it (diderotc turns a constant exponent into products, bits high to
low); the C executor called ``pow`` until 2026-11-28 and differed in the last bits
(0.3^3: 0.026999999999999996 against Diderot's 0.027; 1e-8 relative at n = 10^9)."""

import math

import pytest

import tensorlang as tl

PROGRAM = """
input real x = 0.3;
input int n = 3;
strand S (int i) {
  output real a = 0.0;
  output real b = 0.0;
  output real c = 0.0;
  update {
    a = x ^ n;
    b = x ^ 3;
    c = x ^ (-n);
    stabilize;
  }
}
initially [ S(i) | i in 0..0 ];
"""

CASES = [(0.3, 3), (1.00000001, 1000000001), (-0.0, -3), (math.nan, 0), (2.0, -1075), (-1.5, 7), (0.3, -2 ** 63),
         (math.inf, -2), (-math.inf, 3), (1e-200, 2)]


@pytest.fixture(scope="module")
def runs():
    return {backend: tl.compile(PROGRAM, lang="diderot", backend=backend) for backend in ("c", "interp")}


def _outputs(run, x, n):
    result = run(x=x, n=n)
    return tuple(float(result[name].ravel()[0]) for name in "abc")


@pytest.mark.parametrize(("x", "n"), CASES, ids=repr)
def test_the_c_executor_and_the_interpreter_agree_to_the_bit(runs, x, n):
    assert repr(_outputs(runs["c"], x, n)) == repr(_outputs(runs["interp"], x, n))


def test_the_values_are_diderots():
    """Diderot's executable (diderotc --double, 2026-11-28) printed 0.027 for 0.3^3 and
    22026.463294000361 for 1.00000001^1000000001; ``pow`` gives other last digits."""
    for backend in ("c", "interp"):
        run = tl.compile(PROGRAM, lang="diderot", backend=backend)
        assert _outputs(run, 0.3, 3)[:2] == (0.027, 0.027)
        assert _outputs(run, 1.00000001, 1000000001)[0] == 22026.463294000361
        assert 0.3 ** 3 != 0.027  # the test would not tell the two rules apart otherwise
