"""The argument checks the surface shares (``errors.is_integer``,
``ProgramInterface._inputs_dict``): every caller refuses what the others refuse, each
with its own message, and takes numpy's integers and any mapping alike."""

from types import MappingProxyType

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import is_integer

FIXED = "in var A : [2 2]\nout var B : [2 2]\nB = 2 * A\n"
SYMBOLIC = "in var A : [n n]\nout var B : [n n]\nB = 2 * A\n"


@pytest.mark.parametrize("value, low, high, expected", [
    (3, 1, 5, True), (np.int64(3), 1, 5, True), (1, 1, 1, True), (10**30, 0, float("inf"), True),
    (0, 1, 5, False), (6, 1, 5, False), (True, 0, 5, False), (np.bool_(True), 0, 5, False),
    (2.0, 0, 5, False), ("2", 0, 5, False), (None, 0, 5, False)])
def test_is_integer_takes_integers_in_range_and_never_a_bool(value, low, high, expected):
    assert is_integer(value, low, high) is expected


@pytest.mark.parametrize("program", [FIXED, SYMBOLIC], ids=["kernel", "symbolic"])
@pytest.mark.parametrize("inputs", [[np.ones((2, 2))], np.ones((2, 2)), "A", None], ids=["list", "array", "str", "None"])
def test_run_refuses_inputs_that_are_no_mapping(program, inputs):
    k = tl.compile(program, backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k.run(inputs)
    assert info.value.code == "input"
    assert f"inputs must be a dict from variable names to arrays, got {type(inputs).__name__}" in info.value.message


@pytest.mark.parametrize("program", [FIXED, SYMBOLIC], ids=["kernel", "symbolic"])
def test_run_takes_any_mapping(program):
    a = np.arange(4.0).reshape(2, 2)
    result = tl.compile(program, backend="numpy").run(MappingProxyType({"A": a}))
    np.testing.assert_array_equal(result["B"], 2 * a)


@pytest.mark.parametrize("value", [0, -1, True, 2.5, "4"])
def test_params_refuse_what_is_no_positive_integer(value):
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(SYMBOLIC, backend="numpy", params={"n": value})
    assert info.value.code == "input"
    assert f"parameter 'n' must be a positive integer, got {value!r}" in info.value.message


def test_params_take_numpy_integers():
    k = tl.compile(SYMBOLIC, backend="numpy", params={"n": np.int64(2)})
    assert k.sizes == {"n": 2} and type(k.sizes["n"]) is int


@pytest.mark.parametrize("value", [0, -3, True, 2.0, "2"])
def test_specialize_refuses_what_is_no_positive_integer(value):
    k = tl.compile(SYMBOLIC, backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k.specialize(n=value)
    assert info.value.code == "input"
    assert f"size 'n' must be a positive integer, got {value!r}" in info.value.message


def test_specialize_takes_numpy_integers():
    assert tl.compile(SYMBOLIC, backend="numpy").specialize(n=np.int64(3)).sizes == {"n": 3}


@pytest.mark.parametrize("shape", [(2, True), (2, -1), (2, 1.5), ("2", 3)])
def test_contract_expression_refuses_shapes_of_no_integers(shape):
    with pytest.raises(tl.EinsumError, match="a shape is a tuple of non-negative integers"):
        tl.contract_expression("ij,jk->ik", shape, (3, 4), backend="numpy")


@pytest.mark.parametrize("position", [2, -1, True, 1.0])
def test_contract_expression_refuses_constants_that_are_no_position(position):
    with pytest.raises(tl.EinsumError, match=r"constants lists operand positions 0\.\.1"):
        tl.contract_expression("ij,jk->ik", (2, 3), np.ones((3, 4)), constants=[position], backend="numpy")


def test_contract_expression_takes_a_numpy_integer_position():
    b = np.arange(12.0).reshape(3, 4)
    expr = tl.contract_expression("ij,jk->ik", (2, 3), b, constants=[np.int64(1)], backend="numpy")
    a = np.ones((2, 3))
    np.testing.assert_allclose(expr(a), a @ b)
