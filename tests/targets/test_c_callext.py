"""The C-level call path (targets/c/callext.py): taken for the plain call (numbers for
scalars among it), declining anything else, and giving the same results and the same
errors as the general path on generated calls; references, the GIL and threads."""

import copy
import ctypes
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import callext, runtime
from tensorlang.targets.c.codegen import NO_MEMORY

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

MATMUL = "in var A : [2 3]\nin var B : [3 2]\nout var C : [2 2]\nC = A # B . [2 3]\n"
#: programs with every role the caller handles: in, out, inout, a scalar input, two
#: results, temporaries (the optimizer's intermediates of a chained product)
PROGRAMS = {
    "matmul": MATMUL,
    "inout": "in var y : [4]\ninout var x : [4]\nx = x + y * x\n",
    "scalar": "in var s : []\nin var x : [3]\nout var y : [3]\ny = s * x\n",
    "two results": "in var x : [3]\nout var y : [3]\nout var z : [3]\ny = x + x\nz = x * x\n",
    "temporaries": ("in var A : [3 3]\nin var B : [3 3]\nin var C : [3 3]\nin var u : [2 3 3 3]\n"
                    "out var v : [2 3 3 3]\nv = u # A # B # C . [[2 6] [3 8] [4 10]]\n"),
}
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5]


def errors_in_threads(work, count: int) -> list[Exception]:
    """Run ``work(0)`` .. ``work(count - 1)`` on ``count`` threads at once and wait for
    them all; the exceptions they raised (an assertion failing in a thread fails no test
    by itself)."""
    errors: list[Exception] = []

    def run(i):
        try:
            work(i)
        except Exception as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _c_kernel(source, pad=1):
    k = tl.compile(source, backend="c", pad=pad)
    if k.target.c_call is None:
        pytest.skip(f"no C call path here: {callext.why_unavailable()}")
    return k


def _general(source):
    """The same program without the C caller: every call takes the general path."""
    k = tl.compile(source, backend="c")
    k.target.c_call = None
    return k


def test_the_plain_call_takes_the_c_path():
    k = _c_kernel(MATMUL)
    a, b = np.random.default_rng(0).uniform(-1, 1, (2, 3)), np.random.default_rng(1).uniform(-1, 1, (3, 2))
    k(A=a, B=b)  # the first call checks the store's size on the general path, then arms the C path
    caller = k._c_call
    assert caller is k.target.c_call
    before = caller.calls
    np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b, rtol=1e-14)
    c = np.empty((2, 2))
    assert k(A=a, B=b, out={"C": c})["C"] is c
    assert k.run({"A": a, "B": b})["C"].shape == (2, 2)
    assert caller.calls == before + 3
    assert k.last_run_seconds is not None and k.last_run_seconds >= 0
    # an unusual call declines: the counter stays, the general path answers
    k(A=np.asfortranarray(np.ones((2, 3))), B=b)
    assert caller.calls == before + 3


@pytest.mark.parametrize("pad", [1, 4])
def test_names_that_are_not_interned_take_the_c_path_too(pad):
    """The caller finds a slot by the interned name first and by comparing strings after:
    names built at run time (not interned) take the C path, inputs and out= targets alike,
    through both the keyword entry and caller(arrays, out); a name no slot has declines."""
    k = _c_kernel("in var left : [2 3]\nin var right : [3 2]\nout var res : [2 2]\nres = left # right . [2 3]\n",
                  pad=pad)
    a, b = np.random.default_rng(0).uniform(-1, 1, (2, 3)), np.random.default_rng(1).uniform(-1, 1, (3, 2))
    k(left=a, right=b)
    caller = k._c_call
    names = ["".join(["le", "ft"]), "".join(["ri", "ght"]), "".join(["re", "s"])]
    assert not any(name is sys.intern(name) for name in names)  # other objects than the slots' names
    built = {names[0]: a, names[1]: b}
    before = caller.calls
    c = np.empty((2, 2))
    assert caller(built, {names[2]: c})["res"] is c
    np.testing.assert_allclose(c, a @ b, rtol=1e-14)
    np.testing.assert_allclose(k(**built)["res"], a @ b, rtol=1e-14)
    assert caller.calls == before + 2
    assert caller({names[0]: a, "".join(["righ", "tt"]): b}, None) is None and caller.calls == before + 2
    out_key = "".join(["ou", "t"])  # "out" not interned: compared, still the targets
    assert out_key is not sys.intern(out_key)
    d = np.empty((2, 2))
    assert k(**built, **{out_key: {names[2]: d}})["res"] is d and caller.calls == before + 3
    np.testing.assert_allclose(d, a @ b, rtol=1e-14)


def test_the_c_entry_reads_the_caller_from_its_slot():
    """``_c_call`` is a slot of Kernel (``__slots__``): the C entry reads it at its offset
    with no look-up; a copy keeps its caller, an instance of a subclass finds it by the
    attribute look-up."""
    from tensorlang.kernel import Kernel

    assert type(Kernel.__dict__["_c_call"]).__name__ == "member_descriptor"
    k = _c_kernel(MATMUL)
    a, b = np.random.default_rng(0).uniform(-1, 1, (2, 3)), np.random.default_rng(1).uniform(-1, 1, (3, 2))
    k(A=a, B=b)
    caller, c = k._c_call, np.empty((2, 2))
    before = caller.calls
    twin = copy.copy(k)
    assert twin._c_call is caller and twin(A=a, B=b, out={"C": c})["C"] is c and caller.calls == before + 1

    class Sub(type(k)):
        pass

    sub = copy.copy(k)
    sub.__class__ = Sub
    np.testing.assert_allclose(sub(A=a, B=b)["C"], a @ b, rtol=1e-14)
    assert caller.calls == before + 2


def test_a_kernel_call_runs_no_python_frame():
    """Issue 44: ``k(A=a, out={...})`` goes from the class's tp_call straight to the C
    caller (callext.install_entry): no Python function runs, not even Kernel.__call__;
    a declined call still reaches the Python __call__ and the general path."""

    k = _c_kernel(MATMUL)
    a, b = np.random.default_rng(0).uniform(-1, 1, (2, 3)), np.random.default_rng(1).uniform(-1, 1, (3, 2))
    k(A=a, B=b)  # arms the C path (and installs the entry)
    c = np.empty((2, 2))
    seen: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        got = k(A=a, B=b, out={"C": c})
    finally:
        sys.setprofile(None)
    assert got["C"] is c and seen == []
    np.testing.assert_allclose(c, a @ b, rtol=1e-14)
    sys.setprofile(profile)
    try:
        k(A=np.asfortranarray(a), B=b)  # declined in C: the Python path answers
    finally:
        sys.setprofile(None)
    assert "__call__" in seen
    with pytest.raises(TensorLangError):
        k(A=a)  # a missing input is still the general path's error


@pytest.mark.slow
def test_missing_headers_fall_back_to_the_general_path(monkeypatch):
    monkeypatch.setattr(callext, "include_dirs", lambda: None)
    callext.extension.cache_clear()
    try:
        assert callext.extension() is None
        assert "Python.h" in callext.why_unavailable()
        k = tl.compile(MATMUL.replace("C = A", "C = 2 * A"), backend="c")
        assert k.target.c_call is None
        a, b = np.ones((2, 3)), np.ones((3, 2))
        k(A=a, B=b)
        assert k._c_call is None and k.runner.c_call is None  # the general path serves
        np.testing.assert_array_equal(k(A=a, B=b)["C"], np.full((2, 2), 6.0))
        np.testing.assert_array_equal(k(A=a, B=b, out={"C": np.empty((2, 2))})["C"], np.full((2, 2), 6.0))
    finally:
        monkeypatch.undo()
        callext.extension.cache_clear()
    assert callext.extension() is not None or callext.include_dirs() is None


def test_a_failed_compile_falls_back(monkeypatch):
    def broken(*args, **kwargs):
        raise TensorLangError("internal", "generated C did not compile: simulated")

    monkeypatch.setattr(c_build, "build", broken)
    callext.extension.cache_clear()
    try:
        assert callext.extension() is None and "simulated" in callext.why_unavailable()
    finally:
        monkeypatch.undo()
        callext.extension.cache_clear()


# ------------------------------------------------------------ generated calls
def _values(draw, shape):
    n = int(np.prod(shape))
    return np.array(draw(st.lists(st.sampled_from(SPECIALS) | st.floats(-1e3, 1e3), min_size=n, max_size=n)),
                    dtype=np.float64).reshape(shape)


#: how an input is given
INPUT_KINDS = ["plain", "plain", "plain", "wrong shape", "float32", "int64", "fortran", "strided", "view",
               "list", "missing", "number", "bool"]
#: how a result's out= target is given
OUT_KINDS = ["none", "none", "plain", "plain", "wrong shape", "float32", "read-only", "view", "an input",
             "its own input", "unknown name", "shared"]


@st.composite
def calls(draw):
    """A program and a recipe for one call to it: per input how it is given, per result
    whether and how an out= target is; plus the values (NaN, ±inf, ±0 among them)."""
    name = draw(st.sampled_from(sorted(PROGRAMS)))
    k = _kernels(name)[0]
    inputs = {n: (draw(st.sampled_from(INPUT_KINDS)), _values(draw, k.shapes[n])) for n in k.inputs}
    results = {n: draw(st.sampled_from(OUT_KINDS)) for n in k.outputs}
    extra = draw(st.sampled_from([None, None, None, "extra", "out-not-dict", "empty-out"]))
    return name, inputs, results, extra


def _build(k, recipe):
    """The call's arguments, made afresh (so two kernels get equal, unshared arguments
    with the same aliasing among them)."""
    _, inputs, results, extra = recipe
    arrays: dict = {}
    for n, (kind, value) in inputs.items():
        value = value.copy()
        if kind == "missing":
            continue
        if kind == "wrong shape":
            value = np.zeros(value.shape + (1,))
        elif kind == "float32":
            value = value.astype(np.float32)
        elif kind == "int64":
            value = np.nan_to_num(value, posinf=7, neginf=-7).astype(np.int64)
        elif kind == "fortran":
            value = np.asfortranarray(value)
        elif kind == "strided":
            value = np.repeat(value[..., None], 2, axis=-1)[..., 0]
        elif kind == "view":
            value = value.reshape(-1).reshape(value.shape)[...]
        elif kind == "list":
            value = value.tolist()
        elif kind == "number":
            value = float(value.reshape(-1)[0]) if value.size == 1 else value
        elif kind == "bool":
            value = True if value.size == 1 else value.astype(bool)
        arrays[n] = value
    out: dict = {}
    shared = None
    for n, kind in results.items():
        shape = k.shapes[n]
        if kind == "none":
            continue
        if kind == "plain":
            out[n] = np.full(shape, 7.0)
        elif kind == "wrong shape":
            out[n] = np.zeros(shape + (2,))
        elif kind == "float32":
            out[n] = np.zeros(shape, np.float32)
        elif kind == "read-only":
            out[n] = np.zeros(shape)
            out[n].flags.writeable = False
        elif kind == "view":
            out[n] = np.zeros((2,) + shape)[0]
        elif kind == "an input":
            same = [m for m in arrays if isinstance(arrays[m], np.ndarray) and arrays[m].shape == shape]
            out[n] = arrays[same[0]] if same else np.zeros(shape)
        elif kind == "its own input":
            out[n] = arrays[n] if isinstance(arrays.get(n), np.ndarray) else np.zeros(shape)
        elif kind == "unknown name":
            out["nope"] = np.zeros(shape)
        elif kind == "shared":
            if shared is None or shared.shape != shape:
                shared = np.zeros(shape)
            out[n] = shared
    if extra == "extra":
        arrays["zz"] = np.zeros(2)
    if extra == "out-not-dict":
        return arrays, list(out.values())
    if extra == "empty-out":
        return arrays, {}
    return arrays, (out or None)


_KERNELS: dict = {}


def _kernels(name):
    if name not in _KERNELS:
        source = PROGRAMS[name]
        fast = _c_kernel(source)
        fast(**{n: np.zeros(fast.shapes[n]) for n in fast.inputs})  # arms the C path
        _KERNELS[name] = (fast, _general(source))
    return _KERNELS[name]


def _outcome(k, recipe):
    arrays, out = _build(k, recipe)
    try:
        results = k(out=out, **arrays)
    except TensorLangError as exc:
        return ("error", exc.code, str(exc)), arrays, out
    return ("ok", results), arrays, out


def _same(x, y):
    assert type(x) is type(y)
    if isinstance(x, dict):
        assert list(x) == list(y)
        for key in x:
            _same(x[key], y[key])
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y)
        for a, b in zip(x, y):
            _same(a, b)
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)  # NaN equals NaN here, and -0.0 == 0.0 ...
        assert np.array_equal(np.signbit(x), np.signbit(y))  # ... so the signs of zeros too
    else:
        assert x == y or (x != x and y != y)  # NaN in a list


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(calls())
def test_c_path_and_general_path_agree_on_generated_calls(recipe):
    fast, general = _kernels(recipe[0])
    note(repr(recipe))
    got, args_fast, out_fast = _outcome(fast, recipe)
    want, args_general, out_general = _outcome(general, recipe)
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1:] == want[1:]
    else:
        _same(got[1], want[1])
        # results that are out= targets are those targets, on both paths
        for name, value in got[1].items():
            given = out_fast.get(name) if isinstance(out_fast, dict) else None
            wanted = out_general.get(name) if isinstance(out_general, dict) else None
            assert (value is given) == (want[1][name] is wanted)
    _same(args_fast, args_general)  # inputs written the same way (never, but in place)
    _same(out_fast, out_general)


# ------------------------------------------------------------ references, GIL, threads
def test_many_calls_leak_no_references():
    k = _c_kernel(PROGRAMS["inout"])
    x, y, target = np.ones(4), np.ones(4), np.zeros(4)
    out = {"x": target}
    bad = np.ones(5)
    k(x=x, y=y)
    counts = [sys.getrefcount(v) for v in (x, y, target, bad, out)]
    for _ in range(2000):
        k(x=x, y=y)
        k(x=x, y=y, out=out)
        k(x=target, y=y, out=out)  # the in-place idiom
        assert k._c_call({"x": bad, "y": y}, None) is None  # declined
        with pytest.raises(TensorLangError):
            k(x=bad, y=y)
    assert [sys.getrefcount(v) for v in (x, y, target, bad, out)] == counts


def test_numbers_for_scalars_take_the_c_path_and_leak_nothing():
    """A number given for a scalar input becomes a 0-d array made for the call (csrc/callext.c,
    ``number_array``) and released after it: memory stays flat over many calls."""
    import tracemalloc

    k = _c_kernel(PROGRAMS["scalar"])
    x, target = np.ones(3), np.zeros(3)
    k(s=2.0, x=x)
    caller = k._c_call
    before = caller.calls
    counts = [sys.getrefcount(v) for v in (x, target)]
    tracemalloc.start()
    try:
        for _ in range(200):
            k(s=2.5, x=x, out={"y": target})
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(5000):
            k(s=2.5, x=x, out={"y": target})
            k(s=np.float32(3.0), x=x)
            assert caller({"s": 7, "x": x}, None)["y"][0] == 7.0
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert caller.calls == before + 200 + 3 * 5000  # every one taken in C
    assert grown < 64 * 1024, grown
    assert [sys.getrefcount(v) for v in (x, target)] == counts
    np.testing.assert_array_equal(target, np.full(3, 2.5))


def test_the_caller_keeps_its_description_and_refuses_a_second_one():
    k = _c_kernel(MATMUL)
    caller = k.target.c_call
    with pytest.raises(TypeError):
        caller.__init__(1, (), (), (), np.float64, (), 0, False)
    with pytest.raises(TypeError):
        caller({}, None, None)


@pytest.mark.parametrize("name", ["matmul", "temporaries-large"])
def test_calls_from_many_threads_get_their_own_results(name):
    source = PROGRAMS.get(name) or (
        "in var A : [6 6]\nin var B : [6 6]\nin var C : [6 6]\nin var u : [40 6 6 6]\nout var v : [40 6 6 6]\n"
        "v = u # A # B # C . [[2 6] [3 8] [4 10]]\n")
    k = _c_kernel(source)
    reference = tl.compile(source, backend="numpy")
    rng = np.random.default_rng(5)
    inputs = [{n: rng.uniform(-1, 1, k.shapes[n]) for n in k.inputs} for _ in range(4)]
    expected = [reference(**x) for x in inputs]
    k(**inputs[0])
    caller = k._c_call
    before = caller.calls

    def work(i):
        for _ in range(200 if name == "matmul" else 30):
            got = k(**inputs[i])
            for key, value in expected[i].items():
                np.testing.assert_allclose(got[key], value, rtol=1e-12, atol=1e-13)

    errors = errors_in_threads(work, 4)
    assert not errors, errors[0]
    assert caller.calls > before


def test_threads_setting_reaches_the_c_path():
    k = _c_kernel(MATMUL)
    k.threads = 3
    assert k.target.c_call.threads == 3
    k.threads = None
    assert k.target.c_call.threads == k.threads


# ------------------------------------------------------------ the einsum cache's hits
def test_einsum_hits_take_the_c_path_and_decline_what_the_key_does_not_fix():
    from tensorlang import einsum_api

    tl.clear_caches()
    a = np.array([[np.nan, -0.0], [np.inf, 2.0]])
    b = np.array([[1.0, -np.inf], [0.0, -0.0]])
    first = tl.einsum("ij,jk->ik", a, b)  # the miss compiles and remembers
    runner = einsum_api._HITS[("ij,jk->ik", (2, 2), (2, 2), a.dtype, b.dtype, False)]
    caller = getattr(runner, "__self__", None)
    if caller is None or type(caller).__name__ != "Caller":
        pytest.skip(f"no C call path here: {callext.why_unavailable()}")
    before = caller.calls
    again = tl.einsum("ij,jk->ik", a, b)
    assert caller.calls == before + 1
    _same(again, first)
    with np.errstate(all="ignore"):
        want = np.einsum("ij,jk->ik", a, b)
    np.testing.assert_array_equal(again, want)
    fortran = np.asfortranarray(a)  # the same key, but not C-ordered: declined, then the general path
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(tl.einsum("ij,jk->ik", fortran, b), want)
    assert caller.calls == before + 1
    x = np.array([1.0, -0.0, 3.0])
    tl.einsum("i,i->", x, x + 1)
    scalar = tl.einsum("i,i->", x, x + 1)  # a scalar result: a numpy scalar, as numpy gives
    assert type(scalar) is type(np.einsum("i,i->", x, x + 1)) and scalar == 14.0


# ------------------------------------------------------------ a kernel that ran and failed
def _failing_function(k, status: int):
    """Replace ``k``'s one C function by one that counts its calls and returns ``status``
    (what a step returns when it cannot allocate its copies: codegen.NO_MEMORY); the
    loaded library, whose ``tl_fail_calls()`` says how often it ran."""
    function, slots, inputs = k.target._only
    params = ", ".join(f"void *p{i}" for i in range(len(slots) + len(inputs)))  # then each inout input
    source = (f"static int calls;\nint tl_fail({params}, int threads) {{ (void)threads; calls++; return {status}; }}\n"
              "int tl_fail_calls(void) { return calls; }\n")
    lib = ctypes.CDLL(str(c_build.build(source, c_build.find_compiler())))
    address = ctypes.cast(lib.tl_fail, ctypes.c_void_p).value
    k.target._only = (k.target.ffi.cast(k.target.ffi.typeof(function), address), slots, inputs)
    return lib


@pytest.mark.parametrize("path", ["c call", "general path"])
@pytest.mark.parametrize("status, code", [(NO_MEMORY, "too-large"), (-1, "backend")])
def test_a_kernel_that_ran_and_failed_is_reported_and_never_run_again(path, status, code):
    # an in-place call: a second run after a failed one would start from a half-written x
    k = _c_kernel(PROGRAMS["inout"])
    x, y = np.arange(4.0), np.ones(4)
    k(x=x.copy(), y=y)  # the first call checks the store's size and arms the C path
    lib = _failing_function(k, status)
    if path == "c call":
        k.target.c_call = callext.caller(k.target, k.target._roles)
        k.runner.arm()
        assert k._c_call is k.target.c_call
    else:
        k.target.c_call = None
        k.runner.arm()
        assert k._c_call is None
        k.target._runners = (runtime._c_runner(k.target.ffi, *k.target._only),)  # CKernel.run's
    before = lib.tl_fail_calls()  # the library is cached: other cases may have run it
    with pytest.raises(TensorLangError) as info:
        k(x=x, y=y, out={"x": x})
    assert info.value.code == code, info.value
    assert lib.tl_fail_calls() == before + 1  # reported from the one run: no path redid the call
    np.testing.assert_array_equal(x, np.arange(4.0))  # the function wrote nothing, nor did anyone else


# ------------------------------------------------------------ one rule: callext.fits
def _candidates(m: int, n: int) -> dict:
    """Arrays (and things that are not) for a variable of shape (m, n) with every value
    1..mn, each a case of the plain-call rule."""
    import pickle

    x = np.arange(1.0, m * n + 1).reshape(m, n)
    raw = np.zeros(x.nbytes + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, np.float64, x.size, 1).reshape(m, n)
    unaligned[...] = x
    read_only = x.copy()
    read_only.flags.writeable = False
    wide, tall = np.zeros((m, 2 * n)), np.zeros((m + 1, n))
    wide[:, ::2], tall[:m] = x, x
    return {"plain": x.copy(), "read-only": read_only, "pickled dtype": pickle.loads(pickle.dumps(x)),
            "rows of another": tall[:m], "unaligned": unaligned, "Fortran-ordered": np.asfortranarray(x),
            "strided": wide[:, ::2], "masked": np.ma.masked_array(x), "a matrix": np.asmatrix(x),
            "float32": x.astype(np.float32), "big-endian": x.astype(">f8"), "int64": x.astype(np.int64),
            "transposed shape": x.reshape(n, m), "flat": x.ravel(), "a list": x.tolist()}


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # (np.asmatrix)
def test_the_c_rule_mirrors_the_python_rule():
    """callext.fits is the plain-call rule; csrc/callext.c's fits mirrors it: the C caller's
    ordered and the Python one take exactly the arrays fits takes, with the same results."""
    k = _c_kernel(MATMUL)
    b = np.arange(6.0).reshape(3, 2)
    calls = {"C": k.target.ordered_call(("A", "B")), "Python": k.target.ordered_in_python(("A", "B"))}
    taken = []
    for name, a in _candidates(2, 3).items():
        fits = callext.fits(a, (2, 3), np.dtype(np.float64)) if isinstance(a, np.ndarray) else False
        taken += [name] * fits
        for path, call in calls.items():
            got = call(a, b)
            assert (got is not None) == fits, (name, path)
            if fits:
                np.testing.assert_array_equal(got, np.asarray(a) @ b)
    assert taken == ["plain", "read-only", "pickled dtype", "rows of another"]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_einsum_hits_in_python_where_no_c_caller_is_built(monkeypatch):
    """Without a C caller (no Python.h, too many slots) a hit of tl.einsum runs ordered in
    Python: plain operands take it, anything else the general way, with numpy's results."""
    from tensorlang import einsum_api

    monkeypatch.setattr(callext, "caller", lambda *args, **kwargs: None)
    tl.clear_caches()
    try:
        b = np.arange(4.0, 8.0).reshape(2, 2)
        tl.einsum("ij,jk->ik", np.ones((2, 2)), b)
        hit = einsum_api._HITS[("ij,jk->ik", (2, 2), (2, 2), b.dtype, b.dtype, False)]
        assert hit.__code__.co_filename == "<tensorlang ordered call>"
        for name, a in _candidates(2, 2).items():
            if np.shape(a) == (2, 2):
                np.testing.assert_array_equal(tl.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b), err_msg=name)
        q = np.ones((3, 3))
        for _ in range(2):
            np.testing.assert_array_equal(tl.einsum("ij,jk,kl->il", q, q, q), np.full((3, 3), 9.0))
        assert einsum_api._HITS[("ij,jk,kl->il", 3, (3, 3), q.dtype)].__code__.co_filename == "<tensorlang ordered call>"
    finally:
        tl.clear_caches()
