"""The loop pipeline: :func:`loop_program` runs :data:`LOOP_PIPELINE`, named rewrites
``(LoopProgram, LoopFacts) -> LoopProgram`` in order (docs/architecture.md, "The loop rewrites")."""

from __future__ import annotations

import math
from collections import ChainMap
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Callable, Mapping

from ..analysis.structure import TensorStructure
from ..ein import ir as ein
from ..ein.structure import Structure
from ..machine import PARALLEL_WORK, STACK_BYTES
from ..schedule.plan import Schedule
from ..schedule import steps
from ..schedule.steps import LoopStep, statement_of
from . import interchange as _interchange, jam, microkernel, parallel as _parallel, structure
from .fusion import fused_nest, own_functions
from .pieces import split_pieces
from .ir import BlasProduct, Declare, Loop, LoopProgram, Nest, Tile, input_reads, replace_nodes, walk
from .lower import lower_statement

#: A local buffer beyond the program's slots larger than this many elements is read
#: through a restrict pointer (:func:`place_locals`).
LOCAL_ARRAY_ELEMENTS = 64


@dataclass(frozen=True)
class StatementFacts:
    """What the structure analysis found for one loop statement: its target's structure
    (None: unreadable) and those known of the tensors it reads and of its target."""
    found: TensorStructure | None
    known: Mapping[str, TensorStructure]


@dataclass(frozen=True)
class LoopFacts:
    """What the rewrites read besides the program: the schedule, the options, and per
    lowered nest its statement's facts (None for a fused nest)."""
    schedule: Schedule
    statements: tuple[StatementFacts | None, ...]
    parallel_work: _parallel.ParallelWork = PARALLEL_WORK
    fma: bool = False
    #: the largest integer the target's BLAS takes where it calls one (``packed-blas``), else None
    blas_int_max: int | None = None


def loop_facts(schedule: Schedule, declared: Mapping[str, Structure] | None = None,
               parallel_work: _parallel.ParallelWork = PARALLEL_WORK, fma: bool = False,
               blas_int_max: int | None = None) -> LoopFacts:
    """The facts of ``schedule``'s loop statements, in program order (``declared``: the
    structures the program's declarations promise, by name)."""
    known = structure.declared_structures(schedule.buffers, declared or {})
    facts: list[StatementFacts | None] = []
    readers: dict[str, set[str]] = {}
    for step in schedule.steps:
        if not isinstance(step, LoopStep):
            structure.target_structure(statement_of(step), known, readers)
            continue
        for stmt in step.statements:
            found = structure.target_structure(stmt, known, readers)
            if step.fusion is None:
                names = {t.name for t in ein.tensors(stmt.body)} | {stmt.target}  # what restrict_sums reads
                facts.append(StatementFacts(found, MappingProxyType({n: known[n] for n in names if n in known})))
        if step.fusion is not None:
            facts.append(None)
    return LoopFacts(schedule, tuple(facts), parallel_work, fma, blas_int_max)


Rewrite = Callable[[LoopProgram, LoopFacts], LoopProgram]


def _each(program: LoopProgram, facts: LoopFacts, name: str,
          change: Callable[[Nest, StatementFacts], Nest | None]) -> LoopProgram:
    """``program`` with ``change`` applied to each unfused nest, one it returns (not None)
    recorded as taken by ``name``."""
    assert len(facts.statements) == len(program.nests), "the rewrites keep one nest per lowered nest"
    nests = []
    for nest, fact in zip(program.nests, facts.statements):
        changed = change(nest, fact) if fact is not None else None
        nests.append(nest if changed is None else replace(changed, rewrites=(*nest.rewrites, name)))
    return replace(program, nests=tuple(nests))


def _bodies(program: LoopProgram, name: str, change: Callable[[Nest], tuple | None]) -> LoopProgram:
    """``program`` with each nest's body ``change(nest)`` (None: as it is), a changed nest
    recorded as taken by ``name``."""
    nests = []
    for nest in program.nests:
        body = change(nest)
        nests.append(nest if body is None or body == nest.body else replace(nest, body=body, rewrites=(*nest.rewrites, name)))
    return replace(program, nests=tuple(nests))


def _taken(nest: Nest, *names: str) -> bool:
    return any(name in nest.rewrites for name in names)


def lower(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """Every loop statement as a nest in accumulator form (:mod:`.lower`); a fused step as
    its one nest (:mod:`.fusion`)."""
    schedule = facts.schedule
    nests: list[Nest] = []
    for n, step in enumerate(schedule.steps):
        if not isinstance(step, LoopStep):
            continue
        if step.fusion is not None:  # one loop over the batch around every statement
            nests.append(fused_nest(step, schedule.buffers, n, facts.parallel_work, facts.fma))
            continue
        nests.extend(replace(lower_statement(stmt, schedule.buffers, n), fma=facts.fma) for stmt in step.statements)
    return replace(program, nests=tuple(nests))


def compress(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """A result with redundancy computes its unique set, then rebuilds the rest (:mod:`.structure`);
    a sum over blocks keeps unfused multiply-adds."""
    buffers = facts.schedule.buffers

    def change(nest: Nest, fact: StatementFacts) -> Nest | None:
        found = fact.found
        blocks = found is not None and found.redundant_blocks and stmt_sums(nest.statement)
        if found is None or not (blocks or any(len(g) <= structure.MAX_GROUP for g in found.groups)):
            return None
        slot = buffers.slot_of[nest.statement.target]
        compressed = ((structure.compress_packed(nest, found, buffers, slot) if blocks else None)
                      or structure.compress(_interchange.rewrite(nest, buffers), found, slot, blocks)
                      or structure.compress(nest, found, slot, blocks) or nest)
        return replace(compressed, fma=False) if blocks else compressed

    return _each(program, facts, "compress", change)


def restrict_sums(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """Summation loops over the support of their summands (:func:`.structure.restrict_sums`)."""

    def change(nest: Nest, fact: StatementFacts) -> Nest | None:
        summed = None if _taken(nest, "compress") else structure.restrict_sums(nest, fact.known)
        return None if summed is nest else summed
    return _each(program, facts, "restrict-sums", change)


def restrict(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """The target's loops over its support where that saves enough
    (:func:`.structure.restricts`, :func:`.structure.restrict`)."""
    return _each(program, facts, "restrict", lambda nest, fact: None if _taken(nest, "compress") or fact.found is None
                 or not structure.restricts(fact.found) else structure.restrict(nest, fact.found.support))


def _unless_taken(name: str, rewrite: Callable[[Nest, LoopFacts], Nest], after: str = "") -> Rewrite:
    """``rewrite`` of each nest no structure rewrite took (and ``after`` took), as ``name``."""
    def run(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
        def change(nest: Nest, fact: StatementFacts) -> Nest | None:
            if _taken(nest, "compress", "restrict-sums", "restrict") or (after and not _taken(nest, after)):
                return None
            rewritten = rewrite(nest, facts)
            return None if rewritten is nest or rewritten == nest else rewritten
        return _each(program, facts, name, change)
    return run


def parallel(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """Simd and parallel loops marked (:func:`.parallel.mark`; a fused nest has its marks), Gram steps' teams, probe steps' points."""
    work, numbered = facts.parallel_work, tuple(enumerate(facts.schedule.steps))
    return replace(_each(program, facts, "parallel", lambda nest, fact: _parallel.mark(nest, work)),
                   teams=tuple((n, _parallel.gram_team(s, work)) for n, s in numbered if isinstance(s, steps.GramStep)),
                   probes=tuple((n, _parallel.probe_points(s, work)) for n, s in numbered if isinstance(s, steps.ProbeStep)))


def pieces(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """A loop over a direct sum's index runs piece by piece, without the select
    (:func:`.pieces.split_pieces`; fused nests too)."""
    return replace(program, nests=tuple(split_pieces(nest) for nest in program.nests))


def pack_in_producer(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """A temporary read only through a packed copy is written packed by its producer
    (:func:`.structure.pack_in_producer`)."""
    statements = [s for step in facts.schedule.steps
                  for s in (step.statements if isinstance(step, LoopStep) else (statement_of(step),))]
    return structure.pack_in_producer(program, statements)


def tiles(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """In a fused nest, each vector block that is a register tile (:func:`.microkernel.tile_of`)
    as an :class:`.ir.Tile` (``microkernel.TILES``: whether the block stays the other branch)."""
    if microkernel.TILES is False:
        return program
    itemsize = facts.schedule.buffers.itemsize

    def tile(node) -> Tile | None:
        found = microkernel.tile_of(node, itemsize) if isinstance(node, Loop) else None
        plain = not microkernel.TILES
        return None if found is None else Tile(found, node, plain, plain and microkernel.row_by_row(found, node, itemsize))

    return _bodies(program, "tiles", lambda nest: tuple(replace_nodes(node, tile) for node in nest.body)
                   if nest.wide_vectors else None)


def functions(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """A fused loop's large statements as functions of their own (:func:`.fusion.own_functions`)."""
    return _bodies(program, "functions", lambda nest: tuple(
        replace(node, apart=own_functions(node.body)) if isinstance(node, Loop) else node for node in nest.body)
        if nest.fused else None)


def inputs(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """An ``inout`` slot read from the caller's input up to its assignment (:func:`.ir.input_reads`)."""
    inout = {n for n, b in enumerate(program.buffers.buffers) if b.role == "inout"}
    found: dict[int, list[int]] = {}
    of_step: dict[int, list[int]] = {}
    for k, nest in enumerate(program.nests if inout else ()):
        of_step.setdefault(nest.step, []).append(k)
    for step, at in ((facts.schedule.steps[number], at) for number, at in of_step.items()):
        for slot in (s for s in step.slots if s in inout) if isinstance(step, LoopStep) else ():
            for k in at[:input_reads(tuple(program.nests[k] for k in at), slot) or 0]:
                found.setdefault(k, []).append(slot)
    return replace(program, nests=tuple(replace(nest, inputs=tuple(found[k]), rewrites=(*nest.rewrites, "inputs"))
                                        if k in found else nest for k, nest in enumerate(program.nests)))


def place_locals(program: LoopProgram) -> LoopProgram:
    """Where each local buffer lives (:attr:`.ir.Declare.home`, :attr:`.ir.Nest.heap`; run
    after the rewrites, always): docs/structure.md, "Where the packed copies live"."""
    first, itemsize = len(program.names), program.buffers.itemsize
    nests = []
    for nest in program.nests:
        large = [n for n in nest.body if isinstance(n, Declare) and n.slot >= first
                 and math.prod(n.shape) > LOCAL_ARRAY_ELEMENTS]
        sizes = [-(-math.prod(n.shape) * itemsize // 64) * 64 for n in large]
        heap = {n.slot: sum(sizes[:k]) for k, n in enumerate(large)} if sum(sizes) > STACK_BYTES else {}

        def home(node, heap=heap) -> Declare | None:
            if not isinstance(node, Declare):
                return None
            if node.slot in heap:
                return replace(node, home="heap", offset=heap[node.slot])
            pointer = node.slot >= first and math.prod(node.shape) > LOCAL_ARRAY_ELEMENTS
            return replace(node, home="pointer") if pointer else node

        placed = any(isinstance(n, Declare) and n.slot >= first for n in walk(nest.body))  # else the nest is not rebuilt
        body = tuple(replace_nodes(node, home) for node in nest.body) if placed else nest.body
        nests.append(replace(nest, body=body, heap=sum(sizes) if heap else 0) if placed else nest)
    return replace(program, nests=tuple(nests))


def blas_routine(p: structure.PackedProduct, storage: Mapping[int, tuple[int, ...]],
                 int_max: int) -> tuple[str, tuple[int, int, int], int] | None:
    """``(routine, leading dimensions of left, right and target, the target's elements)`` of one
    BLAS call (SYRK or GEMM) computing ``p``, or None where it stays loops (docs/structure.md,
    "The packed product on BLAS")."""
    shapes = [tuple(storage.get(s, ())) for s in (p.left, p.right, p.target)]
    if p.loop_work < steps.PACKED_BLAS_WORK or any(len(shape) != 2 for shape in shapes):
        return None
    (a0, a1), (b0, b1), (c0, c1) = shapes
    a_need = (p.summed, p.rows) if p.left_summed_first else (p.rows, p.summed)
    b_need = (p.summed, p.cols) if p.right_summed_first else (p.cols, p.summed)
    if (a0 < a_need[0] or a1 < a_need[1] or b0 < b_need[0] or b1 < b_need[1] or c0 < p.rows or c1 < p.cols
            or max(p.rows, p.cols, p.summed, a1, b1, c1) > int_max):
        return None
    if not (p.is_gram and p.upper) and (p.upper or c1 != p.cols):
        return None
    return "syrk" if p.is_gram and p.upper else "gemm", (a1, b1, c1), c0 * c1


def packed_blas(program: LoopProgram, facts: LoopFacts) -> LoopProgram:
    """Each packed block product large enough as one BLAS call (:func:`blas_routine`), where
    the target calls BLAS."""
    if facts.blas_int_max is None:
        return program
    int_max = facts.blas_int_max
    stored = dict(enumerate(program.buffers.all_storage_shapes))  # (once: a copy per step is quadratic)
    storage: ChainMap[int, tuple[int, ...]] = ChainMap({}, stored)
    step: int | None = None

    def product(node) -> Tile | BlasProduct | None:
        if isinstance(node, Declare):  # a local buffer's shape from here on
            storage[node.slot] = node.shape
        if isinstance(node, Tile):
            return node
        found = structure.packed_product(node) if isinstance(node, Loop) else None
        routine = None if found is None else blas_routine(found, storage, int_max)
        return None if found is None or routine is None else BlasProduct(found, *routine, node)

    def change(nest: Nest) -> tuple:
        nonlocal step, storage
        if nest.step != step:  # each step's buffers as they are stored, its locals as declared
            step, storage = nest.step, ChainMap({}, stored)
        return tuple(replace_nodes(node, product) for node in nest.body)

    return _bodies(program, "packed-blas", change)


#: The loop rewrites in the order :func:`loop_program` runs them (docs/architecture.md).
LOOP_PIPELINE: tuple[tuple[str, Rewrite], ...] = (
    ("lower", lower),
    ("compress", compress),
    ("restrict-sums", restrict_sums),
    ("restrict", restrict),
    ("interchange", _unless_taken("interchange", lambda nest, facts: _interchange.rewrite(nest, facts.schedule.buffers))),
    ("rows", _unless_taken("rows", lambda nest, facts: jam.rows(nest))),
    ("strips", _unless_taken("strips", lambda nest, facts: jam.strips(nest))),
    ("prefetch", _unless_taken("prefetch", lambda nest, facts: jam.prefetch_strips(
        nest, facts.schedule.buffers.all_storage_shapes, facts.schedule.buffers.itemsize), after="strips")),
    ("parallel", parallel),
    ("pieces", pieces),
    ("pack-in-producer", pack_in_producer),
    ("tiles", tiles),
    ("packed-blas", packed_blas),
    ("functions", functions),
    ("inputs", inputs),
)

#: The names ``skip`` accepts.
LOOP_REWRITE_NAMES = tuple(name for name, _ in LOOP_PIPELINE)

#: The rewrites that exploit declared or found structure (``compressed=False`` skips them).
STRUCTURE_REWRITES = ("compress", "restrict-sums", "restrict", "pack-in-producer")


def loop_program(schedule: Schedule, declared: Mapping[str, Structure] | None = None,
                 compressed: bool = True, parallel_work: _parallel.ParallelWork = PARALLEL_WORK,
                 fma: bool = False, skip=(), blas_int_max: int | None = None) -> LoopProgram:
    """The nests of ``schedule``'s loop steps made by :data:`LOOP_PIPELINE` without those in ``skip``
    (``compressed=False``: nor :data:`STRUCTURE_REWRITES`); ``declared``: the declarations' structures."""
    skipped = set((skip,) if isinstance(skip, str) else skip)
    for name in sorted(skipped):
        if name not in LOOP_REWRITE_NAMES:
            raise ValueError(f"unknown loop rewrite {name!r} (rewrites: {', '.join(LOOP_REWRITE_NAMES)})")
    if "lower" in skipped:
        raise ValueError("the loop rewrite 'lower' cannot be skipped: every other one starts from its nests")
    if not compressed:
        skipped |= set(STRUCTURE_REWRITES)
    facts = loop_facts(schedule, declared, parallel_work, fma, blas_int_max)
    program = LoopProgram(schedule.buffers, ())
    for name, rewrite in LOOP_PIPELINE:
        if name not in skipped:
            program = replace(rewrite(program, facts), rewrites=(*program.rewrites, name))
    return place_locals(program)


def stmt_sums(stmt) -> bool:
    """Whether ``stmt`` sums (worth computing on a unique set: a copy is not)."""
    return any(isinstance(node, (ein.Sum, ein.Reduce)) for node in ein.nodes(stmt.body))
