"""Public objects under contention (issue 47): many threads, many calls, every result kept
and checked against a reference computed without tensorlang.

A call's buffers must be its own: padded result buffers and input copies, temporaries,
the C caller's work buffers, in-place targets, the specialisation and einsum caches.
docs/api.md, "Threads and processes", says which objects are thread-safe; these tests
hold them to it.  The interpreter's switch interval is shortened while a test runs, so
that threads interleave inside a call far more often than they would by default (the
C caller's shared work buffers once went to two calls at once only when numpy released
the GIL between the caller's check and its mark: 22 of 2 400 calls).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.targets import available

HAS_C = "c" in available()
THREADS = 4
CALLS = 150

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

needs_c = pytest.mark.skipif(not HAS_C, reason="no C compiler")


@pytest.fixture(autouse=True)
def _interleave():
    """Threads switch every microsecond, not every 5 ms (Python's default)."""
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(saved)


def hammer(job, threads: int = THREADS, calls: int = CALLS) -> list:
    """Run ``job(thread, call)`` ``calls`` times on each of ``threads`` threads started at
    once; every failed check or exception is returned (the caller asserts none)."""
    failures: list = []
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        start.wait()
        for i in range(calls):
            try:
                problem = job(t, i)
            except Exception as exc:  # noqa: BLE001 - every exception is a failure to report
                problem = f"{type(exc).__name__}: {exc}"
            if problem:
                failures.append((t, i, problem))

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return failures


def inputs(seed: int, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


PRODUCT = "in var A : [33 17]\nin var B : [17 9]\nout var C : [33 9]\nC = A # B . [2 3]\n"
SCALE = "in var v : [3000]\ninout var x : [3000]\nx = x * v\n"


def _product_job(k, layout="C", out=None):
    def job(t, i):
        a, b = inputs(1000 * t + i, (33, 17), (17, 9))
        if layout == "F":
            a, b = np.asfortranarray(a), np.asfortranarray(b)
        if out == "plain":
            target = np.empty((33, 9))
            result = k(A=a, B=b, out={"C": target})["C"]
            if result is not target:
                return "out= target not returned"
        elif out == "padded":
            target = tl.padded_empty((33, 9), 8)
            result = k(A=a, B=b, out={"C": target})["C"]
        else:
            result = k(A=a, B=b)["C"]
        return None if np.allclose(result, a @ b) else "wrong result"
    return job


@needs_c
@pytest.mark.parametrize("pad", [1, 8])
@pytest.mark.parametrize("layout, out", [("C", None), ("F", None), ("C", "plain"), ("C", "padded")])
def test_c_kernel_threads(pad, layout, out):
    """C kernels, padded or not, through every call path: the C caller (C-ordered
    inputs), the Python paths (Fortran-ordered inputs, out= targets)."""
    if out == "padded" and pad == 1:
        pytest.skip("padded_empty targets are for padded kernels")
    k = tl.compile(PRODUCT, backend="c", pad=pad)
    assert hammer(_product_job(k, layout, out)) == []


@needs_c
@pytest.mark.parametrize("pad", [1, 8])
def test_c_caller_work_buffers_threads(pad):
    """The C caller's work buffers (padded inputs' copies, temporaries) go to one call at
    a time: a kernel large enough that numpy releases the GIL while the caller makes its
    buffers, results checked per call."""
    k = tl.compile(SCALE, backend="c", pad=pad)

    def job(t, i):
        v, x = inputs(1000 * t + i, (3000,), (3000,))
        result = k(v=v, x=x)["x"]
        return None if np.array_equal(result, x * v) else "wrong result"
    assert hammer(job) == []


@needs_c
@pytest.mark.parametrize("pad", [1, 8])
def test_in_place_threads(pad):
    """The in-place idiom k(x=x, out={"x": x}), each thread with its own x (a padded one
    under pad=8: written in place, no copy)."""
    k = tl.compile(SCALE, backend="c", pad=pad)

    def job(t, i):
        v, x0 = inputs(1000 * t + i, (3000,), (3000,))
        x = tl.padded_empty((3000,), pad) if pad > 1 else np.empty(3000)
        x[...] = x0
        result = k(v=v, x=x, out={"x": x})["x"]
        return None if result is x and np.array_equal(x, x0 * v) else "wrong result"
    assert hammer(job) == []


@pytest.mark.parametrize("backend", ["numpy", "interp"])
def test_python_targets_threads(backend):
    k = tl.compile(PRODUCT, backend=backend)
    assert hammer(_product_job(k), calls=40) == []


@needs_c
def test_structured_packed_threads():
    """A structured program whose C packs the unique entries of a product (paper 003:
    polynomial regression, examples/structure/polyreg2.tl)."""
    k = tl.compile(str(EXAMPLES / "structure" / "polyreg2.tl"), backend="c")
    assert "packed" in k.code("c")

    def job(t, i):
        (f,) = inputs(1000 * t + i, (64, 4))
        x = np.concatenate([f, np.einsum("ri,rj->rij", f, f).reshape(64, 16)], axis=1)
        return None if np.allclose(k(F=f)["C"], x.T @ x) else "wrong result"
    assert hammer(job, calls=60) == []


@needs_c
def test_symbolic_kernel_threads():
    """A SymbolicKernel called with several shapes at once: each binding compiled once,
    every result right, specializations() readable meanwhile."""
    k = tl.compile("in var A : [n m]\nin var B : [m p]\nout var C : [n p]\nC = A # B . [2 3]\n", backend="c")
    shapes = [(3, 4, 5), (6, 2, 3), (5, 5, 5), (2, 7, 1)]

    def job(t, i):
        n, m, p = shapes[(t + i) % len(shapes)]
        a, b = inputs(1000 * t + i, (n, m), (m, p))
        result = k(A=a, B=b)["C"]
        k.specializations()
        return None if np.allclose(result, a @ b) else "wrong result"
    assert hammer(job, calls=60) == []
    assert sorted(tuple(s.values()) for s in k.specializations()) == sorted(shapes)


@pytest.mark.slow
def test_einsum_threads():
    """tl.einsum from many threads, the same and different shapes (its call cache)."""
    cases = [("ij,jk->ik", (5, 6), (6, 7)), ("ij,jk->ik", (3, 3), (3, 3)), ("ijk,kl->ijl", (2, 3, 4), (4, 5)),
             ("ni,nj->ij", (20, 4), None)]

    def job(t, i):
        subscripts, s1, s2 = cases[(t + i) % len(cases)]
        (a,) = inputs(1000 * t + i, s1)
        b = a if s2 is None else inputs(7 + i, s2)[0]
        return None if np.allclose(tl.einsum(subscripts, a, b), np.einsum(subscripts, a, b)) else "wrong result"
    assert hammer(job, calls=60) == []


@pytest.mark.slow
def test_fields_threads():
    """A field's probe (compiled once per field, scratch per call) from many threads."""
    rng = np.random.default_rng(0)
    data = rng.normal(size=(24, 24))
    f = tl.field(data, "ctmr")
    g = tl.grad(f)
    points = [rng.uniform(3, 20, size=(50 + k, 2)) for k in range(5)]
    expected = [(f.probe(p), g.probe(p)) for p in points]

    def job(t, i):
        n = (t + i) % len(points)
        values, grads = f.probe(points[n], threads=2), g.probe(points[n], threads=2)
        return None if np.array_equal(values, expected[n][0]) and np.allclose(grads, expected[n][1]) \
            else "wrong result"
    assert hammer(job, calls=30) == []


def test_builder_threads():
    """The same builder expression built at once from six threads: every build accepted,
    every kernel right."""
    def expression():
        a, b, u = tl.var("A", (4, 5)), tl.var("B", (5, 6)), tl.var("u", (4, 6))
        return {"C": tl.contract(tl.outer(a, b), (2, 3)) * 2.0 + u, "D": tl.transpose(u) * 0.5}

    shared = expression()

    def job(t, i):
        k = tl.build(shared if i % 2 else expression(), backend="numpy")
        a, b, u = inputs(1000 * t + i, (4, 5), (5, 6), (4, 6))
        r = k(A=a, B=b, u=u)
        return None if np.allclose(r["C"], 2 * a @ b + u) and np.allclose(r["D"], u.T * 0.5) else "wrong result"
    assert hammer(job, threads=6, calls=8) == []
