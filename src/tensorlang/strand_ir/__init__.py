"""The strand IR (docs/diderot-compiled.md): a Diderot program's strands as scalar statements,
between ``lang/diderot/lower.py`` and ``targets/c/strands.py``; a target registers its
executor in ``EXECUTORS``, where the front end finds it (``lang`` never imports ``targets``)."""

from __future__ import annotations

from typing import Any, Callable

from .ir import StrandIR

#: name -> build(StrandIR, steps) -> a runner for runs of at most ``steps`` super-steps
#: (targets/c/strands.py registers "c")
EXECUTORS: dict[str, Callable[..., Any]] = {}
#: name -> () -> why it cannot run here, or None (no C compiler, say)
UNAVAILABLE: dict[str, Callable[[], "str | None"]] = {}

__all__ = ["EXECUTORS", "UNAVAILABLE", "StrandIR"]
