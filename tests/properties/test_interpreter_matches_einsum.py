"""The reference interpreter agrees with an independent einsum translation.

Programs are random and well-typed (see generators.py): shapes up to rank 4, every
operator of the language, nesting up to depth 4, several statements that reuse earlier
results and sometimes their own target (ev-stmt).  Each is printed twice, once with
the fewest parentheses the precedence rules allow and once fully parenthesized, so the
parser's precedence is checked along the way.
"""

import numpy as np
import pytest
from hypothesis import given, note, strategies as st

import tensorlang as tl
from properties.generators import oracle, program_text, programs, random_inputs

EPS = {"float64": np.finfo(np.float64).eps, "float32": np.finfo(np.float32).eps}


def assert_within_bound(name, got, value, bound, eps):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == np.shape(value), f"{name}: shape {got.shape} != {np.shape(value)}"
    nan = np.isnan(value)
    assert np.array_equal(np.isnan(got), nan), f"{name}: undefined (NaN) entries differ"
    allowed = 16 * eps * (np.asarray(bound)[~nan] + 1e-300)
    err = np.abs(got[~nan] - np.asarray(value)[~nan])
    worst = np.max(err - allowed, initial=-1.0)
    assert worst <= 0, f"{name}: error {err.max():.3g} exceeds the rounding bound"


@pytest.mark.slow
@pytest.mark.parametrize("full_parens", [False, True], ids=["minimal-parens", "full-parens"])
@given(program=programs(), seed=st.integers(0, 2**32 - 1))
def test_interpreter_equals_einsum_translation(full_parens, program, seed):
    text = program_text(program, full_parens)
    note(text)
    inputs = random_inputs(program, seed)
    expected = oracle(program, inputs)
    results = tl.compile(text, backend="interp")(**inputs)
    assert set(results) == (
        {d.name for d in program.decls if d.qual in ("out", "inout")} if program.qualified else {d.name for d in program.decls}
    )
    for name, got in results.items():
        value, bound = expected[name]
        assert_within_bound(name, got, value, bound, EPS["float64"])


@pytest.mark.slow
@given(program=programs(max_depth=3, max_stmts=3), seed=st.integers(0, 2**32 - 1))
def test_interpreter_float32_within_float32_rounding(program, seed):
    text = program_text(program, full_parens=False)
    note(text)
    inputs = {k: v.astype(np.float32) for k, v in random_inputs(program, seed).items()}
    expected = oracle(program, {k: v.astype(np.float64) for k, v in inputs.items()})
    results = tl.compile(text, backend="interp", dtype="float32")(**inputs)
    for name, got in results.items():
        assert got.dtype == np.float32
        value, bound = expected[name]
        assert_within_bound(name, got, value, bound, EPS["float32"])
