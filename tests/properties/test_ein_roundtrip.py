"""The printed EIN of any program parses back to the same EIN and means the same."""

import numpy as np
from hypothesis import given, note

import pytest
import tensorlang as tl
from properties.generators import program_text, programs, random_inputs
from properties.harness import index_programs
from tensorlang.ein.printer import to_text


@pytest.mark.slow
@given(program=programs(max_extent=4))
def test_printed_ein_of_operator_form_parses_back_to_the_same_ein(program):
    text = program_text(program, full_parens=False)
    kernel = tl.compile(text, backend="interp")
    printed = kernel.ir("ein")
    note(printed)
    again = tl.compile(printed, backend="interp")
    assert again.ein == kernel.ein
    inputs = random_inputs(program, 0)
    original, reparsed = kernel(**inputs), again(**inputs)
    for name in original:  # the interpreter evaluates operator form and index form differently
        np.testing.assert_allclose(reparsed[name], original[name], rtol=1e-9, atol=1e-9, equal_nan=True)


@pytest.mark.slow
@given(program=index_programs(max_extent=4))
def test_printed_index_form_parses_back_to_the_generated_ein(program):
    text = to_text(program)
    note(text)
    kernel = tl.compile(text, backend="interp")
    assert kernel.ein == program
    assert kernel.ir("ein") == text
