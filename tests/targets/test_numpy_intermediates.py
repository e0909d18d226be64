"""The numpy target materializes a direct sum, a stack, a δ or a gathered read whole: one
past the memory budget is error[too-large] at compile time, never a numpy ValueError
('iterator is too large') or minutes of allocation; the same programs stay exact on the
reference interpreter (docs/errors.md, "Limits on program size")."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl

B = 2**40
PROGRAMS = {
    "stur-condition": ("stur", f"symbols: N\nD(i, j) := B(i, j) * (i*{B} = j*{B})\nB:D(i, j) := (0 <= i < N) * "
                               "(0 <= j < N)\nD:D(i, j) := (0 <= i < N) * (0 <= j < N)\n"),
    "tl-concat": ("tl", f"in var B : [3 3]\nout var D : [3 3]\nD[i,j] = concat(below:{2 * B} => 0, holds:1 => B[i,j], "
                        f"above:{2 * B} => 0)[-{B}*i+{B}*j+{2 * B + 1}]\n"),
    "tl-affine-delta": ("tl", "in var B : [3 3]\nout var D : [3 3]\nD[i,j] = sum(k:1073741824) B[i,j] * delta[k+1,i+2]\n"),
    "tl-delta-quotient": ("tl", "in var B : [3 3]\nout var D : [3 3]\nD[i,j] = sum(k:1073741824) (B[i,j] / delta[k,1])\n"),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_an_intermediate_past_the_budget_is_too_large_on_the_numpy_target(name, monkeypatch):
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**20))
    lang, text = PROGRAMS[name]
    params = {"N": 3} if lang == "stur" else None
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(text, lang=lang, backend="numpy", params=params)
    assert info.value.code == "too-large" and "numpy target" in str(info.value)
    if name == "stur-condition":  # the interpreter reads the same program exactly
        b = np.arange(9.0).reshape(3, 3)
        got = tl.compile(text, lang=lang, backend="interp", params=params)(B=b)["D"]
        np.testing.assert_array_equal(got, np.diag(np.diag(b)))


def test_a_small_direct_sum_still_runs_on_the_numpy_target(monkeypatch):
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**20))
    text = PROGRAMS["stur-condition"][1].replace(str(B), "4")
    b = np.arange(9.0).reshape(3, 3)
    got = tl.compile(text, lang="stur", backend="numpy", params={"N": 3})(B=b)["D"]
    np.testing.assert_array_equal(got, np.diag(np.diag(b)))
