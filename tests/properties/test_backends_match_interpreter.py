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
