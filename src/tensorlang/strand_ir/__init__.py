"""The strand IR: a Diderot program's strands as scalar statements (issue 42's
"Execution"), between the typed program (``lang/diderot/lower.py`` lowers to it) and
the C renderer (``targets/c/strands.py`` prints and builds it).

``EXECUTORS`` is where a target that runs strand programs registers itself (by name:
``"c"``); the front end finds it there, so that ``lang`` never imports ``targets``
(docs/diderot-compiled.md)."""

from __future__ import annotations

from typing import Any, Callable

from .ir import StrandIR

#: name -> build(StrandIR, steps) -> a runner for runs of at most ``steps`` super-steps
#: (targets/c/strands.py registers "c")
EXECUTORS: dict[str, Callable[..., Any]] = {}
#: name -> () -> why it cannot run here, or None (no C compiler, say)
UNAVAILABLE: dict[str, Callable[[], "str | None"]] = {}

__all__ = ["EXECUTORS", "UNAVAILABLE", "StrandIR"]
