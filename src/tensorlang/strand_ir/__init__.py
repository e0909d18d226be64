"""The strand IR (docs/diderot-compiled.md): a Diderot program's strands as scalar statements,
between ``lang/diderot/lower.py`` and ``targets/c/strands.py``; a target registers its
executor in ``EXECUTORS``, where the front end finds it (``lang`` never imports ``targets``)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .ir import StrandIR

#: name -> build(StrandIR, steps) -> a runner for runs of at most ``steps`` super-steps
#: (targets/c/strands.py registers "c")
EXECUTORS: dict[str, Callable[..., Any]] = {}
#: name -> () -> why it cannot run here, or None (no C compiler, say)
UNAVAILABLE: dict[str, Callable[[], "str | None"]] = {}


def print_order(owners: Sequence[tuple[int, int]], every: int = 0) -> list[int]:
    """Diderot's order of the prints of a program that is not bulk-synchronous, from each print's (steps done before
    it or -1, strand or -1 for a global block): by strand, every ``every`` steps (-s N), the start blocks' first."""
    return sorted(range(len(owners)), key=lambda k: (owners[k][0] // every if every else min(owners[k][0], 0), owners[k][1]))


__all__ = ["EXECUTORS", "UNAVAILABLE", "StrandIR", "print_order"]
