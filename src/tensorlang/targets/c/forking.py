"""Generated C after ``fork``: the forking thread's OpenMP teams become teams of one.

GCC's OpenMP runtime (libgomp) keeps, per thread that has started a parallel region, a
pool of worker threads that it reuses for the next region.  ``fork`` copies only the
thread that called it, so in the child that thread's pool names workers that do not
exist: its next parallel region with more than one thread waits for them forever (a
kernel, a field probe or a compiled probe that ran on two threads in the parent never
returns in a ``multiprocessing`` child under the ``fork`` start method, Linux's default).
libgomp installs no fork handler of its own; LLVM's and Intel's runtimes do.

So when this process forks (:func:`os.register_at_fork`), the child sets the forking
thread's ``max-active-levels`` to 0 (``omp_set_max_active_levels(0)``): every parallel
region that thread starts is inactive, run by the thread alone, whatever team a kernel
asks for (``threads=``, the C caller's ``threads``, a probe's ``threads``), and the stale
pool is never touched.  It is an OpenMP setting of that thread, so every C call path
honours it with no check of its own; threads the child starts later have no pool yet and
run their teams as usual.  A team of one is what a kernel's thread picker chooses anyway
whenever one thread is faster or the machine is busy (docs/c-backend.md, "Threads").
Where libgomp is not loaded (no kernel ran, another OpenMP runtime, no compiler) nothing
is done.
"""

from __future__ import annotations

import ctypes
import os

#: The sonames of libgomp tried first; a libgomp loaded under another name (a conda
#: build's hashed copy) is found in /proc/self/maps.
_NAMES = ("libgomp.so.1", "libgomp.so")


def _loaded_libgomp():
    """The libgomp this process has loaded (not loading one), or None."""
    noload = getattr(os, "RTLD_NOLOAD", 0)
    if not noload:
        return None
    for name in _NAMES:
        try:
            return ctypes.CDLL(name, mode=noload | ctypes.RTLD_GLOBAL)
        except OSError:
            pass
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split(None, 5)[-1].strip() for line in maps if "libgomp" in line}
    except OSError:
        return None
    for path in sorted(p for p in paths if p.startswith("/")):
        try:
            return ctypes.CDLL(path, mode=noload | ctypes.RTLD_GLOBAL)
        except OSError:
            pass
    return None


def serial_after_fork() -> bool:
    """In a forked child: make the calling thread's OpenMP regions teams of one.  Whether
    libgomp was loaded (and so was set)."""
    library = _loaded_libgomp()
    if library is None:
        return False
    try:
        library.omp_set_max_active_levels(ctypes.c_int(0))
    except (AttributeError, OSError):  # a libgomp without it: nothing safer to do
        return False
    return True


def _in_child() -> None:
    try:
        serial_after_fork()
    except Exception:  # noqa: BLE001 - a fork must never fail because of this
        pass


_installed = False


def install() -> None:
    """Register the fork handler once per process (importing the C target does)."""
    global _installed
    if not _installed and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_in_child)
        _installed = True


install()
