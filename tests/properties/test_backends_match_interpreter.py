"""Every back end agrees with the reference interpreter, and both with the oracle.

Random programs in both statement forms (operator form and index form), shapes up to
rank 4, extents 1..7, float64 and float32.  A new back end joins by adding its name to
BACKENDS.
"""

import pytest
from hypothesis import given, note, settings

from properties.harness import cases, check_backend

BACKENDS = ["numpy", "c"]


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=200)  # in every profile ($CI's 500 and "thorough" too): each "c" example builds a C kernel
@given(case=cases())
def test_backend_matches_interpreter_float64(backend, case):
    note(case.text)
    check_backend(backend, case, "float64")


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60)
@given(case=cases(max_extent=4))
def test_backend_matches_interpreter_float32(backend, case):
    note(case.text)
    check_backend(backend, case, "float32")


# ⊥ compared strictly (issue 41): ⊥ and ±0 among the inputs, no infinities; every target
# keeps ⊥ exactly where the interpreter has it (except what δ/ε as selectors may drop,
# harness.check_backend_strict, docs/language.md)
from hypothesis import strategies as st  # noqa: E402

from properties.harness import Case, check_backend_strict, ein_oracle, index_programs  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=150)
@given(case=cases(), seed=st.integers(0, 2**32 - 1))
def test_backend_keeps_undefined_entries_float64(backend, case, seed):
    note(case.text)
    check_backend_strict(backend, case, seed, "float64")


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40)
@given(case=cases(max_extent=4), seed=st.integers(0, 2**32 - 1))
def test_backend_keeps_undefined_entries_float32(backend, case, seed):
    note(case.text)
    check_backend_strict(backend, case, seed, "float32")


@settings(max_examples=25)
@given(case=cases(max_extent=4), seed=st.integers(0, 2**32 - 1))
def test_numpy_keeps_undefined_entries_quick(case, seed):
    note(case.text)
    check_backend_strict("numpy", case, seed, "float64")


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=30)
@given(program=index_programs(inout=True), seed=st.integers(0, 2**32 - 1))
def test_an_inout_variable_matches_the_interpreter_on_every_call(backend, program, seed):
    """Programs that assign an input (``inout``): the kernel against the interpreter with ⊥
    and ±0 among the inputs, and the same results whether ``out=`` is other arrays or the
    inputs themselves (the C functions read an inout input where it lies); the caller's
    inputs are left as they were unless passed as ``out=``."""
    import numpy as np

    import tensorlang as tl
    from tensorlang.ein.printer import to_text

    text = to_text(program)
    note(text)
    rng = np.random.default_rng(seed)
    inputs = {d.name: rng.uniform(-1, 1, size=d.shape) for d in program.decls if d.qual in ("in", "inout")}
    results = tuple(d.name for d in program.decls if d.qual in ("out", "inout"))
    check_backend_strict(backend, Case("index", text, inputs, ein_oracle(program, inputs), results), seed)
    kernel, kept = tl.compile(text, backend=backend), {k: v.copy() for k, v in inputs.items()}
    want = kernel(**inputs)
    others = {name: np.full(np.shape(want[name]), np.nan) for name in results}
    kernel(**inputs, out=others)
    assert all(np.array_equal(inputs[k], kept[k]) for k in inputs)
    in_place = {name: inputs[name].copy() if name in inputs else np.empty(np.shape(want[name])) for name in results}
    kernel(**{**inputs, **{k: v for k, v in in_place.items() if k in inputs}}, out=in_place)
    for name in results:
        assert np.array_equal(others[name], want[name], equal_nan=True), name
        assert np.array_equal(in_place[name], want[name], equal_nan=True), name
