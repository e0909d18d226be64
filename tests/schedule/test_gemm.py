"""``schedule.gemm.gemm_of``: a mode product or GEMM step as GEMMs over its buffers as
they are (None where a copy is needed), the one decision the NumPy runner's
``numpy.matmul`` and the C target's BLAS calls share.

Each GEMM is read back from the flat buffers the way BLAS reads them (row-major, leading
dimensions, transpose flags, batch strides) and must give the mode product's definition
``out[P, j, Q] = scale * Σ_m W'[j, m] X[P, m, Q]``."""

import itertools

import numpy as np
import pytest

from tensorlang.lang.einsum.lower import lower
from tensorlang.lang.einsum.subscripts import parse
from tensorlang.schedule.gemm import Gemm, gemm_of, mode_gemm, runs
from tensorlang.schedule.steps import ModeStep, gemm_step
from tensorlang.targets.numpy.matmul import run_matmul


def _as_blas_reads(g: Gemm, flat: dict[int, np.ndarray]) -> np.ndarray:
    """C of every product, computed from the flat buffers as BLAS reads them."""
    result = np.zeros(g.batch * g.m * g.n)
    for t in range(g.batch):
        a = flat[g.a][t * g.stride_a:][: g.m * g.k].reshape((g.k, g.m) if g.trans_a else (g.m, g.k))
        b = flat[g.b][t * g.stride_b:][: g.k * g.n].reshape((g.n, g.k) if g.trans_b else (g.k, g.n))
        c = (a.T if g.trans_a else a) @ (b.T if g.trans_b else b)
        result[t * g.m * g.n:(t + 1) * g.m * g.n] = g.scale * c.ravel()
    return result


@pytest.mark.parametrize("p, m, j, q, transpose",
                         list(itertools.product((1, 3), (1, 4), (2, 5), (1, 6), (False, True))))
def test_the_gemms_of_a_mode_product_compute_its_definition(p, m, j, q, transpose):
    rng = np.random.default_rng(p * 1000 + m * 100 + j * 10 + q)
    w = rng.uniform(-1, 1, (m, j) if transpose else (j, m))
    x = rng.uniform(-1, 1, (p, m, q))
    step = ModeStep(target=2, matrix=0, operand=1, transpose=transpose, p=p, m=m, j=j, q=q, scale=0.5)
    g = mode_gemm(step)
    want = 0.5 * np.einsum("jm,pmq->pjq", w.T if transpose else w, x)
    got = _as_blas_reads(g, {0: w.ravel(), 1: x.ravel()})
    np.testing.assert_allclose(got, want.ravel(), rtol=1e-13)
    assert g.c == 2 and {g.a, g.b} == {0, 1} and g.slots == (0, 1, 2)
    assert (g.batch > 1) == (p > 1 and q > 1)  # one GEMM where P or Q is empty


def test_a_gemm_prints_its_slots_flags_and_extents():
    step = ModeStep(target=2, matrix=0, operand=1, transpose=True, p=3, m=4, j=5, q=6, scale=0.5)
    assert str(mode_gemm(step)) == "v2 = 0.5 · v0ᵀ v1 (5×4 by 4×6), 3 times"
    plain = ModeStep(target=2, matrix=0, operand=1, transpose=False, p=1, m=4, j=5, q=6, scale=1.0)
    assert str(mode_gemm(plain)) == "v2 = v0 v1 (5×4 by 4×6)"


#: (subscripts, what the step is over its buffers as they are: flags, or None for a copy)
GEMM_FORMS = [
    ("ik,kj->ij", "v2 = v0 v1 (3×4 by 4×5)"),
    ("ki,kj->ij", "v2 = v0ᵀ v1 (3×4 by 4×5)"),
    ("ik,jk->ij", "v2 = v0 v1ᵀ (3×4 by 4×5)"),
    ("ik,kj->ji", "v2 = v1ᵀ v0ᵀ (5×4 by 4×3)"),  # the target stored transposed: Cᵀ = Bᵀ Aᵀ
    ("bik,bkj->bij", "v2 = v0 v1 (3×4 by 4×5), 2 times"),
    ("bki,bkj->bij", "v2 = v0ᵀ v1 (3×4 by 4×5), 2 times"),
    ("ibk,bkj->bij", None),  # the batch not leading in A
    ("ilk,kj->ijl", None),  # the left group split by the right one in the target
    ("ikl,klj->ij", "v2 = v0 v1 (3×24 by 24×5)"),
    ("ilk,klj->ij", None),  # the contracted group in another order in A than in B
]


@pytest.mark.parametrize("subscripts, spelled", GEMM_FORMS)
def test_the_gemms_of_a_gemm_step_or_its_copy_compute_its_definition(subscripts, spelled):
    """The C target calls BLAS for exactly the steps ``gemm_of`` spells (``runs``), the
    NumPy runner runs those over views and copies the others: both give the definition."""
    sizes = dict(zip("bijkl", (2, 3, 5, 4, 6)))
    terms = subscripts.split("->")[0].split(",")
    shapes = tuple(tuple(sizes[c] for c in term) for term in terms)
    rng = np.random.default_rng(len(subscripts))
    a, b = (rng.uniform(-1, 1, shape) for shape in shapes)
    (stmt,) = lower(parse(subscripts, shapes)).statements
    x, y = stmt.reads
    step = gemm_step(stmt, {x: 0, y: 1, stmt.target: 2}, {x: shapes[0], y: shapes[1]})
    g = gemm_of(step)
    assert (None if g is None else str(g)) == spelled
    assert runs(step, 2**31 - 1, 1) == ("c" if g is not None else "matmul")
    want = np.einsum(subscripts, a, b)
    if g is not None:
        np.testing.assert_allclose(_as_blas_reads(g, {0: a.ravel(), 1: b.ravel()}), want.ravel(), rtol=1e-13)
    buffers = {0: a, 1: b, 2: np.full(want.shape, np.nan)}
    run_matmul(step, buffers)
    np.testing.assert_allclose(buffers[2], want, rtol=1e-13)
