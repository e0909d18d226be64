"""The loop IR: statements as loop nests over numbered buffers (*slots*).

Scalars are this IR's own nodes, not EIN's: indices here are loop variables or 0-based
positions (EIN writes 1-based positions), and a scalar may read a buffer (``Load``) or an
accumulator (``Acc``), which EIN expressions cannot.  Nodes are frozen dataclasses, like
the IR they come from; a program's variable names appear only in the buffer plan, so a
printer never has to make a user's name safe as an identifier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Union

from ..ein import ir as ein
from ..ein.index import Affine
from ..schedule.plan import BufferPlan

#: An index in the loop IR: a loop variable or a 0-based position.
Index = Union[str, int]


# ------------------------------------------------------------------ scalars
@dataclass(frozen=True)
class Const:
    value: float


@dataclass(frozen=True)
class Load:
    """Component of buffer ``slot`` at ``indices``."""

    slot: int
    indices: tuple[Index, ...]


@dataclass(frozen=True)
class Acc:
    """The current value of accumulator ``name``."""

    name: str


@dataclass(frozen=True)
class Delta:
    """1 where ``first`` equals ``second``, else 0."""

    first: Index
    second: Index


@dataclass(frozen=True)
class Epsilon:
    """The Levi-Civita symbol at ``indices`` (semantics.values.epsilon_sign)."""

    indices: tuple[Index, ...]


@dataclass(frozen=True)
class Neg:
    arg: "Scalar"


@dataclass(frozen=True)
class Apply:
    """An elementwise function of semantics.values.FUNCTIONS."""

    fn: str
    arg: "Scalar"


@dataclass(frozen=True)
class Power(Apply):
    """``arg`` to the ``n``-th power (semantics.values.powers): a product over an ignored index."""
    n: int = 1


@dataclass(frozen=True)
class BinOp:
    """``left op right`` for op in + - * /; ``/`` is controlled division."""

    op: str
    left: "Scalar"
    right: "Scalar"


@dataclass(frozen=True)
class Select:
    """``cases[var]``: the value of CFDlang's stacking at position ``var`` (an index
    variable, or an affine index of them: 1-based, as in EIN)."""

    var: "ein.Index"
    cases: tuple["Scalar", ...]
    #: empty: case s at position s (a stack); else the ends of the cases' pieces, case k
    #: for ``bounds[k-1] < var <= bounds[k]`` (a direct sum, ein.Concat; its cases read
    #: only inside their piece, so only the chosen one may be evaluated)
    bounds: tuple[int, ...] = ()


Scalar = Union[Const, Load, Acc, Delta, Epsilon, Neg, Apply, Power, BinOp, Select]


# ------------------------------------------------------------------ statements
@dataclass(frozen=True)
class Init:
    """``acc = identity of op``."""

    acc: str
    op: str


@dataclass(frozen=True)
class Update:
    """``acc = acc op value``."""

    acc: str
    op: str
    value: Scalar


@dataclass(frozen=True)
class Store:
    """``slot[indices] = value``."""

    slot: int
    indices: tuple[Index, ...]
    value: Scalar


@dataclass(frozen=True)
class Copy:
    """Copy ``count`` elements of buffer ``source`` into ``target``."""

    target: int
    source: int
    count: int


@dataclass(frozen=True)
class Loop:
    """``for var in start..extent-1: body`` (``start`` is 0 except where the first
    iteration of a sum was peeled off, see :mod:`.interchange`, or, a loop variable's
    name, the current value of that enclosing loop: a triangular loop over a unique
    set, see :mod:`.structure`).

    ``parallel``: the iterations are independent and worth threads; ``simd``: the body is
    straight-line code the compiler may vectorize (both set by :mod:`.parallel`);
    ``reductions``: the (op, accumulator) pairs the body updates, which a vectorized or
    parallel loop must combine; ``team``: for a parallel loop, the most threads its work
    pays for (0: no limit; :func:`.parallel.team_size`).  A simd loop with loops inside
    is vectorized as a whole (outer-loop vectorization, :mod:`.microkernel`): each vector
    lane runs the inner loops for its own iteration, and the inner loops carry no marks.
    """

    var: str
    extent: int
    body: tuple["Node", ...]
    parallel: bool = False
    simd: bool = False
    reductions: tuple[tuple[str, str], ...] = ()
    start: int | str = 0
    team: int = 0
    omp_schedule: str = ""  # a parallel loop's: how OpenMP deals out its iterations (:func:`.parallel.share`)
    #: ask the compiler to unroll the loop this many times (0: its own choice); set by
    #: :mod:`.microkernel` for a register block's rows, printed ``#pragma GCC unroll N``
    unroll: int = 0
    #: slabs each iteration asks the caches for while it computes on its own data
    #: (:class:`Ahead`; :mod:`.fusion` decides which): hints that change no value
    prefetch: tuple["Ahead", ...] = ()
    #: the positions in ``body`` compiled as functions of their own (:func:`.fusion.own_functions`)
    apart: tuple[int, ...] = ()


@dataclass(frozen=True)
class Ahead:
    """A prefetch hint on a loop: each iteration asks the caches for (its share of) the
    slab of buffer ``slot`` whose leading indices are ``at`` -- ``(variable, offset)``
    pairs, one per leading dimension, e.g. ``(("e", 1),)`` for the next batch element's
    slab ``u[e+1, ...]`` or ``(("e", 0), ("k", 1))`` for ``u[e, k+1, ...]``.  No
    iteration asks for a slab past the buffer's end: a pair with an offset is guarded by
    ``variable + offset < extent`` of its dimension.  ``spread``: the slab's 64-byte lines
    (those of ``lines``) are shared out over the loop's iterations in order (iteration t
    of T asks for lines t·L/T to (t+1)·L/T - 1 of the L), else every iteration asks for
    all of them; ``write``:
    asked for writing (the lines will be stored to).  Every hint asks for L2 (locality 2).
    Loads and stores are unchanged: no value depends on a hint."""

    slot: int
    at: tuple[tuple[str, int], ...]
    spread: bool = False
    write: bool = False
    #: the slab's 64-byte lines this loop asks for, ``[first, stop)`` (None: all of them);
    #: a slab's lines shared out over several loops (:func:`.fusion._prefetch`)
    lines: tuple[int, int] | None = None


@dataclass(frozen=True)
class Prefetch:
    """A hint statement: ask L1 for the 64-byte line holding ``slot[indices]`` (as a load
    indexes it), or nothing where an index is past its dimension (no address outside the
    buffer is formed).  :func:`.jam.prefetch_strips` puts one ahead of a strip's row
    that the hardware prefetchers do not follow.  No value changes."""

    slot: int
    indices: tuple[Index, ...]


@dataclass(frozen=True)
class Declare:
    """A local buffer ``slot`` of ``shape`` (row-major, uninitialised), alive from here
    to the end of the enclosing loop body or nest: a fused loop's per-iteration temporary
    or a transposed copy made before it (:mod:`.fusion`).  Inside a parallel loop each
    thread has its own.  ``home`` (:func:`.pipeline.place_locals`): ``array``, ``pointer`` (a
    local array behind a restrict pointer) or ``heap`` (at ``offset`` in :attr:`Nest.heap`'s block)."""

    slot: int
    shape: tuple[int, ...]
    home: str = "array"
    offset: int = 0


@dataclass(frozen=True)
class Rebuild:
    """``target[i] = source[u]`` at every position ``i`` of ``extents``, where ``u`` takes
    each index through its dimension's table (``tables[d][i_d]``: the packed position of
    the representative of ``i_d``; None: ``i_d`` itself) and then sorts the entries of
    each of ``groups`` ascending (a group's packed positions are stored only in order).
    A packed statement's reconstruction as a table (:mod:`.structure`), where writing
    out every orbit's stores would make too much code."""

    target: int
    source: int
    extents: tuple[int, ...]
    tables: tuple[tuple[int, ...] | None, ...]
    groups: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Tile:
    """A vector block's simd ``loop`` computed as a register tile (the ``tiles`` rewrite,
    :func:`.microkernel.tile_of`; ``tile``: what it found): groups of rows kept in vector
    registers across the summed index, each lane computing the loop's sum for its element
    in the same order, so the values are the loop's, bit for bit.  ``plain``: the loop
    stays as the other branch, compiled where the C compiler does not target AVX-512
    (``#if TL_TILES``); False: the tile alone (``microkernel.TILES`` True).  ``rows``:
    that branch runs row by row (:func:`.microkernel.row_by_row`)."""

    tile: Any  # a microkernel.Tile
    loop: Loop
    plain: bool = True
    rows: bool = False


@dataclass(frozen=True)
class BlasProduct:
    """A packed structured block product ``loop`` computed by one BLAS call (the
    ``packed-blas`` rewrite, :func:`.pipeline.blas_routine`; ``product``: what
    :func:`.structure.packed_product` found): ``routine`` ``"syrk"`` (the upper triangle
    of a Gram product) or ``"gemm"``, over the buffers as stored, whose leading
    dimensions are ``leading`` (left, right, target); the target's ``zeroed`` elements
    are zeroed first.  A printer with no BLAS to call prints ``loop``, which computes the
    same."""

    product: Any  # a structure.PackedProduct
    routine: str
    leading: tuple[int, int, int]
    zeroed: int
    loop: Loop


Node = Union[Loop, Init, Update, Store, Copy, Declare, Rebuild, Tile, BlasProduct]


def plain(node):
    """``node``, or the loop a :class:`Tile` or :class:`BlasProduct` computes another way."""
    return node.loop if isinstance(node, (Tile, BlasProduct)) else node


@dataclass(frozen=True)
class PackedCopy:
    """A local copy a nest makes of buffer ``source`` holding only its unique positions
    along dimension ``along`` (:func:`.structure.compress_packed`): local slot ``packed``
    of storage ``shape``; packed positions ``u0 .. u0 + length - 1`` hold the source's
    positions ``first + stride · t`` along ``along`` (``runs``: one (u0, first, stride,
    length) per run), the positions past the last run are zeros.  Recorded so that
    :func:`.structure.pack_in_producer` can have the source's producer write the packed
    layout itself."""

    source: int
    packed: int
    along: int
    runs: tuple[tuple[int, int, int, int], ...]
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Nest:
    """The loop nest of one EIN statement: the statement (for comments), the nest, the
    index of the schedule step that runs it, and whether :mod:`.interchange` rewrote it."""

    statement: ein.Statement
    body: tuple[Node, ...]
    step: int = 0
    interchanged: bool = False
    #: a fused loop's nest (:mod:`.fusion`): every statement it runs (``statement`` is the first)
    fused: tuple[ein.Statement, ...] = ()
    #: vectorize with the widest vectors the machine has (512-bit where there are; the
    #: compiler's default on x86-64 is 256): set for fused loops, whose rows are in cache
    wide_vectors: bool = False
    #: compile with ``fma=True``: every multiply-add :func:`multiply_add` finds in the nest
    #: is one fused multiply-add, ``x = fma(a, b, x)``, rounded once (docs/optimizer.md,
    #: "Fused multiply-add"); False: ``x = x + a*b``, two roundings, as the reference
    fma: bool = False
    #: the packed copies the nest makes before computing (:class:`PackedCopy`)
    packs: tuple[PackedCopy, ...] = ()
    #: the loop rewrites that took this nest, in order (``tensorlang.loops.LOOP_PIPELINE``;
    #: a structure rewrite takes a nest even where it leaves it as it was)
    rewrites: tuple[str, ...] = ()
    #: the bytes of the nest's heap block, its large local buffers (:class:`Declare`)
    heap: int = 0
    #: the ``inout`` slots whose loads read the caller's input, not the buffer (:func:`input_reads`)
    inputs: tuple[int, ...] = ()


@dataclass(frozen=True)
class LoopProgram:
    """The nests of a schedule's loop steps, in order, over its buffer plan, and the loop
    rewrites that made them (``tensorlang.loops.LOOP_PIPELINE``), in the order they ran."""

    buffers: BufferPlan
    nests: tuple[Nest, ...]
    rewrites: tuple[str, ...] = ()
    teams: tuple[tuple[int, int], ...] = ()  # (step, TEAM) of each Gram step (:func:`.parallel.gram_team`)
    #: (step, points from which it runs on threads) of each probe step (:func:`.parallel.probe_points`)
    probes: tuple[tuple[int, int], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The name of each slot, the fused loops' locals included (numbered after the slots)."""
        return self.buffers.all_names

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        return self.buffers.shapes

    def nests_of(self, step: int) -> tuple[Nest, ...]:
        return tuple(nest for nest in self.nests if nest.step == step)


# ------------------------------------------------------------------ queries
def multiply_add(node) -> tuple[str | tuple, Scalar, Scalar, bool] | None:
    """The step ``x = x + a * b`` (or ``x = +0 + a * b``) of a sum that ``node`` is, as
    ``(x, a, b, from_zero)``, or None.

    ``x`` is an accumulator's name (``Update(acc, "+", a * b)``: a sum's step) or a
    ``(slot, indices)`` place (``Store(x, x + a * b)``: a row update of :mod:`.interchange`
    or :mod:`.microkernel`); ``from_zero``: the step adds to the number +0 instead
    (``Store(x, 0 + a * b)``: the peeled first step of a row update).  In a nest compiled
    with ``fma=True`` (:attr:`Nest.fma`) exactly these are fused multiply-adds: the added
    value's outermost multiplication and the addition round once (``fma(a, b, x)``,
    ``fma(a, b, +0)``); everything else rounds as written."""
    if isinstance(node, Update) and node.op == "+" and isinstance(node.value, BinOp) and node.value.op == "*":
        return node.acc, node.value.left, node.value.right, False
    if isinstance(node, Store) and isinstance(node.value, BinOp) and node.value.op == "+":
        added, base = node.value.right, node.value.left
        if not (isinstance(added, BinOp) and added.op == "*"):
            return None
        if base == Load(node.slot, node.indices):
            return (node.slot, node.indices), added.left, added.right, False
        if isinstance(base, Const) and base.value == 0 and math.copysign(1.0, base.value) > 0:
            return (node.slot, node.indices), added.left, added.right, True
    return None


def children(node) -> tuple:
    """The nodes and scalars directly inside ``node``."""
    if isinstance(node, (Nest, Loop)):
        return node.body
    if isinstance(node, (Tile, BlasProduct)):  # the same values as their loop
        return (node.loop,)
    if isinstance(node, (Store, Update)):
        return (node.value,)
    if isinstance(node, Select):
        return node.cases
    if isinstance(node, (Neg, Apply)):
        return (node.arg,)
    if isinstance(node, BinOp):
        return (node.left, node.right)
    return ()


def replace_nodes(node, change):
    """``node`` (any loop-IR node or scalar) rebuilt bottom-up through its fields, each
    part for which ``change`` returns a replacement (not None) replaced by it and not
    looked into further; ``change`` may rewrite inside its replacement itself."""
    from dataclasses import fields, is_dataclass, replace
    found = change(node)
    if found is not None:
        return found
    if not is_dataclass(node) or isinstance(node, type):
        return node
    changes: dict = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, tuple) and value and is_dataclass(value[0]):
            changes[f.name] = tuple(replace_nodes(v, change) for v in value)
        elif is_dataclass(value):
            changes[f.name] = replace_nodes(value, change)
    return replace(node, **changes) if changes else node


def walk(nodes):
    """Every node and scalar in ``nodes`` and inside them, each before what it holds, in
    order (a store, then the loads of its value from left to right)."""
    stack = list(reversed(tuple(nodes)))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def slots(nodes) -> set[int]:
    """The buffers ``nodes`` read or write, less the local buffers they declare themselves."""
    found: set[int] = set()
    declared: set[int] = set()
    for node in walk(nodes):
        if isinstance(node, Declare):
            declared.add(node.slot)
        if isinstance(node, Loop):
            found.update(ahead.slot for ahead in node.prefetch)  # a hint's address needs its buffer
        if isinstance(node, (Store, Load, Prefetch)):
            found.add(node.slot)
        elif isinstance(node, (Copy, Rebuild)):
            found.update((node.target, node.source))
    return found - declared


def loads(nodes) -> list[Load]:
    """The loads in ``nodes``, in :func:`walk`'s order."""
    return [n for n in walk(nodes) if isinstance(n, Load)]


def input_reads(nests: tuple[Nest, ...], slot: int) -> int | None:
    """How many of ``nests`` (from the first) may read an ``inout`` slot's loads from the
    caller's input rather than its buffer: up to the first nest storing the slot, where
    one store stores it and no load of it follows; None where that is not sure (the slot
    never stored, stored twice, read after its store, in a tile, packed product, copy,
    parallel or fused loop: docs/c-backend.md, "Inout inputs")."""
    state = {"stores": 0}

    def visit(nodes) -> bool:  # False: not sure
        for node in nodes:
            if isinstance(node, Loop):
                if node.parallel and slot in slots((node,)):
                    return False
                if not visit(node.body):
                    return False
            elif isinstance(node, (Init, Declare, Prefetch)):  # a hint reads nothing
                continue
            elif isinstance(node, (Update, Store)):
                if state["stores"] and any(ld.slot == slot for ld in loads((node.value,))):
                    return False
                if isinstance(node, Store) and node.slot == slot:
                    state["stores"] += 1
                    if state["stores"] > 1:
                        return False
            elif slot in slots((node,)):
                return False
        return True

    for count, nest in enumerate(nests, 1):
        if nest.fused and slot in slots(nest.body):
            return None
        if not visit(nest.body):
            return None
        if state["stores"]:
            return count
    return None


def footprint(nodes) -> int:
    """Elements of data ``nodes`` read or write, about: each buffer counted once, as its
    largest access (a Load or Store over the loops around it that its indices name: ``x[i]``
    inside loops i < 1000 and j < 50 touches 1000 elements), a Copy as twice its count."""
    largest: dict[int, int] = {}

    def visit(node, trips: dict[str, int]) -> None:
        node = plain(node)
        if isinstance(node, Loop):
            count = node.extent - node.start if isinstance(node.start, int) else (node.extent + 1) // 2
            inner = {**trips, node.var: max(count, 1)}
            for child in node.body:
                visit(child, inner)
            return
        if isinstance(node, Copy):
            largest[node.target] = max(largest.get(node.target, 0), node.count)
            largest[node.source] = max(largest.get(node.source, 0), node.count)
            return
        if isinstance(node, Rebuild):
            largest[node.target] = max(largest.get(node.target, 0), math.prod(node.extents))
            return
        if isinstance(node, (Load, Store)):  # an affine index spans its reach: A[4i+r, j] is 4 rows per i
            named = {i for i in node.indices if isinstance(i, str) and i in trips}
            spans = (1 + sum(abs(c) * (trips[v] - 1) for v, c in i.terms if v in trips)
                     for i in node.indices if isinstance(i, Affine))
            largest[node.slot] = max(largest.get(node.slot, 0), math.prod(trips[i] for i in named) * math.prod(spans))
        for child in children(node):
            visit(child, trips)

    for node in nodes:
        visit(node, {})
    return max(sum(largest.values()), 1)


def work(nodes) -> int:
    """Scalar operations of a loop body (each Store/Update counts one, loops multiply)."""
    total = 0
    for node in map(plain, nodes):
        if isinstance(node, Loop):
            trips = node.extent - node.start if isinstance(node.start, int) else (node.extent + 1) // 2
            total += max(trips, 0) * work(node.body)
        elif isinstance(node, (Store, Update)):
            total += 1
        elif isinstance(node, Rebuild):
            total += math.prod(node.extents)
    return max(total, 1)
