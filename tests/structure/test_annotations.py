"""Structure annotations on model-language declarations (SPEC §4): parsing and printing,
the t-structure rule, EIN declarations that carry the structure, and the run-time check
of an input's promise (``check_structure=True``, ``--check-structure``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang import lang
from tensorlang.errors import Source, TensorLangError

ANNOTATIONS = {
    # annotation: (shape, a numpy predicate over 0-based position grids for the unique set, symmetric?)
    "symmetric": ((3, 3), lambda i, j: i <= j, True),
    "diagonal": ((3, 3), lambda i, j: i == j, False),
    "upper": ((3, 4), lambda i, j: i <= j, False),
    "lower": ((4, 3), lambda i, j: i >= j, False),
    "zero": ((2, 3), lambda i, j: np.zeros(np.broadcast(i, j).shape, bool), False),
    "row(2)": ((3, 3), lambda i, j: np.broadcast_to(i == 1, np.broadcast(i, j).shape), False),
    "col(1)": ((3, 2), lambda i, j: np.broadcast_to(j == 0, np.broadcast(i, j).shape), False),
    "where i1 = i2": ((3, 3), lambda i, j: i == j, False),
    "where i2 = 2, i1 <= 2": ((3, 3), lambda i, j: (j == 1) & (i <= 1), False),
    "where i1 + 1 >= i2": ((4, 4), lambda i, j: i + 1 >= j, False),
}


def _program(annotation: str, shape) -> str:
    dims = " ".join(map(str, shape))
    return f"in var A : [{dims}] {annotation}\nout var B : [{dims}]\nB = A * 2\n"


def _keeping(annotation: str, values: np.ndarray) -> np.ndarray:
    """``values`` made to keep the annotation's promise."""
    shape, unique, symmetric = ANNOTATIONS[annotation]
    i, j = np.indices(shape)
    if symmetric:
        return np.where(i <= j, values, values.T)
    return np.where(unique(i, j), values, 0.0)


@pytest.mark.parametrize("annotation", sorted(ANNOTATIONS))
def test_annotation_round_trips_through_the_printer(annotation):
    shape = ANNOTATIONS[annotation][0]
    text = _program(annotation, shape)
    program = lang.parse(Source(text, "<t>"), "tl")
    printed = lang.get("tl").print(program)
    assert printed.splitlines()[0].startswith(f"in var A : [{' '.join(map(str, shape))}] ")
    again = lang.parse(Source(printed, "<t>"), "tl")
    assert lang.get("tl").print(again) == printed
    assert again.decls[0].structure is not None


@pytest.mark.parametrize("annotation", sorted(ANNOTATIONS))
def test_ein_declarations_carry_the_structure(annotation):
    shape, unique, symmetric = ANNOTATIONS[annotation]
    k = tl.compile(_program(annotation, shape), backend="numpy")
    structure = k.ein.decls[0].structure
    assert structure is not None and structure.symmetric == symmetric
    i, j = np.indices(shape)
    assert np.array_equal(structure.unique_mask(shape), unique(i, j))


def test_structure_words_stay_names_elsewhere():
    text = "var upper : [3]\nvar row : [3]\nvar where : [3]\nupper = row + where\nlower = upper\n"
    with pytest.raises(TensorLangError) as info:  # lower is undeclared: a name, not a keyword
        tl.check(text)
    assert info.value.code == "undeclared-assign"
    assert tl.check("var upper : [3]\nvar row : [3] zero\nupper = row\n").context.shapes["row"] == (3,)


BAD = {
    "symmetric needs equal extents": "var A : [3 4] symmetric",
    "symmetric needs a matrix or more": "var A : [3] symmetric",
    "diagonal on a vector": "var A : [3] diagonal",
    "upper on a cube": "var A : [2 2 2] upper",
    "row outside": "var A : [3 3] row(4)",
    "col zero": "var A : [3 3] col(0)",
    "unknown position name": "var A : [3 3] where i3 = 1",
    "fixed position outside": "var A : [3 3] where i2 = 7",
    "index variable not a position": "var A : [3 3] where k <= i1",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_annotations_that_do_not_fit_the_shape_are_structure_errors(case):
    with pytest.raises(TensorLangError) as info:
        tl.check(BAD[case] + "\nA = A\n")
    assert info.value.code == "structure"
    assert info.value.line == 1


def test_symbolic_shapes_are_checked_when_bound():
    checked = tl.check("in var A : [n n] symmetric\nout var B : [n n]\nB = A\n")
    assert checked.context.shapes["A"] == checked.context.shapes["B"]
    k = tl.compile("in var A : [n n] symmetric\nout var B : [n n]\nB = A\n", backend="numpy", check_structure=True)
    with pytest.raises(TensorLangError) as info:
        k(A=np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert info.value.code == "structure"


_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5])
_VALUES = st.one_of(st.floats(-1e6, 1e6, allow_nan=False), _SPECIAL)


@settings(max_examples=60)
@given(st.sampled_from(sorted(ANNOTATIONS)), st.data())
def test_inputs_keeping_their_promise_pass_and_one_broken_entry_is_found(annotation, data):
    shape, unique, symmetric = ANNOTATIONS[annotation]
    raw = np.array(data.draw(st.lists(_VALUES, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))).reshape(shape)
    a = _keeping(annotation, raw)
    k = _kernel(annotation)
    got = k(A=a)["B"]
    ref = tl.compile(_program(annotation, shape), backend="interp")(A=a)["B"]
    assert np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[~np.isnan(got)], ref[~np.isnan(ref)])
    i, j = np.indices(shape)
    outside = np.argwhere(~unique(i, j))
    if len(outside):
        pick = tuple(outside[data.draw(st.integers(0, len(outside) - 1))])
        broken = a.copy()
        broken[pick] = 12345.0
        with pytest.raises(TensorLangError) as info:
            k(A=broken)
        assert info.value.code == "structure"
        first = tuple(int(p) for p in np.argwhere((broken != a) & ~(np.isnan(broken) & np.isnan(a)))[0])
        assert f"A[{first[0] + 1},{first[1] + 1}]" in str(info.value)


_KERNELS: dict = {}


def _kernel(annotation):
    if annotation not in _KERNELS:
        shape = ANNOTATIONS[annotation][0]
        _KERNELS[annotation] = tl.compile(_program(annotation, shape), backend="numpy", check_structure=True)
    return _KERNELS[annotation]


def test_generalized_symmetric_cube():
    f = np.random.default_rng(0).standard_normal(4)
    cube = np.einsum("i,j,k->ijk", f, f, f)  # symmetric up to rounding: it keeps its promise
    k = tl.compile("in var T : [4 4 4] symmetric\nin var u : [4]\nout var v : [4]\nv[i] = sum(j,k) T[i,j,k]*u[j]*u[k]\n",
                   backend="numpy", check_structure=True)
    assert np.allclose(k(T=cube, u=f)["v"], np.einsum("ijk,j,k->i", cube, f, f))
    cube[0, 2, 1] += 1.0
    with pytest.raises(TensorLangError) as info:
        k(T=cube, u=f)
    assert "T[1,3,2]" in str(info.value)


def test_cli_check_structure(tmp_path, capsys):
    from tensorlang.cli import main
    program = tmp_path / "p.tl"
    program.write_text(_program("upper", (2, 2)))
    np.save(tmp_path / "a.npy", np.array([[1.0, 2.0], [3.0, 4.0]]))
    args = ["run", str(program), "--input", f"A={tmp_path / 'a.npy'}", "--backend", "numpy"]
    assert main(args + ["-q", "--output", str(tmp_path / "o.npz")]) == 0
    assert main(args + ["--check-structure"]) == 1
    err = capsys.readouterr().err
    assert "error[structure]" in err and "A[2,1]" in err
