"""Issue 41, classes 2, 3, 5 and 7 on the surfaces added since the first hostile corpus:
fields and their image files, Dask's chunking options, padding, einsum's sublists and
0-d operands, and errors that cross a process boundary.

Each test is a family: every bad value of its kind is refused with a TensorLangError of
the stated code (never a traceback of another type, never a hang), and the good values
beside them still work.
"""

from __future__ import annotations

import copy
import gzip
import importlib
import multiprocessing
import os
import pickle

import numpy as np
import pytest

import tensorlang as tl
from fuzz import oracle
from tensorlang.errors import CODES, Diagnostic, KernelFailed, Source, Span
from tensorlang.fields import api as fields_api
from tensorlang.lang.einsum.subscripts import EinsumError, EinsumTypeError

fields_image = importlib.import_module("tensorlang.sampling.image")  # (tl.fields.image is the function)


def refused(code: str, fn, *args, **kwargs) -> tl.TensorLangError:
    with oracle.no_hang(getattr(fn, "__name__", "call")):
        with pytest.raises(tl.TensorLangError) as caught:
            fn(*args, **kwargs)
    oracle.assert_clean(caught.value)
    assert caught.value.code == code, caught.value.render()
    return caught.value


# ------------------------------------------------------------------ class 5: errors travel
def _errors():
    source = Source("in var a : [2]\nout var b : [2]\nb = a + c\n", "prog.tl")
    found = [tl.TensorLangError(code, f"a {code} problem") for code in sorted(CODES)]
    found.append(tl.TensorLangError("undeclared", "c is not declared", Span(3, 9, 3, 10), "t-var", source))
    found.append(tl.TensorLangError("shape", "two", diagnostics=[Diagnostic("shape", "one", Span(1, 1, 1, 2)),
                                                                 Diagnostic("syntax", "two", None, "r")]))
    found.append(EinsumError("einsum: bad subscripts"))
    found.append(EinsumTypeError("einsum: a float subscript"))
    found.append(KernelFailed("backend", "the kernel returned 3"))
    return found


@pytest.mark.parametrize("err", _errors(), ids=lambda e: f"{type(e).__name__}-{e.code}")
@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_an_error_pickles_and_copies_whole(err, how):
    again = {"pickle": lambda e: pickle.loads(pickle.dumps(e)), "copy": copy.copy, "deepcopy": copy.deepcopy}[how](err)
    assert type(again) is type(err)
    assert (again.code, again.message, again.rule, again.span, again.line, again.col, again.filename) == \
           (err.code, err.message, err.rule, err.span, err.line, err.col, err.filename)
    assert again.diagnostics == err.diagnostics
    assert str(again) == str(err) and again.args == err.args
    assert isinstance(again, ValueError) == isinstance(err, ValueError)
    assert isinstance(again, TypeError) == isinstance(err, TypeError)


def _check_in_child(text: str) -> None:
    tl.check(text)


@pytest.mark.slow
def test_an_error_raised_in_a_child_process_arrives_as_itself():
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        with pytest.raises(tl.TensorLangError) as caught:
            pool.apply(_check_in_child, ("in var a : [2]\nout var b : [2]\nb = a + c\n",))
    assert caught.value.code == "undeclared" and caught.value.line == 3
    assert "b = a + c" in caught.value.render()


# ------------------------------------------------------------------ class 2: fields
IMAGE = np.linspace(0.0, 1.0, 64).reshape(8, 8)

BAD_DATA = {
    "object": np.array([[1, 2], [3, 4]], dtype=object),
    "complex": IMAGE * (1 + 1j),
    "strings": np.array([["a", "b"], ["c", "d"]]),
    "datetime": np.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]"),
    "timedelta": np.arange(4).astype("timedelta64[s]"),
    "structured": np.zeros(4, dtype=[("x", "f8"), ("y", "f8")]),
    "ragged": [[1.0, 2.0], [3.0]],
    "none": None,
    "dict": {"a": 1},
}


@pytest.mark.parametrize("kind", sorted(BAD_DATA))
def test_an_image_of_anything_but_real_numbers_is_refused(kind):
    refused("input", tl.fields.field, BAD_DATA[kind], "tent")
    refused("input", fields_image.image, BAD_DATA[kind])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float32, np.float64])
def test_an_image_of_real_numbers_is_taken(dtype):
    f = tl.fields.field(np.ones((6, 6), dtype), "tent")
    assert f.probe(np.array([[2.5, 2.5]]))[0] == pytest.approx(1.0)


BAD_POINTS = {
    "complex": np.array([[2 + 1j, 3.0]]), "complex list": [[2 + 1j, 3]], "object": np.array([[2, 3]], dtype=object),
    "strings": [["2", "3"]], "datetime": np.array([["2020-01-01", "2020-01-02"]], dtype="datetime64[D]"),
    "ragged": [[2.0, 3.0], [1.0]], "none": None,
}


@pytest.mark.parametrize("kind", sorted(BAD_POINTS))
def test_probe_points_of_anything_but_real_numbers_are_refused(kind):
    f = tl.fields.field(IMAGE, "tent")
    refused("input", f.probe, BAD_POINTS[kind])
    refused("input", fields_api.inside, f, BAD_POINTS[kind])


@pytest.mark.parametrize("other", [None, "abc", 1j, np.array([1j]), object(), {"a": 1}, [[1.0], [2.0, 3.0]]],
                         ids=lambda v: type(v).__name__ if type(v) is object else repr(v))  # stable ids: xdist workers compare them
@pytest.mark.parametrize("op", ["+", "-", "*", "r+", "r*"])
def test_a_field_meets_only_numbers_and_fields(other, op):
    f = tl.fields.field(IMAGE, "tent")
    fn = {"+": lambda: f + other, "-": lambda: f - other, "*": lambda: f * other,
          "r+": lambda: other + f, "r*": lambda: other * f}[op]
    refused("shape", fn)


@pytest.mark.parametrize("n", [-2, 0, 2.5, True, "3", None, 10**6])
def test_identity_takes_a_positive_integer_size(n):
    refused("input", fields_api.identity, n)


@pytest.mark.parametrize("dim", [0, 4, True, 2.0])
def test_identity_takes_a_dimension_of_one_to_three(dim):
    refused("input", fields_api.identity, 3, dim)


def test_identity_is_the_identity():
    assert fields_api.identity(3, 2).shape == (3, 3)


BAD_WORLDS = [
    {"spacing": [1.0, 2.0, 3.0]}, {"spacing": []}, {"spacing": "ab"}, {"spacing": [[1.0, 2.0]]},
    {"origin": [1.0, 2.0, 3.0]}, {"origin": ["a", "b"]}, {"origin": 1j},
    {"directions": "ab"}, {"directions": [["a", "b"], ["c", "d"]]}, {"directions": [[1.0, 0.0, 0.0]]},
    {"directions": np.eye(2) * 1j}, {"spacing": [0.0, 1.0]}, {"spacing": [np.nan, 1.0]}, {"origin": [np.inf, 0]},
    {"scale": 2}, "abc", [[1, 2], [3]], np.eye(2, dtype=complex), np.zeros((2, 2)), np.eye(4), None if False else 7,
]


@pytest.mark.parametrize("world", BAD_WORLDS, ids=lambda w: repr(w)[:40])
def test_a_world_transform_that_is_no_affine_map_of_this_dimension_is_refused(world):
    refused("input", tl.fields.field, IMAGE, "tent", world=world)


@pytest.mark.parametrize("world", [{"spacing": 2.0}, {"spacing": [1.0, 2.0], "origin": [0.5, -1]}, np.eye(2) * 3,
                                   {"directions": [[0, 1], [1, 0]]}, np.eye(3)], ids=repr)
def test_a_world_transform_of_the_right_shape_is_taken(world):
    assert tl.fields.field(IMAGE, "tent", world=world).dim == 2


# ------------------------------------------------------------------ class 3: image files
def _npy_with_header(path, shape, descr="<f8"):
    """A .npy file whose header claims ``shape`` but holds 16 bytes of data."""
    header = {"descr": descr, "fortran_order": False, "shape": tuple(shape)}
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, header)
        fh.write(b"\0" * 16)


@pytest.mark.parametrize("shape", [(10**10,), (10**5, 10**5), (2**40, 2**40), (10**18,)])
def test_an_npy_header_that_claims_too_many_samples_is_refused_before_reading(tmp_path, shape):
    path = tmp_path / "big.npy"
    _npy_with_header(path, shape)
    refused("too-large", tl.fields.field, path, "tent")


@pytest.mark.parametrize("values", [IMAGE * 1j, np.array(["2020-01-01"] * 4, dtype="datetime64[D]"),
                                    np.arange(4).astype("timedelta64[s]"), np.array(["ab", "cd"]),
                                    np.zeros(4, dtype=[("x", "f8")])], ids=lambda v: str(v.dtype))
def test_an_npy_image_that_is_not_real_numbers_is_refused(tmp_path, values):
    np.save(tmp_path / "x.npy", values)
    refused("input", tl.fields.field, tmp_path / "x.npy", "tent")


def test_an_npy_image_with_objects_or_a_bad_header_is_refused(tmp_path):
    np.save(tmp_path / "o.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    refused("input", tl.fields.field, tmp_path / "o.npy", "tent")
    (tmp_path / "e.npy").write_bytes(b"")
    refused("input", tl.fields.field, tmp_path / "e.npy", "tent")
    (tmp_path / "g.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    refused("input", tl.fields.field, tmp_path / "g.npy", "tent")
    _npy_with_header(tmp_path / "short.npy", (100,))
    refused("input", tl.fields.field, tmp_path / "short.npy", "tent")


def _nrrd(path, lines: list[str], payload: bytes = b"") -> None:
    path.write_bytes(("NRRD0004\n" + "\n".join(lines) + "\n\n").encode() + payload)


GOOD = ["type: double", "dimension: 2", "sizes: 2 2", "encoding: raw", "endian: little"]
DATA = np.arange(4.0).tobytes()

BAD_NRRD = {
    "empty": (None, b""),
    "magic only": (None, b"NRRD0004\n"),
    "no magic": (None, b"P6\n3 3\n255\n"),
    "binary junk": (None, bytes(range(256)) * 4),
    "bad gzip": (["type: double", "dimension: 2", "sizes: 2 2", "encoding: gzip", "endian: little"], b"not gzip"),
    "truncated gzip": (["type: double", "dimension: 2", "sizes: 2 2", "encoding: gzip", "endian: little"],
                       gzip.compress(DATA)[:12]),
    "gzip of too little": (["type: double", "dimension: 2", "sizes: 2 2", "encoding: gzip", "endian: little"],
                           gzip.compress(DATA[:8])),
    "kinds count": (GOOD + ["kinds: domain domain domain"], DATA),
    "kinds one": (GOOD + ["kinds: domain"], DATA),
    "sizes count": (["type: double", "dimension: 3", "sizes: 2 2", "encoding: raw", "endian: little"], DATA),
    "zero size": (["type: double", "dimension: 2", "sizes: 0 2", "encoding: raw", "endian: little"], DATA),
    "negative size": (["type: double", "dimension: 2", "sizes: -2 2", "encoding: raw", "endian: little"], DATA),
    "no sizes": (["type: double", "dimension: 2", "encoding: raw"], DATA),
    "no type": (["dimension: 2", "sizes: 2 2", "encoding: raw"], DATA),
    "bad type": (["type: quaternion", "dimension: 2", "sizes: 2 2", "encoding: raw"], DATA),
    "bad encoding": (["type: double", "dimension: 2", "sizes: 2 2", "encoding: zstd", "endian: little"], DATA),
    "huge line skip": (GOOD + ["line skip: 1000000000000000000"], DATA),
    "negative line skip": (GOOD + ["line skip: -5"], DATA),
    "huge byte skip": (GOOD + ["byte skip: 1000000000000000000"], DATA),
    "short data": (GOOD, DATA[:8]),
    "duplicate field": (GOOD + ["type: float"], DATA),
    "bad space directions": (GOOD + ["space dimension: 2", "space directions: (1,0) (0,a)"], DATA),
    "missing data file": (GOOD + ["data file: nowhere.raw"], b""),
    "data file list": (GOOD + ["data file: LIST"], b""),
    "bad kind": (GOOD + ["kinds: domain RGBA-color"], DATA),
    "no field separator": (GOOD + ["this line has no colon"], DATA),
}

#: Words of Python's or pynrrd's internals that a refusal of a file must not show.
INTERNALS = ("KeyError", "ValueError", "TypeError", "IndexError", "NRRDError", "unpack", "invalid literal",
             "world matrix", "Traceback")


@pytest.mark.parametrize("case", sorted(BAD_NRRD))
def test_a_malformed_nrrd_file_is_refused(tmp_path, case):
    lines, payload = BAD_NRRD[case]
    path = tmp_path / "x.nrrd"
    if lines is None:
        path.write_bytes(payload)
    else:
        _nrrd(path, lines, payload)
    e = refused("input", tl.fields.field, path, "tent")
    assert str(path) in e.message and not any(word in e.message for word in INTERNALS), e.message


@pytest.mark.parametrize("sizes", ["100000 100000", "1000000000000000000 1", "4294967296 4294967296 4294967296"])
def test_an_nrrd_header_that_claims_too_many_samples_is_refused(tmp_path, sizes):
    path = tmp_path / "x.nrrd"
    _nrrd(path, ["type: double", f"dimension: {len(sizes.split())}", f"sizes: {sizes}", "encoding: raw",
                 "endian: little"], DATA)
    refused("too-large", tl.fields.field, path, "tent")


def test_an_nrrd_header_without_end_is_refused(tmp_path):
    path = tmp_path / "x.nrrd"
    path.write_bytes(b"NRRD0004\n" + b"# comment\n" * (fields_image.MAX_HEADER_BYTES // 10 + 10))
    refused("input", tl.fields.field, path, "tent")


def test_a_good_nrrd_file_still_loads_with_skips(tmp_path):
    path = tmp_path / "x.nrrd"
    _nrrd(path, GOOD + ["line skip: 1", "byte skip: 2"], b"junk line\n--" + DATA)
    f = tl.fields.field(path, "tent")
    assert f.dim == 2 and f.probe(np.array([[0.0, 0.0]]))[0] == pytest.approx(0.0)
    gz = tmp_path / "g.nrrd"
    _nrrd(gz, ["type: double", "dimension: 2", "sizes: 2 2", "encoding: gzip", "endian: little"], gzip.compress(DATA))
    assert tl.fields.field(gz, "tent").dim == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["x.nrrd", "x.nhdr", "x.npy"])
def test_a_fifo_or_a_directory_is_no_image_file(tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    refused("input", tl.fields.field, fifo, "tent")
    folder = tmp_path / "d" / name
    folder.mkdir(parents=True)
    refused("input", tl.fields.field, folder, "tent")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_detached_header_whose_data_file_is_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "data.raw")
    _nrrd(tmp_path / "x.nhdr", GOOD + ["data file: data.raw"])
    refused("input", tl.fields.field, tmp_path / "x.nhdr", "tent")


# ------------------------------------------------------------------ class 1/2: Dask's options
dask = pytest.importorskip("dask")

SUMS = "in var X : [N 3]\nout var s : [3]\ns[i] = sum(r) X[r,i]\n"


@pytest.fixture(scope="module")
def summing():
    return tl.compile(SUMS, backend="numpy")


@pytest.mark.parametrize("split_every", [1, 0, -1, 2.5, "8", True, None, float("nan"), [2]], ids=repr)
def test_split_every_is_an_integer_of_at_least_two(summing, split_every):
    refused("input", summing.dask, X=np.ones((10, 3)), chunks=2, split_every=split_every)


@pytest.mark.parametrize("chunks", [0, -3, 2.5, "abc", float("nan"), (3, 3), (5, 6), (), (10, 0), (5.0, 5.0),
                                    (True,) * 10, [[5, 5]]], ids=repr)
def test_chunks_are_positive_lengths_that_add_up(summing, chunks):
    refused("input", summing.dask, X=np.ones((10, 3)), chunks=chunks)


@pytest.mark.parametrize("chunks", ["auto", 3, 10, 100, (5, 5), [1] * 10, np.int64(4)], ids=repr)
@pytest.mark.parametrize("split_every", [2, 3, np.int64(8)])
def test_good_chunks_and_split_every_give_the_sum(summing, chunks, split_every):
    X = np.arange(30.0).reshape(10, 3)
    with oracle.no_hang("dask"):
        got = summing.dask(X=X, chunks=chunks, split_every=split_every)["s"].compute(scheduler="sync")
    assert np.allclose(got, X.sum(axis=0))


# ------------------------------------------------------------------ class 2: padding
PROGRAM = "in var a : [3]\nout var b : [3]\nb = a * 2\n"


@pytest.mark.parametrize("pad", [2**63, 2**62, 2**13, 2**40, 3, 0, -4, 2.0, True, "8"], ids=repr)
def test_pad_is_a_power_of_two_up_to_the_limit(pad):
    refused("input", tl.compile, PROGRAM, backend="numpy", pad=pad)
    refused("input", tl.padded_empty, (3,), pad)


@pytest.mark.parametrize("shape", [(2**62,), (2**40, 2**40), (2**31, 2**31, 4), (10**18,)], ids=repr)
@pytest.mark.parametrize("pad", [1, 4, 4096])
def test_padded_empty_of_an_absurd_size_is_too_large(shape, pad):
    refused("too-large", tl.padded_empty, shape, pad)


def test_the_largest_pad_still_works():
    from tensorlang.schedule.padding import MAX_PAD
    assert tl.padded_empty((5, 3), MAX_PAD).shape == (5, 3)


# ------------------------------------------------------------------ class 2/7: einsum
A = np.arange(4.0).reshape(2, 2)


@pytest.mark.parametrize("sub", [[0.0, 1.0], [True, False], [np.float64(0), 1], ["a", 1], [np.bool_(True), 1],
                                 [0, 1.5], [None, 1]], ids=repr)
def test_a_sublist_subscript_that_is_no_integer_is_a_type_error_as_numpy_says(sub):
    with pytest.raises(TypeError):
        np.einsum(A, sub, A, [1, 2])
    for call in (lambda: tl.einsum(A, sub, A, [1, 2]), lambda: tl.einsum(A, [0, 1], A, [1, 2], sub)):
        with pytest.raises(TypeError) as caught:
            call()
        assert isinstance(caught.value, tl.TensorLangError) and caught.value.code == "input"


def test_integer_sublists_of_numpy_integers_still_work():
    assert np.array_equal(tl.einsum(A, [np.int64(0), 1], A, [1, np.int32(2)]), A @ A)


@pytest.mark.parametrize("constants", [[True], [False], [1.0], ["0"], [5], [-3], [None]], ids=repr)
def test_contract_expression_constants_are_operand_positions(constants):
    refused("input", tl.contract_expression, "ij,jk->ik", A, (2, 2), constants=constants)


ZERO_D = [np.float32, np.float64, np.int32, np.int64, np.bool_, float, int]


@pytest.mark.parametrize("scalar_type", ZERO_D, ids=lambda t: t.__name__)
@pytest.mark.parametrize("array_type", [np.float32, np.float64])
@pytest.mark.parametrize("subscripts", [",ij->ij", "ij,->ij", ",ij,->ij", "i,->", ",i->"])
def test_a_0d_operand_of_another_dtype_is_numpy_s_result(scalar_type, array_type, subscripts):
    terms = subscripts.split("->")[0].split(",")
    ops = [scalar_type(3) if not t else np.arange(1.0, 1.0 + 2 ** len(t)).reshape((2,) * len(t)).astype(array_type)
           for t in terms]
    want = np.einsum(subscripts, *ops)
    got = tl.einsum(subscripts, *ops)
    assert np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want)
    assert np.allclose(got, want)


def test_the_sign_of_a_cancelled_zero_is_the_one_docs_einsum_md_states():
    """docs/einsum.md: a factor pulled out of a sum scales the sum's +0, so the zero takes
    the factor's sign; numpy sums the scaled terms (+0).  Equal as numbers."""
    got = tl.einsum("i,->", np.array([1.0, -1.0]), np.float64(-1.0))
    want = np.einsum("i,->", np.array([1.0, -1.0]), np.float64(-1.0))
    assert got == want == 0.0
    assert np.signbit(got) and not np.signbit(want)
