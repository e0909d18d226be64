"""The loop nest of a fused step: one loop over the batch around every statement's nest
(docs/c-backend.md, "Fused loops over a shared batch")."""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import replace

from ..ein import ir as ein
from ..ein.index import as_domain, has_affine
from ..schedule.fusion import SHARE_LOCALS, share_locals
from ..schedule.padding import decide as decide_padding, local_rezero, padded_shape
from ..schedule.plan import BufferPlan
from ..schedule.steps import LoopStep
from . import interchange
from .ir import (Acc, Ahead, Apply, BinOp, Const, Copy, Declare, Init, Load, Loop, Neg, Nest, Node, Store, Update, plain,
                 replace_nodes, slots, substitute, walk, work)
from .lower import lower_statement, rezero, scalar
from . import microkernel
from ..machine import CACHE_LINE_BYTES, PARALLEL_WORK
from .parallel import ParallelWork, share, simd_marks, team, threshold_for


def fused_nest(step: LoopStep, buffers: BufferPlan, number: int, parallel_work: ParallelWork = PARALLEL_WORK,
               fma: bool = False) -> Nest:
    """The one nest of fused loop step ``number``; ``fma``: :attr:`.ir.Nest.fma`."""
    fusion = step.fusion
    assert fusion is not None, "fused_nest lowers a fused step"
    slot_of = buffers.slot_of
    local = {slot_of[l.name]: l for l in fusion.locals}
    per_iteration = {slot for slot, l in local.items() if l.per_iteration}
    pad, padded = buffers.fused_pad, buffers.padded_names  # 000 §4: padded locals
    storage = {slot: padded_shape(l.storage, pad) for slot, l in local.items()}
    before: list[Node] = [Declare(slot, storage[slot]) for slot, l in local.items() if not l.per_iteration]
    for stmt in fusion.prologue:
        before.extend(simd_marks(node) for node in lower_statement(stmt, buffers, number).body)
        if pad > 1:  # a local's padding is not zero when declared (000 §4)
            before.extend(rezero(slot_of[stmt.target], tuple(n for _, n in stmt.index), pad,
                                 local_rezero(stmt, pad, padded, ran_padded=buffers.pad > 1)))
    statements = step.statements

    # each statement's register block, where it has one
    blocks: list[tuple[Node, ...] | None] = [
        microkernel.vector_block(stmt, buffers) if microkernel.enabled(fma) and len(stmt.index) >= 3 else None
        for stmt in statements]
    # (under padding no fold: each statement re-zeroes the padding it wrote, 000 §4)
    folded = {n for n in range(len(statements) - 1) if blocks[n] is not None and pad == 1
              and epilogue(statements[n], statements[n + 1], statements[n + 2:], {local[s].name for s in per_iteration})}
    # the buffers' lives as the folded statements run: a pair is one statement writing the
    # elementwise one's target and reading what both read but the contraction's result
    lives: list[ein.Statement | _Life | None] = [statements[n] if n - 1 not in folded else None
                                                  for n in range(len(statements))]
    for n in folded:
        first, then = statements[n], statements[n + 1]
        lives[n] = _Life(then.target, tuple(dict.fromkeys(r for r in first.reads + then.reads if r != first.target)))
    shared = share_locals([life for life in lives if life is not None], {local[slot].name: slot for slot in per_iteration},
                          {slot: storage[slot] for slot in per_iteration}) if SHARE_LOCALS else {}
    unused = {buffers.slot_of[statements[n].target] for n in folded}  # each fold's contraction result
    body: list[Node] = [Declare(slot, storage[slot]) for slot in sorted(per_iteration)
                        if slot not in shared and slot not in unused]
    spans: list[tuple[int, int]] = []  # each statement's nodes in ``body``: [start, stop)
    for n, stmt in enumerate(statements):
        if n - 1 in folded:
            continue  # in the store of the block before
        blocked = blocks[n]
        if blocked is not None:
            outer = blocked if n not in folded else _fold(blocked, stmt, statements[n + 1], buffers)
        else:
            nest = lower_statement(stmt, buffers, number)
            if len(stmt.index) >= 2:
                nest = interchange.rewrite(nest, buffers)
            outer = nest.body
        if buffers.pad > 1:  # the padding re-zeroed inside the iteration that wrote it
            outer = (outer[0],)
        if len(outer) != 1 or not isinstance(outer[0], Loop) or outer[0].var != fusion.var:
            raise AssertionError(f"a fused statement's nest starts with its batch loop: {stmt}")
        # each statement's accumulators are its own (a plain nest has a C block of its own)
        tag = f"s{len(body)}"
        start = len(body)
        body.extend(_drop_batch(node, per_iteration, fusion.var, tag) for node in outer[0].body)
        if pad > 1:
            ran_padded = buffers.pad > 1 or blocked is not None  # lowering pads under ``pad`` only
            body.extend(_drop_batch(node, per_iteration, fusion.var, tag)
                        for node in _rezero_iteration(stmt, buffers, fusion.var, slot_of[stmt.target] in local, ran_padded))
        spans.append((start, len(body)))
    if shared:
        body = [_rename_slots(node, shared) for node in body]
    loop = simd_marks(Loop(fusion.var, fusion.extent, tuple(body)))
    assert isinstance(loop, Loop)
    loop = _prefetch(loop, spans, buffers, fusion.cache.l1, fusion.cache.hint_min)
    # by the loop's intensity, as any nest's
    threads = team(work((loop,)), threshold_for(parallel_work, (loop,)), loop.extent)
    if threads is not None:
        loop = share(loop, threads)
    return Nest(step.statements[0], (*before, loop), number, fused=step.statements, wide_vectors=True, fma=fma)


def _rezero_iteration(stmt: ein.Statement, buffers: BufferPlan, var: str, is_local: bool,
                      ran_padded: bool) -> tuple[Node, ...]:
    """Under padding (000 §4), :func:`.lower.rezero` of ``stmt``'s slice at batch ``var``
    (a local's also where its loops kept their true extents: ``ran_padded`` false)."""
    pad = buffers.fused_pad
    shape = tuple(n for _, n in stmt.index)
    dims = (local_rezero(stmt, pad, buffers.padded_names, ran_padded) if is_local  # a program buffer: under ``pad`` only
            else decide_padding(stmt, pad).rezero if buffers.pad > 1 else ())
    names = (var, *(f"pad{d}" for d in range(1, len(shape))))
    nests = rezero(buffers.slot_of[stmt.target], shape, pad, dims, names)
    # every padded dimension is after the batch: each nest starts with the loop over var
    return tuple(child for nest in nests if isinstance(nest, Loop) for child in nest.body)


#: What :func:`share_locals` reads of a statement: the buffer it writes and those it reads.
_Life = namedtuple("_Life", "target reads")


def epilogue(contraction: ein.Statement, after: ein.Statement, later, per_iteration: set[str]) -> bool:
    """Whether elementwise ``after`` may be computed in the store of ``contraction``'s
    register block, the same values without its per-iteration result t (``later``: the
    statements after; docs/c-backend.md, "Fused loops over a shared batch")."""
    t = contraction.target
    if t not in per_iteration or after.target in after.reads or any(t in s.reads for s in later):
        return False
    if after.target in contraction.reads:  # it would be written while the sum still reads it
        return False
    if [n for _, n in contraction.index] != [n for _, n in after.index]:
        return False
    if as_domain(after.index).conditions or as_domain(contraction.index).conditions:
        return False
    own = tuple(name for name, _ in after.index)
    reads = [node for node in ein.nodes(after.body) if isinstance(node, ein.Tensor)]
    if [r.indices for r in reads if r.name == t] != [own] or any(has_affine(r.indices) for r in reads):
        return False
    # elementwise: tensors, numbers and arithmetic, functions (no sum, reduction, δ, ε, stacking)
    return all(isinstance(node, (ein.Tensor, ein.Const, ein.BinOp, ein.Neg, ein.Apply)) for node in ein.nodes(after.body))


def _fold(nest: tuple[Node, ...], contraction: ein.Statement, after: ein.Statement,
          buffers: BufferPlan) -> tuple[Node, ...]:
    """``contraction``'s block ``nest`` storing ``after``'s element instead of t's (:func:`epilogue`)."""
    t = buffers.slot_of[contraction.target]
    value = scalar(after.body, buffers.slot_of)
    own = [name for name, _ in after.index]
    assert all(isinstance(e, (Load, Const, BinOp, Neg, Apply)) for e in walk((value,))), value  # epilogue()

    def change(node):
        if isinstance(node, Store) and node.slot == t:
            assert isinstance(node.value, Acc), node
            at = substitute(value, dict(zip(own, node.indices)))
            computed = replace_nodes(at, lambda e: node.value if isinstance(e, Load) and e.slot == t else None)
            return Store(buffers.slot_of[after.target], node.indices, computed)
        return None

    folded = tuple(replace_nodes(node, change) for node in nest)
    assert t not in slots(folded), "the block no longer writes t"
    return folded


def _prefetch(loop: Loop, spans: list[tuple[int, int]], buffers: BufferPlan, l1: int, hint_min: int = 0) -> Loop:
    """The fused batch ``loop`` with its prefetch hints (docs/c-backend.md, "Prefetching the next
    element"); ``spans``: each statement's nodes in ``loop.body``."""
    var = loop.var
    accesses: dict[int, list[tuple[int, bool, tuple]]] = {}  # slot -> (statement, stored, indices)
    for n, (start, stop) in enumerate(spans):
        for node in walk(loop.body[start:stop]):
            if isinstance(node, (Load, Store)):
                accesses.setdefault(node.slot, []).append((n, isinstance(node, Store), node.indices))
            elif isinstance(node, Copy):  # whole buffers: never a slab of the batch
                accesses.setdefault(node.source, []).append((n, False, ()))
                accesses.setdefault(node.target, []).append((n, True, ()))
    streams: list[tuple[int, int, int, bool]] = []  # (first statement, slot, lines, written)
    for slot, seen in accesses.items():
        shape = buffers.storage_shapes[slot] if slot < len(buffers.names) else ()  # not a local buffer
        if (len(shape) < 2 or shape[0] != loop.extent
                or any(len(indices) != len(shape) or indices[0] != var for _, _, indices in seen)):
            continue
        slab = math.prod(shape[1:]) * buffers.itemsize
        if slab <= l1:
            streams.append((min(n for n, _, _ in seen), slot, -(-slab // CACHE_LINE_BYTES), any(s for _, s, _ in seen)))
    body = list(loop.body)
    # a statement's share goes to its outer loop, where that loop runs a loop of its own
    outer = [found for found in (_first_loop(body, span) for span in spans)
             if found is not None and not found[1].simd and any(isinstance(plain(n), Loop) for n in walk(found[1].body))]
    if not outer or sum(lines for _, _, lines, _ in streams) * CACHE_LINE_BYTES * loop.extent <= l1:
        # one-loop statements, or buffers that stay in L1 from call to call: the read
        # slabs asked for at the start of each iteration
        burst = tuple(Ahead(slot, ((var, 1),)) for slot in sorted(slot for _, slot, _, written in streams if not written))
        return replace(loop, prefetch=burst)
    runs, total = [], 0  # each slab's lines as the run [begin, begin + lines) of all of them
    for _, slot, lines, written in sorted(s for s in streams if s[2] * CACHE_LINE_BYTES >= hint_min):
        runs.append((slot, total, lines, written))
        total += lines
    weights = [work((node,)) for _, node in outer]
    whole, done = sum(weights), 0
    for (at, node), weight in zip(outer, weights):
        first, stop = total * done // whole, total * (done + weight) // whole
        done += weight
        aheads = tuple(Ahead(slot, ((var, 1),), spread=True, write=written,
                             lines=(max(first, begin) - begin, min(stop, begin + lines) - begin))
                       for slot, begin, lines, written in runs if max(first, begin) < min(stop, begin + lines))
        body[at] = replace(node, prefetch=(*node.prefetch, *aheads))
    return replace(loop, body=tuple(body))


def _first_loop(body: list, span: tuple[int, int]) -> tuple[int, Loop] | None:
    """The first loop from 0 among ``body[span]``, with its position."""
    for at in range(*span):
        node = body[at]
        if isinstance(node, Loop) and node.start == 0:
            return at, node
    return None


def _rename_slots(node, mapping: dict[int, int]):
    """``node`` with every access to a slot in ``mapping`` made to the slot it maps to."""
    return replace_nodes(node, lambda n: replace(n, slot=mapping[n.slot])
                         if isinstance(n, (Load, Store)) and n.slot in mapping else None, inside=True)


def _drop_batch(node, slots: set[int], var: str, tag: str):
    """``node`` with every access to a per-iteration buffer in ``slots`` indexed without
    its first index (the batch variable ``var``), and its accumulators renamed ``<acc>_<tag>``."""
    def change(n):
        if isinstance(n, Loop):
            return replace(n, reductions=tuple((op, f"{acc}_{tag}") for op, acc in n.reductions))
        if isinstance(n, Acc):
            return Acc(f"{n.name}_{tag}")
        if isinstance(n, (Init, Update)):
            return replace(n, acc=f"{n.acc}_{tag}")
        if isinstance(n, (Load, Store)) and n.slot in slots:
            if n.indices[:1] != (var,):
                raise AssertionError(f"a per-iteration buffer read at another batch point: v{n.slot}{list(n.indices)}")
            return replace(n, indices=n.indices[1:])
        return None
    return replace_nodes(node, change, inside=True)


#: The scalar operations per iteration from which a fused loop's statement is compiled as
#: a function of its own (:func:`own_functions`; docs/c-backend.md, "Fused loops").
OWN_FUNCTION_WORK = 2048


def own_functions(body: tuple) -> tuple[int, ...]:
    """The positions of a fused loop's nests (of two or more) compiled as functions of their
    own: :data:`OWN_FUNCTION_WORK` operations, no accumulator started outside."""
    nests = [k for k, n in enumerate(body) if isinstance(plain(n), Loop)]
    if len(nests) < 2:
        return ()

    def closed(nest: Node) -> bool:  # every accumulator it updates or reads is started inside it
        nodes = list(walk((nest,)))
        used = {n.acc for n in nodes if isinstance(n, Update)} | {n.name for n in nodes if isinstance(n, Acc)}
        return used <= {n.acc for n in nodes if isinstance(n, Init)}

    return tuple(k for k in nests if work((body[k],)) >= OWN_FUNCTION_WORK and closed(body[k]))
