"""The machine's facts in one package, each read once per process: caches
(:func:`cache_sizes`; ``$TENSORLANG_CACHE_SIZES`` overrides), cores, the vector width
the C compiler targets, BLAS (:mod:`.blas`) and the constants tuned to the memory system
(docs/architecture.md lists them; tests/test_architecture.py keeps them here only)."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..limits import env

SYS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")

#: Used when neither /sys nor sysconf says: a small common L1d and a modest L2.
FALLBACK_L1 = 32 * 1024
FALLBACK_L2 = 1024 * 1024


@dataclass(frozen=True)
class CacheSizes:
    """Bytes of the first core's L1d and L2, where from ("sys", "sysconf", "fallback", "env"), and
    the smallest slab of a fused loop's element given a next-element hint (:func:`hint_min_slab`)."""

    l1: int
    l2: int
    source: str
    hint_min: int = 0

    def describe(self) -> str:
        hints = f", next-element hints from {self.hint_min} B slabs" if self.hint_min else ""
        return f"L1d {self.l1 // 1024} KiB, L2 {self.l2 // 1024} KiB ({self.source}){hints}"


#: :func:`hint_min_slab` on AMD CPUs: a Zen 4's own prefetcher serves slabs under 2 KiB, where hints
#: cost 3-28%; Intel's gained from them at every size (docs/c-backend.md, "Prefetching the next element").
HINT_MIN_SLAB_AMD = 2048


def _vendor(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    try:
        found = re.search(r"^vendor_id\s*:\s*(\S+)", cpuinfo.read_text(errors="replace"), re.M)
    except OSError:
        return None
    return found.group(1) if found else None


def hint_min_slab(vendor: str | None = None) -> int:
    """Bytes below which an element's slab gets no next-element hint: ``$TENSORLANG_HINT_MIN_SLAB``,
    else :data:`HINT_MIN_SLAB_AMD` on an AMD CPU and 0 (every slab) elsewhere."""
    given = env("TENSORLANG_HINT_MIN_SLAB", "a byte count (0 to 999999999)",
                lambda t: int(t) if re.fullmatch(r"[0-9]{1,9}", t) else None)
    if given is not None:
        return given
    return HINT_MIN_SLAB_AMD if (vendor or _vendor()) == "AuthenticAMD" else 0


def _size(text: str) -> int | None:
    """``48K`` / ``2048K`` / ``1M`` / ``49152`` as bytes (positive, at most 12 digits)."""
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in "KMG" else text
    return int(digits) * scale if re.fullmatch(r"[0-9]{1,12}", digits) and int(digits) else None


def _from_sys(root: Path = SYS_CACHE) -> tuple[int | None, int | None]:
    found: dict[str, int | None] = {}  # by level: the last data or unified cache's size
    try:
        entries = sorted(root.glob("index*"))
    except OSError:
        return None, None
    for entry in entries:
        try:
            if (entry / "type").read_text().strip() in ("Data", "Unified"):
                found[(entry / "level").read_text().strip()] = _size((entry / "size").read_text())
        except OSError:
            continue
    return found.get("1"), found.get("2")


def _from_sysconf() -> tuple[int | None, int | None]:
    def conf(name: str) -> int | None:
        try:
            value = os.sysconf(name)
        except (ValueError, OSError, AttributeError):
            return None
        return value if value and value > 0 else None
    return conf("SC_LEVEL1_DCACHE_SIZE"), conf("SC_LEVEL2_CACHE_SIZE")


def _from_env(text: str) -> tuple[int, int] | None:
    """``l1=48K,l2=2M`` as (L1, L2) bytes; None unless it gives both, once each."""
    parts = [part.partition("=") for part in text.split(",")]
    found = {key.strip().lower(): _size(value) for key, _, value in parts}
    l1, l2 = found.get("l1"), found.get("l2")
    return (l1, l2) if len(parts) == 2 and l1 and l2 else None


@lru_cache(maxsize=None)
def cache_sizes() -> CacheSizes:
    """The machine's L1d and L2 sizes (see the module's docstring for the order asked)."""
    given = env("TENSORLANG_CACHE_SIZES", "l1=SIZE,l2=SIZE (bytes, or K, M, G: l1=48K,l2=2M)", _from_env)
    hint_min = hint_min_slab()
    if given is not None:
        return CacheSizes(given[0], given[1], "env", hint_min)
    for source, read in (("sys", _from_sys), ("sysconf", _from_sysconf)):
        l1, l2 = read()
        if l1 and l2:
            return CacheSizes(l1, l2, source, hint_min)
    return CacheSizes(FALLBACK_L1, FALLBACK_L2, "fallback", hint_min)


def cpu_count() -> int:
    return os.cpu_count() or 1


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no sched_getaffinity (macOS, Windows)
        return cpu_count()


#: The vector width in bytes of each predefined macro, widest first.
WIDTHS = (("__AVX512F__", 64), ("__AVX__", 32), ("__SSE2__", 16), ("__ARM_NEON", 16))

#: The width when the compiler says nothing (or there is none): SSE2's and NEON's.
DEFAULT_BYTES = 16


@lru_cache(maxsize=None)
def _macros(command: tuple[str, ...], flags: tuple[str, ...]) -> frozenset[str]:
    try:
        result = subprocess.run([*command, *flags, "-dM", "-E", "-x", "c", "-"], input="", capture_output=True,
                                text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(line.split()[1] for line in result.stdout.splitlines() if line.startswith("#define "))


def vector_bytes(compiler: Any) -> int:
    """The widest vector register the C ``compiler`` (or None) generates code for, in bytes."""
    flags = () if compiler is None else tuple(f for f in compiler.flags if f.startswith("-m"))
    defined = frozenset() if compiler is None else _macros(tuple(compiler.command), flags)
    return next((width for macro, width in WIDTHS if macro in defined), DEFAULT_BYTES)


def simd_elements(compiler: Any, itemsize: int) -> int:
    """The SIMD width in elements of ``itemsize`` bytes (a power of two, at least 1)."""
    return max(vector_bytes(compiler) // itemsize, 1)


#: The largest extent or leading dimension a BLAS takes, by its integers' width in bits.
BLAS_INT_MAX = {64: 2**63 - 1, 32: 2**31 - 1}


#: Bytes of a cache line: buffers are aligned to at least this (targets/c/padded.py).
CACHE_LINE_BYTES = 64
#: A register tile's vector in bytes (AVX-512's) and the most accumulator vectors it keeps
#: of the 32 registers (the fastest grouping measured): loops/microkernel.py, schedule/padding.py.
TILE_BYTES, TILE_VECTORS = 64, 16
#: A nest's local buffers above this many bytes together live on the heap: OpenMP workers
#: and Python threads get less stack than the main thread's 8 MiB (targets/c/codegen.py).
STACK_BYTES = 1 << 18
#: The work (scalar operations) from which a nest runs on threads where nothing was
#: measured (targets/c/threshold.py measures it): a parallel region costs about 5-10 µs.
PARALLEL_WORK = 1 << 17
#: An innermost sum of fewer constant terms gets no simd mark: gcc unrolls it (loops/parallel.py, docs/performance.md).
SIMD_REDUCTION_MIN = 16
