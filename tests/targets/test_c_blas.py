"""BLAS steps in generated C (machine/blas.py finds the functions, blascall.py prints
the calls): every GEMM form and mode product against the reference with ⊥, ±inf and ±0
among the inputs, in each calling convention the discovery can hand a kernel (numpy's
ILP64 CBLAS, an LP64 CBLAS, scipy's Fortran wrappers), both dtypes; generated programs
with the BLAS threshold forced low; the fallback to numpy.matmul; the C caller taking
such kernels, with the argument checks it had."""

import contextlib

import numpy as np
import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from padding.test_padding_theorem3 import with_specials
from properties.harness import assert_close_to_oracle, cases
from targets.test_c_callext import errors_in_threads
from tensorlang.schedule import steps
from tensorlang.schedule.steps import LoopStep, ModeStep
from tensorlang.machine import blas
from tensorlang.targets.c import callext
from tensorlang.targets.c import build as c_build
from tensorlang.targets import blas_int_max

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0)


# ------------------------------------------------------------------ the BLAS a kernel gets
def _scipy_openblas(letter: str):
    """scipy's own OpenBLAS (LP64: 32-bit integers) through its CBLAS symbols, as
    threadpoolctl lists it once scipy.linalg is loaded; None where there is none."""
    pytest.importorskip("scipy.linalg.cython_blas")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    for lib in threadpoolctl.threadpool_info():
        if lib.get("internal_api") == "openblas" and "scipy" in lib.get("filepath", "").split("site-packages")[-1][:20]:
            found = blas.from_openblas(lib["filepath"], letter)
            if found is not None and found.kind == blas.CBLAS32:
                return found
    return None


def _functions(kind: str, dtype: str):
    letter = {"float64": "d", "float32": "s"}[dtype]
    if kind == "found":
        found = blas.find(dtype)
    elif kind == "lp64 cblas":
        found = _scipy_openblas(letter)
    else:
        pytest.importorskip("scipy.linalg.cython_blas")
        found = blas.from_scipy(letter)
    if found is None:
        pytest.skip(f"no {kind} BLAS here ({blas.why_not(dtype)})")
    return found


KINDS = ("found", "lp64 cblas", "fortran")


@contextlib.contextmanager
def using(kind: str | None, dtype: str = "float64"):
    """Kernels compiled inside get the BLAS of ``kind`` (None: none, the fallback)."""
    functions = None if kind is None else _functions(kind, dtype)
    saved = blas.find
    blas.find = lambda d: functions if functions is None or np.dtype(d).name == dtype else saved(d)
    try:
        yield functions
    finally:
        blas.find = saved


@contextlib.contextmanager
def blas_everywhere():
    """Every BLAS-shaped contraction a BLAS step, batched mode products included, and no
    Gram step (which a Gram product XᵀX takes otherwise on a float64 C kernel)."""
    saved = steps.BLAS_WORK, steps.MODE_BATCH_WORK, steps.MODE_BATCH_MIN, steps.GramStep.why_not
    steps.BLAS_WORK = steps.MODE_BATCH_WORK = steps.MODE_BATCH_MIN = 1
    steps.GramStep.why_not = lambda self, vector_bytes: "BLAS everywhere"  # type: ignore[method-assign]
    try:
        yield
    finally:
        steps.BLAS_WORK, steps.MODE_BATCH_WORK, steps.MODE_BATCH_MIN, steps.GramStep.why_not = saved


def test_the_blas_numpy_loaded_is_found():
    found = blas.find("float64")
    if found is None:
        pytest.skip(f"no BLAS found: {blas.why_not()}")
    assert found.gemm and found.gemv and found.kind in (blas.CBLAS64, blas.CBLAS32, blas.FORTRAN32)
    threadpoolctl = pytest.importorskip("threadpoolctl")
    numpy_libs = [lib["filepath"] for lib in threadpoolctl.threadpool_info()
                  if lib.get("internal_api") == "openblas" and "numpy" in lib.get("filepath", "")]
    if numpy_libs:  # numpy's wheel bundles scipy-openblas, ILP64 (scipy_cblas_dgemm64_)
        assert found.origin in numpy_libs
    assert blas.find("int32") is None and "int32" in blas.why_not("int32")


# ------------------------------------------------------------------ every GEMM form
#: index-form statements, each a different way BLAS sees its operands; the extents make
#: each big enough for BLAS_WORK, or blas_everywhere() does
FORMS = {
    "plain": ("in var A : [7 5]\nin var B : [5 6]\nout var C : [7 6]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n"),
    "A transposed": "in var A : [5 7]\nin var B : [5 6]\nout var C : [7 6]\nC[i,j] = sum(k) A[k,i] * B[k,j]\n",
    "B transposed": "in var A : [7 5]\nin var B : [6 5]\nout var C : [7 6]\nC[i,j] = sum(k) A[i,k] * B[j,k]\n",
    "result transposed": "in var A : [7 5]\nin var B : [5 6]\nout var C : [6 7]\nC[j,i] = sum(k) A[i,k] * B[k,j]\n",
    "two summed": ("in var A : [4 3 5]\nin var B : [3 5 6]\nout var C : [4 6]\n"
                   "C[i,j] = sum(k,l) A[i,k,l] * B[k,l,j]\n"),
    "batched": ("in var A : [3 4 5]\nin var B : [3 5 6]\nout var C : [3 4 6]\n"
                "C[b,i,j] = sum(k) A[b,i,k] * B[b,k,j]\n"),
    "batched, all transposed": ("in var A : [3 5 4]\nin var B : [3 6 5]\nout var C : [3 6 4]\n"
                                "C[b,j,i] = sum(k) A[b,k,i] * B[b,j,k]\n"),
    "matrix times vector": "in var A : [7 5]\nin var x : [5]\nout var y : [7]\ny[i] = sum(k) A[i,k] * x[k]\n",
    "transposed matrix times vector": ("in var A : [5 7]\nin var x : [5]\nout var y : [7]\n"
                                       "y[i] = sum(k) A[k,i] * x[k]\n"),
    "vector times matrix": "in var x : [5]\nin var B : [5 6]\nout var y : [6]\ny[j] = sum(k) x[k] * B[k,j]\n",
    "scaled": "in var A : [7 5]\nin var B : [5 6]\nout var C : [7 6]\nC[i,j] = sum(k) 2.5 * A[i,k] * B[k,j]\n",
    "scaled by zero": ("in var A : [7 5]\nin var B : [5 6]\nout var C : [7 6]\n"
                       "C[i,j] = sum(k) 0 * A[i,k] * B[k,j]\n"),
    "A times A": "in var A : [6 6]\nout var C : [6 6]\nC[i,j] = sum(k) A[i,k] * A[k,j]\n",
    "X transposed times X (syrk)": "in var X : [9 6]\nout var C : [6 6]\nC[i,j] = sum(r) X[r,i] * X[r,j]\n",
    "X times X transposed (syrk)": "in var X : [6 9]\nout var C : [6 6]\nC[i,j] = sum(r) X[i,r] * X[j,r]\n",
    "scaled X transposed times X (syrk)": ("in var X : [9 6]\nout var C : [6 6]\n"
                                           "C[i,j] = sum(r) -1.5 * X[r,i] * X[r,j]\n"),
    "mode, first": ("in var W : [4 5]\nin var X : [5 3 2]\nout var Y : [4 3 2]\n"
                    "Y[j,a,b] = sum(m) W[j,m] * X[m,a,b]\n"),
    "mode, last": "in var W : [4 5]\nin var X : [3 2 5]\nout var Y : [3 2 4]\nY[a,b,j] = sum(m) W[j,m] * X[a,b,m]\n",
    "mode, middle (batched)": ("in var W : [4 5]\nin var X : [3 5 2]\nout var Y : [3 4 2]\n"
                               "Y[a,j,b] = sum(m) W[j,m] * X[a,m,b]\n"),
    "mode, W transposed": ("in var W : [5 4]\nin var X : [3 5 2]\nout var Y : [3 4 2]\n"
                           "Y[a,j,b] = sum(m) W[m,j] * X[a,m,b]\n"),
    "chain (temporaries, tl_kernel)": ("in var A : [6 5]\nin var B : [5 4]\nin var C : [4 7]\nvar T : [5 7]\n"
                                       "out var D : [6 7]\nout var E : [7 6]\n"
                                       "T[k,j] = sum(l) B[k,l] * C[l,j]\nD[i,j] = sum(k) A[i,k] * T[k,j]\n"
                                       "E[j,i] = D[i,j] + 1\n"),
}


def _inputs(kernel, rng, dtype) -> dict:
    roles = kernel.roles()
    return {name: rng.uniform(-1, 1, shape).astype(dtype) for name, shape in kernel.shapes.items()
            if roles[name] in ("in", "inout")}


def _sprinkle(inputs: dict, rng) -> dict:
    for value in inputs.values():
        flat = value.reshape(-1)
        for _ in range(2):
            flat[rng.integers(flat.size)] = SPECIALS[rng.integers(len(SPECIALS))]
    return inputs


def _assert_same(got: dict, want: dict, rtol: float) -> None:
    assert set(got) == set(want)
    for name in want:
        g, w = np.asarray(got[name], np.float64), np.asarray(want[name], np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{name}: ⊥ entries differ")
        np.testing.assert_array_equal(np.isposinf(g), np.isposinf(w), err_msg=name)
        np.testing.assert_array_equal(np.isneginf(g), np.isneginf(w), err_msg=name)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", FORMS)
def test_every_gemm_form_runs_in_c_and_matches_the_interpreter(form, kind, dtype):
    text = FORMS[form]
    rng = np.random.default_rng(abs(hash((form, kind, dtype))) % 2**32)
    with using(kind, dtype), blas_everywhere():
        kernel = tl.compile(text, backend="c", dtype=dtype, opt=False)
    with using(None), blas_everywhere():
        fallback = tl.compile(text, backend="c", dtype=dtype, opt=False)
    target = kernel.target
    assert " in C): " in target.source, target.source
    assert target._only is not None, "the whole schedule is one C function"
    assert not any(isinstance(s, LoopStep) for s in target.steps[:1]), "the statement is a BLAS step"
    reference = tl.compile(text, backend="interp", dtype=dtype)
    rtol = 1e-12 if dtype == "float64" else 1e-4
    for round_ in range(3):
        inputs = _inputs(kernel, rng, dtype)
        if round_:
            inputs = _sprinkle(inputs, rng)
        _assert_same(kernel(**inputs), reference(**inputs), rtol)
        _assert_same(kernel(**inputs), fallback(**inputs), rtol)


@pytest.mark.parametrize("form", [f for f in FORMS if "(syrk)" in f])
def test_a_gram_product_is_one_syrk_and_exactly_symmetric(form):
    """XᵀX (or XXᵀ) computes its upper triangle with SYRK, half GEMM's multiply-adds,
    and copies the lower one from it; A times A (not a transpose) stays GEMM."""
    with blas_everywhere():
        kernel = tl.compile(FORMS[form], backend="c", opt=False)
        square = tl.compile(FORMS["A times A"], backend="c", opt=False)
    assert "syrk in C" in kernel.target.source and "tl_syrk(" in kernel.target.source
    assert "syrk in C" not in square.target.source
    rng = np.random.default_rng(5)
    inputs = _sprinkle(_inputs(kernel, rng, "float64"), rng)
    got = kernel(**inputs)["C"]
    np.testing.assert_array_equal(got, got.T)  # NaN included: the lower triangle is the upper's copy
    _assert_same({"C": got}, tl.compile(FORMS[form], backend="interp")(**inputs), 1e-12)


def test_without_blas_the_steps_run_as_numpy_matmul():
    """The fallback (no BLAS found): the steps are comments, run in Python as before."""
    text = FORMS["chain (temporaries, tl_kernel)"]
    with using(None), blas_everywhere():
        kernel = tl.compile(text, backend="c", opt=False)
        assert blas_int_max("float64") is None
    assert "/* BLAS step (numpy.matmul" in kernel.target.source and "tl_set_blas" not in kernel.target.source
    # BLAS found again: the C the kernel shows is still the C it compiled, not a reprint that calls BLAS
    assert blas_int_max("float64") is not None and kernel.code("c") == kernel.target.source
    assert kernel.target._only is None and kernel.target.c_call is None  # the general path, CKernel.execute
    inputs = _sprinkle(_inputs(kernel, np.random.default_rng(3), "float64"), np.random.default_rng(4))
    _assert_same(kernel(**inputs), tl.compile(text, backend="interp")(**inputs), 1e-12)


def test_no_c_blas_environment_variable_finds_nothing(monkeypatch):
    monkeypatch.setenv("TENSORLANG_NO_C_BLAS", "1")
    blas.clear()
    try:
        assert blas.find("float64") is None
        assert "TENSORLANG_NO_C_BLAS" in blas.why_not()
    finally:
        monkeypatch.delenv("TENSORLANG_NO_C_BLAS")
        blas.clear()


def test_a_copying_step_stays_in_python():
    """An operand whose axes are not grouped in memory would need a copy: that step keeps
    numpy.matmul, and the kernel its Python path, with the same results."""
    text = ("in var A : [4 5 3]\nin var B : [5 6]\nout var C : [4 3 6]\n"
            "C[i,l,j] = sum(k) A[i,k,l] * B[k,j]\n")
    with blas_everywhere():
        kernel = tl.compile(text, backend="c", opt=False)
    assert "/* BLAS step (numpy.matmul" in kernel.target.source
    inputs = _inputs(kernel, np.random.default_rng(1), "float64")
    _assert_same(kernel(**inputs), tl.compile(text, backend="interp")(**inputs), 1e-12)


def test_an_extent_beyond_the_blas_integers_stays_in_python():
    with blas_everywhere():
        kernel = tl.compile(FORMS["plain"], backend="c", opt=False)
    step = kernel.target.steps[0]
    from tensorlang.schedule.gemm import runs

    assert runs(step, 2**31 - 1, 1) == "c"
    assert runs(step, 6, 1) == "matmul"  # 7 rows: more than a BLAS with 6 as its largest integer takes
    assert runs(step, None, 1) == "matmul" and runs(step, None, 2) == "matmul-views"  # no BLAS from C


# ------------------------------------------------------------------ generated programs
@st.composite
def contraction_programs(draw):
    """1-3 BLAS-shaped statements, each ``T[out] = sum(summed) c * X[..] * Y[..]`` with
    random batch, left, summed and right indices (extents 1-5: 1 makes a GEMV), laid
    out in random orders (transposed operands and results, some needing a copy), a
    random scale (0 included), X an input or an earlier result; then its inputs."""
    decls: dict[str, tuple[str, tuple[int, ...]]] = {}
    lines: list[str] = []
    results: list[tuple[str, tuple[int, ...]]] = []
    for s in range(draw(st.integers(1, 3))):
        letters = iter("abcdefgh")
        extent: dict[str, int] = {}

        def fresh(count, extent=extent, letters=letters):
            names = [next(letters) for _ in range(count)]
            for name in names:
                extent[name] = draw(st.integers(1, 5))
            return names

        if results and draw(st.booleans()):  # an earlier result as the left operand
            x, shape = draw(st.sampled_from(results))
            x_idx = [next(letters) for _ in shape]
            extent.update(zip(x_idx, shape))
            roles = [draw(st.sampled_from(("batch", "left", "sum"))) for _ in x_idx]
            if "sum" not in roles:
                roles[-1] = "sum"
            batch = [i for i, r in zip(x_idx, roles) if r == "batch"]
            left = [i for i, r in zip(x_idx, roles) if r == "left"]
            summed = [i for i, r in zip(x_idx, roles) if r == "sum"]
            if decls[x][0] == "out" and draw(st.booleans()):
                decls[x] = ("", shape)  # a temporary
        else:
            batch, left, summed = fresh(draw(st.integers(0, 1))), fresh(draw(st.integers(0, 2))), fresh(
                draw(st.integers(1, 2)))
            x_idx = draw(st.permutations(batch + left + summed))
            x = f"X{s}"
            decls[x] = ("in", tuple(extent[i] for i in x_idx))
        right = fresh(draw(st.integers(0, 2)))
        if not batch + left + right:
            right = fresh(1)
        y_idx = draw(st.permutations(batch + summed + right))
        decls[f"Y{s}"] = ("in", tuple(extent[i] for i in y_idx))
        out = draw(st.permutations(batch + left + right))
        target = f"T{s}"
        decls[target] = ("out", tuple(extent[i] for i in out))
        results.append((target, decls[target][1]))
        scale = draw(st.sampled_from(("", "2.5 * ", "0 * ", "-1 * ")))
        lines.append(f"{target}[{','.join(out)}] = sum({','.join(summed)}) "
                     f"{scale}{x}[{','.join(x_idx)}] * Y{s}[{','.join(y_idx)}]")
    text = "".join(f"{(qual + ' ') if qual else ''}var {name} : [{' '.join(map(str, shape))}]\n"
                   for name, (qual, shape) in decls.items()) + "\n".join(lines) + "\n"
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = {name: rng.uniform(-1, 1, shape) for name, (qual, shape) in decls.items() if qual == "in"}
    return text, inputs


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(program=contraction_programs(), kind=st.sampled_from(KINDS), data=st.data())
def test_generated_contractions_with_blas_in_c_match_the_interpreter(program, kind, data):
    """Unoptimized (the optimizer's algebra changes what inf gives: (inf + 0) * inf is
    not inf * inf + 0 * inf), with ⊥, ±inf and ±0 sprinkled in: the C kernel with BLAS
    steps in C gives the interpreter's ⊥ and ±inf entry for entry, the rest to rounding,
    and the same as the numpy.matmul steps it replaces."""
    text, inputs = program
    note(text)
    with using(kind), blas_everywhere():
        kernel = tl.compile(text, backend="c", opt=False)
    with using(None), blas_everywhere():
        fallback = tl.compile(text, backend="c", opt=False)
    in_c = kernel.target.source.count(" in C): ")
    event(f"BLAS steps in C: {in_c}; all in C: {kernel.target._only is not None}")
    inputs = with_specials(inputs, data)
    _assert_same(kernel(**inputs), tl.compile(text, backend="interp")(**inputs), 1e-9)
    _assert_same(kernel(**inputs), fallback(**inputs), 1e-12)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(program=contraction_programs(), dtype=st.sampled_from(("float64", "float32")))
def test_generated_contractions_optimized_meet_the_reference(program, dtype):
    """With the optimizer (and in float32): the same results as the interpreter."""
    text, inputs = program
    note(text)
    with blas_everywhere():
        kernel = tl.compile(text, backend="c", dtype=dtype)
    inputs = {name: value.astype(dtype) for name, value in inputs.items()}
    _assert_same(kernel(**inputs), tl.compile(text, backend="interp", dtype=dtype)(**inputs),
                 1e-10 if dtype == "float64" else 2e-4)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(case=cases(max_extent=6), data=st.data())
def test_generated_programs_with_blas_steps_in_c(case, data):
    """The harness's random programs with every BLAS-shaped contraction a BLAS step: the
    oracle's bound holds; with specials, the same as the numpy.matmul fallback."""
    note(case.text)
    with blas_everywhere():
        kernel = tl.compile(case.text, backend="c")
    with using(None), blas_everywhere():
        fallback = tl.compile(case.text, backend="c")
    assert_close_to_oracle(case, kernel(**case.inputs), "float64", "c with BLAS in C")
    inputs = with_specials(case.inputs, data)
    _assert_same(kernel(**inputs), fallback(**inputs), 1e-9)


# ------------------------------------------------------------------ calls
MATMUL64 = "in var A : [64 64]\nin var B : [64 64]\nout var C : [64 64]\nC = A # B . [2 3]\n"


def test_a_blas_kernel_takes_the_c_caller_with_the_same_checks():
    if blas.find("float64") is None or callext.extension() is None:
        pytest.skip("no BLAS or no C caller here")
    k = tl.compile(MATMUL64, backend="c")
    assert not isinstance(k.target.steps[0], LoopStep)
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (64, 64)), rng.uniform(-1, 1, (64, 64))
    k(A=a, B=b)
    caller = k._c_call
    assert caller is not None
    before = caller.calls
    np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b, rtol=1e-13, atol=1e-13)
    c = np.empty((64, 64))
    assert k(A=a, B=b, out={"C": c})["C"] is c
    np.testing.assert_allclose(c, a @ b, rtol=1e-13, atol=1e-13)
    assert caller.calls == before + 2
    # what it declines the general path takes or reports, as for any kernel
    np.testing.assert_allclose(k(A=np.asfortranarray(a), B=b)["C"], a @ b, rtol=1e-13, atol=1e-13)
    strided = np.repeat(a, 2, axis=1)[:, ::2]  # a, not C-contiguous
    np.testing.assert_allclose(k(A=strided, B=b)["C"], a @ b, rtol=1e-13, atol=1e-13)
    assert caller.calls == before + 2
    for bad in ({"A": a[:63], "B": b}, {"A": a, "B": b.astype(np.float32)[:, :5]}, {"A": a},
                {"A": a, "B": b, "D": b}):
        with pytest.raises(tl.TensorLangError) as info:
            k(**bad)
        assert info.value.code == "input"
    with pytest.raises(tl.TensorLangError) as info:
        k(A=a, B=b, out={"C": np.empty((64, 63))})
    assert info.value.code == "input"
    with pytest.raises(tl.TensorLangError) as info:
        k(A=a, B=b, out={"C": np.empty((64, 64), np.float32)})
    assert info.value.code == "input"


def test_the_einsum_cache_calls_a_blas_kernel_directly():
    if blas.find("float64") is None:
        pytest.skip(f"no BLAS here: {blas.why_not()}")
    rng = np.random.default_rng(2)
    a, b = rng.uniform(-1, 1, (80, 70)), rng.uniform(-1, 1, (70, 90))
    for _ in range(3):
        np.testing.assert_allclose(tl.einsum("ij,jk->ik", a, b), a @ b, rtol=1e-13, atol=1e-13)


def test_with_blas_in_c_a_single_gemm_pays_from_c_blas_work():
    """Measured (docs/c-backend.md): called from C, one 32x32 GEMM beats the loop nest,
    a batch of small GEMMs or a tall product with K < C_BLAS_MIN does not."""
    if blas.find("float64") is None:
        pytest.skip(f"no BLAS here: {blas.why_not()}")
    n = 32
    assert steps.C_BLAS_WORK <= n**3 < steps.BLAS_WORK
    square = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var C : [{n} {n}]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n"
    k = tl.compile(square, backend="c")
    assert not isinstance(k.target.steps[0], LoopStep)
    assert "C_BLAS_WORK" in k.ir("schedule") and " in C): " in k.code("c")
    assert isinstance(tl.compile(square, backend="c", opt=False).target.steps[0], ModeStep)
    with using(None):  # without BLAS in C, the Python step's threshold
        assert isinstance(tl.compile(square, backend="c").target.steps[0], LoopStep)
    tall = ("in var A : [1024 4]\nin var B : [4 4]\nout var C : [1024 4]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n")
    assert isinstance(tl.compile(tall, backend="c").target.steps[0], LoopStep)  # K = 4 < C_BLAS_MIN
    batched = ("in var A : [8 16 16]\nin var B : [8 16 16]\nout var C : [8 16 16]\n"
               "C[b,i,j] = sum(k) A[b,i,k] * B[b,k,j]\n")
    assert isinstance(tl.compile(batched, backend="c").target.steps[0], LoopStep)


def test_concurrent_calls_of_a_blas_kernel():
    """Large enough to release the GIL (callext.RELEASE_GIL_ELEMENTS): calls from four
    threads at once each get their own result, right."""
    n = 96
    assert 3 * n * n >= callext.RELEASE_GIL_ELEMENTS
    text = f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nout var C : [{n} {n}]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n"
    k = tl.compile(text, backend="c")
    rng = np.random.default_rng(7)
    pairs = [(rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))) for _ in range(4)]
    k(A=pairs[0][0], B=pairs[0][1])

    def work(i):
        a, b = pairs[i]
        for _ in range(25):
            np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b, rtol=1e-12, atol=1e-12)

    errors = errors_in_threads(work, 4)
    assert not errors, errors[0]


# ------------------------------------------------------------------ padded kernels on the C caller
PADDED = "in var v : [13 7]\ninout var x : [13 7]\nout var y : [13 7]\nx = x * v\ny = x + v\n"


def _python_path(kernel):
    """The same kernel with the C caller off (CKernel.run, through the general path)."""
    kernel.target.c_call = None
    kernel.runner.arm()
    return kernel


def test_a_padded_kernel_takes_the_c_caller_for_plain_calls():
    if callext.extension() is None:
        pytest.skip(f"no C caller here: {callext.why_unavailable()}")
    k = tl.compile(PADDED, backend="c", pad=4)
    plain = _python_path(tl.compile(PADDED, backend="c", pad=4))
    rng = np.random.default_rng(3)
    v, x = rng.uniform(-1, 1, (13, 7)), rng.uniform(-1, 1, (13, 7))
    k(v=v, x=x)
    caller = k._c_call
    assert caller is not None and caller.padded
    before = caller.calls
    got, want = k(v=v, x=x), plain(v=v, x=x)
    assert caller.calls == before + 1
    for name in want:  # the same values, and the same kind of array: a view of a padded buffer
        np.testing.assert_array_equal(got[name], want[name])
        assert got[name].shape == want[name].shape and got[name].strides == want[name].strides
        assert got[name].base is not None and got[name].base.nbytes == want[name].base.nbytes
    # out= targets the C caller takes too (their regions copied in C)
    target = np.empty((13, 7))
    assert k(v=v, x=x, out={"y": target})["y"] is target
    np.testing.assert_array_equal(target, want["y"])
    assert caller.calls == before + 2
    padded_v = tl.padded_empty((13, 7), 4)  # a padded_empty input: the same values either way
    padded_v[...] = v
    np.testing.assert_array_equal(k(v=padded_v, x=x)["y"], want["y"])
    counted = caller.calls
    seen = {}
    k.target.store_hook = seen.update  # a test's hook: every call goes to CKernel.run
    k(v=v, x=x)
    assert seen and caller.calls == counted
    k.target.store_hook = None
    k(v=v, x=x)
    assert caller.calls == counted + 1
    with pytest.raises(tl.TensorLangError) as info:
        k(v=v[:12], x=x)
    assert info.value.code == "input"


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(case=cases(max_extent=6), pad=st.sampled_from((2, 4, 8)), data=st.data())
def test_padded_kernels_on_the_c_caller_match_the_python_run(case, pad, data):
    """Generated programs, padded, called twice (the kept padded buffers reused) with ⊥,
    ±inf and ±0 among the inputs: the C caller's results are CKernel.run's, bit for bit."""
    note(case.text)
    k = tl.compile(case.text, backend="c", pad=pad)
    plain = _python_path(tl.compile(case.text, backend="c", pad=pad))
    first = with_specials(case.inputs, data)
    second = with_specials(case.inputs, data)
    for inputs in (first, second, first):
        got, want = k(**inputs), plain(**inputs)
        assert set(got) == set(want)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name])
    event(f"C caller: {k._c_call is not None and k._c_call.calls > 0}")


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(program=contraction_programs(), pad=st.sampled_from((2, 4, 8)), data=st.data())
def test_padded_contractions_on_the_c_caller_match_the_python_run(program, pad, data):
    """Qualified programs with no 0-d result (what the padded C caller takes), loop steps
    and, where they pay, BLAS steps on padded buffers (then CKernel.run runs the call)."""
    text, inputs = program
    note(text)
    k = tl.compile(text, backend="c", pad=pad)
    plain = _python_path(tl.compile(text, backend="c", pad=pad))
    first, second = with_specials(inputs, data), with_specials(inputs, data)
    for values in (first, second, first):
        got, want = k(**values), plain(**values)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name])
            assert got[name].strides == want[name].strides
    event(f"C caller calls: {0 if k._c_call is None else min(k._c_call.calls, 2)}")
