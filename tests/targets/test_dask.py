"""The Dask target (issue [dask]): kernels run chunk by chunk over Dask arrays.

The data-parallel analysis (analysis/batch.py) on its own, then chunked runs against the
single-process result: with Dask's local schedulers, and on a
``dask.distributed.LocalCluster`` of two worker processes (kernels travel as program
text and compile on the workers), including a worker killed in the middle of a run.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.kernel import Options
from tensorlang.specialize import KernelSpec, run_chunk

from corpus import EXAMPLES, kron3

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
# left out of the quick tier: Dask's schedulers, a local cluster's worker processes and
# the out-of-core run cost about 10 s of CPU in all (docs/architecture.md, "Tests")
pytestmark = pytest.mark.slow

COVARIANCE = """
// the covariance (Gram) matrix of N rows of p features, and the column sums
in var X : [N p]
out var C : [p p]
out var s : [p]
C[i,j] = sum(r) X[r,i] * X[r,j]
s[i] = sum(r) X[r,i]
"""

#: polynomial regression of degree 2: features f and their products, x = f ⊕ vec(f⊗f),
#: and the covariance of x over the rows (written on the two parts)
POLY2 = """
in var F : [N p]
out var G11 : [p p]
out var G12 : [p p p]
out var G22 : [p p p p]
G11[i,j] = sum(r) F[r,i] * F[r,j]
G12[i,j,k] = sum(r) F[r,i] * F[r,j] * F[r,k]
G22[i,j,k,l] = sum(r) F[r,i] * F[r,j] * F[r,k] * F[r,l]
"""


def interpolation_inputs(rng, E, n):
    return {"A": rng.standard_normal((n, n)), "B": rng.standard_normal((n, n)), "C": rng.standard_normal((n, n)),
            "u": rng.standard_normal((E, n, n, n))}


# ------------------------------------------------------------------ the analysis
@pytest.mark.parametrize("src, batch, words", [
    ("in var A : [E E]\nout var s : []\ns = A . [1 2]\n", "E", ["2 dimensions"]),
    ("in var x : [E]\nout var y : [E]\ny[i] = sum(j) x[j]\n", "E", ["read at j", "batch index is i"]),
    ("in var x : [E]\nout var y : []\ny[] = max(j) x[j]\n", "E", ["outside a sum over the whole batch"]),
    ("in var x : [E]\nout var y : []\nout var z : []\ny[] = sum(j) x[j]\nz[] = y * 2\n", "E", ["reads 'y'"]),
    ("in var x : [E]\nout var y : [E]\ny[i] = x[1] + x[i]\n", "E", ["read at 1"]),
    ("in var x : [E]\nin var M : [E E]\nout var y : [E]\ny[i] = sum(j) M[i,j] * x[j]\n", "E", ["2 dimensions"]),
    ("in var x : [E n]\nout var y : [n]\ny[i] = sum(j) x[j,i] + 1\n", "E", ["outside a sum"]),
    ("in var x : [E]\nout var y : [E]\ny[i] = x[i]\n", "n", ["symbolic size"]),
    # a where-equation on the batch position holds of the whole array (each chunk said "sizes E = 1 do not fit")
    ("in var x : [E m] where i1 = 2\nout var y : [E m]\ny[i,j] = x[i,j] * 2\n", "E",
     ["'x' is declared where i1 = 2", "equation on its batch position i1", "not of each chunk"]),
])
def test_programs_that_are_not_data_parallel_say_why(src, batch, words):
    k = tl.compile(src, backend="numpy")
    arrays = {name: np.ones(tuple(3 for _ in k.shapes[name])) for name in k.inputs}
    with pytest.raises(tl.TensorLangError) as info:
        k.dask(arrays, batch=batch)
    assert info.value.code == "input"
    for word in words:
        assert word in info.value.message, info.value.message


def test_transposition_that_keeps_the_batch_is_data_parallel():
    k = tl.compile("in var A : [E n]\nout var B : [n E]\nB = A ^ [1 2]\n", backend="numpy")
    a = np.arange(12.0).reshape(6, 2)
    got = k.dask(A=da.from_array(a, chunks=(4, 2)), batch="E")["B"]
    assert got.shape == (2, 6)
    np.testing.assert_array_equal(got.compute(scheduler="sync"), a.T)


def test_a_where_equation_beside_the_batch_runs_chunk_by_chunk():
    k = tl.compile("in var x : [E m] where i2 = 2\nout var y : [E m]\ny[i,j] = x[i,j] * 2\n", backend="numpy")
    x = np.zeros((5, 3))
    x[:, 1] = np.arange(5.0)
    got = k.dask(x=x, batch="E", chunks=2)["y"].compute(scheduler="sync")
    np.testing.assert_array_equal(got, 2 * x)


# ------------------------------------------------------------------ local schedulers
@pytest.mark.parametrize("backend", tl.available_backends())
def test_covariance_over_chunks_equals_one_process(backend):
    k = tl.compile(COVARIANCE, backend=backend)
    X = np.random.default_rng(1).standard_normal((1003, 5))
    X[7, 2] = np.nan  # ⊥ in one chunk stays ⊥ in the sum
    results = k.dask(X=da.from_array(X, chunks=(100, 5)), batch="N", split_every=3)
    C, s = dask.compute(results["C"], results["s"], scheduler="threads")
    whole = k(X=X)
    np.testing.assert_allclose(C, whole["C"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s, whole["s"], rtol=1e-12, atol=1e-12)
    assert np.isnan(C[2]).all() and np.isnan(C[:, 2]).all() and not np.isnan(C[0, 1])


def test_interpolation_over_chunked_elements_and_numpy_inputs():
    k = tl.compile(EXAMPLES / "sizes" / "interpolation.tl")
    i = interpolation_inputs(np.random.default_rng(2), 37, 4)
    v = k.dask({**i, "u": da.from_array(i["u"], chunks=(10, 2, 4, 4))}, batch="E")["v"]
    assert v.shape == (37, 4, 4, 4) and v.chunks[0] == (10, 10, 10, 7)
    np.testing.assert_allclose(v.compute(scheduler="sync"), kron3(i["A"], i["B"], i["C"], i["u"]), rtol=1e-12, atol=1e-12)
    # a numpy input with the batch is cut into chunks= pieces
    v = k.dask(i, batch="E", chunks=8)["v"]
    assert v.chunks[0] == (8, 8, 8, 8, 5)


def test_polynomial_regression_moments_over_chunks():
    k = tl.compile(POLY2)
    F = np.random.default_rng(3).standard_normal((500, 3))
    got = k.dask(F=da.from_array(F, chunks=(64, 3)), batch="N")
    g = dask.compute(got, scheduler="sync")[0]
    np.testing.assert_allclose(g["G22"], np.einsum("ri,rj,rk,rl->ijkl", F, F, F, F), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(g["G12"], np.einsum("ri,rj,rk->ijk", F, F, F), rtol=1e-11, atol=1e-11)


def test_mismatched_batch_lengths_and_bad_inputs_are_input_errors():
    k = tl.compile("in var x : [E]\nin var y : [E]\nout var z : [E]\nz = x + y\n")
    with pytest.raises(tl.TensorLangError) as info:
        k.dask(x=da.ones(10, chunks=5), y=da.ones(11, chunks=5))
    assert info.value.code == "input" and "batch dimension" in info.value.message
    with pytest.raises(tl.TensorLangError) as info:
        k.dask(x=da.ones(10, chunks=5))
    assert info.value.code == "input" and "'y'" in info.value.message
    with pytest.raises(tl.TensorLangError) as info:
        k.dask(x=da.ones(10, chunks=5), y=da.ones(10, chunks=5), w=np.ones(3))
    assert info.value.code == "input" and "'w'" in info.value.message


def test_the_sizes_beside_the_batch_are_bound_as_a_call_binds_them():
    k = tl.compile("in var x : [E n]\nin var y : [E n]\nout var z : [E n]\nz = x + y\n")
    with pytest.raises(tl.TensorLangError) as info:
        k.dask(x=da.ones((10, 3), chunks=5), y=da.ones((10, 4), chunks=5), batch="E")
    assert info.value.code == "input" and "size 'n' is 3 in 'x' (dimension 2) but 4 in 'y' (dimension 2)" in info.value.message
    with pytest.raises(tl.TensorLangError) as info:
        k.dask(x=da.ones((10, 0), chunks=5), y=da.ones((10, 0), chunks=5), batch="E")
    assert info.value.code == "input" and "sizes are positive" in info.value.message


def test_kernels_travel_as_text_and_options():
    k = tl.compile(COVARIANCE, backend="numpy")
    # pickle's refusals: TypeError (a mappingproxy here), AttributeError or PicklingError (a local object)
    with pytest.raises((TypeError, AttributeError, pickle.PicklingError)):
        pickle.dumps(k.specialize(N=2, p=2).target)  # a loaded kernel is never shipped...
    spec = KernelSpec(COVARIANCE, "<cov>", "tl", Options("numpy", np.dtype("float64")), (("p", 2),))
    again = pickle.loads(pickle.dumps(spec))  # ...its spec is
    X = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(run_chunk(again, {"X": X}, {})["C"], X.T @ X)


# ------------------------------------------------------------------ a cluster of processes
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=50)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.slow
def test_two_worker_processes_give_the_single_process_results(client):
    k = tl.compile(EXAMPLES / "sizes" / "interpolation.tl")
    i = interpolation_inputs(np.random.default_rng(4), 40, 3)
    v = k.dask({**i, "u": da.from_array(i["u"], chunks=(6, 3, 3, 3))}, batch="E")["v"].compute()
    np.testing.assert_allclose(v, kron3(i["A"], i["B"], i["C"], i["u"]), rtol=1e-12, atol=1e-12)
    cov = tl.compile(COVARIANCE)
    X = np.random.default_rng(5).standard_normal((2000, 4))
    C = cov.dask(X=da.from_array(X, chunks=(250, 4)), batch="N")["C"].compute()
    np.testing.assert_allclose(C, X.T @ X, rtol=1e-11, atol=1e-11)
    # the chunks ran in the workers' processes
    pids = set(client.run(os.getpid).values())
    assert os.getpid() not in pids and len(pids) == 2


def _slow(block):
    import time

    time.sleep(0.2)
    return block


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_retried_and_the_result_is_right(client):
    cov = tl.compile(COVARIANCE)
    X = np.random.default_rng(6).standard_normal((4000, 3))
    rows = da.from_array(X, chunks=(200, 3)).map_blocks(_slow, dtype=X.dtype)  # 20 chunks of 0.2 s
    future = client.compute(cov.dask(X=rows, batch="N")["C"])
    import time

    time.sleep(1.0)
    victim = sorted(client.scheduler_info()["workers"])[0]
    try:  # the nanny starts a new worker; Dask reruns the lost tasks
        client.run(os._exit, 1, workers=[victim])
    except Exception:  # noqa: BLE001 - the worker dies before it can answer: that is the point
        pass
    C = future.result(timeout=120)
    np.testing.assert_allclose(C, X.T @ X, rtol=1e-11, atol=1e-11)
    assert victim not in client.scheduler_info()["workers"]  # it really died (its replacement has a new address)


def test_the_out_of_core_example_on_a_small_file(client, tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("covariance_out_of_core",
                                                  EXAMPLES / "dask" / "covariance_out_of_core.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    path = tmp_path / "rows.npy"
    example.write_rows(path, 30_001, 5, slice_rows=7_000)
    C = example.covariance(path, chunk=4_000)["C"].compute()
    np.testing.assert_allclose(C, example.reference(path, slice_rows=9_000), rtol=1e-11)


@pytest.mark.slow
def test_a_kernel_with_numbers_only_says_how_to_chunk():
    k = tl.compile("in var x : [4]\nout var y : [4]\ny = x + x\n", backend="numpy")
    with pytest.raises(tl.TensorLangError) as info:
        k.dask(x=np.ones(4))
    assert info.value.code == "input" and "symbolic size" in info.value.message
