"""Fusion over a shared batch loop (:func:`fusion_groups`): docs/c-backend.md, "Fused loops over a shared batch"."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping

from ..ein import ir
from ..ein.index import as_domain
from ..ein.fields import is_sample
from ..ein.forms import monomial
from ..ein.names import Fresh, all_names, substitute
from ..ein.printer import statement_to_text
from ..semantics.interface import Role
from ..limits import env_flag
from ..machine import CacheSizes, cache_sizes

#: A fused group runs at most this many statements (the C function's size, as plan.MAX_LOOP_STATEMENTS says why).
MAX_FUSED_STATEMENTS = 32
#: A group past the whole L2 fuses within FUSION_PAST_L2 times it where fusing cuts the bytes moved PAST_L2_SAVING times.
FUSION_PAST_L2, PAST_L2_SAVING = 4, 2.5

#: Transposed once per call: matrices up to MAX_TRANSPOSE a side read by a statement of at least
#: MIN_TRANSPOSE_WORK multiply-adds (below: the accumulator form, loops/interchange.py).
MIN_TRANSPOSE_WORK, MAX_TRANSPOSE = 1 << 10, 64


@dataclass(frozen=True)
class Local:
    """A variable inside a fused loop: one iteration's temporary (``per_iteration``: stored
    without its batch dimension) or a transposed copy made before the loop."""
    name: str
    shape: tuple[int, ...]
    per_iteration: bool

    @property
    def storage(self) -> tuple[int, ...]:
        """The shape of its buffer: one iteration's slice for a per-iteration temporary."""
        return self.shape[1:] if self.per_iteration else self.shape


@dataclass(frozen=True)
class Fusion:
    """One fused group: statements from ``start`` inside one loop over ``var`` (renamed, the
    transposed reads in place); ``prologue`` fills the transposed copies before the loop."""
    start: int
    statements: tuple[ir.Statement, ...]
    var: str
    extent: int
    locals: tuple[Local, ...]
    prologue: tuple[ir.Statement, ...]
    working_set: int  # bytes one iteration touches
    bytes_unfused: int  # bytes moved through memory, statement by statement
    bytes_fused: int  # bytes moved through memory by the fused loop
    cache: CacheSizes
    itemsize: int
    budget: int  # the most bytes one iteration may touch (group_budget)

    @property
    def stop(self) -> int:
        return self.start + len(self.statements)

    def describe(self) -> str:
        temps = ", ".join(f"{l.name} [{' '.join(map(str, l.storage))}]" for l in self.locals if l.per_iteration)
        copies = ", ".join(l.name for l in self.locals if not l.per_iteration)
        where = "L1d" if self.working_set <= self.cache.l1 else "L2" if self.working_set <= self.cache.l2 else "L3"
        limit = "L2/2" if self.budget < self.cache.l2 else f"{self.budget // self.cache.l2}×L2 (no GEMM split)".removeprefix("1×")
        text = (f"fused over {self.var} (extent {self.extent}): per iteration {temps}; working set "
                f"{_bytes(self.working_set)} <= {limit} {_bytes(self.budget)}, fits {where} ({self.cache.describe()}); "
                f"bytes moved {_bytes(self.bytes_unfused)} -> {_bytes(self.bytes_fused)}")
        if copies:
            text += f"; transposed once per call: {copies}"
        return text


#: Per-iteration temporaries whose lives do not overlap share one local buffer (:func:`share_locals`).
SHARE_LOCALS = True


def share_locals(statements, slot_of: dict[str, int], storage: dict[int, tuple[int, ...]]) -> dict[int, int]:
    """Which per-iteration locals (``slot_of``: by name) reuse another's buffer (slot -> its
    slot): one of the same storage whose life ended before, greedy in order (002 §6)."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for n, stmt in enumerate(statements):
        for name in stmt.reads:
            if name in slot_of:
                last[name] = n
        if stmt.target in slot_of:
            first.setdefault(stmt.target, n)
            last.setdefault(stmt.target, n)
    buffers: list[tuple[int, int, tuple[int, ...]]] = []  # (buffer slot, free after statement, storage)
    shared: dict[int, int] = {}
    for name in sorted(first, key=first.__getitem__):
        slot, start = slot_of[name], first[name]
        for k, (owner, free_after, shape) in enumerate(buffers):
            if free_after < start and shape == storage[slot]:
                shared[slot] = owner
                buffers[k] = (owner, last[name], shape)
                break
        else:
            buffers.append((slot, last[name], storage[slot]))
    return shared


def _bytes(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} B"


# ------------------------------------------------------------------ legality
def _batch(stmt: ir.Statement) -> tuple[str, int] | None:
    """The statement's candidate batch index: its target's first, when it may join a group."""
    if not stmt.index or as_domain(stmt.index).conditions or stmt.target in stmt.reads or is_sample(stmt):
        return None  # (a field probe's probe tensor is a library step: schedule/probe.py)
    var, extent = stmt.index[0]
    if extent < 2 or any(var in {name for name, _ in ir.binders(node)} for node in ir.nodes(stmt.body)):
        return None  # (or the batch variable is bound again inside: its accesses name another loop)
    return var, extent


def _misread(stmt: ir.Statement) -> set[str]:
    """The variables ``stmt`` reads somewhere other than at its batch index."""
    return {t.name for t in ir.tensors(stmt.body) if not t.indices or t.indices[0] != stmt.index[0][0]}


def _candidates(program: ir.Program) -> list[tuple[int, list[ir.Statement]]]:
    """Maximal runs of consecutive statements that may share a batch loop (greedy): every
    variable written in a run is read only at the reading statement's batch index."""
    runs: list[tuple[int, list[ir.Statement]]] = []
    current: list[ir.Statement] = []
    written: set[str] = set()
    misread: set[str] = set()
    start, extent = 0, 0
    for n, stmt in enumerate(program.statements):
        found = _batch(stmt)
        own = _misread(stmt) if found is not None else set()
        if current and found is not None and found[1] == extent and len(current) < MAX_FUSED_STATEMENTS \
                and stmt.target not in misread and not own & (written | {stmt.target}):
            current.append(stmt)
            written.add(stmt.target)
            misread |= own
            continue
        if len(current) >= 2:
            runs.append((start, current))
        current, start = ([stmt], n) if found is not None and stmt.target not in own else ([], n)
        written, misread = {stmt.target}, own
        extent = found[1] if found is not None else 0
    if len(current) >= 2:
        runs.append((start, current))
    return runs


# ------------------------------------------------------------------ the group
def _transposes(stmt: ir.Statement, written: set[str], var: str, shapes: Mapping[str, tuple[int, ...]]):
    """The accesses ``X[x, k]`` of small unbatched matrices whose first index is the
    target's last, x, in a contraction: read from ``Xᵀ[k, x]`` instead."""
    if len(stmt.index) < 2:
        return {}
    form = monomial(stmt.body)
    if not form.sums or not all(isinstance(f, (ir.Tensor, ir.Const)) for f in form.factors):
        return {}
    last = stmt.index[-1][0]
    if math.prod(n for _, n in stmt.index) * math.prod(n for _, n in form.sums) < MIN_TRANSPOSE_WORK:
        return {}
    found = {}
    for t in ir.tensors(stmt.body):
        if (t.name not in written and len(t.indices) == 2 and t.indices[0] == last
                and isinstance(t.indices[1], str) and t.indices[1] != last and var not in t.indices
                and max(shapes[t.name]) <= MAX_TRANSPOSE):
            found[t] = ir.Tensor(f"{t.name}ᵀ", (t.indices[1], t.indices[0]))
    # only where it pays: afterwards every access that moves with the row index has it
    # last, once (the loop stage's row-AXPY rule), else the reads stay as they are
    after = [found.get(t, t) for t in ir.tensors(stmt.body)]
    moving = [t for t in after if last in t.indices]
    if not found or any(t.indices.count(last) != 1 or t.indices[-1] != last for t in moving):
        return {}
    return found


def group_budget(cache: CacheSizes, working_set: int, splits_gemm: Callable[[], bool], saving: float = 1.0) -> int:
    """Bytes one iteration of a fused group may touch: L2/2; past it, unless ``splits_gemm()`` (asked only then), the L2,
    and past that FUSION_PAST_L2 times it where the fused loop moves ``saving`` >= PAST_L2_SAVING times fewer bytes."""
    past = cache.l2 if working_set <= cache.l2 else FUSION_PAST_L2 * cache.l2 if saving >= PAST_L2_SAVING else cache.l2 // 2
    return past if cache.l2 // 2 < working_set <= past and not splits_gemm() else cache.l2 // 2


def _fusion(program: ir.Program, start: int, group: list[ir.Statement], roles: Mapping[str, str],
            itemsize: int, cache: CacheSizes, shapes: Mapping[str, tuple[int, ...]],
            readers: Mapping[str, int], splits: Callable[[ir.Statement], bool]) -> Fusion | None:
    """``readers``: how many statements read each name (counted once for all groups)."""
    extent = group[0].index[0][1]
    written = {s.target for s in group}
    inside = Counter(name for s in group for name in s.reads)
    read_outside = {name for name in inside.keys() | written if readers.get(name, 0) > inside[name]}
    first_write: dict[str, int] = {}
    for n, s in enumerate(group):
        first_write.setdefault(s.target, n)
    read_early = {name for n, s in enumerate(group) for name in s.reads if n <= first_write.get(name, -1)}
    temps = [name for name in first_write
             if str(roles.get(name, Role.TEMP)) == Role.TEMP and name not in read_outside and name not in read_early]
    if not temps:
        return None
    taken = set().union(*(all_names(s.body) | {name for name, _ in s.index} for s in group))
    var = "e" if "e" not in taken else Fresh(taken)("e")
    statements, prologue, copies = [], {}, {}
    for stmt in group:  # its batch index renamed var
        old = stmt.index[0][0]
        stmt = ir.Statement(stmt.target, ((var, stmt.index[0][1]), *stmt.index[1:]),
                            substitute(stmt.body, {old: var}) if old != var else stmt.body)
        swap = _transposes(stmt, written, var, shapes)
        for old, new in swap.items():
            if new.name not in copies:
                rows, cols = shapes[old.name]
                copies[new.name] = Local(new.name, (cols, rows), per_iteration=False)
                prologue[new.name] = ir.Statement(new.name, (("p", cols), ("q", rows)), ir.Tensor(old.name, ("q", "p")))
        if swap:
            stmt = ir.Statement(stmt.target, stmt.index, ir.bottom_up(
                stmt.body, lambda e: swap.get(e, e) if isinstance(e, ir.Tensor) else e))  # noqa: B023 (called at once)
        statements.append(stmt)
    # bytes: a batched buffer (first index the batch in every access) moves one slice an
    # iteration; anything else is read whole
    touched: dict[str, bool] = {}
    for stmt in statements:
        touched[stmt.target] = touched.get(stmt.target, True)
        for t in ir.tensors(stmt.body):
            batched = bool(t.indices) and t.indices[0] == var and shapes.get(t.name, (0,))[0] == extent
            touched[t.name] = touched.get(t.name, True) and batched
    size = {name: math.prod(shapes[name]) if name in shapes else math.prod(copies[name].shape) for name in touched}
    # temporaries whose lives do not overlap share one buffer (share_locals, as the loops do)
    slot_of = {name: k for k, name in enumerate(temps)}
    shared = share_locals(statements, slot_of, {slot_of[name]: shapes[name][1:] for name in temps}) if SHARE_LOCALS else {}
    sharing = {temps[k] for k in shared}
    working = sum(size[name] // extent if batched else size[name]
                  for name, batched in touched.items() if name not in sharing) * itemsize
    unfused = sum(math.prod(shapes[s.target]) + sum(math.prod(shapes[r]) for r in s.reads) for s in group) * itemsize
    fused = sum(size[name] for name in touched if name not in temps and name not in copies) * itemsize
    locals_ = tuple(Local(name, shapes[name], per_iteration=True) for name in temps) + tuple(copies.values())
    budget = group_budget(cache, working, lambda: any(map(splits, group)), unfused / max(fused, 1))
    return None if working > budget else Fusion(start, tuple(statements), var, extent, locals_,
                                                 tuple(prologue.values()), working, unfused, fused, cache, itemsize, budget)


def fusion_groups(program: ir.Program, roles: Mapping[str, str], itemsize: int,
                  cache: CacheSizes | None = None, splits: Callable[[ir.Statement], bool] | None = None) -> tuple[Fusion, ...]:
    """The fused groups of ``program``, in order (``TENSORLANG_FUSE=0``: none).  ``splits``:
    :func:`.plan.gemm_splits` (None: every statement splits)."""
    if not env_flag("TENSORLANG_FUSE", True):
        return ()
    cache = cache or cache_sizes()
    shapes = program.shapes  # once: built per access, and a program may have 10^4 groups
    readers = Counter(name for s in program.statements for name in s.reads)
    found = (_fusion(program, start, group, roles, itemsize, cache, shapes, readers, splits or (lambda stmt: True))
             for start, group in _candidates(program))
    return tuple(group for group in found if group is not None)


def fusion_report(program: ir.Program, roles: Mapping[str, str], itemsize: int, splits=None) -> str:
    """What ``tensorlang analyze`` prints about fusion (empty when nothing fuses)."""
    groups = fusion_groups(program, roles, itemsize, splits=splits)
    if not groups:
        return ""
    lines = ["fusion over shared batch loops (C back end, schedule/fusion.py):"]
    for g in groups:
        lines.append(f"  statements {g.start + 1}..{g.stop}: {g.describe()}")
        for n, stmt in enumerate(g.statements, g.start + 1):
            lines.append(f"  {n:>3}. {statement_to_text(stmt)}")
    return "\n".join(lines)
