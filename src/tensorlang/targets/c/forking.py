"""Generated C after ``fork``: the forking thread's OpenMP teams become teams of one, so
that libgomp's stale thread pool is never touched in the child (docs/c-backend.md,
"Threads", "After fork")."""

from __future__ import annotations

import contextlib
import ctypes
import os

#: The sonames of libgomp tried first; another name (a conda build's) is found in /proc/self/maps.
_NAMES = ("libgomp.so.1", "libgomp.so")


def _libgomp_names():
    """The sonames, then the libgomp paths of /proc/self/maps (read only where no soname loaded)."""
    yield from _NAMES
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split(None, 5)[-1].strip() for line in maps if "libgomp" in line}
    except OSError:
        return
    yield from sorted(p for p in paths if p.startswith("/"))


def _loaded_libgomp():
    """The libgomp this process has loaded (not loading one), or None."""
    noload = getattr(os, "RTLD_NOLOAD", 0)
    for name in _libgomp_names() if noload else ():
        with contextlib.suppress(OSError):
            return ctypes.CDLL(name, mode=noload | ctypes.RTLD_GLOBAL)
    return None


def _in_child() -> None:
    """In a forked child: make the calling thread's OpenMP regions teams of one, where
    libgomp is loaded (one without omp_set_max_active_levels: nothing safer to do)."""
    with contextlib.suppress(Exception):  # a fork must never fail because of this
        library = _loaded_libgomp()
        if library is not None:
            library.omp_set_max_active_levels(ctypes.c_int(0))


_installed = False


def install() -> None:
    """Register the fork handler once per process (importing the C target does)."""
    global _installed
    if not _installed and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_in_child)
        _installed = True


install()
