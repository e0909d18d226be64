"""The loop IR below the schedule: the loop steps' statements as loop nests over the
schedule's buffers, printable (``--emit loops``) and printed as C by the C target.

:func:`loop_program` runs the pipeline: :mod:`.lower` (accumulator form), then the
transformations :mod:`.interchange` (row AXPY for contractions) and :mod:`.parallel`
(OpenMP and SIMD marks); a fused step's statements become one nest (:mod:`.fusion`);
a temporary read only through a packed copy is stored packed by its producer
(:func:`.structure.pack_in_producer`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..ein.structure import Structure
from ..schedule.plan import Schedule
from ..schedule.steps import LoopStep, statement_of
from . import interchange, parallel, structure
from .fusion import fused_nest
from .pieces import split_pieces
from .ir import LoopProgram
from .lower import lower_statement


def loop_program(schedule: Schedule, declared: Mapping[str, Structure] | None = None,
                 compressed: bool = True, parallel_work: parallel.ParallelWork = parallel.PARALLEL_WORK,
                 fma: bool = False) -> LoopProgram:
    """The nests of ``schedule``'s loop steps, in order.  A statement with a symmetric
    result computes its unique set and reconstructs the rest (:mod:`.structure`;
    ``declared``: the structures the program's declarations promise, by name;
    ``compressed=False`` keeps every nest dense); the others may be interchanged.  Loops
    run on threads from ``parallel_work`` scalar operations on (:func:`.parallel.mark`; a
    :class:`.parallel.Threshold` has one figure for arithmetic and one for streaming work).
    ``fma=True`` marks every nest for fused multiply-adds (:attr:`.ir.Nest.fma`) and lets
    fused loops use the register-blocked micro-kernels where they pay with it
    (:func:`.microkernel.enabled`)."""
    nests = []
    known = structure.declared_structures(schedule.buffers, declared or {})
    for n, step in enumerate(schedule.steps):
        if not isinstance(step, LoopStep):
            structure.target_structure(statement_of(step), known)
            continue
        if step.fusion is not None:  # one loop over the batch around every statement (.fusion)
            for stmt in step.statements:
                structure.target_structure(stmt, known)
            nests.append(fused_nest(step, schedule.buffers, n, parallel_work, fma))
            continue
        for stmt in step.statements:
            found = structure.target_structure(stmt, known)
            groups = tuple(g for g in found.groups if len(g) <= structure.MAX_GROUP) if found and compressed else ()
            nest = lower_statement(stmt, schedule.buffers, n)
            blocked = None
            if found is not None and compressed and found.redundant_blocks and stmt_sums(stmt):
                slot = schedule.buffers.slot_of[stmt.target]
                blocked = (structure.compress_packed(nest, found, schedule.buffers, slot)
                           or structure.compress_blocks(nest, found, slot))
            if blocked is not None:
                nests.append(parallel.mark(blocked, parallel_work))
                continue
            if groups:
                slot = schedule.buffers.slot_of[stmt.target]
                nest = (structure.compress(interchange.rewrite(nest, schedule.buffers), groups, slot)
                        or structure.compress(nest, groups, slot) or nest)
            else:
                summed = structure.restrict_sums(nest, known) if compressed else nest
                if found is not None and compressed and structure.restricts(found):
                    nest = structure.restrict(summed, found.support)
                elif summed is not nest:
                    nest = summed
                else:
                    nest = interchange.rewrite(nest, schedule.buffers)
            nests.append(replace(parallel.mark(nest, parallel_work), fma=fma))
    # a loop over a direct sum's index runs piece by piece, without the select (.pieces)
    program = LoopProgram(schedule.buffers, tuple(split_pieces(nest) for nest in nests))
    # a temporary read only through a packed copy is written packed by its producer
    statements = [s for step in schedule.steps
                  for s in (step.statements if isinstance(step, LoopStep) else (statement_of(step),))]
    return structure.pack_in_producer(program, statements) if compressed else program


def stmt_sums(stmt) -> bool:
    """Whether ``stmt`` sums (worth computing on a unique set: a copy is not)."""
    from ..ein import ir as ein
    return any(isinstance(node, (ein.Sum, ein.Reduce)) for node in ein.nodes(stmt.body))


def declared_structures(program) -> dict[str, Structure]:
    """The structures an EIN program's declarations promise, by name."""
    return {d.name: d.structure for d in program.decls if d.structure is not None}
