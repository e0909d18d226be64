"""Resource limits: absurd sizes become a clear ``too-large`` error, never a crash.

The budget is half of the machine's physical memory, or ``$TENSORLANG_MAX_BYTES`` when
set (tests use it to exercise the limit cheaply).
"""

from __future__ import annotations

import os
import stat

import numpy as np

from .errors import Span, error


def refuse_masked(value, what: str, span: Span | None = None) -> None:
    """error[input] for a masked array with masked entries: ``np.asarray`` drops the mask
    and hands over the hidden values as if they were data."""
    if isinstance(value, np.ma.MaskedArray) and np.ma.is_masked(value):
        raise error("input", f"{what} is a masked array with masked entries, which have no value here: fill them "
                             "(a.filled(np.nan) for ⊥)", span)


def memory_budget_bytes() -> int:
    """How many bytes one run may allocate for a single tensor or for the whole store."""
    configured = os.environ.get("TENSORLANG_MAX_BYTES")
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover - exotic platforms
        return 8 * 2**30


def check_allocation(elements: int, itemsize: int, what: str, span: Span | None = None) -> None:
    """Raise ``too-large`` when ``elements`` values of ``itemsize`` bytes exceed the budget."""
    need = elements * itemsize
    budget = memory_budget_bytes()
    if need > budget:
        raise error("too-large", f"{what} needs {elements:,} elements ({_human(need)}), more than the memory "
                    f"budget of {_human(budget)}", span)


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} EiB"  # pragma: no cover


#: The largest program text read (a file or standard input), unless
#: ``$TENSORLANG_MAX_SOURCE_BYTES`` says otherwise: far beyond any program written or
#: generated (a 10 000-statement program is about 300 KB), and small enough that an
#: endless or huge file (``/dev/zero``, a log) is refused before memory runs out.
MAX_SOURCE_BYTES = 8 * 2**20


def _configured(variable: str, default: int) -> int:
    """``$variable`` when it is a positive integer, else ``default``."""
    configured = os.environ.get(variable, "").strip()
    return int(configured) if configured.isdigit() and int(configured) > 0 else default


def max_source_bytes() -> int:
    """How many bytes of program text are read at most (:data:`MAX_SOURCE_BYTES`, or
    ``$TENSORLANG_MAX_SOURCE_BYTES``)."""
    return _configured("TENSORLANG_MAX_SOURCE_BYTES", MAX_SOURCE_BYTES)


def open_regular(path: str, what: str) -> int:
    """A descriptor of ``path`` opened for reading, or error[input] when it cannot be
    opened or is not a regular file (a FIFO would block, a device such as ``/dev/zero``
    never ends, a directory has no text).  Opening does not block on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error("input", f"{what} {path!r} does not exist") from None
    except (OSError, ValueError) as exc:  # ValueError: a name with a NUL character
        raise error("input", f"cannot read {what} {path!r}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "not a regular file")
            raise error("input", f"cannot read {what} {path!r}: it is {kind}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bounded(stream, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes from a binary stream, or error[too-large] when it holds
    more (the excess is never read: one byte past the limit tells)."""
    chunks, total = [], 0
    while total <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise error("too-large", f"{what} is larger than {_human(limit)}, the most tensorlang reads "
                                 "($TENSORLANG_MAX_SOURCE_BYTES)")
    return b"".join(chunks)


#: The most statements a program may have, unless ``$TENSORLANG_MAX_STATEMENTS`` says
#: otherwise: every stage's work is linear in the statements (tests/hostile/
#: test_large_programs.py), but its constant is a few milliseconds a statement, so that
#: a program of 10**5 statements would take minutes.  Twice the 10**4 statements the
#: compiler is tested with; a front end refuses a longer program as soon as it has read
#: one statement more (error[too-large]), before any later stage runs; the same
#: limit holds for declarations.
MAX_STATEMENTS = 20_000


def max_statements() -> int:
    """:data:`MAX_STATEMENTS`, or ``$TENSORLANG_MAX_STATEMENTS`` when it is a positive integer."""
    return _configured("TENSORLANG_MAX_STATEMENTS", MAX_STATEMENTS)


def check_statements(count: int, span: Span | None = None, what: str = "statements") -> None:
    """error[too-large] when a program has more than :func:`max_statements` statements
    (or declarations: ``what``)."""
    limit = max_statements()
    if count > limit:
        raise error("too-large", f"the program has more than {limit:,} {what}, the most tensorlang compiles "
                    "($TENSORLANG_MAX_STATEMENTS); split it into several programs", span)
