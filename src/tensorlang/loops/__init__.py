"""The loop IR below the schedule (``--emit loops``): :func:`loop_program` runs :data:`LOOP_PIPELINE`
(docs/architecture.md, "The loop rewrites")."""

from __future__ import annotations

from .ir import LoopProgram
from .pipeline import (LOOP_PIPELINE, LOOP_REWRITE_NAMES, STRUCTURE_REWRITES, LoopFacts, StatementFacts, loop_facts,
                       loop_program, stmt_sums)

__all__ = ["LOOP_PIPELINE", "LOOP_REWRITE_NAMES", "STRUCTURE_REWRITES", "LoopFacts", "LoopProgram", "StatementFacts",
           "loop_facts", "loop_program", "stmt_sums"]
