"""Building the graph of a chunked run of several results (``targets/dask``,
``run_chunked``) is linear in the chunks: counted in Python calls and in tasks, not
timed.  Each chunk's Delayed call once culled the whole input graph (1024 chunks took
7 s to build, 20 000 over five minutes); the graph is now written out in one pass."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tensorlang as tl

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

#: a map result (v), a sum (s, a scalar; S, a matrix) and a replicated one (t)
PROGRAM = ("in var u : [E 3]\nin var M : [3 3]\nout var v : [E 3]\nout var s : []\nout var S : [3 3]\n"
           "out var t : [3 3]\nv[e,i] = sum(j) M[i,j] * u[e,j]\ns = sum(e,i) u[e,i] * u[e,i]\n"
           "S[i,j] = sum(e) u[e,i] * u[e,j]\nt = M * 2\n")


@pytest.fixture(scope="module")
def kernel():
    return tl.compile(PROGRAM, backend="numpy")


def _build_calls(kernel, n: int) -> tuple[int, dict]:
    """The Python calls that building a run of ``n`` chunks of one row makes, and its results."""
    u, m = np.ones((n, 3)), np.eye(3)
    kernel.dask(u=u, M=m, chunks=1)  # imports and caches out of the count
    count = [0]

    def profile(frame, event, arg):
        count[0] += event == "call"
    sys.setprofile(profile)
    try:
        results = kernel.dask(u=u, M=m, chunks=1)
    finally:
        sys.setprofile(None)
    return count[0], results


def test_building_a_run_of_several_results_is_linear_in_its_chunks(kernel):
    calls = {n: _build_calls(kernel, n) for n in (128, 256, 512)}
    step1 = calls[256][0] - calls[128][0]
    step2 = calls[512][0] - calls[256][0]
    assert step2 <= 2.2 * step1, (step1, step2)  # twice the chunks added, twice the calls (quadratic: 4x)
    assert step2 / 256 < 100, step2  # calls per added chunk, a constant (once: 3 400 and growing)
    for n, (_, results) in calls.items():  # tasks: a few per chunk, whatever the count
        assert len(dict(results["s"].__dask_graph__())) <= 4 * n + 16
        assert len(dict(results["v"].__dask_graph__())) <= 4 * n + 16


@pytest.mark.parametrize("chunks, split_every", [((4, 1, 7, 2, 9, 3, 3, 8), 2), (3, 3), (37, 8), (1, 5)])
def test_the_graph_written_out_gives_the_single_process_results(kernel, chunks, split_every):
    rng = np.random.default_rng(5)
    u, m = rng.standard_normal((37, 3)), rng.standard_normal((3, 3))
    u[4, 1] = np.nan  # ⊥ in one chunk stays ⊥ in the sums
    results = kernel.dask(u=u, M=m, chunks=chunks, split_every=split_every)
    want = kernel(u=u, M=m)
    with dask.config.set(scheduler="synchronous"):
        got = dask.compute(results)[0]
    assert set(got) == set(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, equal_nan=True, err_msg=name)
    assert results["v"].chunks[0] == (tuple(chunks) if isinstance(chunks, tuple) else da.ones(37, chunks=chunks).chunks[0])
    again = kernel.dask(u=u, M=m * 2, chunks=chunks, split_every=split_every)  # other values: other keys
    assert again["t"].name != results["t"].name and again["v"].name != results["v"].name
