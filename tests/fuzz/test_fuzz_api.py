"""Fuzzing the Python API's argument handling (issue 16): ``tl.compile``/``tl.check`` with
odd arguments of every kind, and compiled kernels called with odd arrays (wrong types,
shapes and dtypes, byte-swapped, non-contiguous, read-only or aliased ``out=`` arrays,
huge integers, ⊥ and ±inf).  Any outcome but a result or a TensorLangError that is not
``internal`` is a bug; a result is checked against numpy on the same numbers."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from hypothesis import given, note, strategies as st

import pytest
import tensorlang as tl
from fuzz.oracle import assert_clean, fuzz_settings, no_hang

PROGRAMS = {
    "tl": "in var A : [2 3]\nin var x : [3]\nout var y : [2]\ny[i] = sum(j) A[i,j] * x[j]\n",
    "teil": "in alloc A : [2 3]\nin alloc x : [3]\nout alloc y : [2]\ny = contr 2 3 (prod A x)\n",
    "cfd": "var input A : [2 3]\nvar input x : [3]\nvar output y : [2]\ny = A . x\n",
}

SOURCES = st.one_of(
    st.sampled_from(list(PROGRAMS.values())),
    st.sampled_from([None, 3, 2.5, b"in var x : [1]\n", bytearray(b"x"), [], ("a",), object(), "", "\x00", " \n",
                     "in var x : [3]\n" * 3, Path("/nonexistent/p.tl"), Path("/"), Path("/dev/null"), "p.tl",
                     "/etc/passwd", "x" * 10_000, "in var x : [3]\nout var y : [3]\ny = x\x00\n",
                     "in var x : [3]\nout var y : [3]\ny = x\r\n", "\ufeffin var x : [3]\nout var y : [3]\ny = x\n"]),
    st.text(max_size=40),
)
LANGS = st.sampled_from([None, "tl", "teil", "cfd", "TL", "", "py", 3, b"tl", ["tl"]])
BACKENDS = st.sampled_from(["auto", "interp", "numpy", "c", "C", "", "fortran", None, 3, b"c", ["c"]])
DTYPES = st.sampled_from(["float64", "float32", np.float32, np.float64, np.dtype("float32"), ">f8", "f8", "float16",
                          "int32", np.int8, "complex128", None, 3, "", object, [], "float"])
PADS = st.sampled_from([None, 0, 1, -1, 2**70, "4", 1.5])
THREADS = st.sampled_from([None, 1, 2, 0, -1, 2**31, 2**64, 1.5, "2", True, np.int64(2), float("nan")])
PARAMS = st.sampled_from([None, {}, {"n": 3}, {"n": 0}, {"n": -1}, {"n": 2**70}, {"n": 10**5000}, {3: 4},
                          [("n", 3)], {"n": True}, {"n": 3.0}, {"n": "3"}, {"": 1}, {"n m": 2}, "n=3",
                          {"n": float("nan")}, {"n": np.int64(3)}])
OPTS = st.sampled_from([True, False, None, "yes", 1, 0, np.bool_(True)])
SKIPS = st.sampled_from([(), None, ["fuse"], "fuse", [3], ["nosuch"], [None], {"fuse": 1}, ("order", "cse"), 5])


def _show(value) -> str:
    try:
        return repr(value)[:2000]
    except ValueError:  # an integer of 5000 digits has no repr
        return "(an argument with a 5000-digit integer)"


@pytest.mark.slow
@fuzz_settings(150)
@given(source=SOURCES, lang=LANGS, backend=BACKENDS, dtype=DTYPES, pad=PADS, threads=THREADS, params=PARAMS,
       opt=OPTS, skip=SKIPS, check_only=st.booleans())
def test_compile_and_check_take_any_arguments(source, lang, backend, dtype, pad, threads, params, opt, skip,
                                              check_only):
    note(_show((source, lang, backend, dtype, pad, threads, params, opt, skip)))
    with no_hang("compile"):
        try:
            if check_only:
                tl.check(source, lang=lang, params=params, core=bool(opt))
            else:
                kernel = tl.compile(source, lang=lang, backend=backend, dtype=dtype, pad=pad, threads=threads,
                                    params=params, opt=opt, skip_passes=skip)
                assert isinstance(kernel, tl.Kernel) if hasattr(tl, "Kernel") else callable(kernel)
        except tl.TensorLangError as exc:
            assert_clean(exc)


# ---------------------------------------------------------------- kernel calls
A = np.arange(1.0, 7.0).reshape(2, 3)
X = np.array([1.0, -0.0, 2.0])


def _odd(value: np.ndarray):
    """Ways of passing ``value`` (or something that is not it)."""
    wide = np.zeros((value.shape[0] * 2,) + value.shape[1:]) if value.ndim else np.zeros(2)
    strided = wide[::2]
    strided[...] = value if value.ndim else 0
    readonly = value.copy()
    readonly.flags.writeable = False
    return st.sampled_from([
        value, value.copy(order="F"), strided, readonly, value.astype(">f8"), value.astype(np.float32),
        value.astype(np.float16), value.astype(np.int64), value.astype(np.int8), value.astype(bool),
        value.astype(np.uint64), value.astype(np.complex128), value.astype(object), value.astype(str),
        value.tolist(), value.T, value.reshape(-1), value[None], np.float64(1.0), 1.0, None, "x", b"x", [1, [2]],
        np.full(value.shape, np.nan), np.full(value.shape, -np.inf), np.full(value.shape, 10**400, dtype=object),
        np.full(value.shape, 2**63 - 1, dtype=np.int64), np.full(value.shape, np.iinfo(np.uint64).max),
        np.ma.masked_array(value, mask=np.zeros(value.shape, bool)), value.view(np.recarray) if value.ndim == 2 else value,
    ])


@st.composite
def outs(draw, dtype):
    kind = draw(st.sampled_from(["none", "fresh", "readonly", "strided", "wrong-dtype", "wrong-shape", "list",
                                 "not-a-dict", "unknown-name", "alias-input", "fortran", "swapped"]))
    y = np.full(2, 7.0, dtype=dtype)
    if kind == "none":
        return None
    if kind == "readonly":
        y.flags.writeable = False
    elif kind == "strided":
        y = np.zeros(4, dtype=dtype)[::2]
    elif kind == "wrong-dtype":
        y = y.astype(np.float32 if dtype == np.float64 else np.float64)
    elif kind == "wrong-shape":
        y = np.zeros((2, 1), dtype=dtype)
    elif kind == "list":
        return {"y": [0.0, 0.0]}
    elif kind == "not-a-dict":
        return [y]
    elif kind == "unknown-name":
        return {"z": y}
    elif kind == "alias-input":
        return {"y": "alias"}
    elif kind == "swapped":
        y = y.astype(np.dtype(dtype).newbyteorder())
    return {"y": y}


_KERNELS: dict = {}


def _kernel(lang, backend, dtype):
    key = (lang, backend, dtype)
    if key not in _KERNELS:
        _KERNELS[key] = tl.compile(PROGRAMS[lang], lang=lang, backend=backend, dtype=dtype)
    return _KERNELS[key]


@fuzz_settings(150)
@given(data=st.data(), lang=st.sampled_from(sorted(PROGRAMS)), backend=st.sampled_from(tl.available_backends()),
       dtype=st.sampled_from(["float64", "float32"]), extra=st.sampled_from([None, "z", "out", "y", "A"]),
       drop=st.sampled_from([None, "A", "x"]), via_run=st.booleans())
def test_kernels_take_any_arrays(data, lang, backend, dtype, extra, drop, via_run):
    kernel = _kernel(lang, backend, dtype)
    args = {"A": data.draw(_odd(A), "A"), "x": data.draw(_odd(X), "x")}
    out = data.draw(outs(np.dtype(dtype)), "out")
    if isinstance(out, dict) and isinstance(out.get("y"), str):
        out = {"y": np.zeros(2, dtype=dtype)}
        args["x"] = out["y"]  # an output passed as an input too: wrong shape for x, refused
    if extra and (via_run or extra != "out"):  # k(out=..., out=...) is Python's own TypeError
        args[extra] = np.zeros(2)
    if drop:
        del args[drop]
    note(_show((args, out)))
    with no_hang("call"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = kernel.run(args, out=out) if via_run else kernel(out=out, **args)
        except tl.TensorLangError as exc:
            assert_clean(exc)
            return
        # accepted: the same numbers as numpy's on the values given
        a = np.asarray(args["A"]).astype(np.float64)
        x = np.asarray(args["x"]).astype(np.float64)
        expected = np.array([sum(a[i, j] * x[j] for j in range(3)) for i in range(2)])
        tol = 1e-12 if dtype == "float64" else 1e-5
        rows = np.ones(2, dtype=bool)
        if dtype == "float32":  # a row whose products or partial sums pass float32's largest number may
            # overflow to ±inf (or inf - inf = NaN) in float32 arithmetic: float32's own rounding
            with np.errstate(all="ignore"):
                bound = np.array([np.nansum(np.abs(a[i] * x)) for i in range(2)])
            rows = ~(bound > np.finfo(np.float32).max)
        np.testing.assert_allclose(got["y"][rows], expected[rows], rtol=tol,
                                   atol=tol * (1 + np.nanmax(np.abs(a), initial=0)))
        assert got["y"].dtype == np.dtype(dtype)
        if isinstance(out, dict) and "y" in out:
            assert got["y"] is out["y"] or np.shares_memory(got["y"], out["y"])
            np.testing.assert_allclose(out["y"][rows], expected[rows], rtol=tol,
                                       atol=tol * (1 + np.nanmax(np.abs(a), initial=0)))


@fuzz_settings(100)
@given(lang=st.sampled_from(sorted(PROGRAMS)), backend=st.sampled_from(tl.available_backends()),
       method=st.sampled_from(["ir", "code", "threads", "run"]),
       arg=st.sampled_from([None, 3, "", "ast", "AST", "ein", "opt", "c", "numpy", "teil", "core", "schedule", "loops",
                            "lambda", "tl", "fortran", b"c", ["c"], {"A": A}, 2**70, -1, 1.5, float("nan")]))
def test_kernel_methods_take_any_arguments(lang, backend, method, arg):
    kernel = _kernel(lang, backend, "float64")
    with no_hang(method):
        try:
            if method == "threads":
                kernel.threads = arg
                assert 0 <= kernel.threads <= 256  # 0: the default (OpenMP decides)
            elif method == "run":
                kernel.run(arg)
            else:
                assert isinstance(getattr(kernel, method)(arg), str)
        except tl.TensorLangError as exc:
            assert_clean(exc)
