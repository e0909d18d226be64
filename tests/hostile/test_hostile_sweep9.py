"""Issue 41, ninth sweep: hostile values on the Python surfaces (object protocols, dtypes
spelt in another byte order, empty shapes at the index limit, image paths, NRRD headers
that lie in every field), each finding fixed at its cause and covered here by its class.

* Pickling or deep-copying a compiled object (Kernel, SymbolicKernel, a built kernel, a
  Diderot StrandRun) was Python's ``TypeError: cannot pickle 'mappingproxy' object`` or
  an AttributeError about a local lambda; a ContractExpression did not pickle at all.
  The compiled ones now refuse with ArgumentError (a TypeError) saying what to send
  instead; a ContractExpression pickles as what made it.
* ``dtype=">f8"`` was kept as a big-endian dtype: ``out=`` refused a native float64
  ("must be a float64 array ..., got float64"), the interpreter returned big-endian
  results where C and numpy returned native ones; ``dtype=("f8", -1)`` was
  error[internal].  A dtype is float64 or float32 in native order, however spelt.
* ``tl.padded_empty((0, 2**62), 4)`` was error[internal] (numpy's "array is too big":
  it refuses an empty shape whose other extents overflow an index); now error[too-large].
* ``tl.image("x.nrrd")`` said "got dtype <U22"; a path is now read as ``load`` reads it.
* NRRD messages named Python's internals and gave no fix: ``KeyError: 'quaternion'`` for
  an unknown type, ``ValueError: not enough values to unpack`` for a line without a
  colon, "dimension 17 but 17 sizes", "the world matrix must be finite and affine" for a
  NaN ``space origin`` (the file wrote no matrix), an unnamed "singular" for spacings of 0.
* A ``world=`` dict with a NaN or infinite spacing, origin or direction printed numpy's
  "invalid value" warning and was refused as "the world matrix", which the caller never
  wrote; the message now names the key.
* ``tl.einsum("i,j->ij", a, a)`` of broadcast operands whose result numpy cannot
  allocate was numpy's MemoryError (the compiled path says error[too-large]): too-large.
* A Python int past int64 given for a 0-d input ran where the C caller took the call
  (as the float it is) and was "dtype object" everywhere else: it is the float it is on
  every target, and one past the float range is error[input].
* ``e * np.array(2.0)`` was refused where ``np.array(2.0) * e`` built: a 0-d array is its
  number on either side.  The builder and the fields share one ufunc table.
"""

from __future__ import annotations

import bz2
import copy
import gzip
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import ArgumentError, TensorLangError
from tensorlang.semantics.values import FUNCTIONS, UFUNC_OPERATORS

from .test_hostile_surfaces import INTERNALS, _nrrd

PROGRAM = "in var A : [3 4]\nin var B : [4 5]\nout var C : [3 5]\nC = (A # B) . [2 3]\n"
RNG = np.random.default_rng(9)
A, B = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 5))


def refused(call, code="input") -> TensorLangError:
    with pytest.raises(TensorLangError) as e:
        call()
    assert e.value.code == code, e.value
    return e.value


# ------------------------------------------------------------------ compiled objects and pickle
def _compiled():
    yield tl.compile(PROGRAM, backend="numpy")
    yield tl.compile("in var A : [n]\nout var B : [n]\nB = A * A\n", backend="numpy")
    yield tl.build({"C": tl.var("A", (2, 2)) * 2.0}, backend="numpy")
    yield tl.compile(str(Path(__file__).parents[1] / "diderot" / "programs" / "spawn.diderot"), backend="interp")


@pytest.mark.parametrize("how", [pickle.dumps, copy.deepcopy])
def test_a_compiled_object_refuses_pickling_with_a_type_error_saying_what_to_send(how):
    for obj in _compiled():
        with pytest.raises(ArgumentError) as e:
            how(obj)
        assert isinstance(e.value, TypeError) and e.value.code == "input"
        assert "cannot be pickled" in e.value.message and "program text" in e.value.message
        twin = copy.copy(obj)  # a second handle still works
        assert type(twin) is type(obj)


def test_a_shallow_copy_of_a_kernel_runs():
    k = copy.copy(tl.compile(PROGRAM, backend="numpy"))
    np.testing.assert_allclose(k(A=A, B=B)["C"], A @ B)


@pytest.mark.parametrize("constants", [None, [1]])
def test_a_contract_expression_pickles_as_what_made_it(constants):
    shapes = [(3, 4), B] if constants else [(3, 4), (4, 5)]
    expr = tl.contract_expression("ij,jk->ik", *shapes, constants=constants)
    back = pickle.loads(pickle.dumps(expr))
    args = (A,) if constants else (A, B)
    np.testing.assert_allclose(back(*args), A @ B)
    assert back.num_args == expr.num_args and copy.deepcopy(expr).num_args == expr.num_args


# ------------------------------------------------------------------ dtypes in any byte order
@pytest.mark.parametrize("spelt,native", [(">f8", np.float64), ("<f8", np.float64), ("=f4", np.float32),
                                          (np.dtype(">f4"), np.float32), ("double", np.float64)])
@pytest.mark.parametrize("backend", ["numpy", "interp"])
def test_a_dtype_in_any_byte_order_is_the_native_one(spelt, native, backend):
    k = tl.compile(PROGRAM, backend=backend, dtype=spelt)
    assert k.dtype == np.dtype(native) and k.dtype.isnative
    res = k(A=A, B=B)["C"]
    assert res.dtype == np.dtype(native)
    out = np.zeros((3, 5), native)
    k(A=A.astype(">f8"), B=B, out={"C": out})
    np.testing.assert_allclose(out, A @ B, rtol=1e-5)
    assert tl.padded_empty((3,), 4, spelt).dtype == np.dtype(native)


@pytest.mark.parametrize("dtype", [("f8", -1), ("f8", (1 << 40,)), "f8" * 500, {"names": 1}, "float16", ">i8"])
def test_a_dtype_that_is_no_float_is_an_input_error(dtype):
    e = refused(lambda: tl.compile(PROGRAM, backend="numpy", dtype=dtype))
    assert "choose float64 or float32" in e.message and len(e.message) < 200


# ------------------------------------------------------------------ empty shapes at the limit
@pytest.mark.parametrize("shape", [(0, 1 << 62), (1 << 62, 0), (0, 1 << 40, 1 << 40), (0, (1 << 63) - 1)])
@pytest.mark.parametrize("pad", [1, 4])
def test_an_empty_shape_numpy_cannot_index_is_too_large(shape, pad):
    with pytest.raises(ValueError):
        np.empty(shape)  # numpy's own refusal, which was error[internal]
    refused(lambda: tl.padded_empty(shape, pad), "too-large")


@pytest.mark.parametrize("shape", [(0,), (0, 1 << 59), (3, 0, 5)])
def test_an_empty_shape_numpy_can_make_is_made(shape):
    assert tl.padded_empty(shape, 4).shape == shape


# ------------------------------------------------------------------ image paths
def test_an_image_of_a_path_is_the_file_read(tmp_path):
    data = RNG.normal(size=(4, 5))
    np.save(tmp_path / "x.npy", data)
    _nrrd(tmp_path / "x.nrrd", ["type: double", "dimension: 2", "sizes: 5 4", "encoding: raw", "endian: little",
                                "spacings: 2 3"], data.tobytes())
    for path in (tmp_path / "x.npy", str(tmp_path / "x.npy"), bytes(tmp_path / "x.npy")):
        np.testing.assert_array_equal(tl.image(path).data, data)
    img = tl.image(tmp_path / "x.nrrd")
    np.testing.assert_array_equal(img.data, data.T)
    np.testing.assert_array_equal(np.diag(img.world)[:2], [2.0, 3.0])
    refused(lambda: tl.image(tmp_path / "x.txt"))


# ------------------------------------------------------------------ NRRD messages
GOOD = ["type: double", "dimension: 2", "sizes: 2 2", "encoding: raw", "endian: little"]
FOUR = np.arange(4.0).tobytes()
#: header lines that lie, each with a word the message must hold (what is wrong or the fix)
LYING = {
    "unknown type": (["type: quaternion", *GOOD[1:]], "write one of"),
    "block type": (["type: block", "block size: 8", *GOOD[1:]], "write one of"),
    "line without colon": (GOOD + ["garbage"], "'field: value'"),
    "dimension as a word": (["type: double", "dimension: two", *GOOD[2:]], "whole numbers"),
    "spacings as words": (GOOD + ["spacings: a b"], "'spacings'"),
    "dimension 17": (["type: double", "dimension: 17", "sizes: " + "1 " * 17, *GOOD[3:]], "1 to 16"),
    "dimension against sizes": (["type: double", "dimension: 3", *GOOD[2:]], "one size per axis"),
    "kinds count": (GOOD + ["kinds: domain"], "one per axis"),
    "nan origin": (GOOD + ["space dimension: 2", "space origin: (nan,0)"], "space origin"),
    "inf origin": (GOOD + ["space dimension: 2", "space origin: (0,inf)"], "space origin"),
    "zero spacing": (GOOD + ["spacings: 0 1"], "world="),
    "parallel directions": (GOOD + ["space dimension: 2", "space directions: (1,0) (2,0)"], "world="),
    "no space axis": (GOOD + ["kinds: vector vector"], "space axes"),
    "no magic": (None, "magic"),
    "unknown encoding": (["type: double", "dimension: 2", "sizes: 2 2", "encoding: zrl", "endian: little"], "encoding"),
}


@pytest.mark.parametrize("case", sorted(LYING))
def test_an_nrrd_header_that_lies_is_refused_saying_what_and_how(tmp_path, case):
    lines, hint = LYING[case]
    path = tmp_path / "x.nrrd"
    if lines is None:
        path.write_bytes(b"P6\n2 2\n255\n" + bytes(12))
    else:
        _nrrd(path, lines, FOUR)
    e = refused(lambda: tl.fields.load(path))
    assert str(path) in e.message and hint in e.message, e.message
    assert not any(word in e.message for word in INTERNALS), e.message


TYPES = [("int8", "i1"), ("uchar", "u1"), ("short", "i2"), ("ushort", "u2"), ("int", "i4"), ("uint32", "u4"),
         ("longlong", "i8"), ("uint64", "u8"), ("float", "f4"), ("double", "f8")]


@pytest.mark.parametrize("nrrd_type,code", TYPES)
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("encoding", ["raw", "gzip", "bzip2", "ascii"])
def test_every_sample_type_order_and_encoding_loads_its_values(tmp_path, nrrd_type, code, endian, encoding):
    values = np.arange(12)
    raw = values.astype(("<" if endian == "little" else ">") + code).tobytes()
    payload = {"raw": raw, "gzip": gzip.compress(raw), "bzip2": bz2.compress(raw),
               "ascii": " ".join(map(str, values)).encode()}[encoding]
    _nrrd(tmp_path / "x.nrrd", [f"type: {nrrd_type}", "dimension: 2", "sizes: 3 4", f"encoding: {encoding}",
                                f"endian: {endian}"], payload)
    np.testing.assert_array_equal(tl.fields.load(tmp_path / "x.nrrd").data, values.reshape(4, 3).T)


def test_ascii_nrrd_samples_keep_nan_infinities_and_the_sign_of_zero(tmp_path):
    _nrrd(tmp_path / "x.nrrd", ["type: double", "dimension: 1", "sizes: 6", "encoding: ascii"],
          b"nan inf -inf -0 0 5e-324")
    got = tl.fields.load(tmp_path / "x.nrrd").data
    np.testing.assert_array_equal(got, [np.nan, np.inf, -np.inf, 0.0, 0.0, 5e-324])
    assert list(np.signbit(got[3:5])) == [True, False]


# ------------------------------------------------------------------ builder and fields meet numpy alike
@pytest.mark.parametrize("zero_d", [np.array(2.0), np.array(3, np.int8), np.array(2.5, np.float16)])
def test_a_0d_array_is_its_number_on_either_side_of_a_builder_operator(zero_d):
    e = tl.var("A", (2, 2))
    for left, right in ((e * zero_d, zero_d * e), (e / zero_d, e / float(zero_d))):
        assert left.shape == right.shape == (2, 2)
    assert (e * zero_d).text() == f"(A * {float(zero_d)!r})"
    refused(lambda: e * np.array(True))
    refused(lambda: e * np.array([2.0]))


@pytest.mark.parametrize("name", sorted(UFUNC_OPERATORS) + sorted(set(FUNCTIONS) - {"abs"}))
def test_the_builder_and_the_fields_take_the_same_numpy_ufuncs(name):
    ufunc = getattr(np, name)
    e = tl.var("v", (3,))
    scalar = tl.field(RNG.normal(size=6), "bspln3")
    vector = tl.field(RNG.normal(size=(6, 3)), "bspln3", dim=1)
    if ufunc.nin == 1:
        built, field = ufunc(e), ufunc(scalar)
    elif name == "matmul":
        built, field = ufunc(e, e), ufunc(vector, vector)
    else:
        second = {"power": 2, "divide": 2.0}.get(name)
        built, field = ufunc(e, e if second is None else second), ufunc(scalar, scalar if second is None else second)
    assert isinstance(built, tl.builder.Expr) and isinstance(field, tl.fields.Field)


# ------------------------------------------------------------------ world= dicts that are not finite
@pytest.mark.parametrize("world,key", [({"spacing": np.nan}, "spacing"), ({"spacing": [1.0, -np.inf]}, "spacing"),
                                       ({"origin": [np.nan, 0.0]}, "origin"),
                                       ({"directions": [[np.inf, 0.0], [0.0, 1.0]]}, "directions"),
                                       ({"directions": [[1e308, 0.0], [0.0, 1.0]], "spacing": 10.0}, "finite")])
def test_a_world_dict_that_is_not_finite_is_refused_naming_its_key_without_a_warning(world, key):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "invalid value encountered in multiply" was printed
        e = refused(lambda: tl.image(RNG.normal(size=(5, 5)), world=world))
    assert key in e.message


# ------------------------------------------------------------------ einsum results numpy cannot allocate
def test_an_einsum_result_numpy_cannot_allocate_is_too_large_on_every_call():
    one = np.broadcast_to(np.float64(1.0), (1 << 24,))  # 8 bytes of data; the outer product is 2 PiB
    with pytest.raises(MemoryError):
        np.einsum("i,j->ij", one, one)
    for _ in range(2):  # the first call and the cached one
        e = refused(lambda: tl.einsum("i,j->ij", one, one), "too-large")
        assert "does not fit in memory" in e.message and isinstance(e, MemoryError)  # numpy's class too
        assert isinstance(pickle.loads(pickle.dumps(e)), MemoryError)


# ------------------------------------------------------------------ Python ints past int64 as inputs
ARMED = "in var s : []\nin var v : [1]\nin var M : [1 1]\nout var r : [1 1]\nout var t : []\nr = s * M + v # v\nt = s * s\n"


@pytest.mark.parametrize("backend", ["c", "numpy", "interp"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_python_int_past_int64_is_the_real_number_it_is_on_every_target(backend, dtype):
    if backend not in tl.available_backends():
        pytest.skip("no C compiler")
    k = tl.compile(ARMED, backend=backend, dtype=dtype)
    ones = {"v": np.ones(1), "M": np.ones((1, 1))}
    for s in (2**80, -2**80, 2**63):  # the C caller read them as floats, the general path refused them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # float32: 2**160 is inf, as numpy casts it
            want = np.asarray(float(s) * float(s), dtype=dtype)
        assert k(s=s, **ones)["t"] == want
    e = refused(lambda: k(s=2**2000, **ones))
    assert "beyond the float range" in e.message
