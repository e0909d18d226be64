"""The loop nest of a fused step (:mod:`tensorlang.schedule.fusion`): one loop over the
batch index around every statement's nest, per-iteration temporaries as local buffers.

Each statement is lowered as it would be alone (:mod:`.lower`, then :mod:`.interchange`:
a contraction becomes the row-AXPY micro-kernel below) and loses its outermost loop,
which is the batch loop by the schedule's rule; the bodies run in order inside one
``for e`` loop that declares the per-iteration temporaries first.  An access to such a
temporary drops its first index (always ``e``: the schedule checked it), so the
temporary's buffer is one iteration's slice, which stays in the L1 cache.  The
transposed copies the schedule asked for are declared and filled before the loop.

Inside the loop every extent is a compile-time constant; each small contraction becomes
a register block of :mod:`.microkernel` (with :func:`.microkernel.enabled`), else the
row AXPYs of :mod:`.interchange`, else the accumulator form.  Per-iteration temporaries
whose lives do not overlap share a local buffer (:func:`share_locals`).  The nest asks for the
widest vectors (``wide_vectors``): its rows are in L1, so the arithmetic is the limit,
and gcc's default on x86-64 is 256-bit vectors even where 512-bit ones exist
(docs/c-backend.md, "Fused loops", has the measurements).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..schedule.fusion import SHARE_LOCALS, share_locals
from ..schedule.plan import BufferPlan
from ..schedule.steps import LoopStep
from . import interchange
from .ir import (Acc, Apply, BinOp, Copy, Declare, Init, Load, Loop, Neg, Nest, Node, Scalar, Select, Store, Update, children,
                 work)
from .lower import lower_statement
from . import microkernel
from .parallel import PARALLEL_WORK, ParallelWork, simd_marks, team_size, threshold_for


def fused_nest(step: LoopStep, buffers: BufferPlan, number: int, parallel_work: ParallelWork = PARALLEL_WORK,
               fma: bool = False) -> Nest:
    """The one nest of fused loop step ``number`` (its ``fusion`` is set); ``fma``: its
    multiply-adds are fused (:attr:`.ir.Nest.fma`), which decides whether the
    micro-kernels pay (:func:`.microkernel.enabled`)."""
    fusion = step.fusion
    assert fusion is not None, "fused_nest lowers a fused step"
    slot_of = buffers.slot_of
    local = {slot_of[l.name]: l for l in fusion.locals}
    per_iteration = {slot for slot, l in local.items() if l.per_iteration}
    before: list[Node] = [Declare(slot, l.storage) for slot, l in local.items() if not l.per_iteration]
    for stmt in fusion.prologue:
        before.extend(simd_marks(node) for node in lower_statement(stmt, buffers, number).body)
    shared = share_locals(step.statements, {local[slot].name: slot for slot in per_iteration},
                          {slot: local[slot].storage for slot in per_iteration}) if SHARE_LOCALS else {}
    body: list[Node] = [Declare(slot, local[slot].storage) for slot in sorted(per_iteration) if slot not in shared]
    registers = len(buffers.all_names)  # the micro-kernels' accumulator blocks: slots after every other
    for stmt in step.statements:
        blocked = microkernel.kernel(stmt, buffers, registers) if microkernel.enabled(fma) and len(stmt.index) >= 3 else None
        if blocked is not None:
            outer = blocked
            registers += 1
        else:
            nest = lower_statement(stmt, buffers, number)
            if len(stmt.index) >= 2:
                nest = interchange.rewrite(nest, buffers)
            outer = nest.body
        if len(outer) != 1 or not isinstance(outer[0], Loop) or outer[0].var != fusion.var:
            raise AssertionError(f"a fused statement's nest starts with its batch loop: {stmt}")
        # each statement's accumulators are its own (a plain nest has a C block of its own)
        tag = f"s{len(body)}"
        body.extend(_drop_batch(node, per_iteration, fusion.var, tag) for node in outer[0].body)
    if shared:
        body = [_rename_slots(node, shared) for node in body]
    loop = simd_marks(Loop(fusion.var, fusion.extent, tuple(body)))
    assert isinstance(loop, Loop)
    loop = replace(loop, prefetch=_slabs_ahead(loop, buffers))
    threshold = threshold_for(parallel_work, (loop,))  # by the loop's intensity, as any nest's
    total = loop.extent * work(loop.body)
    if loop.extent > 1 and total >= threshold:
        loop = replace(loop, parallel=True, team=team_size(total, threshold, loop.extent))
    return Nest(step.statements[0], (*before, loop), number, fused=step.statements, wide_vectors=True, fma=fma)


#: The most bytes of one buffer's slab a fused iteration prefetches for the next: the
#: slabs of every input must fit in L2 beside the iteration's own working set (the CFD
#: kernels' u and D: 4 KiB each at n = 8, 32 KiB at n = 16).
PREFETCH_BYTES = 64 * 1024


def _slabs_ahead(loop: Loop, buffers: BufferPlan) -> tuple[int, ...]:
    """The buffers the fused ``loop`` only reads, always at ``[var, ...]`` (the batch
    index first, so the next iteration's values are one contiguous slab), whose slab is
    at most :data:`PREFETCH_BYTES`: what each iteration prefetches for the next.
    Measured on the interpolation at n = 8, E = 2048 (2-CPU AMD VM): 1.15-1.3x faster
    with the next element's u asked into L2 (docs/c-backend.md, "Fused loops")."""
    reads: dict[int, bool] = {}
    written: set[int] = set()
    stack: list = list(loop.body)
    while stack:
        node = stack.pop()
        if isinstance(node, Load):
            first = node.indices[0] if node.indices else None
            reads[node.slot] = reads.get(node.slot, True) and first == loop.var and len(node.indices) >= 2
        elif isinstance(node, Store):
            written.add(node.slot)
        elif isinstance(node, Copy):
            written.add(node.target)
            reads[node.source] = False
        stack.extend(children(node))
    program_slots = len(buffers.names)
    chosen = []
    for slot, batched in sorted(reads.items()):
        if not batched or slot in written or slot >= program_slots:
            continue
        shape = buffers.storage_shapes[slot]
        if shape[0] == loop.extent and math.prod(shape[1:]) * buffers.itemsize <= PREFETCH_BYTES:
            chosen.append(slot)
    return tuple(chosen)


def _rename_slots(node, mapping: dict[int, int]):
    """``node`` with every access to a slot in ``mapping`` made to the slot it maps to."""
    if isinstance(node, Loop):
        return replace(node, body=tuple(_rename_slots(child, mapping) for child in node.body))
    if isinstance(node, Store):
        return Store(mapping.get(node.slot, node.slot), node.indices, _rename_slots(node.value, mapping))
    if isinstance(node, Update):
        return replace(node, value=_rename_slots(node.value, mapping))
    if isinstance(node, Load):
        return Load(mapping.get(node.slot, node.slot), node.indices)
    if isinstance(node, (Neg, Apply)):
        return replace(node, arg=_rename_slots(node.arg, mapping))
    if isinstance(node, BinOp):
        return BinOp(node.op, _rename_slots(node.left, mapping), _rename_slots(node.right, mapping))
    if isinstance(node, Select):
        return replace(node, cases=tuple(_rename_slots(c, mapping) for c in node.cases))
    return node


def _drop_batch(node, slots: set[int], var: str, tag: str):
    """``node`` with every access to a per-iteration buffer in ``slots`` indexed without
    its first index (the batch variable ``var``), and its accumulators renamed ``<acc>_<tag>``."""
    if isinstance(node, Loop):
        return replace(node, body=tuple(_drop_batch(child, slots, var, tag) for child in node.body),
                       reductions=tuple((op, f"{acc}_{tag}") for op, acc in node.reductions))
    if isinstance(node, Store):
        indices = _strip(node.slot, node.indices, slots, var)
        return Store(node.slot, indices, _drop_scalar(node.value, slots, var, tag))
    if isinstance(node, Update):
        return Update(f"{node.acc}_{tag}", node.op, _drop_scalar(node.value, slots, var, tag))
    if isinstance(node, Init):
        return Init(f"{node.acc}_{tag}", node.op)
    return node


def _drop_scalar(e: Scalar, slots: set[int], var: str, tag: str) -> Scalar:
    if isinstance(e, Load):
        return Load(e.slot, _strip(e.slot, e.indices, slots, var))
    if isinstance(e, Acc):
        return Acc(f"{e.name}_{tag}")
    if isinstance(e, (Neg, Apply)):
        return replace(e, arg=_drop_scalar(e.arg, slots, var, tag))
    if isinstance(e, BinOp):
        return BinOp(e.op, _drop_scalar(e.left, slots, var, tag), _drop_scalar(e.right, slots, var, tag))
    if isinstance(e, Select):
        return replace(e, cases=tuple(_drop_scalar(c, slots, var, tag) for c in e.cases))
    return e


def _strip(slot: int, indices, slots: set[int], var: str):
    if slot not in slots:
        return indices
    if not indices or indices[0] != var:
        raise AssertionError(f"a per-iteration buffer read at another batch point: v{slot}{list(indices)}")
    return indices[1:]
