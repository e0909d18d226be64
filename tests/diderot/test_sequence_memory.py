"""A Diderot sequence is bounded by the memory budget before it is made, at what its items
take (lang/diderot/bounds.py ``item_bytes``: 64 bytes a number, 128 + 8 a component for a
tensor): made by a comprehension or by ``@``, given as an input, or packed for the C
executor's strands.  Counted at 64 bytes an item, a sequence of 16x16 tensors was let
grow 30 times past the budget."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands, typecheck
from tensorlang.lang.diderot.bounds import item_bytes
from tensorlang.lang.diderot.types import Ty
from tensorlang.targets.c import build as c_build

BACKENDS = ["interp"] + (["c"] if c_build.find_compiler() is not None else [])

COMPREHENSION = """#version 2.0
input int n = 10;
tensor[16,16]{} ms = { identity[16] | i in 0..n };
strand S (int i) {
  output real x = 0.0;
  update { x = real(length(ms)); stabilize; }
}
initially [ S(i) | i in 0..1 ];
"""

INPUT = """#version 2.0
input tensor[16,16]{} ms;
strand S (int i) {
  output real x = 0.0;
  update { x = real(length(ms)) + ms{0}[0,0]; stabilize; }
}
initially [ S(i) | i in 0..1 ];
"""

APPEND = """#version 2.0
input int n = 10;
strand S (int i) {
  tensor[16,16]{} s = { identity[16] };
  output real x = 0.0;
  update { if (length(s) < n) { s = s @ s; } else { x = real(length(s)); stabilize; } }
}
initially [ S(i) | i in 0..1 ];
"""


def program(text):
    return strands(typecheck(parse_program(text)), ".")


def test_an_item_counts_what_it_holds():
    assert item_bytes(Ty("real")) == 64 and item_bytes(Ty("int")) == 64
    assert item_bytes(Ty("tensor", (16, 16))) == 128 + 8 * 256


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("text, small, big", [
    (COMPREHENSION, {"n": 100}, {"n": 1000}),
    (INPUT, {"ms": np.ones((100, 16, 16))}, {"ms": np.ones((1000, 16, 16))}),
    (APPEND, {"n": 100}, {"n": 1000}),
])
def test_a_sequence_of_tensors_past_the_budget_is_refused_before_it_is_made(text, small, big, backend, monkeypatch):
    """1 MiB holds about 480 items of 16x16 (2 KiB each), 16 000 at 64 bytes an item (the C
    executor: a method's arena and the strands' kept sequences, each within its share)."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**20))
    p = program(text)
    x = p.run(small, backend=backend).outputs["x"]
    assert x[0] in (101.0, 128.0)
    with pytest.raises(TensorLangError) as info:
        p.run(big, backend=backend)
    assert info.value.code == "too-large" and "memory budget" in info.value.message
