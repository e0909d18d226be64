"""The machine a benchmark ran on, and its limits measured in the same run.

A kernel's time means little alone: 2 GFLOP/s is excellent for a memory-bound kernel on
a laptop and poor for a matrix product on a server.  So every run measures

* memory bandwidth: a large copy (``b = a``, 16 bytes moved per element), a STREAM
  triad (``a = b + s * c``, 24 bytes per element) and an in-place update (``a = s * a``,
  16 bytes per element: likwid-bench's "update"), on arrays far larger than the caches.
  The limit is the best of the three.  An in-place kernel that reads k arrays besides
  the one it updates moves k + 2 streams (k + 1 read, one written back), and how close a
  machine comes to its peak depends on the number of streams, so every run also measures
  the matching STREAM-style update for k = 1 and 2 (``a = a * b``: 24 bytes per element;
  ``a = s1 * a + s2 * b + s3 * c``: 32 bytes per element, block by block like the triad),
  and a case that says how many arrays its kernel reads (``Case.streams``) is measured
  against the update with that many read streams (``Limits.update_for``).  Why the update: a copy or triad into a separate
  array pays a hidden write-allocate read of its destination (not counted, by STREAM's
  convention), so on a machine whose stores do not bypass the cache it reports about 2/3
  of what the memory delivers; an in-place kernel (the ``inplace`` suite) pays no such
  read, and measured against copy and triad alone it showed "180% of the limit" on data
  three times the size of the last-level cache;
* the floating-point peak (:func:`measure_fma_peak`): a C loop of independent fused
  multiply-adds on the widest vectors the compiler targets with tensorlang's flags
  (AVX-512 where the machine has it, else AVX2/FMA), with enough independent
  accumulators (16) to cover the FMA latency times the ports that issue them.  It is the
  core's own bound, not a library's: OpenBLAS picks its kernels by CPU family, and on a
  machine it does not know it runs AVX2 kernels on AVX-512 hardware (this machine's
  GEMM ran at 61 GFLOP/s while its FMAs reach 80-90).  It is the compute roof of the
  roofline and of "% of limit";
* the BLAS matrix-product rate (``C = A @ B``, 2 n^3 flops) — what the machine's best
  library reaches, reported beside the peak (older runs used it as the roof);

each with 1 and 2 threads (the thread count a kernel runs with picks the limit it is
compared with).  Bytes follow STREAM's convention: the write-allocate read of the
destination is not counted.

The bandwidth kernels are plain numpy run on ``threads`` Python threads, each on its own
slice (numpy releases the GIL while it copies and while a ufunc loops).  The triad is
done block by block so that the intermediate ``s * c`` stays in cache and memory sees
only STREAM's traffic.
"""

from __future__ import annotations

import os
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .timing import summarize


@dataclass
class Limits:
    """Measured limits for one thread count: GB/s (1e9 bytes/s) and GFLOP/s."""

    threads: int
    copy_gbs: float
    triad_gbs: float
    gemm_gflops: float
    gemm_n: int
    stream_elements: int
    update_gbs: float | None = None
    #: in-place updates by the number of arrays read (the updated one included), as C
    #: loops: 1 ``a = s*a``, 2 ``a = a * b``, 3 ``a = s1*a + s2*b + s3*c``
    updates_gbs: dict[int, float] = field(default_factory=dict)
    #: the FMA peak (:func:`measure_fma_peak`), GFLOP/s; None where no C compiler works
    fma_gflops: float | None = None
    #: what the peak ran on: "AVX-512", "AVX2", "scalar" (the vectors of the C it was built as)
    fma_vectors: str | None = None

    @property
    def peak_gflops(self) -> float:
        """The compute roof a kernel is compared with: the FMA peak where it was
        measured, else (no compiler, older runs) the BLAS matrix-product rate."""
        return self.fma_gflops if self.fma_gflops else self.gemm_gflops

    def update_for(self, reads: int) -> float | None:
        """GB/s of the in-place update that reads ``reads`` arrays (the updated one
        included) and writes one back: what an in-place kernel of that pattern can reach
        (the STREAM-style C loop; numpy's ``a = 1.0 * a`` for one read in older runs)."""
        found = self.updates_gbs.get(reads)
        if found is None and reads == 1:
            return self.update_gbs
        return found

    @property
    def bandwidth_gbs(self) -> float:
        """The bandwidth a kernel is compared with: the best of copy, triad and update."""
        return max(v for v in (self.copy_gbs, self.triad_gbs, self.update_gbs) if v is not None)

    def as_dict(self) -> dict:
        return {
            "threads": self.threads,
            "copy_GBps": self.copy_gbs,
            "triad_GBps": self.triad_gbs,
            "update_GBps": self.update_gbs,
            **{f"update{k}_GBps": v for k, v in sorted(self.updates_gbs.items())},
            "bandwidth_GBps": self.bandwidth_gbs,
            "gemm_GFLOPps": self.gemm_gflops,
            "gemm_n": self.gemm_n,
            "fma_peak_GFLOPps": self.fma_gflops,
            "fma_vectors": self.fma_vectors,
            "peak_GFLOPps": self.peak_gflops,
            "stream_elements": self.stream_elements,
        }


def _blocks(n: int, parts: int) -> list[slice]:
    step = -(-n // parts)
    return [slice(i, min(n, i + step)) for i in range(0, n, step)]


def _parallel(pool: ThreadPoolExecutor | None, work, slices) -> None:
    if pool is None:
        for s in slices:
            work(s)
    else:
        list(pool.map(work, slices))


def _triad_block(a, b, c, s, sl, block=32768):
    for start in range(sl.start, sl.stop, block):
        part = slice(start, min(sl.stop, start + block))
        np.multiply(c[part], s, out=a[part])
        np.add(a[part], b[part], out=a[part])


def _update3_block(a, b, c, sl, block=32768):
    """``a = 1.0 * a + 0.0 * b + 0.0 * c`` block by block (the scaled operand stays in
    cache, so memory sees three read streams and one write): a's values stay as they are."""
    tmp = np.empty(min(block, sl.stop - sl.start))
    for start in range(sl.start, sl.stop, block):
        part = slice(start, min(sl.stop, start + block))
        t = tmp[: part.stop - part.start]
        np.multiply(b[part], 0.0, out=t)
        np.add(a[part], t, out=a[part])
        np.multiply(c[part], 0.0, out=t)
        np.add(a[part], t, out=a[part])


#: STREAM's way: the update loops in C, compiled with the compiler and flags tensorlang
#: builds with (each thread runs its own slice [lo, hi); cffi releases the GIL)
STREAM_C = """
#include <stdint.h>
void tl_update1(double *restrict a, double s, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) a[i] = s * a[i];
}
void tl_update2(double *restrict a, const double *restrict b, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) a[i] = a[i] * b[i];
}
void tl_update3(double *restrict a, const double *restrict b, const double *restrict c,
                double s1, double s2, double s3, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) a[i] = s1 * a[i] + s2 * b[i] + s3 * c[i];
}
"""
STREAM_DECLARATIONS = """
void tl_update1(double *a, double s, int64_t lo, int64_t hi);
void tl_update2(double *a, const double *b, int64_t lo, int64_t hi);
void tl_update3(double *a, const double *b, const double *c, double s1, double s2, double s3, int64_t lo, int64_t hi);
"""


def stream_c():
    """(ffi, lib) of :data:`STREAM_C`, or None where no C compiler works."""
    try:
        from tensorlang.targets.c import build as c_build

        return c_build.build_and_load(STREAM_C, c_build.require_compiler(), STREAM_DECLARATIONS)
    except Exception:  # noqa: BLE001 - no compiler: numpy's updates stand in
        return None


def update_kernels(a, b, c, compiled=None) -> dict:
    """reads -> (work(slice), bytes per element): the in-place updates that read 1, 2 and
    3 arrays (the updated one included; values unchanged: s = 1, the others' weights 0),
    as C loops (:data:`STREAM_C`) where a compiler works, else numpy (block by block for
    three reads, so the scaled operand stays in cache)."""
    if compiled is None:
        compiled = stream_c()
    if compiled is None:
        return {1: (lambda sl: np.multiply(a[sl], 1.0, out=a[sl]), 16),
                2: (lambda sl: np.multiply(a[sl], b[sl], out=a[sl]), 24),
                3: (lambda sl: _update3_block(a, b, c, sl), 32)}
    ffi, lib = compiled
    # "double[]" views keep their arrays alive as long as the closures below live
    pa, pb, pc = (ffi.from_buffer("double[]", x) for x in (a, b, c))
    return {1: (lambda sl: lib.tl_update1(pa, 1.0, sl.start, sl.stop), 16),
            2: (lambda sl: lib.tl_update2(pa, pb, sl.start, sl.stop), 24),
            3: (lambda sl: lib.tl_update3(pa, pb, pc, 1.0, 0.0, 0.0, sl.start, sl.stop), 32)}


def measure_updates(threads: int, elements: int, repeats: int = 5) -> dict[int, float]:
    """GB/s of the in-place updates that read 1, 2 and 3 arrays (the updated one
    included): ``a = s*a`` (16 bytes per element), ``a = a*b`` (24) and
    ``a = s1*a + s2*b + s3*c`` (32), STREAM-style C loops (:func:`update_kernels`)."""
    a = np.full(elements, 3.0)
    b = np.ones(elements)
    c = np.full(elements, 0.5)
    slices = _blocks(elements, threads)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        results = {}
        for reads, (work, per) in update_kernels(a, b, c).items():
            nbytes = per * elements
            _parallel(pool, work, slices)
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                _parallel(pool, work, slices)
                times.append(time.perf_counter() - start)
            results[reads] = nbytes / summarize(times).median / 1e9
        if not np.allclose(a[:: max(1, elements // 1000)], 3.0):
            raise RuntimeError("an update changed its array")
    finally:
        if pool is not None:
            pool.shutdown()
    return results


def measure_bandwidth(threads: int, elements: int, repeats: int = 5) -> tuple[float, float, float]:
    """(copy GB/s, triad GB/s, update GB/s), the median of ``repeats`` passes each."""
    a = np.zeros(elements)
    b = np.full(elements, 1.5)
    c = np.full(elements, 0.5)
    slices = _blocks(elements, threads)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        def copy(sl):
            np.copyto(a[sl], b[sl])

        def triad(sl):
            _triad_block(a, b, c, 3.0, sl)

        def update(sl):  # a = 1.0 * a: every value read and written back, none changed
            np.multiply(a[sl], 1.0, out=a[sl])

        results = []
        for work, nbytes in ((copy, 16 * elements), (triad, 24 * elements), (update, 16 * elements)):
            _parallel(pool, work, slices)  # warm-up: pages touched, threads started
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                _parallel(pool, work, slices)
                times.append(time.perf_counter() - start)
            results.append(nbytes / summarize(times).median / 1e9)
        if not np.allclose(a[:: max(1, elements // 1000)], 3.0):
            raise RuntimeError("the triad computed a wrong result")
    finally:
        if pool is not None:
            pool.shutdown()
    return results[0], results[1], results[2]


#: The FMA peak's loop: ``FMA_ACCUMULATORS`` independent chains ``c = c * a + b`` (a
#: just below 1, so the values stay near 1: no overflow, no subnormals), each step one
#: vector FMA.  16 chains cover 4-cycle latency x 2 ports twice over (AVX-512 has 32
#: registers; AVX2's 16 hold them with a and b reloaded from L1, which costs no FMA slot).
FMA_ACCUMULATORS = 16
FMA_C = """
#include <stdint.h>
#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512d tl_v;
#define TL_FMA(x, y, z) _mm512_fmadd_pd(x, y, z)
#define TL_SET(x) _mm512_set1_pd(x)
#define TL_LANES 8
#define TL_KIND 3
#elif defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256d tl_v;
#define TL_FMA(x, y, z) _mm256_fmadd_pd(x, y, z)
#define TL_SET(x) _mm256_set1_pd(x)
#define TL_LANES 4
#define TL_KIND 2
#else
typedef double tl_v;
#define TL_FMA(x, y, z) ((x) * (y) + (z))
#define TL_SET(x) (x)
#define TL_LANES 1
#define TL_KIND 1
#endif
#define TL_ACC %d
int tl_fma_kind(void) { return TL_KIND; }
/* flops of one call: 2 * iters * TL_ACC * TL_LANES; returns a value the caller keeps */
double tl_fma_loop(int64_t iters, double *lanes) {
    tl_v a = TL_SET(0.9999999), b = TL_SET(1e-7), c[TL_ACC];
    for (int k = 0; k < TL_ACC; ++k) c[k] = TL_SET(1.0 + 1e-3 * k);
    for (int64_t i = 0; i < iters; ++i) {
        #pragma GCC unroll 16
        for (int k = 0; k < TL_ACC; ++k) c[k] = TL_FMA(c[k], a, b);
    }
    double s = 0.0;
    for (int k = 0; k < TL_ACC; ++k) { double *p = (double *)&c[k]; for (int l = 0; l < TL_LANES; ++l) s += p[l]; }
    *lanes = TL_LANES;
    return s;
}
""" % FMA_ACCUMULATORS
FMA_DECLARATIONS = """
int tl_fma_kind(void);
double tl_fma_loop(int64_t iters, double *lanes);
"""
FMA_KINDS = {3: "AVX-512", 2: "AVX2", 1: "scalar"}


def measure_fma_peak(threads: int, bursts: int = 60, iters: int = 100_000, compiled=None) -> tuple[float, str] | None:
    """(GFLOP/s, vectors) of :data:`FMA_C` on ``threads`` threads, or None without a C
    compiler.  Each of ``bursts`` bursts runs ``iters`` steps of every chain (about 1-2 ms
    at 80 GFLOP/s) on every thread at once; the peak is the *best* burst, not the median:
    a peak is what the core can do, and another process sharing the core only ever
    makes a burst slower (a shared machine's medians were 4x below its best bursts)."""
    if compiled is None:
        try:
            from tensorlang.targets.c import build as c_build

            compiled = c_build.build_and_load(FMA_C, c_build.require_compiler(), FMA_DECLARATIONS)
        except Exception:  # noqa: BLE001 - no compiler: the GEMM rate stays the roof
            return None
    ffi, lib = compiled
    lanes = [ffi.new("double *") for _ in range(threads)]

    def work(k):
        return lib.tl_fma_loop(iters, lanes[k])

    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        _parallel(pool, work, range(threads))  # warm-up: the vector units powered up
        best = float("inf")
        for _ in range(bursts):
            start = time.perf_counter()
            _parallel(pool, work, range(threads))
            best = min(best, time.perf_counter() - start)
    finally:
        if pool is not None:
            pool.shutdown()
    flops = 2.0 * iters * FMA_ACCUMULATORS * lanes[0][0] * threads
    return flops / best / 1e9, FMA_KINDS.get(lib.tl_fma_kind(), "scalar")


def measure_gemm(threads: int, n: int, repeats: int = 5) -> float:
    """GFLOP/s of a float64 BLAS matrix product of order ``n`` on ``threads`` threads."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    c = np.empty((n, n))
    with blas_threads(threads):
        np.matmul(a, b, out=c)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            np.matmul(a, b, out=c)
            times.append(time.perf_counter() - start)
    return 2.0 * n**3 / summarize(times).median / 1e9


def measure_limits(thread_counts=(1, 2), quick: bool = False) -> dict[int, Limits]:
    """The machine's limits for each thread count."""
    elements = 2**23 if quick else 2**24  # 64 / 128 MiB per array, beyond any cache here
    gemm_n = 1024 if quick else 2048
    repeats = 3 if quick else 7
    limits = {}
    for t in thread_counts:
        copy_gbs, triad_gbs, update_gbs = measure_bandwidth(t, elements, repeats)
        peak = measure_fma_peak(t)
        limits[t] = Limits(t, copy_gbs, triad_gbs, measure_gemm(t, gemm_n, repeats), gemm_n, elements, update_gbs,
                           measure_updates(t, elements, repeats), *(peak or (None, None)))
    return limits


class pinned_cpus:
    """Restrict every thread of this process to ``n`` CPUs while timing (Linux only).

    Thread-count knobs are not exact for every library (XLA keeps its own pools whatever
    ``XLA_FLAGS`` says), so the run also pins the process: all existing threads (listed
    in /proc/self/task) get the first ``n`` CPUs of the current affinity, and threads
    created later inherit it.  The previous masks are restored on exit.
    """

    def __init__(self, n: int):
        self.n = n
        self.cpus: list[int] | None = None
        self._saved: dict[int, set[int]] = {}

    def __enter__(self):
        try:
            current = sorted(os.sched_getaffinity(0))
            tids = [int(t) for t in os.listdir("/proc/self/task")]
        except (AttributeError, OSError):
            return self
        if self.n >= len(current):
            self.cpus = current
            return self
        self.cpus = current[: self.n]
        for tid in tids:
            try:
                self._saved[tid] = os.sched_getaffinity(tid)
                os.sched_setaffinity(tid, self.cpus)
            except OSError:  # a thread that ended meanwhile
                self._saved.pop(tid, None)
        return self

    def __exit__(self, *exc):
        for tid, mask in self._saved.items():
            try:
                os.sched_setaffinity(tid, mask)
            except OSError:
                pass
        try:  # threads born while pinned inherited the narrow mask: widen them too
            full = set().union(*self._saved.values()) if self._saved else None
            if full:
                for t in os.listdir("/proc/self/task"):
                    if int(t) not in self._saved:
                        try:
                            os.sched_setaffinity(int(t), full)
                        except OSError:
                            pass
        except OSError:
            pass
        return False


class blas_threads:
    """Pin BLAS (and OpenMP) thread pools to ``n`` threads; a no-op without threadpoolctl."""

    def __init__(self, n: int):
        self.n = n
        self._ctl = None

    def __enter__(self):
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            return self
        self._ctl = threadpool_limits(limits=self.n)
        return self

    def __exit__(self, *exc):
        if self._ctl is not None:
            self._ctl.restore_original_limits()
        return False


# ---------------------------------------------------------------- description
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _blas() -> list[dict]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return [{"note": "threadpoolctl not installed; BLAS unknown"}]
    keep = ("internal_api", "version", "architecture", "num_threads", "threading_layer", "filepath")
    return [{k: info.get(k) for k in keep if k in info} for info in threadpool_info()]


def _cache_sizes() -> dict[str, str]:
    sizes = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue
            with open(f"{base}/{entry}/level") as fh:
                level = fh.read().strip()
            with open(f"{base}/{entry}/type") as fh:
                kind = fh.read().strip()
            with open(f"{base}/{entry}/size") as fh:
                size = fh.read().strip()
            sizes[f"L{level} {kind}"] = size
    except OSError:
        pass
    return sizes


@dataclass
class MachineInfo:
    cpu: str
    logical_cpus: int | None
    usable_cpus: int | None
    memory_bytes: int | None
    caches: dict[str, str]
    platform: str
    python: str
    blas: list[dict]
    versions: dict[str, str | None] = field(default_factory=dict)
    load_average: tuple[float, float, float] | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def describe(versions: dict[str, str | None]) -> MachineInfo:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = None
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = None
    return MachineInfo(
        cpu=_cpu_model(),
        logical_cpus=os.cpu_count(),
        usable_cpus=usable,
        memory_bytes=_memory_bytes(),
        caches=_cache_sizes(),
        platform=platform.platform(),
        python=platform.python_version(),
        blas=_blas(),
        versions=versions,
        load_average=load,
    )
