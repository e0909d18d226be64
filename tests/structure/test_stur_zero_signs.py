"""The STUR reference's zeros where a variable only a condition names has a range that depends on a head variable
(``B(i, j) * (i <= k < 3)``, which the compiled targets refuse): each entry is the sum of its terms as written,
so a sum of -0 terms is -0 (the masked-out terms added nothing; they were +0) and a sum of no term is +0."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl

B = np.array([[-0.0, -0.0, -0.0], [-0.0, -0.0, 1.0], [-0.0, 2.0, -1.0]])


@pytest.mark.parametrize("rule, want", [
    ("D(i, j) := B(i, j) * (i <= k < 3)", [[-0.0, -0.0, -0.0], [-0.0, -0.0, 2.0], [-0.0, 2.0, -1.0]]),  # 3, 2, 1 terms
    ("D(i, j) := B(i, j) * (j <= k < 3)", [[-0.0, -0.0, -0.0], [-0.0, -0.0, 1.0], [-0.0, 4.0, -1.0]]),
    ("D(i, j) := B(i, j) * (i <= k < 2)", [[-0.0, -0.0, -0.0], [-0.0, -0.0, 1.0], [0.0, 0.0, 0.0]]),  # row 2: no term
    ("D(i, j) := B(i, j) * (0 <= k < 2) * (k <= m < 2)", [[-0.0, -0.0, -0.0], [-0.0, -0.0, 3.0], [-0.0, 6.0, -3.0]]),
])
def test_a_sum_of_negative_zeros_under_a_condition_is_negative_zero(rule, want):
    text = f"symbols: N\n{rule}\nB:D(i, j) := (0 <= i < N) * (0 <= j < N)\nD:D(i, j) := (0 <= i < N) * (0 <= j < N)\n"
    got = tl.compile(text, lang="stur", backend="interp")(B=B)["D"]
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want)), got
