"""Resource limits: absurd sizes become error[too-large], never a crash; and :func:`env`,
the reader of every ``TENSORLANG_*`` variable (docs/security.md, "Environment variables")."""

from __future__ import annotations

import os
import re
import stat
import sys
from typing import TypeVar

import numpy as np

from .errors import Span, error


def refuse_masked(value, what: str, span: Span | None = None,
                  why: str = "which have no value here: fill them (a.filled(np.nan) for ⊥)") -> None:
    """error[input] for a masked array with masked entries (``np.asarray`` drops the mask; in out= it hides results)."""
    if isinstance(value, np.ma.MaskedArray) and np.ma.is_masked(value):
        raise error("input", f"{what} is a masked array with masked entries, {why}", span)


# ------------------------------------------------------------------ environment
def env(variable: str, accepted: str, parse, default=None, warn: bool = False):
    """``$variable`` read by ``parse`` (None: refused), ``default`` when unset; a refused value is
    error[input] (with ``warn``: a warning and ``default``; docs/security.md, "Environment variables")."""
    value = os.environ.get(variable)
    found = None if value is None else parse(value.strip())
    if value is None or found is not None:
        return default if value is None else found
    why = f"${variable}={value[:40]!r}{'...' if len(value) > 40 else ''} is not {accepted}"
    if warn:
        print(f"tensorlang: warning: {why}; using the default", file=sys.stderr)
        return default
    raise error("input", f"{why}; unset it for the default (docs/security.md, \"Environment variables\")")


def env_int(variable: str, default):
    """An integer variable: decimal digits, 1 to 2^62 (every limit is an int64 somewhere)."""
    return env(variable, "an integer from 1 to 2^62",
               lambda t: int(t) if re.fullmatch(r"[0-9]{1,19}", t) and 0 < int(t) <= 2**62 else None, default)


def env_flag(variable: str, default: bool = False, warn: bool = False) -> bool:
    """An on/off variable: 1/yes/true/on or 0/no/false/off, in any case."""
    words = {"1": True, "yes": True, "true": True, "on": True, "0": False, "no": False, "false": False, "off": False}
    return env(variable, "1 or 0 (yes/no, true/false, on/off)", lambda t: words.get(t.lower()), default, warn)


def env_path(variable: str) -> str | None:
    """A variable naming a path (not empty); None when unset."""
    return env(variable, "a path", lambda t: t or None)


_Table = TypeVar("_Table", dict, list)
_KEPT: list = []  # what the package keeps from one call for the next (dicts and lists made by kept())


def kept(table: _Table) -> _Table:
    _KEPT.append(table)
    return table


def clear_caches() -> None:
    """Let go of what the package keeps in memory from one call for the next (images, built
    Diderot programs, compiled einsums and probes: docs/api.md); compiled C stays on disk."""
    for table in _KEPT:
        table.clear()


def memory_budget_bytes() -> int:
    """How many bytes one run may allocate for a single tensor or for the whole store."""
    configured = env_int("TENSORLANG_MAX_BYTES", None)
    if configured is not None:
        return configured
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover - exotic platforms
        return 8 * 2**30


def check_allocation(elements: int, itemsize: int, what: str, span: Span | None = None) -> None:
    """Raise ``too-large`` when ``elements`` values of ``itemsize`` bytes exceed the budget."""
    need = elements * itemsize
    budget = memory_budget_bytes()
    if need > budget:
        raise error("too-large", f"{what} needs {shown_count(elements)} elements ({_human(need)}), more than the memory "
                    f"budget of {_human(budget)}", span)


def is_int64(x) -> bool:
    """``x`` a whole number of 64 bits, a float by its value (not 2.0**63, ⊥, ±∞): Diderot's ints, as inputs and items."""
    try:
        return bool(int(x) == x) and -(1 << 63) <= int(x) < 1 << 63
    except (OverflowError, ValueError, TypeError):
        return False


def shown_count(n: int) -> str:
    """``n`` with commas; ``at least 2^K`` past 10^30 (Python writes no int of 4300 digits, a float overflows)."""
    return f"{n:,}" if n < 10**30 else f"at least 2^{n.bit_length() - 1}"


def _human(n: float) -> str:
    k = min(5, max(0, (int(n).bit_length() - 1) // 10))  # 1024 ** k <= n, PiB at most
    return f"{shown_count(int(n))} B" if n >= 10**30 else f"{n / 1024 ** k:.1f} {('B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB')[k]}" if k else f"{int(n)} B"


#: The largest program text read (``$TENSORLANG_MAX_SOURCE_BYTES``): far beyond any program
#: (10 000 statements are about 300 KB); an endless file (``/dev/zero``) is refused.
MAX_SOURCE_BYTES = 8 * 2**20


def max_source_bytes() -> int:
    """:data:`MAX_SOURCE_BYTES`, or ``$TENSORLANG_MAX_SOURCE_BYTES``."""
    return env_int("TENSORLANG_MAX_SOURCE_BYTES", MAX_SOURCE_BYTES)


def open_regular(path: str, what: str) -> int:
    """A descriptor of ``path`` opened for reading (never blocking on a FIFO), or error[input]
    when it cannot be opened or is not a regular file (a FIFO, a device, a directory)."""
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
    """At most ``limit`` bytes from a binary stream, or error[too-large] (one byte past the limit tells)."""
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


#: The most statements (and declarations) a program may have (``$TENSORLANG_MAX_STATEMENTS``):
#: twice the 10**4 the compiler is tested with (docs/errors.md, "Limits on program size").
MAX_STATEMENTS = 20_000


def max_statements() -> int:
    """:data:`MAX_STATEMENTS`, or ``$TENSORLANG_MAX_STATEMENTS``."""
    return env_int("TENSORLANG_MAX_STATEMENTS", MAX_STATEMENTS)


def check_statements(count: int, span: Span | None = None, what: str = "statements") -> None:
    """error[too-large] when a program has more than :func:`max_statements` ``what``."""
    limit = max_statements()
    if count > limit:
        raise error("too-large", f"the program has more than {limit:,} {what}, the most tensorlang compiles "
                    "($TENSORLANG_MAX_STATEMENTS); split it into several programs", span)
