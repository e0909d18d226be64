"""tl.testing.assert_matches_reference: the reference semantics from outside (docs/api.md,
"Testing against the reference")."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl

MATVEC = "in var A : [3 4]\nin var x : [4]\nout var y : [3]\ny = A # x . [2 3]\n"


def test_testing_is_public():
    assert "testing" in tl.__all__ and callable(tl.testing.assert_matches_reference)


@pytest.mark.parametrize("backend", tl.available_backends())
def test_every_back_end_matches_the_reference(backend):
    rng = np.random.default_rng(1)
    inputs = {"A": rng.uniform(-1, 1, (3, 4)), "x": rng.uniform(-1, 1, 4)}
    k = tl.compile(MATVEC, backend=backend)
    tl.testing.assert_matches_reference(k, inputs, k(**inputs))
    tl.testing.assert_matches_reference(MATVEC, inputs, k(**inputs)["y"])  # text, one result's array


def test_a_wrong_entry_is_reported_with_its_position_and_the_bound():
    rng = np.random.default_rng(2)
    inputs = {"A": rng.uniform(-1, 1, (3, 4)), "x": rng.uniform(-1, 1, 4)}
    y = inputs["A"] @ inputs["x"]
    y[1] += 1e-9
    with pytest.raises(AssertionError, match=r"y: 1 finite entries beyond the rounding bound; first at y\[1\]: got [0-9.e+-]+, "
                       r"the reference [0-9.e+-]+ \(differ by 1e-09, allowed [0-9.e+-]+\)$"):
        tl.testing.assert_matches_reference(MATVEC, inputs, {"y": y})
    y[1] -= 1e-9
    y[1] *= 1 + 4 * np.finfo(float).eps  # a different summation order: within the bound
    tl.testing.assert_matches_reference(MATVEC, inputs, {"y": y})


def test_nan_and_infinities_must_stand_where_the_reference_has_them():
    text = "in var a : [3]\nin var b : [3]\nout var c : [3]\nc = a / b\n"
    inputs = {"a": np.array([0.0, 1.0, np.nan]), "b": np.array([0.0, 0.0, 2.0])}
    k = tl.compile(text, backend="numpy")
    got = k(**inputs)["c"]  # controlled division: 0/0 = 0, 1/0 = inf, NaN stays
    np.testing.assert_array_equal(got, [0.0, np.inf, np.nan])
    tl.testing.assert_matches_reference(k, inputs, got)
    for wrong, what in (([0.0, np.inf, 1.0], "undefined"), ([np.nan, np.inf, np.nan], "undefined"),
                        ([0.0, -np.inf, np.nan], "infinite"), ([0.0, 1e308, np.nan], "infinite")):
        with pytest.raises(AssertionError, match=what):
            tl.testing.assert_matches_reference(k, inputs, {"c": np.array(wrong)})


def test_float32_results_get_float32_rounding_and_symbolic_kernels_bind_their_sizes():
    text = "in var A : [n m]\nin var x : [m]\nout var y : [n]\ny = A # x . [2 3]\n"
    rng = np.random.default_rng(3)
    inputs = {"A": rng.uniform(-1, 1, (5, 7)).astype(np.float32), "x": rng.uniform(-1, 1, 7).astype(np.float32)}
    k = tl.compile(text, dtype="float32", backend="numpy")
    tl.testing.assert_matches_reference(k, inputs, k(**inputs))
    with pytest.raises(AssertionError, match="shape"):
        tl.testing.assert_matches_reference(k, inputs, {"y": np.zeros(4, np.float32)})
    with pytest.raises(AssertionError, match="no result"):
        tl.testing.assert_matches_reference(k, inputs, {"z": np.zeros(5)})
    with pytest.raises(tl.TensorLangError, match="no result to check: pass at least one of y") as info:
        tl.testing.assert_matches_reference(k, inputs, {})  # (it passed: nothing checked)
    assert info.value.code == "input"


def test_the_fused_rule_lets_an_overflowing_product_meet_its_infinity():
    text = "in var a : [2]\nin var b : [2]\nout var s : []\ns = a # b . [1 2]\n"
    inputs = {"a": np.array([1.0, 1e200]), "b": np.array([-np.inf, 1e200])}  # -inf + inf = ⊥ as written
    with pytest.raises(AssertionError, match="undefined"):
        tl.testing.assert_matches_reference(text, inputs, {"s": np.array(-np.inf)})
    tl.testing.assert_matches_reference(text, inputs, {"s": np.array(-np.inf)}, fused=True)


def test_a_bad_program_argument_is_error_input():
    with pytest.raises(tl.TensorLangError) as info:
        tl.testing.assert_matches_reference(42, {}, {})
    assert info.value.code == "input"


@pytest.mark.parametrize("got, reference, said", [
    ([np.nan], [1.0], "got nan, the reference 1.0"),
    ([1.0], [np.nan], "got 1.0, the reference nan"),
    ([-np.inf], [np.inf], "got -inf, the reference inf"),
    ([np.inf], [-0.0], "got inf, the reference -0.0"),
    ([0.1], [-0.0], "got 0.1, the reference -0.0 (differ by 0.1, allowed "),
])
def test_messages_print_numbers_as_users_read_them(got, reference, said):
    """nan, inf, -0.0 and 0.1, never numpy's np.float64(nan) (issue 43)."""
    text = "in var a : [1]\nout var c : [1]\nc = a\n"
    with pytest.raises(AssertionError) as info:
        tl.testing.assert_matches_reference(text, {"a": np.array(reference)}, {"c": np.array(got)})
    message = str(info.value)
    assert said in message and "np." not in message and "first at c[0]:" in message, message


def test_a_scalar_result_is_named_without_an_index():
    text = "in var a : [2]\nout var s : []\ns = a # a . [1 2]\n"
    with pytest.raises(AssertionError, match=r"first at s: got 3\.0, the reference 2\.0"):
        tl.testing.assert_matches_reference(text, {"a": np.array([1.0, 1.0])}, {"s": np.array(3.0)})
