"""The loop IR below the schedule: the loop steps' statements as loop nests over the
schedule's buffers, printable (``--emit loops``) and printed as C by the C target.

:func:`loop_program` runs the pipeline: :mod:`.lower` (accumulator form), then the
transformations :mod:`.interchange` (row AXPY for contractions) and :mod:`.parallel`
(OpenMP and SIMD marks).
"""

from __future__ import annotations

from ..schedule.plan import Schedule
from ..schedule.steps import LoopStep
from . import interchange, parallel
from .ir import LoopProgram
from .lower import lower_statement


def loop_program(schedule: Schedule, parallel_work: int = parallel.PARALLEL_WORK) -> LoopProgram:
    """The nests of ``schedule``'s loop steps, in order; loops run on threads from
    ``parallel_work`` scalar operations on (:func:`.parallel.mark`)."""
    nests = []
    for n, step in enumerate(schedule.steps):
        if isinstance(step, LoopStep):
            for stmt in step.statements:
                nest = interchange.rewrite(lower_statement(stmt, schedule.buffers, n), schedule.buffers)
                nests.append(parallel.mark(nest, parallel_work))
    return LoopProgram(schedule.buffers, tuple(nests))
