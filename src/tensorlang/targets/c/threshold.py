"""The parallel thresholds measured on this machine (paper 002 §7), cached in the kernel
cache; ``$TENSORLANG_PARALLEL_WORK`` overrides both (docs/compatible.md, "Parallel thresholds")."""

from __future__ import annotations

import contextlib
import json
import os
import time
from functools import lru_cache

import numpy as np

from ...limits import env_int
from ...loops.parallel import SCHEDULE, Threshold
from ...machine import PARALLEL_WORK, cpu_count, usable_cpus
from . import build as c_build
from . import csrc

#: A threshold no statement reaches: threads never pay here.
NEVER = 1 << 62
#: The sizes measured, 2^10 .. 2^26 points (the stream probe's up to :data:`MAX_STREAM`).
SIZES = tuple(1 << k for k in range(10, 27))
MAX_STREAM = 1 << 23
#: Two threads "win" at a size when they take at most this fraction of one thread's time.
WIN = 0.85
CACHE_FILE = "parallel_work.json"
#: Points per cache-resident block of the compute probe, and the most blocks (256 KiB in all).
BLOCK, MAX_BLOCKS = 512, 64

#: The probes (csrc/threshold_probes.c), dealing out iterations as the kernels' loops do.
_PROBE = csrc.text("threshold_probes.c", schedule=SCHEDULE, block=BLOCK, maxblocks=MAX_BLOCKS)
_DECLARATIONS = ("int tl_probe_stream(double *x, double s, int64_t n, int threads);"
                 "int tl_probe_compute(double *x, double s, int64_t n, int threads);")


def _seconds(one, two, n: int) -> tuple[float, float]:
    """The best times of one and two threads, samples taken in turns (about a millisecond each)."""
    reps = max(1, (1 << 20) // max(n, 1))
    best = [float("inf"), float("inf")]
    for _ in range(5):
        for k, call in enumerate((one, two)):
            start = time.perf_counter()
            for _ in range(reps):
                call()
            best[k] = min(best[k], (time.perf_counter() - start) / reps)
    return best[0], best[1]


def _first_win(times: list) -> int:
    """The smallest size at which two threads win there and at the next size, or NEVER."""
    wins = [two <= WIN * one for _, one, two in times]
    return next((times[k][0] for k in range(len(times)) if wins[k] and all(wins[k + 1:k + 2])), NEVER)


def _probes(compiler: c_build.Compiler, cpus: int) -> bool:
    """Whether :func:`measure` times the probes: two CPUs or more, and OpenMP."""
    return cpus >= 2 and compiler.openmp


def measure(compiler: c_build.Compiler, sizes: tuple[int, ...] | None = None, cpus: int | None = None) -> dict:
    """Time both probes on 1 and 2 threads per size: ``parallel_work`` (compute) and
    ``stream_work``, each :func:`_first_win`; ``cpus``: those the process may use."""
    cpus = usable_cpus() if cpus is None else cpus
    if not _probes(compiler, cpus):
        return {"parallel_work": NEVER, "stream_work": NEVER, "cpus": cpus, "times": [], "stream_times": []}
    ffi, lib = c_build.build_and_load(_PROBE, compiler, _DECLARATIONS)
    found = {}
    for name, probe in (("times", lib.tl_probe_compute), ("stream_times", lib.tl_probe_stream)):
        times = []
        for n in SIZES if sizes is None else sizes:
            if name == "stream_times" and n > MAX_STREAM:
                break
            x = np.ones(n if name == "stream_times" else min(n, BLOCK * MAX_BLOCKS))
            ptr = ffi.cast("double *", ffi.from_buffer(x))
            one, two = _seconds(lambda probe=probe, ptr=ptr, n=n: probe(ptr, 1.0, n, 1),
                                lambda probe=probe, ptr=ptr, n=n: probe(ptr, 1.0, n, 2), n)
            times.append((n, one, two))
        found[name] = times
    return {"parallel_work": _first_win(found["times"]), "stream_work": _first_win(found["stream_times"]),
            "cpus": cpus, **found}


#: How long a measurement waits for the other CPUs to fall quiet, and how often it looks (s).
QUIET_WAIT_S, QUIET_POLL_S = 1.0, 0.01


def running_tasks() -> int | None:
    """The machine's runnable tasks now (``/proc/loadavg``'s fourth field), or None."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def wait_for_quiet(timeout_s: float = QUIET_WAIT_S) -> bool:
    """Whether a CPU ran nothing in two looks :data:`QUIET_POLL_S` apart within ``timeout_s``
    (True where /proc/loadavg cannot be read; docs/compatible.md)."""
    deadline = time.perf_counter() + timeout_s
    cpus = cpu_count()
    calm = 0
    while True:
        running = running_tasks()
        calm = calm + 1 if running is not None and running <= max(1, cpus - 1) else 0
        if running is None or calm >= 2:
            return True
        if time.perf_counter() >= deadline:
            return False
        time.sleep(QUIET_POLL_S)


def _key(compiler: c_build.Compiler) -> str:
    c_build.prepare_openmp()  # measured under the wait policy the kernels run with
    policy = f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')} GOMP_SPINCOUNT={os.environ.get('GOMP_SPINCOUNT', '')}"
    return f"{compiler.key_material()}\ncpus={cpu_count()}\n{policy}\nprobes=compute,stream to {SIZES[-1]} on every cpu, schedule({SCHEDULE})"


def parallel_work() -> Threshold:
    """The thresholds: ``$TENSORLANG_PARALLEL_WORK``, else cached, else measured (docs/compatible.md)."""
    return _thresholds(usable_cpus())


def clear() -> None:
    """Forget the thresholds read or measured (tests, a changed ``$TENSORLANG_PARALLEL_WORK``)."""
    _thresholds.cache_clear()


@lru_cache(maxsize=None)
def _thresholds(cpus: int) -> Threshold:
    value = env_int("TENSORLANG_PARALLEL_WORK", None)
    if value is not None:
        return Threshold(value, value)
    compiler = c_build.find_compiler()
    if compiler is None:
        return Threshold(PARALLEL_WORK, PARALLEL_WORK)
    directory = c_build.cache_dir()
    path, key = directory / CACHE_FILE, _key(compiler)
    whole = cpus >= (cpu_count())  # the whole machine: its figures, cached
    with contextlib.suppress(OSError, ValueError, AttributeError, TypeError, RecursionError):  # (JSON nested deep, too)
        cached = json.loads(c_build._read_limited(path, c_build._MAX_MANIFEST_BYTES) or b"null")  # as a manifest: no FIFO
        if whole and cached.get("key") == key and all(isinstance(cached.get(f), int) for f in ("parallel_work", "stream_work")):
            return Threshold(int(cached["parallel_work"]), int(cached["stream_work"]))
    probes = _probes(compiler, cpus)  # without them there is nothing to wait for
    quiet = not probes or wait_for_quiet()
    result = measure(compiler, cpus=cpus)
    quiet = quiet and (not probes or wait_for_quiet(QUIET_POLL_S))  # and still quiet after it
    if whole and quiet and c_build._usable_dir(directory):
        with contextlib.suppress(OSError):
            c_build._write_atomic(directory, CACHE_FILE, json.dumps({"key": key, **result}).encode())
    return Threshold(int(result["parallel_work"]), int(result["stream_work"]))
