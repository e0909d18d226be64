"""STUR's index arithmetic refuses values past 2^62 (numpy's int64 would wrap) from the
intervals of a condition's names, not by scanning every operand's values: the same
refusals, and the same values, as checking each operation's operands value by value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from tensorlang.errors import TensorLangError
from tensorlang.lang.stur import ast, linear

SPAN = None
CONSTANTS = [0, 1, 2, 3, -5, 7, 2**20, 2**30, 2**31 + 1, 2**40, 2**61, 2**62, 2**62 - 1]


def per_operation(e, env):
    """The bound as it was: the largest magnitude of both operands' values at every + - *."""
    if isinstance(e, ast.INum):
        return e.value
    if isinstance(e, ast.IName):
        return env[e.name]
    if isinstance(e, ast.INeg):
        return -per_operation(e.arg, env)
    a, b = per_operation(e.left, env), per_operation(e.right, env)
    reach = linear._reach
    if e.op != "/" and (reach(a) * reach(b) if e.op == "*" else reach(a) + reach(b)) > linear.MAX_INDEX_CONSTANT:
        raise TensorLangError("too-large", "reaches past 2^62")
    if e.op == "/":
        result = linear._trunc_div(a, b)
        return int(result) if np.ndim(result) == 0 else result
    return {"+": np.add, "-": np.subtract, "*": np.multiply}[e.op](a, b)


leaves = st.one_of(st.sampled_from(["i", "j", "N"]).map(lambda n: ast.IName(n, SPAN)),
                   st.sampled_from(CONSTANTS).map(lambda v: ast.INum(v, SPAN)))
expressions = st.recursive(leaves, lambda inner: st.one_of(
    inner.map(lambda a: ast.INeg(a, SPAN)),
    st.tuples(st.sampled_from("+-*/"), inner, inner).map(lambda t: ast.IBin(t[0], t[1], t[2], SPAN))),
    max_leaves=8)


def outcome(evaluate, e, env):
    try:
        return np.asarray(evaluate(e, env))
    except TensorLangError as exc:
        assert exc.code == "too-large"
        return "too-large"


@settings(max_examples=400, deadline=None)
@example(ast.IBin("+", ast.IName("i", SPAN), ast.IBin("/", ast.INum(2**62, SPAN), ast.IBin("*", ast.IName("i", SPAN),
         ast.IName("N", SPAN), SPAN), SPAN), SPAN), (0, 3), (0, 2), 3)  # i*N takes 0, 3, 6, 9: never 1
@given(expressions, st.sampled_from([(0, 3), (-4, 4), (1, 1), (5, 9)]), st.sampled_from([(0, 2), (-3, 0)]),
       st.sampled_from([1, 3, 2**31]))
def test_the_interval_bound_refuses_exactly_what_the_per_operation_bound_refused(e, irange, jrange, n):
    """Generated conditions (names read once or several times, divisions, negations) over
    grids of i and j on axes of their own and a symbol N."""
    env = {"i": np.arange(irange[0], irange[1] + 1).reshape(-1, 1), "j": np.arange(jrange[0], jrange[1] + 1).reshape(1, -1),
           "N": n}
    want, got = outcome(per_operation, e, env), outcome(linear.evaluate, e, env)
    if isinstance(want, str) or isinstance(got, str):
        assert isinstance(want, str) and isinstance(got, str), (linear.text(e), want, got)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("count, refused", [(2, False), (3, True)])  # i*2^62 reaches 2^62, then 2^63
def test_a_names_interval_is_read_once_for_the_condition(count, refused):
    e = ast.IBin("*", ast.IName("i", SPAN), ast.INum(2**62, SPAN), SPAN)
    ranges: dict = {}
    if refused:
        with pytest.raises(TensorLangError):
            linear.evaluate(e, {"i": np.arange(count)}, ranges)
    else:
        linear.evaluate(e, {"i": np.arange(count)}, ranges)
    assert ranges == {"i": (0, count - 1)}
