"""Chunked runs on Dask: 1 versus 2 worker processes (docs/performance.md, "Dask").

    python -m tensorlang_bench.dask_scaling [--quick] [--out results/dask]

Two workloads, the data generated on the workers (dask.array.random), so that only the
computation is timed:

* covariance: C = XᵀX over N rows of p features (examples/dask/covariance.tl), a sum over
  the batch (tree reduction of per-chunk partial sums); peer: dask.array's own X.T @ X;
* interpolation: v = (A⊗B⊗C) u on E spectral elements of n³ values
  (examples/sizes/interpolation.tl), a map over the batch; peer: dask.array.einsum.

Each contender runs 1 + 3 times per cluster size; the table gives the median of the 3
warm runs and the speedup of 2 workers over 1.  Every worker has one thread, and OpenMP
and BLAS are pinned to one thread in the workers, so the workers are the only parallelism.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _timed(thunk, repeat: int = 3) -> float:
    thunk()  # warm: compiles on the workers, fills caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        thunk()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def workloads(quick: bool):
    import dask.array as da

    import tensorlang as tl

    N, p = (400_000, 8) if quick else (4_000_000, 16)
    E, n = (2_000, 6) if quick else (16_000, 8)
    rows_chunk, elements_chunk = N // 16, E // 16
    cov = tl.compile(ROOT / "examples" / "dask" / "covariance.tl")
    interp = tl.compile(ROOT / "examples" / "sizes" / "interpolation.tl")
    rng = np.random.default_rng(0)
    A, B, C = (rng.standard_normal((n, n)) for _ in range(3))

    def rows():
        return da.random.default_rng(1).standard_normal((N, p), chunks=(rows_chunk, p))

    def elements():
        return da.random.default_rng(2).standard_normal((E, n, n, n), chunks=(elements_chunk, n, n, n))

    return {
        f"covariance N={N:.0e} p={p}": {
            "tensorlang k.dask": lambda: cov.dask(X=rows(), batch="N")["C"].compute(),
            "dask.array X.T @ X": lambda: (lambda X: (X.T @ X).compute())(rows()),
        },
        f"interpolation E={E} n={n}": {
            "tensorlang k.dask": lambda: interp.dask(A=A, B=B, C=C, u=elements(), batch="E")["v"].sum().compute(),
            "dask.array einsum": lambda: da.einsum("ia,jb,kc,eabc->eijk", A, B, C, elements()).sum().compute(),
        },
    }


def main(argv=None) -> None:
    from dask.distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description="Dask: 1 versus 2 workers")
    parser.add_argument("--quick", action="store_true", help="small sizes (a test run)")
    parser.add_argument("--out", type=Path, default=None, help="write results.json and results.md there")
    args = parser.parse_args(argv)
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    os.environ.update(env)  # the worker processes inherit it
    timings: dict[str, dict[str, dict[int, float]]] = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None, silence_logs=50) as cluster, \
                Client(cluster):
            for workload, contenders in workloads(args.quick).items():
                for name, thunk in contenders.items():
                    timings.setdefault(workload, {}).setdefault(name, {})[workers] = _timed(thunk)
    lines = ["| workload | contender | 1 worker (s) | 2 workers (s) | speedup |", "| --- | --- | ---: | ---: | ---: |"]
    for workload, contenders in timings.items():
        for name, t in contenders.items():
            lines.append(f"| {workload} | {name} | {t[1]:.3f} | {t[2]:.3f} | {t[1] / t[2]:.2f}x |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(timings, indent=2))
        (args.out / "results.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
