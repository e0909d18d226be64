"""The parallel threshold, measured on this machine (paper 002 §7).

002 §7 finds that whether threads pay depends on the machine and the work: scalar
multiplication needed N ≈ 2000 elements before two or three cores beat one.  So the C
target does not trust a constant: the first C kernel a machine builds measures the
smallest number of points at which ``x[i] = s * x[i]`` (one store per point, the unit of
:func:`tensorlang.loops.ir.work`) runs faster on two threads than on one, and caches it
in the kernel cache's directory (``parallel_work.json``, keyed by compiler and CPU
count).  A statement gets an ``omp parallel for`` when its nest's work reaches that
threshold (:func:`tensorlang.loops.parallel.mark`), whatever ``threads=`` says (issue
19: ``threads=2`` used to force threads on every statement); its team is at most what
its work pays for and the cores idle at run time (targets/c/codegen.py, ``THREADS``).

``$TENSORLANG_PARALLEL_WORK`` overrides the measurement (the tests pin it so generated
code does not depend on the machine); ``1`` forces threads on every statement, with as
many threads as asked for.  The measurement is keyed by the OpenMP wait policy too
(:func:`.build.prepare_openmp`).  Without a second core, or when two threads never
won, the threshold is :data:`NEVER`.
"""

from __future__ import annotations

import json
import os
import time
from functools import lru_cache

import numpy as np

from ...loops.parallel import PARALLEL_WORK
from . import build as c_build

#: A threshold no statement reaches: threads never pay here.
NEVER = 1 << 62
#: The sizes measured: 2^10 .. 2^21 points.
SIZES = tuple(1 << k for k in range(10, 22))
#: Two threads "win" at a size when they take at most this fraction of one thread's time.
WIN = 0.85
CACHE_FILE = "parallel_work.json"

_PROBE = """
#include <stdint.h>
int tl_probe_scale(double *restrict x, double s, int64_t n, int threads) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1)
#endif
    for (int64_t i = 0; i < n; i++) x[i] = s * x[i];
    return 0;
}
"""
_DECLARATIONS = "int tl_probe_scale(double *x, double s, int64_t n, int threads);"


def _seconds(call, n: int) -> float:
    """The best time of a call, repeated so that each sample takes about a millisecond."""
    reps = max(1, (1 << 20) // max(n, 1))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(reps):
            call()
        best = min(best, (time.perf_counter() - start) / reps)
    return best


def measure(compiler: c_build.Compiler, sizes: tuple[int, ...] | None = None) -> dict:
    """Time ``x = s * x`` on 1 and 2 threads for each size; the threshold is the
    smallest size at which two threads win there and at the next size too (one noisy
    sample on a shared machine neither makes nor breaks it; :data:`NEVER` if none)."""
    cpus = os.cpu_count() or 1
    if cpus < 2 or not compiler.openmp:
        return {"parallel_work": NEVER, "cpus": cpus, "times": []}
    ffi, lib = c_build.build_and_load(_PROBE, compiler, _DECLARATIONS)
    times = []
    for n in SIZES if sizes is None else sizes:
        x = np.ones(n)
        ptr = ffi.cast("double *", ffi.from_buffer(x))
        one = _seconds(lambda: lib.tl_probe_scale(ptr, 1.0, n, 1), n)
        two = _seconds(lambda: lib.tl_probe_scale(ptr, 1.0, n, 2), n)
        times.append((n, one, two))
    wins = [two <= WIN * one for _, one, two in times]
    threshold = next((times[k][0] for k in range(len(times)) if wins[k] and all(wins[k + 1:k + 2])), NEVER)
    return {"parallel_work": threshold, "cpus": cpus, "times": times}


def _key(compiler: c_build.Compiler) -> str:
    c_build.prepare_openmp()  # measured under the wait policy the kernels run with
    return f"{compiler.key_material()}\ncpus={os.cpu_count()}\n{c_build.openmp_policy()}"


@lru_cache(maxsize=None)
def parallel_work() -> int:
    """The threshold for this machine: ``$TENSORLANG_PARALLEL_WORK``, else the cached
    measurement, else a fresh one (cached when the kernel cache is usable)."""
    explicit = os.environ.get("TENSORLANG_PARALLEL_WORK", "").strip()
    if explicit.isdigit():
        return max(1, int(explicit))
    compiler = c_build.find_compiler()
    if compiler is None:
        return PARALLEL_WORK
    directory = c_build.cache_dir()
    path = directory / CACHE_FILE
    key = _key(compiler)
    try:
        cached = json.loads(path.read_text())
        if cached.get("key") == key and isinstance(cached.get("parallel_work"), int):
            return int(cached["parallel_work"])
    except (OSError, ValueError, AttributeError):
        pass
    result = measure(compiler)
    if c_build._usable_dir(directory):
        try:
            c_build._write_atomic(directory, CACHE_FILE, json.dumps({"key": key, **result}).encode())
        except OSError:
            pass
    return int(result["parallel_work"])
