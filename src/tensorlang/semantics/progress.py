"""Progress of the reference interpreters (issue 24): the hook a long run reports to.

The interpreters (``lang/*/semantics.py``) walk their statements through
:func:`statements`; nothing listens unless a caller installs an observer with
:func:`observing` (``tensorlang run --backend interp`` does, on a terminal, for a program
whose estimated work is large: cli.py).  Without an observer :func:`statements` hands
the sequence back as it is, so a run pays one global look-up per *program*, not per
statement.  The observer is called as ``observer(done, total)`` before the first
statement (done = 0) and after each.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, Sequence, TypeVar

T = TypeVar("T")

#: The current observer: ``observer(done, total)`` after each statement, or None.
_observer: Callable[[int, int], None] | None = None


@contextmanager
def observing(observer: Callable[[int, int], None]) -> Iterator[None]:
    """Report every interpreter statement run inside the ``with`` block to ``observer``."""
    global _observer
    saved, _observer = _observer, observer
    try:
        yield
    finally:
        _observer = saved


def statements(items: Sequence[T]) -> Sequence[T] | Iterator[T]:
    """``items`` itself when nobody observes, else the items one by one, each reported
    to the observer once it has run (the interpreter asks for the next one)."""
    observer = _observer
    if observer is None:
        return items
    return _reporting(items, observer)


def _reporting(items: Sequence[T], observer: Callable[[int, int], None]) -> Iterator[T]:
    total = len(items)
    observer(0, total)
    for done, item in enumerate(items, 1):
        yield item
        observer(done, total)
