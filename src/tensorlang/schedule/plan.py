"""The schedule of a program (:func:`plan`): the buffer plan (002 §6.2-6.3), BLAS or loops per
statement (:func:`choose`), loop steps and fusion; ``--emit schedule`` prints it (docs/architecture.md)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Mapping

import numpy as np

from ..analysis.cost import SPARSE_GAIN
from ..analysis import liveness
from ..analysis.structure import count
from ..analysis.inplace import compatible, in_place_verdict
from ..analysis.liveness import Sharing
from ..ein import ir
from ..ein.index import Domain
from ..semantics.interface import Role, roles as declared_roles
from . import steps
from .fusion import Fusion, Local, fusion_groups
from .gemm import runs
from .gram_chain import gram_chains, with_statements
from .padding import blas_on_padded, decide as decide_padding, fuses_padded, padded_shape, with_local_copies
from .steps import (BlasStep, EinsumStep, GemmStep, LoopStep, ModeStep, Step, blas_shape, contraction_factors,
                    einsum_step, gemm_step, gram_step, mode_step)
from .probe import probe_step

#: The name of the scratch slot (not a legal variable name, so it cannot clash).
SCRATCH = "<scratch>"


@dataclass(frozen=True)
class Buffer:
    """One slot: a variable (or the scratch buffer) with its shape and its role in a call."""
    name: str
    shape: tuple[int, ...]
    role: str
    #: 002 Fig. 20 by size: the temporary whose buffer this slot is a view of ("": its own memory)
    alias: str = ""

    @property
    def pooled(self) -> bool:
        return self.role == Role.TEMP

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class BufferPlan:
    """The slots of a schedule (slot n is ``buffers[n]``) and the element size; ``shared``: the
    temporaries in another's buffer (002 §6.2-6.3), through its slot or an alias slot (a view)."""
    buffers: tuple[Buffer, ...]
    itemsize: int
    shared: tuple[Sharing, ...] = ()
    #: 000 §4: buffers padded to multiples of ``pad`` (1: none; schedule/padding.py says which dimensions)
    pad: int = 1
    locals: tuple[Local, ...] = ()  # the fused loops' locals (:mod:`.fusion`), slots from ``len(buffers)``
    #: 000 §4 for the locals only (``pad`` 1: :func:`~.padding.with_local_copies`)
    local_pad: int = 1

    @property
    def fused_pad(self) -> int:
        """The padding of the fused loops' locals: ``pad``, else ``local_pad``."""
        return self.pad if self.pad > 1 else self.local_pad

    @cached_property
    def padded_names(self) -> frozenset[str] | None:
        """The variables padded by :attr:`fused_pad`: every one (None) under ``pad``, else the locals."""
        return None if self.pad > 1 else frozenset(local.name for local in self.locals)

    @cached_property  # (a large program asks for it per statement: computed once)
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.buffers)

    @cached_property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        return tuple(b.shape for b in self.buffers)

    @property
    def storage_shapes(self) -> tuple[tuple[int, ...], ...]:
        """Each slot's shape in memory, padded (the flat scratch slot is already large enough)."""
        if self.pad <= 1:
            return self.shapes
        return tuple(b.shape if b.name == SCRATCH else padded_shape(b.shape, self.pad) for b in self.buffers)

    @cached_property
    def slot_of(self) -> dict[str, int]:
        slots = {b.name: n for n, b in enumerate(self.buffers)}
        slots.update((local.name, len(self.buffers) + k) for k, local in enumerate(self.locals))
        for s in self.shared:  # in order: an owner may itself live in an earlier one's slot
            if s.name not in slots:  # (an alias slot's temporary has its own)
                slots[s.name] = slots[s.owner]
        return slots

    @cached_property
    def variable_shapes(self) -> dict[str, tuple[int, ...]]:
        """Every variable's shape, the temporaries that share a slot included."""
        return {name: self.buffers[slot].shape if slot < len(self.buffers) else self.locals[slot - len(self.buffers)].shape
                for name, slot in self.slot_of.items()}

    @cached_property  # (a large program asks for it per statement: computed once)
    def all_names(self) -> tuple[str, ...]:
        """The names of the slots and then of the locals, by slot number."""
        return self.names + tuple(local.name for local in self.locals)

    @property
    def all_storage_shapes(self) -> tuple[tuple[int, ...], ...]:
        """:attr:`storage_shapes`, then each local's storage (one iteration's slice)."""
        return self.storage_shapes + tuple(padded_shape(local.storage, self.fused_pad) for local in self.locals)

    def is_local(self, slot: int) -> bool:
        return slot >= len(self.buffers)

    def scratch_for(self, stmt: ir.Statement) -> int:
        """The scratch slot (always the last) that ``stmt``, which cannot write its target in place, writes instead."""
        if not self.buffers or self.buffers[-1].name != SCRATCH:
            raise ValueError(f"the buffer plan has no scratch slot for {stmt.target!r}, which needs one")
        return len(self.buffers) - 1

    @property
    def pooled(self) -> tuple[int, ...]:
        """The slots whose buffers a kernel keeps between calls."""
        return tuple(n for n, b in enumerate(self.buffers) if b.pooled)

    @property
    def pool_bytes(self) -> int:
        """The bytes of one set of pooled buffers (a call's; alias slots take nothing)."""
        storage = self.storage_shapes
        return sum(math.prod(storage[n]) for n in self.pooled if not self.buffers[n].alias) * self.itemsize

    @cached_property
    def aliased(self) -> frozenset[int]:
        """The slots whose memory another slot shares (alias slots and their owners)."""
        return frozenset(s for n, b in enumerate(self.buffers) if b.alias for s in (n, self.slot_of[b.alias]))


@dataclass(frozen=True)
class Schedule:
    """Steps in order over one buffer plan, for one dtype."""
    buffers: BufferPlan
    steps: tuple[Step, ...]
    dtype: str


def loop_statements(shapes: Mapping[str, tuple[int, ...]], from_c: bool = False):
    """The test 002 Fig. 16 needs of a statement that is to write the buffer it reads: it
    surely runs as a loop nest (:func:`choose`'s test without the slots), where renamed
    (:func:`fig16_renamed`) it keeps the accumulator form."""
    slot_of = dict.fromkeys(shapes, 0)
    shapes = dict(shapes)

    def runs_as_loops(n: int, stmt: ir.Statement) -> bool:
        return blas_shape(stmt) is not None or not _blas_step(stmt, slot_of, shapes)[0].pays(from_c)
    return runs_as_loops


def gemm_splits(shapes: Mapping[str, tuple[int, ...]], from_c: bool = False):
    """Whether a statement, alone a BLAS step, is with its batch index fixed one GEMM with M
    or N 1 (:func:`.fusion.fusion_groups`; docs/c-backend.md, "Fused loops over a shared batch")."""
    runs_as_loops = loop_statements(shapes, from_c)

    def splits(stmt: ir.Statement) -> bool:
        var = stmt.index[0][0]
        sliced = {**shapes, stmt.target: (1, *shapes[stmt.target][1:])}
        sliced.update((t.name, tuple(1 if i == var else n for i, n in zip(t.indices, shapes[t.name])))
                      for t in ir.tensors(stmt.body) if var in t.indices)
        one = ir.Statement(stmt.target, ((var, 1), *stmt.index[1:]), stmt.body)
        if runs_as_loops(0, stmt) or blas_shape(one) is not None:
            return False
        gemm = _blas_step(one, dict.fromkeys(sliced, 0), sliced)[0].single_gemm
        return gemm is not None and 1 in gemm[:2]
    return splits


def _blas_step(stmt: ir.Statement, slot_of, shapes) -> tuple[BlasStep, str]:
    """The library step a BLAS-shaped ``stmt`` would be, and its kind: a mode product,
    else a two-tensor GEMM, else opt_einsum's path for more tensors."""
    mode = mode_step(stmt, slot_of, shapes)
    if mode is not None:
        # a mode product too fine-grained for BLAS stays a loop nest: a GemmStep would
        # be slower still (it copies X and the result)
        return mode, "mode product" if mode.batched else "mode product (one GEMM)"
    gemm = gemm_step(stmt, slot_of, shapes)
    if gemm is not None:
        return gemm, "GEMM"
    return einsum_step(stmt, slot_of), f"einsum ({len(ir.tensors(stmt.body))} tensors)"


def buffer_plan(program: ir.Program, dtype, roles: Mapping[str, str] | None = None, reuse: bool = True,
                pad: int = 1, locals_: tuple[Local, ...] = (), into_results: bool = True,
                sums: bool = True, from_c: bool = False) -> BufferPlan:
    """A slot per declared variable but the temporaries that reuse a dead one's buffer (``reuse``,
    002 §6.2-6.3) and ``locals_`` (the fused loops'), then the scratch slot where a statement needs one."""
    if roles is None:
        roles = declared_roles(program.decls)
    own = {local.name for local in locals_}
    reuse_roles = {**roles, **{name: Role.IN for name in own}} if own else roles
    # by size only without padding: a padded buffer's layout depends on its shape
    shared = liveness.reuse(program, reuse_roles, loop_statements(program.shapes, from_c) if sums else None, by_size=pad <= 1,
                            into_results=into_results) if reuse else ()
    shapes = program.shapes
    owners: dict[str, str] = {}  # a shared temporary's buffer's owner (sharing is in order: owners first)
    for s in shared:
        owners[s.name] = owners.get(s.owner, s.owner)
    aliases: dict[tuple[str, tuple[int, ...]], str] = {}  # (owner, shape) -> the first temporary of that shape in the owner's buffer
    for s in shared:
        owner = owners[s.name]
        if shapes[s.name] != shapes[owner]:
            aliases.setdefault((owner, shapes[s.name]), s.name)
    gone = ({s.name for s in shared} - set(aliases.values())) | own
    buffers = [Buffer(d.name, d.shape, str(roles.get(d.name, Role.TEMP))) for d in program.decls if d.name not in gone]
    buffers = [replace(b, alias=owners[b.name]) if b.name in owners else b for b in buffers]
    scratch = max((math.prod(padded_shape(shapes[s.target], pad)) for s in program.statements
                   if not compatible(s).in_place), default=None)
    if scratch is not None:
        buffers.append(Buffer(SCRATCH, (scratch,), str(Role.TEMP)))
    through = []  # each shared temporary mapped to the slot it is indexed through
    for s in shared:
        alias = aliases.get((owners[s.name], shapes[s.name]), s.name)
        through.append(replace(s, owner=owners[s.name] if alias == s.name else alias))
    return BufferPlan(tuple(buffers), np.dtype(dtype).itemsize, tuple(through), pad, tuple(locals_))


def choose(stmt: ir.Statement, buffers: BufferPlan, blas: bool = True, from_c: bool = False,
           gram: int | None = None, gemm_copies: bool = True) -> Step | str:
    """The library step that runs ``stmt``, or why the loop nest does (docs/c-backend.md, "BLAS steps");
    ``gram``: the vector bytes; ``from_c``: :data:`.steps.C_BLAS_WORK`; ``gemm_copies=False``: no copying GEMM."""
    library = probe_step(stmt, buffers.slot_of, buffers.variable_shapes)  # a field probe's probe tensor
    if library is not None:
        return library
    if not blas:
        return "BLAS steps are off"
    why = blas_shape(stmt)
    if why is not None:
        return why
    slot_of = buffers.slot_of
    shapes = buffers.variable_shapes
    symmetric = gram_step(stmt, slot_of, shapes) if gram is not None and buffers.pad == 1 else None
    if symmetric is not None and gram is not None and symmetric.why_not(gram) is None:
        return replace(symmetric, reason=f"Gram product (order {symmetric.order}, m = {symmetric.m}): the sorted "
                                         "entries only, the others filled from them")
    step, kind = _blas_step(stmt, slot_of, shapes)
    if not step.pays(from_c):
        return step.why_not(from_c) or "the step does not pay"
    if buffers.pad > 1:
        refused = blas_on_padded(step, stmt, shapes)
        if refused is not None:
            return f"padding (pad {buffers.pad}): {refused}"
    # the rule that let it in: BLAS_WORK, or the lower C_BLAS_WORK where only that one does
    least, name = step.threshold(from_c) if step.work < steps.BLAS_WORK else (steps.BLAS_WORK, "BLAS_WORK")
    reason = f"{kind}: {step.work} multiply-adds >= {name} {least}" + (" (BLAS called from C)" * (name != "BLAS_WORK"))
    if isinstance(step, ModeStep) and step.batched:
        reason = (f"{kind}: J*M*Q = {step.j * step.m * step.q} >= MODE_BATCH_WORK {steps.MODE_BATCH_WORK} "
                  f"and min(J,M) = {min(step.j, step.m)} >= MODE_BATCH_MIN {steps.MODE_BATCH_MIN}")
    if isinstance(step, GemmStep) and step.copies and not gemm_copies:
        return EinsumStep(step.target, stmt, step.work, reason + "; numpy: einsum, the GEMM would copy an operand")
    return replace(step, reason=reason)


#: The most consecutive loop statements in one C function (gcc's time grows faster than
#: linearly with its size: docs/performance.md, "Measurement history").
MAX_LOOP_STATEMENTS = 32


def _fused_plan(program: ir.Program, dtype, roles: Mapping[str, str], reuse: bool,
                fuse: bool, from_c: bool = False, pad: int = 1) -> tuple[BufferPlan, tuple[Fusion, ...]]:
    """The buffer plan with the fused groups' locals, and the groups, less those where
    memory reuse put a target in the buffer of another variable it reads."""
    groups = fusion_groups(program, roles, np.dtype(dtype).itemsize, splits=gemm_splits(program.shapes, from_c)) if fuse else ()
    if pad > 1:
        groups = tuple(g for g in groups if fuses_padded(g, pad))
    full = True
    while True:
        locals_ = tuple(local for g in groups for local in g.locals)
        # a fused group is worth more than the reuse added since (temporaries in results,
        # Fig. 16 for Σ statements): on a clash that reuse goes first, then the group
        buffers = buffer_plan(program, dtype, roles, reuse, pad, locals_, into_results=full, sums=full,
                              from_c=from_c)
        clashing = [g for g in groups if _clashes(g, buffers)]
        if not clashing:
            return buffers, groups
        if not full:
            groups = tuple(g for g in groups if g not in clashing)
        full = False


def _locally_padded(program: ir.Program, dtype, roles, reuse: bool, from_c: bool, local_pad: int,
                    buffers: BufferPlan, fusions: tuple[Fusion, ...]):
    """``local_pad``: the program through :func:`.padding.with_local_copies`, fused again,
    its plan padding the locals; as it was where a copy would not be fused."""
    rewritten, copies = with_local_copies(program, fusions, roles, local_pad)
    if copies:
        again, groups = _fused_plan(rewritten, dtype, roles, reuse, True, from_c)
        if copies <= {local.name for g in groups for local in g.locals if local.per_iteration}:
            program, buffers, fusions = rewritten, again, groups
    return program, replace(buffers, local_pad=local_pad), fusions


def _clashes(group: Fusion, buffers: BufferPlan) -> bool:
    slot_of = buffers.slot_of

    def memory(name: str) -> int:  # the slot whose memory ``name`` lives in (alias slots: the owner's)
        slot = slot_of[name]
        alias = buffers.buffers[slot].alias if slot < len(buffers.buffers) else ""
        return slot_of[alias] if alias else slot

    written = {s.target for s in group.statements}
    accessed = {name for s in group.statements for name in (s.target, *s.reads)}
    for name in written:
        if buffers.is_local(slot_of[name]):
            continue
        if any(other != name and memory(other) == memory(name) for other in accessed):
            return True
    return False


def plan(program: ir.Program, dtype, roles: Mapping[str, str] | None = None, blas: bool = True,
         reuse: bool = True, pad: int = 1, fuse: bool = True, from_c: bool = False,
         visits: Mapping[str, tuple[int, int]] | None = None, blocks: Mapping | None = None,
         gram: int | None = None, local_pad: int = 1, gemm_copies: bool = True, blas_int_max: int | None = None) -> Schedule:
    """The schedule of ``program`` for ``dtype``; ``from_c``, ``gram``, ``gemm_copies``: as :func:`choose`;
    ``visits``, ``blocks``: :func:`_sparse_sums`, :func:`_block_structured`; ``blas_int_max``: :func:`.gemm.runs`."""
    if gram is not None and blas and pad == 1:
        program = gram_chains(gram_merged(program, roles, gram), roles, gram)
    roles = declared_roles(program.decls) if roles is None else roles
    buffers, fusions = _fused_plan(program, dtype, roles, reuse, fuse, from_c, pad)
    if local_pad > 1 and pad == 1 and fusions:
        program, buffers, fusions = _locally_padded(program, dtype, roles, reuse, from_c, local_pad, buffers, fusions)
    program = fig16_renamed(program, buffers)
    starts = {g.start: g for g in fusions}
    scheduled: list[Step] = []
    group: list[tuple[ir.Statement, str]] = []

    def flush():
        if group:  # the slots of the statements' reads and targets, and the scratch where one is not in place
            slots = {buffers.slot_of[name] for s, _ in group for name in (s.target, *s.reads)}
            slots |= {buffers.scratch_for(s) for s, _ in group if not compatible(s).in_place}
            scheduled.append(LoopStep(tuple(s for s, _ in group), tuple(sorted(slots)), tuple(r for _, r in group)))
            group.clear()

    structured = _block_structured(program, blocks) if blas and blocks else {}
    if blas and visits and pad == 1:
        structured = {**_sparse_sums(program, visits), **structured}
    skip = 0
    for n, stmt in enumerate(program.statements):
        if n < skip:
            continue
        if n in starts:
            flush()
            fused = starts[n]
            scheduled.append(_fused_step(fused, program.statements[fused.start:fused.stop], buffers, blas, from_c))
            skip = fused.stop
            continue
        chosen = structured[stmt.target] if stmt.target in structured else choose(stmt, buffers, blas, from_c, gram, gemm_copies)
        if isinstance(chosen, str):
            reason = f"loops: {chosen}" + (f"; {in_place_verdict(stmt)}" if stmt.target in stmt.reads else "")
            if pad > 1:
                reason += f"; {decide_padding(stmt, pad, compatible(stmt).in_place).describe()}"
            group.append((stmt, reason))
            if len(group) >= MAX_LOOP_STATEMENTS:
                flush()
            continue
        flush()
        if isinstance(chosen, (GemmStep, ModeStep, EinsumStep)):  # where it runs, for the target (.gemm.runs)
            chosen = replace(chosen, runs=runs(chosen, blas_int_max, pad))
        scheduled.append(chosen)
    flush()
    scheduled = [replace(s, chunk=steps.einsum_chunk(s.statements if isinstance(s, LoopStep) else (s.statement,)))
                 if isinstance(s, (LoopStep, EinsumStep)) else s for s in scheduled]
    return Schedule(buffers, tuple(scheduled), np.dtype(dtype).name)


def gram_merged(program: ir.Program, roles: Mapping[str, str] | None, vector_bytes: int) -> ir.Program:
    """``program`` with each third moment the optimizer split in two (``t[n,i,j] = X[n,i] *
    X[n,j]; R[i,j,k] = Σ_n X[n,k] * t[n,i,j]``) merged back where that is a Gram step that pays."""
    roles = declared_roles(program.decls) if roles is None else roles
    statements, shapes = list(program.statements), program.shapes
    readers = Counter(name for s in statements for name in set(s.reads))  # statements reading each name
    for n in range(len(statements) - 2, -1, -1):
        pair, contraction = statements[n], statements[n + 1]
        if roles.get(pair.target, Role.TEMP) != Role.TEMP or blas_shape(contraction) is not None \
                or readers[pair.target] != 1:
            continue
        factors, summed, scale = contraction_factors(contraction)
        inner = contraction_factors(pair)
        uses = [t for t in factors if t.name == pair.target]
        if scale != 1.0 or len(factors) != 2 or len(uses) != 1 or inner is None or inner[1] or inner[2] != 1.0 \
                or len(inner[0]) != 2 or not all(isinstance(i, str) for t in inner[0] for i in t.indices):
            continue
        rename = dict(zip((name for name, _ in pair.index), uses[0].indices))
        x, y = (ir.Tensor(t.name, tuple(rename[i] for i in t.indices)) for t in inner[0])
        other = next(t for t in factors if t.name != pair.target)
        merged = replace(contraction, body=ir.Sum(Domain(tuple(summed)), ir.BinOp("*", ir.BinOp("*", x, y), other)))
        step = gram_step(merged, dict.fromkeys(shapes, 0), shapes)
        if step is not None and step.order == 3 and step.why_not(vector_bytes) is None:
            statements[n:n + 2] = [merged]
            readers.subtract(name for s in (pair, contraction) for name in set(s.reads))
            readers.update(set(merged.reads))
    return program if len(statements) == len(program.statements) else with_statements(program, statements, roles)


def fig16_renamed(program: ir.Program, buffers: BufferPlan) -> ir.Program:
    """``program`` with every read of a variable in its statement's target's slot renamed to
    the target (002 Fig. 16: ``y = s * x`` with y in x's buffer runs as ``y = s * y``)."""
    slot_of = buffers.slot_of
    statements = []
    for stmt in program.statements:
        here = slot_of.get(stmt.target)
        rename = {name: stmt.target for name in stmt.reads
                  if name != stmt.target and here is not None and slot_of.get(name) == here}
        if rename:
            stmt = replace(stmt, body=ir.rename_tensors(stmt.body, rename))
            if not compatible(stmt).in_place:  # reuse() guarantees it: a broken plan, not bad input
                raise AssertionError(f"memory reuse made {stmt.target!r} read itself incompatibly: "
                                     f"{compatible(stmt).line()}")
        statements.append(stmt)
    return replace(program, statements=tuple(statements))


def _block_structured(program: ir.Program, found: Mapping) -> dict[str, str]:
    """The sums whose results have direct-sum blocks with local symmetries (003 Fig. 10), by
    target, with why they stay loop nests (docs/structure.md)."""
    return {stmt.target: f"structure: {f.describe()}" + (f"; the loops compute the {count(f.pairwise_unique)} entries "
                                                         "these symmetries leave" if f.moments is not None else "")
            for stmt in program.statements if (f := found.get(stmt.target)) is not None and f.redundant_blocks
            and any(isinstance(node, (ir.Sum, ir.Reduce)) for node in ir.nodes(stmt.body))}


def _sparse_sums(program: ir.Program, visits: Mapping[str, tuple[int, int]]) -> dict[str, str]:
    """The sums whose summand is zero on most of their points (003 Fig. 9; ``visits``:
    points visited and dense), by target, with why they stay loop nests."""
    return {stmt.target: f"structure: its loops visit {points[0]} of {points[1]} points, the summand's support "
                         f"(<= 1/SPARSE_GAIN {SPARSE_GAIN})" for stmt in program.statements
            if (points := visits.get(stmt.target)) is not None and points[0] * SPARSE_GAIN <= points[1]}


def _fused_step(fused: Fusion, original, buffers: BufferPlan, blas: bool, from_c: bool = False) -> LoopStep:
    """The loop step of a fused group, each reason what the statement would be alone."""
    reasons = []
    for stmt in original:
        alone = choose(stmt, buffers, blas, from_c)  # only its reason is kept: the slots do not matter
        reasons.append(f"fused (alone: {alone.reason})" if isinstance(alone, BlasStep) else f"fused (alone: loops: {alone})")
    slots = {buffers.slot_of[name] for s in (*fused.prologue, *fused.statements) for name in (s.target, *s.reads)}
    slots = {s for s in slots if not buffers.is_local(s)}
    return LoopStep(fused.statements, tuple(sorted(slots)), tuple(reasons), fused)
