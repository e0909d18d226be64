"""A covariance matrix out of core: rows on disk, more of them than the workers may hold.

    python examples/dask/covariance_out_of_core.py [--rows 20000000] [--features 8]
        [--workers 2] [--memory-limit 256MiB] [--path rows.npy]

The rows are a .npy file on disk (written here in slices if it does not exist; by default
20 million rows of 8 features, 1.28 GB, against 2 workers of 256 MiB).  Each Dask task
reads one chunk of rows from the file (a memory map, so only that chunk is read) and runs
the compiled kernel of covariance.tl on it; the partial sums are added in a tree.  The
result is checked against a plain numpy pass over the same file, one slice at a time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import tensorlang as tl

HERE = Path(__file__).resolve().parent


def write_rows(path: Path, rows: int, features: int, slice_rows: int = 1_000_000) -> None:
    """Random rows, written slice by slice (the file never has to fit in memory)."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(rows, features))
    rng = np.random.default_rng(0)
    mix = rng.standard_normal((features, features))
    for start in range(0, rows, slice_rows):
        stop = min(rows, start + slice_rows)
        out[start:stop] = rng.standard_normal((stop - start, features)) @ mix
    out.flush()
    del out


def read_rows(path: str, start: int, stop: int) -> np.ndarray:
    """One chunk of rows, read in the worker through a memory map."""
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def rows_as_dask(path: Path, chunk: int):
    """The file as a dask array whose chunks are read lazily by the workers (the memory
    map itself never travels: a task carries the path and its row range)."""
    import dask
    import dask.array as da

    rows, features = np.load(path, mmap_mode="r").shape
    parts = [da.from_delayed(dask.delayed(read_rows, pure=True)(str(path), i, min(rows, i + chunk)),
                             shape=(min(rows, i + chunk) - i, features), dtype=np.float64)
             for i in range(0, rows, chunk)]
    return da.concatenate(parts, axis=0)


def covariance(path: Path, chunk: int = 500_000) -> dict:
    """The covariance kernel over the file's rows, as dask arrays (not yet computed)."""
    kernel = tl.compile(HERE / "covariance.tl")
    return kernel.dask(X=rows_as_dask(path, chunk), batch="N")


def reference(path: Path, slice_rows: int = 1_000_000) -> np.ndarray:
    X = np.load(path, mmap_mode="r")
    C = np.zeros((X.shape[1], X.shape[1]))
    for start in range(0, X.shape[0], slice_rows):
        part = np.asarray(X[start:start + slice_rows])
        C += part.T @ part
    return C


def main(argv=None) -> None:
    from dask.distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="256MiB")
    parser.add_argument("--chunk", type=int, default=500_000)
    parser.add_argument("--path", type=Path, default=None)
    args = parser.parse_args(argv)
    path = args.path or Path(tempfile.gettempdir()) / f"tensorlang_rows_{args.rows}x{args.features}.npy"
    if not path.exists():
        print(f"writing {args.rows} rows of {args.features} features to {path} ...")
        write_rows(path, args.rows, args.features)
    size = path.stat().st_size
    print(f"{path}: {size / 2**20:.0f} MiB on disk; {args.workers} workers of {args.memory_limit}")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster):
        start = time.perf_counter()
        C = covariance(path, args.chunk)["C"].compute()
        elapsed = time.perf_counter() - start
    want = reference(path)
    error = np.abs(C - want).max() / np.abs(want).max()
    print(f"covariance of {args.rows} rows in {elapsed:.2f} s ({size / elapsed / 2**30:.2f} GiB/s from disk); "
          f"relative difference from numpy: {error:.1e}")
    assert error < 1e-10


if __name__ == "__main__":
    main()
