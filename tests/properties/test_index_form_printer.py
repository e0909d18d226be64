"""The model-language printer writes index-form statements (reductions included) so that
they parse back to the same AST: ``--emit ast`` and ``--emit tl`` of index-form programs."""

from hypothesis import given

import pytest
from tensorlang.ein.printer import to_text
from tensorlang.lang.tl.parser import parse_model
from tensorlang.lang.tl.printer import to_source

from properties.harness import index_programs


@pytest.mark.slow
@given(program=index_programs())
def test_index_form_source_round_trips(program):
    parsed = parse_model(to_text(program))
    assert parse_model(to_source(parsed)) == parsed
