"""The loop IR below the schedule: the loop steps' statements as loop nests over the
schedule's buffers, printable (``--emit loops``) and printed as C by the C target.
:func:`loop_program` runs :data:`LOOP_PIPELINE` (:mod:`.pipeline`; docs/architecture.md,
"The loop rewrites").
"""

from __future__ import annotations

from ..ein.structure import Structure
from .ir import LoopProgram
from .pipeline import (LOOP_PIPELINE, LOOP_REWRITE_NAMES, STRUCTURE_REWRITES, LoopFacts, StatementFacts, loop_facts,
                       loop_program, stmt_sums)

__all__ = ["LOOP_PIPELINE", "LOOP_REWRITE_NAMES", "STRUCTURE_REWRITES", "LoopFacts", "LoopProgram", "StatementFacts",
           "declared_structures", "loop_facts", "loop_program", "stmt_sums"]


def declared_structures(program) -> dict[str, Structure]:
    """The structures an EIN program's declarations promise, by name."""
    return {d.name: d.structure for d in program.decls if d.structure is not None}
