"""The data-cache sizes of the machine, for the schedule's cost model (:mod:`.fusion`).

Read once per process from Linux's ``/sys/devices/system/cpu/cpu0/cache`` (the level,
type and size of each cache of the first core), else from ``os.sysconf`` where the C
library knows them, else a fallback of common sizes (L1d 32 KiB, L2 1 MiB), so the
decision never depends on the machine being Linux.  ``TENSORLANG_CACHE_SIZES`` overrides
them (``l1=49152,l2=2097152``) for tests and for reading another machine's schedule.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SYS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")

#: Used when neither /sys nor sysconf says: a small common L1d and a modest L2.
FALLBACK_L1 = 32 * 1024
FALLBACK_L2 = 1024 * 1024


@dataclass(frozen=True)
class CacheSizes:
    """Bytes of the first core's level-1 data cache and its level-2 cache, and where
    the numbers came from ("sys", "sysconf", "fallback" or "env")."""

    l1: int
    l2: int
    source: str

    def describe(self) -> str:
        return f"L1d {self.l1 // 1024} KiB, L2 {self.l2 // 1024} KiB ({self.source})"


def _size(text: str) -> int | None:
    """``48K`` / ``2048K`` / ``1M`` / ``49152`` as bytes."""
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in "KMG" else text
    return int(digits) * scale if digits.isdigit() else None


def _from_sys(root: Path = SYS_CACHE) -> tuple[int | None, int | None]:
    l1 = l2 = None
    try:
        entries = sorted(root.glob("index*"))
    except OSError:
        return None, None
    for entry in entries:
        try:
            level = (entry / "level").read_text().strip()
            kind = (entry / "type").read_text().strip()
            size = _size((entry / "size").read_text())
        except OSError:
            continue
        if level == "1" and kind in ("Data", "Unified"):
            l1 = size
        elif level == "2" and kind in ("Data", "Unified"):
            l2 = size
    return l1, l2


def _from_sysconf() -> tuple[int | None, int | None]:
    def conf(name: str) -> int | None:
        try:
            value = os.sysconf(name)
        except (ValueError, OSError, AttributeError):
            return None
        return value if value and value > 0 else None
    return conf("SC_LEVEL1_DCACHE_SIZE"), conf("SC_LEVEL2_CACHE_SIZE")


def _from_env(text: str) -> tuple[int | None, int | None]:
    found: dict[str, int | None] = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        found[key.strip().lower()] = _size(value) if value.strip() else None
    return found.get("l1"), found.get("l2")


@lru_cache(maxsize=None)
def cache_sizes() -> CacheSizes:
    """The machine's L1d and L2 sizes (see the module's docstring for the order asked)."""
    env = os.environ.get("TENSORLANG_CACHE_SIZES")
    if env:
        l1, l2 = _from_env(env)
        if l1 and l2:
            return CacheSizes(l1, l2, "env")
    l1, l2 = _from_sys()
    if l1 and l2:
        return CacheSizes(l1, l2, "sys")
    l1, l2 = _from_sysconf()
    if l1 and l2:
        return CacheSizes(l1, l2, "sysconf")
    return CacheSizes(FALLBACK_L1, FALLBACK_L2, "fallback")
