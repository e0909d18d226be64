"""Issue 41, eighteenth sweep: hostile inputs on the surfaces besides the Diderot front
end, the findings the seventeenth left and more, each fixed at its cause and covered here.

* ``tl.testing.assert_matches_reference`` took a masked array's values under its mask as
  the result (``np.asarray`` drops the mask): a result with masked entries is error[input];
  so are ``slack=nan`` (which passed every wrong result), a negative slack (which failed
  every right one) and a ``fused`` that is no bool.
* ``tl.contract_expression(..., constants=[k])`` with a shape where the array belongs
  built an expression around the shape read as an array, which failed every call with a
  shape mismatch: a constant that is no array (or holds no numbers) is error[input] at build.
  ``constants=1`` (no list) was a bare TypeError; a masked constant was read under its mask.
* ``where i2 = 4`` on a 3 x 3 matrix was refused (a fixed position outside its dimension)
  while the same set ``where i2 - 3 = 1`` was accepted: one rule, a condition on one
  position must hold at some position of its dimension (``2 * i2 = 3``, ``i2 > 3`` too).
* ``sum(k:2^40) x[i]``: the compiled targets compute ``N * x``; the reference interpreter
  refuses it with error[too-large] before it starts, as docs/errors.md "Limits" documents.
* A text (``ascii``) NRRD image of an integer type read ``300`` in a ``uchar`` image as 44
  (numpy's text reader wraps): a sample outside its type is error[input].
* ``k.dask(X=dask_array, chunks=0)`` ignored ``chunks=`` (only a numpy input was cut by
  it): a bad ``chunks=`` is error[input] whatever the inputs are; an input given both in
  ``inputs`` and by keyword ran on the keyword's array: error[input].
* A STUR condition through a division by zero (``(j = 6 / i)`` at i = 0) held where the
  quotient, taken as 0, matched: C's division by zero has no value, so it holds nowhere;
  a redundancy map's target through one (``ip = j / (i - 1)``) names no entry to copy.
* ``tensorlang analyze p.tl --plot x.png`` without sizes printed the whole report, then
  refused the plot: refused before the report.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

UNARY = "in var A : [3]\nout var B : [3]\nB = A * 2\n"


def test_a_masked_result_is_refused_not_compared_under_its_mask():
    a = np.arange(3.0)
    wrong = np.ma.masked_array([0.0, 2.0, 99.0], mask=[False, False, True])
    with pytest.raises(TensorLangError) as e:
        tl.testing.assert_matches_reference(UNARY, {"A": a}, wrong)
    assert e.value.code == "input" and "masked" in e.value.message, e.value
    with pytest.raises(TensorLangError):
        tl.testing.assert_matches_reference(UNARY, {"A": a}, {"B": wrong})
    tl.testing.assert_matches_reference(UNARY, {"A": a}, np.ma.masked_array([0.0, 2.0, 4.0]))  # nothing masked


@pytest.mark.parametrize("constant", [(3, 4), [3, 4], np.array([["a"] * 4] * 3), None])
def test_a_contract_expression_constant_that_is_no_array_is_refused_at_build(constant):
    with pytest.raises(TensorLangError) as e:
        tl.contract_expression("ij,jk->ik", (2, 3), constant, constants=[1])
    assert e.value.code == "input" and "constant" in e.value.message, e.value


@pytest.mark.parametrize("constants", [1, "1", np.int64(1)])
def test_contract_expression_constants_that_are_no_list_are_refused(constants):
    """``constants=1`` was a bare TypeError ('int' object is not iterable)."""
    with pytest.raises(TensorLangError) as e:
        tl.contract_expression("ij,jk->ik", (2, 3), np.ones((3, 4)), constants=constants)
    assert e.value.code == "input" and "constants" in e.value.message, e.value


def test_a_masked_contract_expression_constant_is_refused_not_read_under_its_mask():
    b = np.ma.masked_array(np.ones((3, 4)), mask=np.eye(3, 4, dtype=bool))
    with pytest.raises(TensorLangError) as e:
        tl.contract_expression("ij,jk->ik", (2, 3), b, constants=[1])
    assert e.value.code == "input" and "masked" in e.value.message, e.value


def test_a_contract_expression_constant_array_still_works():
    b = np.arange(12.0).reshape(3, 4)
    expr = tl.contract_expression("ij,jk->ik", (2, 3), b, constants=[1])
    assert np.allclose(expr(np.ones((2, 3))), np.ones((2, 3)) @ b)


M33 = "in var A : [3 3] where {}\nout var C : [3 3]\nC = A * 2\n"


@pytest.mark.parametrize("condition", ["i2 = 4", "i2 - 3 = 1", "1 = i2 - 3", "2 * i2 = 3", "i1 + 0 = 0", "-i2 = 1",
                                       "i1 = 4, i1 = i2"])
def test_a_fixed_position_outside_its_dimension_is_refused_however_written(condition):
    with pytest.raises(TensorLangError) as e:
        tl.check(M33.format(condition))
    assert e.value.code == "structure" and "dimension" in e.value.message, e.value


@pytest.mark.parametrize("condition", ["i2 = 3", "i2 - 2 = 1", "2 * i2 = 4", "i2 >= 3", "i2 < 2", "i1 = i2 + 5",
                                       "i1 + i2 = 2", "i2 > 3", "i2 < 1", "-i2 >= 0"])
def test_a_condition_that_holds_somewhere_or_an_inequality_is_kept(condition):  # (an empty inequality: all zeros)
    k = tl.compile(M33.format(condition), backend="numpy", check_structure=True)
    assert k(A=np.zeros((3, 3)))["C"].sum() == 0.0


def test_a_symbolic_extent_bounds_a_fixed_position_only_from_below():
    tl.check("in var A : [n n] where i2 = 7\nout var C : [n n]\nC = A\n")
    with pytest.raises(TensorLangError):
        tl.check("in var A : [n n] where i2 + 1 = 1\nout var C : [n n]\nC = A\n")


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_a_huge_reduction_over_an_unused_index_computes_on_the_compiled_targets(backend):
    k = tl.compile("in var x : [3]\nout var y : [3]\ny[i] = sum(k:1099511627776) x[i]\n", backend=backend)
    assert k(x=np.ones(3))["y"].tolist() == [2.0 ** 40] * 3


def test_a_huge_reduction_over_an_unused_index_is_refused_by_the_reference_before_it_starts():
    k = tl.compile("in var x : [3]\nout var y : [3]\ny[i] = sum(k:1099511627776) x[i]\n", backend="interp")
    with pytest.raises(TensorLangError) as e:
        k(x=np.ones(3))
    assert e.value.code == "too-large", e.value


@pytest.mark.parametrize("kind, text", [("uchar", "300"), ("uchar", "-1"), ("signed char", "128"), ("short", "70000"),
                                        ("uint", "4294967296"), ("int", "-2147483649")])
def test_a_text_nrrd_sample_outside_its_integer_type_is_refused_not_wrapped(tmp_path, kind, text):
    """numpy's text reader wrapped 300 to 44 in a uchar image (and 70000 to 4464 in a short one)."""
    path = tmp_path / "a.nrrd"
    path.write_text(f"NRRD0004\ntype: {kind}\ndimension: 2\nsizes: 2 2\nencoding: ascii\n\n1 2 3 {text}\n")
    with pytest.raises(TensorLangError) as e:
        tl.field(str(path), "tent")
    assert e.value.code == "input" and text in e.value.message, e.value


def test_a_text_nrrd_of_integers_within_their_type_reads_as_written(tmp_path):
    path = tmp_path / "a.nrrd"
    path.write_text("NRRD0004\ntype: uchar\ndimension: 2\nsizes: 2 2\nencoding: text\n\n0 255 7 9\n")
    assert tl.image(str(path)).data.tolist() == [[0.0, 7.0], [255.0, 9.0]]
    path.write_text("NRRD0004\ntype: float\ndimension: 1\nsizes: 2\nencoding: ascii\n\n1.5 -2.25\n")
    assert tl.image(str(path)).data.tolist() == [1.5, -2.25]


@pytest.mark.parametrize("chunks", [0, -1, True, 2.5, "x", (0, 6), (2, 2)])
@pytest.mark.parametrize("given", ["dask", "numpy"])
def test_dask_chunks_are_checked_whether_the_input_is_a_dask_or_a_numpy_array(chunks, given):
    """A dask input keeps its own chunks; ``chunks=0`` beside one was silently ignored."""
    da = pytest.importorskip("dask.array")
    k = tl.compile("in var X : [N p]\nout var C : [p p]\nC[i,j] = sum(r) X[r,i] * X[r,j]\n", backend="numpy")
    x = np.arange(12.0).reshape(6, 2)
    with pytest.raises(TensorLangError) as e:
        k.dask(X=da.from_array(x, chunks=(2, 2)) if given == "dask" else x, batch="N", chunks=chunks)
    assert e.value.code == "input" and "chunks" in e.value.message, e.value
    assert np.allclose(k.dask(X=da.from_array(x, chunks=(2, 2)), batch="N", chunks=3)["C"].compute(), x.T @ x)


STUR_DIV = "y(i) := x(j) * (j = {})\ny:D(i) := (0 <= i < 6)\nx:D(j) := (0 <= j < 6)\n"


@pytest.mark.parametrize("quotient, expected", [
    ("6 / i", [0.0, 0.0, 4.0, 3.0, 2.0, 2.0]),      # i = 0 divides by zero: no j there (was x(0) = 1)
    ("i / 0", [0.0] * 6),                           # (was x(0) at every i)
    ("i / (i - 2) + 1", [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]),
    ("(-(i / 0)) + 1", [0.0] * 6),
])
def test_a_stur_condition_through_a_zero_divisor_holds_nowhere(quotient, expected):
    """C's division by zero has no value (the tool's generated loop traps): the reference
    gave it 0, so ``(j = 6 / i)`` held at i = 0, j = 0."""
    k = tl.compile(STUR_DIV.format(quotient), lang="stur", backend="interp")
    assert k(x=np.arange(1.0, 7.0))["y"].tolist() == expected


def test_a_dask_input_given_in_inputs_and_by_keyword_is_refused():
    """``k.dask({"X": x}, X=5 * x)`` ran on the keyword's array, silently."""
    pytest.importorskip("dask.array")
    k = tl.compile("in var X : [N p]\nout var Z : [N p]\nZ = X * 2\n", backend="numpy")
    x = np.ones((2, 2))
    with pytest.raises(TensorLangError) as e:
        k.dask({"X": x}, X=5 * x, batch="N")
    assert e.value.code == "input" and "twice" in e.value.message, e.value
    assert k.dask({"X": x}, batch="N")["Z"].compute().tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_analyze_plot_without_sizes_is_refused_before_the_report(tmp_path, capsys):
    """``analyze p.tl --plot x.png`` printed the whole report, then error[input] (exit 1)."""
    from tensorlang.cli import main

    (tmp_path / "p.tl").write_text("in var A : [n n]\nout var C : [n n]\nC = A * 2\n")
    assert main(["analyze", str(tmp_path / "p.tl"), "--plot", str(tmp_path / "x.png")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "error[input]" in err and "--param" in err
    assert not (tmp_path / "x.png").exists()


def test_a_stur_redundancy_target_through_a_zero_divisor_copies_nothing():
    """S:R's target ``j / (i - 1)`` at i = 1 divided by zero and copied S(0, 1) into S(1, 0)."""
    program = ("y(i, j) := S(i, j)\ny:D(i, j) := (0 <= i < 3) * (0 <= j < 3)\nS:D(i, j) := (0 <= i < 3) * (0 <= j < 3)\n"
               "S:U(i, j) := (0 <= i <= j < 3)\nS:R(i, j, ip, jp) := (i > j) * (ip = j / (i - 1)) * (jp = i)\n")
    k = tl.compile(program, lang="stur", backend="interp", check_structure=True)
    s = np.array([[1.0, 2, 3], [2, 4, 5], [3, 5, 6]])
    with pytest.raises(TensorLangError) as e:
        k(S=s)  # S(1, 0) is no copy (its target divides by zero) and outside the unique set: it must be 0
    assert e.value.code == "structure" and "S(1, 0)" in e.value.message, e.value
    s[1, 0] = 0.0
    assert k(S=s)["y"].tolist() == s.tolist()


@pytest.mark.parametrize("options", [{"slack": float("nan")}, {"slack": -1.0}, {"slack": True}, {"slack": "32"},
                                     {"slack": None}, {"fused": "no"}, {"fused": None}])
def test_assert_matches_reference_refuses_a_slack_or_fused_that_is_no_such_value(options):
    """``slack=nan`` accepted every wrong result (no comparison with NaN is true); ``slack=-1`` refused
    every right one; ``slack="32"`` was a bare TypeError; ``fused="no"`` counted as true."""
    with pytest.raises(TensorLangError) as e:
        tl.testing.assert_matches_reference(UNARY, {"A": np.arange(3.0)}, np.array([0.0, 2.0, 99.0]), **options)
    assert e.value.code == "input", e.value


def test_assert_matches_reference_with_infinite_slack_still_checks_undefined_entries():
    tl.testing.assert_matches_reference(UNARY, {"A": np.arange(3.0)}, np.array([0.0, 2.0, 99.0]), slack=float("inf"))
    tl.testing.assert_matches_reference(UNARY, {"A": np.arange(3.0)}, np.array([0.0, 2.0, 99.0]), slack=10**400)
    with pytest.raises(AssertionError):
        tl.testing.assert_matches_reference(UNARY, {"A": np.arange(3.0)}, np.array([0.0, 2.0, np.nan]),
                                            slack=float("inf"))


def test_a_dask_run_chunks_a_dimension_an_inequality_bounds():
    """An inequality may hold nowhere in a chunk: the Dask run checks each chunk's program at its own extent."""
    pytest.importorskip("dask")
    k = tl.compile("in var X : [N p] where i1 > 3\nout var Z : [N p]\nZ = X * 2\n", backend="numpy")
    x = np.ones((6, 2))
    x[:3] = 0
    got = np.asarray(k.dask(X=x, batch="N", chunks=2)["Z"])
    assert np.array_equal(got, 2 * x)


def test_contract_expression_takes_a_numpy_scalar_constant_and_positions_as_an_integer_array():
    expr = tl.contract_expression("ij,->ij", (2, 3), np.float64(2.0), constants=[1])
    assert np.array_equal(expr(np.ones((2, 3))), np.full((2, 3), 2.0))
    expr = tl.contract_expression("ij,jk->ik", (2, 3), np.ones((3, 4)), constants=np.array([1]))
    assert np.array_equal(expr(np.ones((2, 3))), np.full((2, 4), 3.0))


def test_a_restricted_target_whose_buffer_holds_a_temporary_it_reads_is_not_zeroed_first():
    """Hypothesis found it (tests/structure/test_property5_generated.py): t0 lives in t1's buffer, and the
    restriction to w0's support (i1 = 1) zeroed t1 before the statement read t0 from it: C gave [0, 0]."""
    text = ("in var w0 : [2 2 2] where i1 = 1\nin var w1 : [2]\nin var w2 : [2]\nin var w3 : [2]\nvar t0 : [2]\n"
            "out var t1 : [2]\nt0[i] = w1[i] + w2[i]\nt1[j] = sum(r,l) w0[j,j,r] * t0[j] * t0[j] * w3[l]\n")
    rng = np.random.default_rng(1)
    w0 = rng.uniform(-3, 3, (2, 2, 2))
    w0[1] = 0
    inputs = {"w0": w0, "w1": rng.uniform(-3, 3, 2), "w2": rng.uniform(-3, 3, 2), "w3": rng.uniform(-3, 3, 2)}
    want = tl.compile(text, backend="interp")(**inputs)["t1"]
    try:
        got = tl.compile(text, backend="c")(**inputs)["t1"]
    except TensorLangError as exc:
        pytest.skip(str(exc))
    assert want[0] != 0 and np.allclose(got, want, rtol=1e-12)
