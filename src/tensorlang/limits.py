"""Resource limits: absurd sizes become a clear ``too-large`` error, never a crash.

The budget is half of the machine's physical memory, or ``$TENSORLANG_MAX_BYTES`` when
set (tests use it to exercise the limit cheaply).
"""

from __future__ import annotations

import os

from .errors import Span, error


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
        raise error(
            "too-large",
            f"{what} needs {elements:,} elements ({_human(need)}), more than the memory budget of {_human(budget)}",
            span,
        )


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} EiB"  # pragma: no cover
