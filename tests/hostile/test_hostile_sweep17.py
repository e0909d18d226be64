"""Issue 41, seventeenth sweep: hostile inputs on the surfaces besides the Diderot front
end (structure annotations, ...), each finding fixed at its cause and covered here by
its class.

* A ``where`` condition whose numbers pass int64 over the positions was evaluated in
  numpy's int64 by the structure check (``check_structure=True``, ``--check-structure``)
  and by ``--random-inputs``' keeping of the promise: ``where i1 <= i2 + 2^63 - 2``
  (true everywhere) wrapped to false and refused a good input ("A[1,2] = 2.0 should be
  0.0"); ``where i1 = i2 + 10^26`` was error[internal] (OverflowError).  A condition
  whose sides may leave int64 is evaluated in Python integers, exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError


#: (a condition, where it holds over the 1-based positions of a 3 x 3 matrix)
WHERE = [("i1 <= i2 + 9223372036854775806", lambda i1, i2: i1 > 0),  # wrapped to false in int64
         ("i1 >= i2 - 9223372036854775807", lambda i1, i2: i1 > 0),
         ("i1 = i2 + 99999999999999999999999999", lambda i1, i2: i1 < 0),  # OverflowError
         ("99999999999999999999999999 * i1 = i2", lambda i1, i2: i1 < 0),
         ("4611686018427387904 * i1 = 4611686018427387904 * i2", lambda i1, i2: i1 == i2),
         ("3 * i1 = i2", lambda i1, i2: 3 * i1 == i2)]


@pytest.mark.parametrize("condition, holds", WHERE)
def test_where_conditions_past_int64_are_checked_exactly(condition, holds):
    """The structure check holds every input to exactly the unique set the condition names."""
    unique = holds(*(np.indices((3, 3)) + 1))
    k = tl.compile(f"in var A : [3 3] where {condition}\nout var C : [3 3]\nC = A * 2\n", backend="numpy",
                   check_structure=True)
    good = np.where(unique, 1.0, 0.0)
    assert (k(A=good)["C"] == 2 * good).all()
    if not unique.all():
        with pytest.raises(TensorLangError) as e:
            k(A=np.ones((3, 3)))
        assert e.value.code == "structure", e.value
        first = tuple(int(p) + 1 for p in np.argwhere(~unique)[0])
        assert f"A[{first[0]},{first[1]}] = 1.0 should be 0.0" in str(e.value)
