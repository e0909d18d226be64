"""A review of the fifty-second round's merges (rev53): an ``int[]`` input given from Python with items outside 64 bits
(``1e19``, ``2**63``, a uint64 past 2^63) was taken (the interpreter kept a Python int of any size, C gave INT64_MIN),
where a scalar ``int`` input is refused; it is error[input] now, as items that are not whole (1.5, NaN) were."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

SEQ = """#version 2.0
input int[] is = {1};
strand S (int i) { output int y = 0; update { y = is[i]; stabilize; } }
create_collection { S(i) | i in 0..1 };
"""


@pytest.mark.parametrize("items", [[1e19, 0.0], [2**63, 0], np.array([2**63, 2], dtype=np.uint64), [-(2**63) - 1, 0],
                                   [float("inf"), 0], ["1", 2]], ids=["1e19", "2^63", "uint64", "below", "inf", "text"])
def test_int_sequence_items_outside_64_bits_are_refused(items):
    with pytest.raises(TensorLangError, match="not a sequence of int") as err:
        tl.compile(SEQ, lang="diderot", backend="interp").run({"is": items})
    assert err.value.code == "input"


@pytest.mark.parametrize("items", [[2**63 - 1, -(2**63)], np.array([1, 2], dtype=np.uint64), [True, 2], [1.0, -3.0]])
def test_int_sequence_items_of_64_bits_are_taken(items):
    got = tl.compile(SEQ, lang="diderot", backend="interp").run({"is": items}).y
    assert got.tolist() == [int(x) for x in items]
