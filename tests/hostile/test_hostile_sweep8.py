"""Issue 41, eighth sweep: hand-written hostile inputs on the surfaces the fuzzers do not
draw (tl.einsum's dtypes and layouts, broken CLI files, lying NRRD headers, fields at
non-finite points); each finding fixed at its cause and covered here by its class.

* A field met Python's and numpy's operators it lacks with Python's TypeError (``F ** 2``,
  ``abs(F)``, ``F < 0``, ``np.sqrt(F)``) or a silent 0-d object array (``np.asarray(F)``).
  ``F ** n`` (1 ≤ n ≤ 64) and numpy's ufuncs of a field's operators and functions now
  build the field; every other operator is error[input] naming it.
* A world matrix was called singular by its determinant below 10^-300: a 2-D image with a
  spacing of 10^-200 (invertible, its inverse finite) was refused, and one of 10^300 printed
  numpy's overflow warning.  Invertibility is now the condition number and a finite
  inverse, at any scale.
* ``.einsum`` files skipped the checker's bound on a tensor's elements: ``check`` said ok
  to ``ij,jk->ik : [99999999999999999999 3] [3 4]`` and ``compile --emit c`` wrote C for
  it, and an extent of 5 000 digits was error[internal] (Python's int() limit).  Every
  operand and the result now have fewer than 2^62 elements (error[too-large]), in
  ``.einsum`` files and in ``tl.contract_expression``'s shapes, and an extent has at most
  100 digits, as in the other languages.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.fields import run
from tiers import quick_first

RNG = np.random.default_rng(8)
DATA = RNG.normal(size=(8, 9))
POINTS = np.array([[3.0, 3.5], [4.25, 2.75], [np.nan, 3.0], [3.0, np.inf], [-0.0, -0.0]])


def _field():
    return tl.field(DATA, "bspln3")


def refused(call, code="input") -> TensorLangError:
    with pytest.raises(TensorLangError) as e:
        call()
    assert e.value.code == code, e.value
    return e.value


@pytest.fixture
def numpy_probes(monkeypatch):
    """The numpy reference probes (as tests/fields/conftest.py): where a test compares two
    fields made two ways, both sides take the same path, and no C probe is built per case."""
    monkeypatch.setattr(run, "USE_C", False)


# ------------------------------------------------------------------ a field's operators
@pytest.mark.usefixtures("numpy_probes")
@pytest.mark.parametrize("n", [1, 3, np.int64(4), 64])
def test_a_field_to_an_integer_power_is_the_product_of_its_factors(n):
    F = _field()
    want = F
    for _ in range(int(n) - 1):
        want = want * F
    assert np.array_equal((F ** n).probe(POINTS), want.probe(POINTS), equal_nan=True)
    assert np.array_equal(np.power(F, n).probe(POINTS), want.probe(POINTS), equal_nan=True)


@pytest.mark.parametrize("n", [0, -1, 65, 10**100, 2.0, 0.5, True, "2", None, np.nan])
def test_a_power_other_than_one_to_64_factors_is_an_input_error(n):
    assert "'**'" in str(refused(lambda: _field() ** n))


@pytest.mark.usefixtures("numpy_probes")
@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "cos", "tanh"])
def test_numpys_ufuncs_of_a_fields_functions_are_the_fields_own(name):
    F = _field()
    with np.errstate(invalid="ignore"):
        want = getattr(tl.fields, name)(F).probe(POINTS)
        assert np.array_equal(getattr(np, name)(F).probe(POINTS), want, equal_nan=True)


@pytest.mark.usefixtures("numpy_probes")
@pytest.mark.parametrize("make", [lambda F: np.float64(2) * F, lambda F: np.add(F, 1.5), lambda F: np.subtract(1, F),
                                  lambda F: np.divide(F, 4), lambda F: np.negative(F), lambda F: np.ones(()) + F],
                         ids=["scalar-mul", "add", "rsub", "divide", "negative", "0d-array"])
def test_numpys_ufuncs_of_a_fields_operators_are_the_operators(make):
    F = _field()
    v = F.probe(POINTS)
    got = make(F)
    assert isinstance(got, tl.fields.Field)
    assert np.allclose(got.probe(POINTS), make(v), equal_nan=True)


LACKING = {"abs": abs, "lt": lambda F: F < 0, "gt-reflected": lambda F: 0 < F, "le": lambda F: F <= 1,
           "floordiv": lambda F: F // 2, "mod": lambda F: F % 2, "rpow": lambda F: 2 ** F, "iter": list,
           "float": float, "asarray": np.asarray, "np.abs": np.abs, "np.maximum": lambda F: np.maximum(F, 0),
           "reduce": np.add.reduce, "out=": lambda F: np.add(F, 1, out=np.empty(1)),
           "outer-method": lambda F: np.multiply.outer(F, F)}


@pytest.mark.parametrize("name", sorted(LACKING))
def test_every_operator_a_field_lacks_is_an_input_error(name):
    F = tl.grad(_field()) if name == "iter" else _field()
    assert "field" in str(refused(lambda: LACKING[name](F)))


# ------------------------------------------------------------------ world matrices at any scale
@pytest.mark.parametrize("scale", quick_first([1e-300, 1e-200, 1e6, 1e300], {1e-300, 1e300}))  # the extremes quick
def test_a_world_matrix_is_invertible_at_any_scale(scale):
    """World = scale · index: the field at world points scale·x is the unit field at x,
    with no warning printed; its gradient is the unit gradient over the scale."""
    unit, points = _field(), POINTS[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = tl.field(DATA, "bspln3", world=np.diag([scale, scale]))
        assert np.allclose(scaled.probe(points * scale), unit.probe(points), rtol=1e-12)
    got, want = tl.grad(scaled).probe(points * scale), tl.grad(unit).probe(points) / scale
    assert np.allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("world", [np.zeros((2, 2)), np.diag([1.0, 0.0]), np.diag([1e-310, 1e-310]),
                                   np.array([[1.0, 1.0], [1.0, 1.0 + 1e-16]]), {"spacing": 0}],
                         ids=["zero", "rank-1", "subnormal", "parallel-in-floats", "spacing-0"])  # (an ill-conditioned
# one with a finite inverse is taken, as Diderot's runtime takes it: test_hostile_round10)
def test_a_world_matrix_without_a_finite_inverse_is_refused(world):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "singular" in str(refused(lambda: tl.field(DATA, "bspln3", world=world)))


# ------------------------------------------------------------------ einsum extents
HUGE_EINSUM = {
    "operand": "ij,jk->ik : [99999999999999999999 3] [3 4]",
    "operand-2^62": "ij->ji : [4611686018427387904 1]",
    "square": "ij->ji : [3037000500 3037000500]",
    "result": "i,j->ij : [2147483648] [2147483648]",
    "broadcast": "...i,...i->... : [2147483648 1 2] [1 2147483648 2]",
    "101-digits": "i->i : [" + "9" * 101 + "]",
    "5000-digits": "i->i : [" + "9" * 5000 + "]",
}


@pytest.mark.parametrize("name", sorted(HUGE_EINSUM))
def test_an_einsum_program_past_2_62_elements_or_100_digits_is_too_large(name):
    refused(lambda: tl.check(HUGE_EINSUM[name], lang="einsum"), "too-large")


# a Python process each: two quick, every one in the full run
@pytest.mark.parametrize("name", quick_first(sorted(HUGE_EINSUM), {"operand", "5000-digits"}))
def test_the_command_line_refuses_a_too_large_einsum_program_in_one_line(name, tmp_path):
    text = HUGE_EINSUM[name]
    path = tmp_path / "huge.einsum"
    path.write_text(text + "\n")
    done = subprocess.run([sys.executable, "-m", "tensorlang", "compile", "--emit", "c", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "error[too-large]" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_an_einsum_program_just_below_2_62_elements_checks():
    tl.check("i->i : [4611686018427387903]", lang="einsum")
    tl.check("i,j->ij : [2147483647] [2147483647]", lang="einsum")


@pytest.mark.parametrize("shapes", [((10**20, 3), (3, 4)), ((2**62, 1), (1, 1)), ((2**31, 3), (3, 2**31))],
                         ids=["operand", "operand-2^62", "result"])
def test_contract_expression_shapes_past_2_62_elements_are_too_large(shapes):
    refused(lambda: tl.contract_expression("ij,jk->ik", *shapes), "too-large")
