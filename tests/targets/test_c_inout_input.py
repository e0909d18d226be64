"""An inout variable's input read by the C function itself (the loop rewrite ``inputs``,
loops.ir.input_reads): a call
whose ``out=`` target is another array copies nothing, the in-place call (the same array
for both) is exact, overlapping views are copied first, the caller's input is never
written; every call path (the C caller, the Python fast call, the general path) against
the reference interpreter, ⊥ and ±0 included."""

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.targets.c import build as c_build
from tensorlang.loops.ir import input_reads

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

N = 9
#: name: (source, the other inputs' shapes, whether the function reads the input itself)
PROGRAMS = {
    "scale": (f"in var s : []\ninout var x : [{N} {N}]\nx = s * x\n", {"s": ()}, True),
    "multiply": (f"in var v : [{N} {N}]\ninout var x : [{N} {N}]\nx = x * v\n", {"v": (N, N)}, True),
    "row sums": (f"in var U : [{N} {N}]\nin var w : [{N}]\ninout var x : [{N}]\n"
                 f"x = ((U # w) . [2 3]) * x\n", {"U": (N, N), "w": (N,)}, True),
    # x read in a reduction over its own elements: the schedule computes it apart first
    "product": (f"in var U : [{N} {N}]\ninout var x : [{N}]\nx = (U # x) . [2 3]\n", {"U": (N, N)}, None),
    # read before its assignment by another statement, and after it
    "two statements": (f"in var v : [{N}]\ninout var x : [{N}]\nout var y : [{N}]\nout var z : [{N}]\n"
                       f"y = x * v\nx = x + v\nz = x * y\n", {"v": (N,)}, True),
    # x = x + a * b: the stored value's first term is the input (an fma of it, with fma=True)
    "update": (f"in var v : [{N}]\ninout var x : [{N}]\nx = x + v * v\n", {"v": (N,)}, True),
    # never assigned: the result is the input (the function copies it, where it is another array)
    "passed through": (f"in var v : [{N}]\ninout var x : [{N}]\nout var y : [{N}]\ny = x * v\n", {"v": (N,)}, False),
}
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5])


def _inputs(name: str, seed: int, specials: bool = False) -> dict[str, np.ndarray]:
    source, others, _ = PROGRAMS[name]
    rng = np.random.default_rng(seed)
    shape = (N, N) if name in ("scale", "multiply") else (N,)
    arrays = {k: (np.float64(rng.uniform(0.5, 1.5)) if s == () else rng.uniform(-1, 1, s)) for k, s in others.items()}
    x = rng.uniform(-1, 1, shape)
    if specials:
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 6)] = rng.choice(SPECIALS, 6)
    arrays["x"] = x
    return arrays


def _paths(source: str):
    """The kernel twice: with the C caller, with only the general path (CKernel.run)."""
    c = tl.compile(source, backend="c")
    general = tl.compile(source, backend="c")
    general.target.c_call = None
    return {"c": c, "general": general}


def _same(got, want, what: str) -> None:
    assert got.shape == want.shape, what
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: ⊥ elsewhere"
    ok = ~np.isnan(want)
    assert np.allclose(got[ok], want[ok], rtol=1e-14, atol=0), what
    zero = ok & (want == 0)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), f"{what}: the sign of a zero"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("specials", [False, True])
def test_every_call_path_matches_the_interpreter(name, specials):
    source = PROGRAMS[name][0]
    reference = tl.compile(source, backend="interp")
    for path, k in _paths(source).items():
        for seed in range(3):
            arrays = _inputs(name, seed, specials)
            want = reference(**{n: a.copy() if isinstance(a, np.ndarray) else a for n, a in arrays.items()})
            x0 = arrays["x"].copy()
            # no out=, then another array as the target: the input is left as it was
            for out in (None, {"x": np.full_like(x0, 7.0)}):
                got = k(**arrays, out=out)
                _same(got["x"], want["x"], f"{name} {path} out={out is not None}")
                assert np.array_equal(arrays["x"], x0, equal_nan=True), f"{name} {path}: the input was written"
                if out is not None:
                    assert got["x"] is out["x"]
            # the in-place idiom: the same array as the input and the target
            x = arrays["x"]
            got = k(**arrays, out={"x": x})
            assert got["x"] is x
            _same(x, want["x"], f"{name} {path} in place")


@pytest.mark.parametrize("name", ["scale", "multiply", "two statements"])
def test_a_target_overlapping_its_input_is_computed_from_the_input(name):
    """Views of one array, the target shifted by a row against the input: read before
    written, as if the input had been copied first (the general path copies it)."""
    source = PROGRAMS[name][0]
    reference = tl.compile(source, backend="interp")
    for path, k in _paths(source).items():
        arrays = _inputs(name, 5)
        x0 = arrays["x"]
        whole = np.zeros((x0.shape[0] + 1, *x0.shape[1:]))
        whole[:-1] = x0
        arrays["x"] = whole[:-1]
        want = reference(**{**arrays, "x": x0.copy()})
        target = whole[1:]
        got = k(**arrays, out={"x": target})
        _same(np.array(got["x"]), want["x"], f"{name} {path}")
        _same(target, want["x"], f"{name} {path}: the target")


def test_a_read_only_or_strided_input_is_read_where_it_is():
    source = PROGRAMS["multiply"][0]
    for path, k in _paths(source).items():
        arrays = _inputs("multiply", 1)
        want = arrays["x"] * arrays["v"]
        frozen = arrays["x"].copy()
        frozen.flags.writeable = False
        assert np.array_equal(k(**{**arrays, "x": frozen})["x"], want), path
        wide = np.zeros((N, 2 * N))
        wide[:, ::2] = arrays["x"]
        assert np.array_equal(k(**{**arrays, "x": wide[:, ::2]}, out={"x": np.empty((N, N))})["x"], want), path


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_function_reads_the_input_where_it_is_sure_to(name):
    """The C: the input pointer after the slots; read in the loads up to the first
    assignment (no ``restrict`` on the buffer then), else copied when it differs."""
    source, _, reads = PROGRAMS[name]
    k = tl.compile(source, backend="c")
    text = k.target.source
    function, slots, inputs = k.target._only
    slot = k.target.names.index("x")
    assert inputs == (slot,)
    assert f"const real *v{slot}_in" in text
    copies = f"if (v{slot}_in != v{slot}) memcpy(v{slot}, v{slot}_in" in text
    if reads is True:
        assert not copies and f"v{slot}_in[" in text and f"real *v{slot}," in text
    elif reads is False:
        assert copies


def test_input_reads_refuses_what_it_cannot_be_sure_of():
    """A second store (a row update starts with one), a load after the store, a parallel
    loop, no store at all: None (the function copies instead)."""
    from tensorlang.loops import ir as loops

    def nest(*body):
        return loops.Nest(statement=None, body=body)  # type: ignore[arg-type]

    load = loops.Load(0, ("i",))
    elementwise = loops.Loop("i", 4, (loops.Store(0, ("i",), loops.BinOp("*", load, loops.Const(2.0))),))
    assert input_reads((nest(elementwise),), 0) == 1
    assert input_reads((nest(loops.Loop("i", 4, (loops.Store(1, ("i",), load),))), nest(elementwise)), 0) == 2
    update = loops.Loop("i", 4, (loops.Store(0, ("i",), loops.BinOp("+", load, loops.Const(1.0))),))
    assert input_reads((nest(update),), 0) == 1
    twice = loops.Loop("i", 4, (loops.Store(0, ("i",), loops.Const(0.0)), loops.Store(0, ("i",), load)))
    assert input_reads((nest(twice),), 0) is None
    after = loops.Loop("i", 4, (loops.Store(0, ("i",), loops.Const(1.0)), loops.Store(1, ("i",), load)))
    assert input_reads((nest(after),), 0) is None
    parallel = loops.Loop("i", 4, elementwise.body, parallel=True)
    assert input_reads((nest(parallel),), 0) is None
    assert input_reads((nest(loops.Loop("i", 4, (loops.Store(1, ("i",), load),))),), 0) is None  # never stored


def test_the_abi_version_is_in_the_cache_key():
    compiler = c_build.require_compiler()
    key = c_build.cache_key("int f(void) { return 0; }", compiler)
    saved = c_build.ABI_VERSION
    try:
        c_build.ABI_VERSION = saved + "x"
        assert c_build.cache_key("int f(void) { return 0; }", compiler) != key
    finally:
        c_build.ABI_VERSION = saved


def test_with_fma_the_update_adds_to_the_input():
    source = PROGRAMS["update"][0]
    k = tl.compile(source, backend="c", fma=True)
    slot = k.target.names.index("x")
    assert f"v{slot}_in[" in k.target.source
    arrays = _inputs("update", 2, specials=True)
    x0 = arrays["x"].copy()
    want = np.array([np.fma(v, v, x) if hasattr(np, "fma") else x + v * v for v, x in zip(arrays["v"], x0)])
    _same(k(**arrays, out={"x": np.empty(N)})["x"], want, "out= another array")
    assert np.array_equal(arrays["x"], x0, equal_nan=True)
    x = arrays["x"]
    _same(k(**arrays, out={"x": x})["x"], want, "in place")
