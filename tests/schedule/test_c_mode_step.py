"""The C back end's mode-product step (``schedule.steps.ModeStep``).

``target[P, j, Q] = scale * Σ_m W[j, m] X[P, m, Q]`` — one index of a big tensor contracted
with a matrix, the new index where the contracted one was — runs as one numpy.matmul that
reads X and writes the target in place.  Each variant (P empty, Q empty, both; W indexed
``[j, m]`` or ``[m, j]``, first or second in the product; scale factors) must take the
step when it is big enough and agree with the reference interpreter; statements the step
must not take (or that are too fine-grained for it) still compute the right values.
"""

import tracemalloc

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.schedule.steps import LoopStep, ModeStep
from tensorlang.targets.c import build as c_build
from tensorlang.targets.numpy.matmul import run_matmul

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")


def program(shapes: dict, statement: str, out: str = "t") -> str:
    decls = "".join(f"{'out' if name == out else 'in'} var {name} : [{' '.join(map(str, shape))}]\n"
                    for name, shape in shapes.items())
    return decls + statement + "\n"


def inputs(shapes: dict, out: str = "t", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(-1, 1, shape) for name, shape in shapes.items() if name != out}


def check(shapes: dict, statement: str, out: str = "t"):
    """Compile with the C back end, compare with the interpreter; return the C kernel."""
    src = program(shapes, statement, out)
    k = tl.compile(src, backend="c")
    args = inputs(shapes, out)
    got = k(**args)[out]
    want = tl.compile(src, backend="interp")(**args)[out]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    return k


def mode_steps(k) -> list:
    return [step for step in k.target.steps if isinstance(step, ModeStep)]


def big_batches():
    """The smallest n for which t[e,j,k] = Σ_m B[j,m] u[e,m,k] with B [n n] and u [E n n]
    (P = E, Q = n) is a batched mode step: each GEMM big enough to pay."""
    n = 16
    while not ModeStep(0, 1, 2, False, 2, n, n, n, 1.0).pays():
        n *= 2
    return n


# ---------------------------------------------------------------- variants
N, E = 8, 512  # u is [E N N N]: 2^18 elements, 2^21 multiply-adds per pairwise step

PAIRWISE = {  # the interpolation kernel's first pairwise step and its variants (Q empty)
    "matrix second, [new, contracted]": "t[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q]",
    "matrix first, [new, contracted]": "t[e,l,m,k] = sum(q) C[k,q] * u[e,l,m,q]",
    "matrix second, [contracted, new]": "t[e,l,m,k] = sum(q) u[e,l,m,q] * C[q,k]",
    "matrix first, [contracted, new]": "t[e,l,m,k] = sum(q) C[q,k] * u[e,l,m,q]",
}


@pytest.mark.parametrize("statement", PAIRWISE.values(), ids=PAIRWISE.keys())
def test_q_empty_is_one_gemm(statement):
    k = check({"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}, statement)
    (step,) = mode_steps(k)
    assert (step.p, step.m, step.j, step.q) == (E * N * N, N, N, 1)
    assert step.transpose == ("C[q,k]" in statement)


@pytest.mark.parametrize("statement", [
    "t[k,e,l,m] = sum(q) C[k,q] * u[q,e,l,m]",
    "t[k,e,l,m] = sum(q) u[q,e,l,m] * C[k,q]",
    "t[k,e,l,m] = sum(q) C[q,k] * u[q,e,l,m]",
    "t[k,e,l,m] = sum(q) u[q,e,l,m] * C[q,k]",
])
def test_p_empty_is_one_gemm(statement):
    k = check({"C": (N, N), "u": (N, E, N, N), "t": (N, E, N, N)}, statement)
    (step,) = mode_steps(k)
    assert (step.p, step.m, step.j, step.q) == (1, N, N, E * N * N)


def test_rectangular_matrices_interpolate_to_more_or_fewer_points():
    # 6 -> 10 points along the last axis, 10 -> 3 along the first
    k = check({"C": (10, 6), "u": (300, 6, 6, 6), "t": (300, 6, 6, 10)}, "t[e,l,m,k] = sum(q) C[k,q] * u[e,l,m,q]")
    assert [(s.p, s.m, s.j, s.q) for s in mode_steps(k)] == [(300 * 36, 6, 10, 1)]
    k = check({"C": (10, 3), "u": (10, 200, 6, 6), "t": (3, 200, 6, 6)}, "t[k,e,l,m] = sum(q) u[q,e,l,m] * C[q,k]")
    assert [(s.p, s.m, s.j, s.q) for s in mode_steps(k)] == [(1, 10, 3, 200 * 36)]


@pytest.mark.parametrize("statement", [
    "t[e,j,k] = sum(m) B[j,m] * u[e,m,k]",
    "t[e,j,k] = sum(m) u[e,m,k] * B[j,m]",
    "t[e,j,k] = sum(m) B[m,j] * u[e,m,k]",
    "t[e,j,k] = sum(m) u[e,m,k] * B[m,j]",
])
def test_batched_mode_products_with_enough_work_per_gemm(statement):
    n = big_batches()
    k = check({"B": (n, n), "u": (3, n, n), "t": (3, n, n)}, statement)
    (step,) = mode_steps(k)
    assert step.batched and (step.p, step.m, step.j, step.q) == (3, n, n, n)


@pytest.mark.parametrize("statement", [
    "t[e,l,j,k,r] = sum(m) B[j,m] * u[e,l,m,k,r]",
    "t[e,l,j,k,r] = -2 * sum(m) u[e,l,m,k,r] * B2[m,j]",
])
def test_batched_mode_product_over_several_axes_on_each_side(statement, monkeypatch):
    # P = (e, l), Q = (k, r), matrix rectangular: one matmul over reshaped views, whatever
    # the rule says about the size of its GEMMs
    monkeypatch.setattr(ModeStep, "pays", lambda step, from_c=False: True)
    k = check({"B": (7, 5), "B2": (5, 7), "u": (60, 4, 5, 3, 8), "t": (60, 4, 7, 3, 8)}, statement)
    (step,) = mode_steps(k)
    assert step.batched and (step.p, step.m, step.j, step.q) == (240, 5, 7, 24)


@pytest.mark.parametrize("statement, scale", [
    ("t[e,l,m,k] = 2 * sum(q) u[e,l,m,q] * C[k,q]", 2.0),
    ("t[e,l,m,k] = -(sum(q) C[q,k] * u[e,l,m,q])", -1.0),
    ("t[e,l,m,k] = sum(q) -0.5 * u[e,l,m,q] * C[k,q]", -0.5),
    ("t[e,l,m,k] = -3 * sum(q) C[k,q] * (2 * u[e,l,m,q])", -6.0),
])
def test_scale_factors_are_applied(statement, scale):
    k = check({"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}, statement)
    (step,) = mode_steps(k)
    assert step.scale == scale


def test_interpolation_kernel_as_pairwise_statements(monkeypatch):
    monkeypatch.setenv("TENSORLANG_FUSE", "0")  # the statement-by-statement schedule (fusion: test_fusion.py)
    """The three pairwise steps of v[e,i,j,k] = Σ A[i,l] B[j,m] C[k,q] u[e,l,m,q], one
    program: whichever step each statement gets, the result is the interpreter's."""
    n, e = 8, 256
    src = (f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nin var C : [{n} {n}]\nin var u : [{e} {n} {n} {n}]\n"
           f"out var v : [{e} {n} {n} {n}]\nvar t1 : [{e} {n} {n} {n}]\nvar t2 : [{e} {n} {n} {n}]\n"
           "t1[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q]\n"
           "t2[e,l,j,k] = sum(m) B[j,m] * t1[e,l,m,k]\n"
           "v[e,i,j,k] = sum(l) A[i,l] * t2[e,l,j,k]\n")
    rng = np.random.default_rng(1)
    args = {name: rng.uniform(-1, 1, shape) for name, shape in
            {"A": (n, n), "B": (n, n), "C": (n, n), "u": (e, n, n, n)}.items()}
    k = tl.compile(src, backend="c")
    assert mode_steps(k)  # the first statement at least is a plain GEMM
    want = np.einsum("il,jm,kq,elmq->eijk", args["A"], args["B"], args["C"], args["u"])
    np.testing.assert_allclose(k(**args)["v"], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k(**args)["v"], tl.compile(src, backend="interp")(**args)["v"], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- no copies
def buffers_of(k, args):
    return [args[name] if name in args else np.empty(shape) for name, shape in zip(k.target.names, k.target.shapes)]


@pytest.mark.parametrize("shapes, statement", [
    ({"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}, "t[e,l,m,k] = sum(q) C[q,k] * u[e,l,m,q]"),
    ({"C": (N, N), "u": (N, E, N, N), "t": (N, E, N, N)}, "t[k,e,l,m] = sum(q) u[q,e,l,m] * C[q,k]"),
    ({"B": (32, 32), "u": (4, 32, 1024), "t": (4, 32, 1024)}, "t[e,j,k] = sum(m) u[e,m,k] * B[m,j]"),
])
def test_the_step_reads_x_and_writes_the_target_without_copies(shapes, statement):
    src = program(shapes, statement)
    k = tl.compile(src, backend="c")
    (step,) = mode_steps(k)
    args = inputs(shapes)
    buffers = buffers_of(k, args)
    target = buffers[step.target]
    tracemalloc.start()
    try:
        run_matmul(step, buffers)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < target.nbytes // 16, peak  # numpy's allocations are traced: no copy of X or the target
    assert buffers[step.target] is target
    want = tl.compile(src, backend="interp")(**args)["t"]
    np.testing.assert_allclose(target, want, rtol=1e-12, atol=1e-13)


def test_out_buffers_are_written_in_place():
    shapes = {"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}
    k = tl.compile(program(shapes, "t[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q]"), backend="c")
    assert mode_steps(k)
    args = inputs(shapes)
    out = np.zeros(shapes["t"])
    assert k(**args, out={"t": out})["t"] is out
    np.testing.assert_allclose(out, np.einsum("elmq,kq->elmk", args["u"], args["C"]), rtol=1e-12, atol=1e-13)


def test_nan_and_inf_propagate_like_the_interpreter():
    shapes = {"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}
    src = program(shapes, "t[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q]")
    k = tl.compile(src, backend="c")
    assert mode_steps(k)
    args = inputs(shapes)
    args["u"][3, 1, 2, 5], args["u"][7, 0, 0, 0], args["C"][2, 4] = np.nan, np.inf, -np.inf
    got, want = k(**args)["t"], tl.compile(src, backend="interp")(**args)["t"]
    assert np.isnan(want).any() and np.isinf(want).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


def test_float32():
    shapes = {"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}
    src = program(shapes, "t[e,l,m,k] = sum(q) C[q,k] * u[e,l,m,q]")
    k = tl.compile(src, backend="c", dtype="float32")
    assert mode_steps(k)
    args = {name: a.astype(np.float32) for name, a in inputs(shapes).items()}
    got = k(**args)["t"]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.einsum("elmq,qk->elmk", args["u"], args["C"]), rtol=1e-5, atol=1e-5)


def test_the_c_source_names_the_step():
    shapes = {"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}
    code = tl.compile(program(shapes, "t[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q]"), backend="c").code("c")
    # a call of BLAS in the C source where a BLAS was found (machine/blas.py), else numpy.matmul's comment
    assert ("/* BLAS step (mode product, gemm in C): t[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q] */" in code
            or "/* BLAS step (numpy.matmul (mode product)): t[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q] */" in code)


# ---------------------------------------------------------------- not mode products
@pytest.mark.parametrize("shapes, statement", [
    # X has a repeated index (a diagonal): excluded from BLAS altogether
    ({"C": (N, N), "u": (E, N, N, N), "t": (E, N, N)}, "t[e,l,k] = sum(q) u[e,l,l,q] * C[k,q]"),
    # a fixed position in X
    ({"C": (N, N), "u": (E, N, N, N), "t": (E, N, N)}, "t[e,l,k] = sum(q) u[e,l,2,q] * C[k,q]"),
    # a non-finite scale factor: 0 * inf must stay NaN element by element
    ({"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}, "t[e,l,m,k] = 1e999 * sum(q) u[e,l,m,q] * C[k,q]"),
])
def test_excluded_statements_stay_loop_nests(shapes, statement):
    k = check(shapes, statement)
    assert all(isinstance(step, LoopStep) for step in k.target.steps), k.target.steps


def test_a_statement_reading_its_own_target_is_not_a_mode_step():
    shapes = {"C": (N, N), "t": (E, N, N, N)}
    src = f"in var C : [{N} {N}]\ninout var t : [{E} {N} {N} {N}]\nt[e,l,m,k] = sum(q) t[e,l,m,q] * C[k,q]\n"
    k = tl.compile(src, backend="c")
    assert all(isinstance(step, LoopStep) for step in k.target.steps), k.target.steps
    args = inputs(shapes, out=None)
    np.testing.assert_allclose(k(**args)["t"], tl.compile(src, backend="interp")(**args)["t"], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("shapes, statement", [
    # the new index is not where the contracted one was: a GEMM with a transposed result
    ({"C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}, "t[e,k,l,m] = sum(q) u[e,l,m,q] * C[k,q]"),
    # the matrix's other index also appears in X: a batched GEMM, not a mode product
    ({"C": (N, N), "u": (E, N, N), "t": (E, N)}, "t[e,k] = sum(q) u[e,k,q] * C[k,q]"),
    # both operands big: a plain contraction of two tensors
    ({"a": (64, 32, 32), "b": (32, 32, 48), "t": (64, 48)}, "t[i,j] = sum(k,l) a[i,k,l] * b[k,l,j]"),
    # a third factor (a scalar variable as the scale): the opt_einsum step
    ({"s": (), "C": (N, N), "u": (E, N, N, N), "t": (E, N, N, N)}, "t[e,l,m,k] = s * sum(q) u[e,l,m,q] * C[k,q]"),
])
def test_other_contractions_keep_their_steps(shapes, statement):
    k = check(shapes, statement)
    assert not mode_steps(k), k.target.steps


def test_fine_grained_batched_mode_products_run_as_loop_nests():
    """n = 4: 65536 GEMMs of 4x4 by 4x4; the loop nest is several times faster."""
    n, e = 4, 1024
    k = check({"B": (n, n), "u": (e, n, n, n), "t": (e, n, n, n)}, "t[e,l,j,k] = sum(m) B[j,m] * u[e,l,m,k]")
    assert not ModeStep(0, 1, 2, False, e * n, n, n, n, 1.0).pays()
    assert all(isinstance(step, LoopStep) for step in k.target.steps), k.target.steps
