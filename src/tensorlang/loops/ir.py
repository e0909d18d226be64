"""The loop IR: statements as loop nests over numbered buffers (*slots*), 0-based indices; variable
names live only in the buffer plan (docs/architecture.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, is_dataclass, replace
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
    """``for var in start..extent-1: body`` (``start`` an enclosing loop's variable: triangular);
    ``parallel``, ``simd``, ``team`` (at most, 0: no limit): :mod:`.parallel`; ``reductions``: (op, acc)."""
    var: str
    extent: int
    body: tuple["Node", ...]
    parallel: bool = False
    simd: bool = False
    reductions: tuple[tuple[str, str], ...] = ()
    start: int | str = 0
    team: int = 0
    omp_schedule: str = ""  # a parallel loop's: how OpenMP deals out its iterations (:func:`.parallel.share`)
    unroll: int = 0  # ``#pragma GCC unroll N`` (0: the compiler's choice; :mod:`.microkernel`)
    prefetch: tuple["Ahead", ...] = ()  # hints for the caches (:class:`Ahead`, :mod:`.fusion`)
    #: the positions in ``body`` compiled as functions of their own (:func:`.fusion.own_functions`)
    apart: tuple[int, ...] = ()


@dataclass(frozen=True)
class Ahead:
    """A prefetch hint on a loop (to L2): the slab of ``slot`` at leading indices ``at``, (variable,
    offset) pairs; ``spread``, ``write``: docs/c-backend.md, "Prefetching the next element"."""
    slot: int
    at: tuple[tuple[str, int], ...]
    spread: bool = False
    write: bool = False
    #: the slab's 64-byte lines this loop asks for, ``[first, stop)`` (None: all of them)
    lines: tuple[int, int] | None = None


@dataclass(frozen=True)
class Prefetch:
    """A hint: ask L1 for the line of ``slot[indices]`` (none past a dimension's end;
    :func:`.jam.prefetch_strips`).  No value changes."""
    slot: int
    indices: tuple[Index, ...]


@dataclass(frozen=True)
class Declare:
    """A local buffer ``slot`` of ``shape`` (uninitialised; each thread's own) to the end of the enclosing
    body; ``home`` (:func:`.pipeline.place_locals`): ``array``, ``pointer`` or ``heap`` at ``offset``."""
    slot: int
    shape: tuple[int, ...]
    home: str = "array"
    offset: int = 0


@dataclass(frozen=True)
class Rebuild:
    """A packed statement's reconstruction ``target[i] = source[u]`` at every ``i`` of ``extents``: ``u``
    each index through ``tables[d]`` (None: itself), then each of ``groups`` sorted ascending."""
    target: int
    source: int
    extents: tuple[int, ...]
    tables: tuple[tuple[int, ...] | None, ...]
    groups: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Tile:
    """A vector block's simd ``loop`` as a register tile (:func:`.microkernel.tile_of`); ``plain``: the loop
    is the other branch (``#if TL_TILES``); ``rows``: run row by row (:func:`.microkernel.row_by_row`)."""
    tile: Any  # a microkernel.Tile
    loop: Loop
    plain: bool = True
    rows: bool = False


@dataclass(frozen=True)
class BlasProduct:
    """A packed block product ``loop`` as one BLAS call ``routine`` (:func:`.pipeline.blas_routine`),
    ``leading`` dimensions (left, right, target), ``zeroed`` elements zeroed first; without BLAS, ``loop``."""
    product: Any  # a structure.PackedProduct
    routine: str
    leading: tuple[int, int, int]
    zeroed: int
    loop: Loop


Node = Union[Loop, Init, Update, Store, Copy, Declare, Rebuild, Tile, BlasProduct]


def around(body: tuple, loops) -> tuple:
    """``body`` inside ``loops`` ((variable, extent) or (variable, extent, start), outermost first)."""
    for var, extent, *start in reversed(loops):
        body = (Loop(var, extent, body, start=start[0] if start else 0),)
    return body


def plain(node):
    """``node``, or the loop a :class:`Tile` or :class:`BlasProduct` computes another way."""
    return node.loop if isinstance(node, (Tile, BlasProduct)) else node


@dataclass(frozen=True)
class PackedCopy:
    """A nest's local copy ``packed`` (storage ``shape``) of ``source``'s unique positions along ``along``:
    ``runs`` of (u0, first, stride, length), zeros past the last (:func:`.structure.compress_packed`)."""
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
    wide_vectors: bool = False  # the widest vectors the machine has (fused loops: rows in cache)
    #: every :func:`multiply_add` one fused multiply-add (docs/optimizer.md, "Fused multiply-add")
    fma: bool = False
    #: the packed copies the nest makes before computing (:class:`PackedCopy`)
    packs: tuple[PackedCopy, ...] = ()
    #: the loop rewrites that took this nest, in order (``tensorlang.loops.LOOP_PIPELINE``)
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
    """``(x, a, b, from_zero)`` where ``node`` is the step ``x = x + a * b`` (or, from_zero,
    ``x = +0 + a * b``) of a sum, ``x`` an accumulator's name or a ``(slot, indices)``
    place; else None.  Exactly these are fused under :attr:`Nest.fma`."""
    if isinstance(node, Update) and node.op == "+" and isinstance(node.value, BinOp) and node.value.op == "*":
        return node.acc, node.value.left, node.value.right, False
    if isinstance(node, Store) and isinstance(node.value, BinOp) and node.value.op == "+":
        added, base = node.value.right, node.value.left
        from_zero = isinstance(base, Const) and base.value == 0 and math.copysign(1.0, base.value) > 0
        if isinstance(added, BinOp) and added.op == "*" and (from_zero or row_update(node) is not None):
            return (node.slot, node.indices), added.left, added.right, from_zero
    return None


def row_update(node: Store) -> Scalar | None:
    """``p`` where ``node`` is ``x = x + p`` (printed ``x += p``: the interchanged contractions update a row)."""
    v = node.value
    return v.right if isinstance(v, BinOp) and v.op == "+" and v.left == Load(node.slot, node.indices) else None


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


def replace_nodes(node, change, inside: bool = False):
    """``node`` (any loop-IR node or scalar) rebuilt bottom-up through its fields, each
    part for which ``change`` returns a replacement (not None) replaced by it and not
    looked into further (``inside``: its parts rebuilt so too)."""
    found = change(node)
    if found is not None and not inside:
        return found
    node = node if found is None else found
    if not is_dataclass(node) or isinstance(node, type):
        return node
    changes: dict = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, tuple) and value and is_dataclass(value[0]):
            changes[f.name] = tuple(replace_nodes(v, change, inside) for v in value)
        elif is_dataclass(value):
            changes[f.name] = replace_nodes(value, change, inside)
    return replace(node, **changes) if changes else node


def substitute(e, values: dict):
    """``e`` with each index variable of its loads that ``values`` names replaced by its value."""
    return replace_nodes(e, lambda n: Load(n.slot, tuple(values.get(i, i) if isinstance(i, str) else i for i in n.indices))
                         if isinstance(n, Load) else None)


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
    """How many of ``nests`` (from the first) may read ``inout`` ``slot`` from the caller's
    input: up to its one store; None where unsure (docs/c-backend.md, "Inout inputs")."""
    state = {"stores": 0}

    def visit(nodes) -> bool:  # False: not sure
        for node in nodes:
            if isinstance(node, Loop):
                if (node.parallel and slot in slots((node,))) or not visit(node.body):
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
        if (nest.fused and slot in slots(nest.body)) or not visit(nest.body):
            return None
        if state["stores"]:
            return count
    return None


def footprint(nodes) -> int:
    """Elements of data ``nodes`` touch, about: each buffer once, at its largest access
    over the loops its indices name; a Copy twice its count."""
    largest: dict[int, int] = {}

    def visit(node, trips: dict[str, int]) -> None:
        node = plain(node)
        if isinstance(node, Loop):
            inner = {**trips, node.var: max(_trips(node), 1)}
            for child in node.body:
                visit(child, inner)
            return
        sizes: tuple = ()
        if isinstance(node, Copy):
            sizes = ((node.target, node.count), (node.source, node.count))
        elif isinstance(node, Rebuild):
            sizes = ((node.target, math.prod(node.extents)),)
        elif isinstance(node, (Load, Store)):  # an affine index spans its reach: A[4i+r, j] is 4 rows per i
            named = {i for i in node.indices if isinstance(i, str) and i in trips}
            spans = (1 + sum(abs(c) * (trips[v] - 1) for v, c in i.terms if v in trips)
                     for i in node.indices if isinstance(i, Affine))
            sizes = ((node.slot, math.prod(trips[i] for i in named) * math.prod(spans)),)
        for slot, size in sizes:
            largest[slot] = max(largest.get(slot, 0), size)
        for child in children(node):  # (a Copy or Rebuild holds none)
            visit(child, trips)

    for node in nodes:
        visit(node, {})
    return max(sum(largest.values()), 1)


def _trips(loop: Loop) -> int:  # a triangular loop's: half its extent
    return loop.extent - loop.start if isinstance(loop.start, int) else (loop.extent + 1) // 2


def work(nodes) -> int:
    """Scalar operations of a loop body (each Store/Update counts one, loops multiply)."""
    total = 0
    for node in map(plain, nodes):
        if isinstance(node, Loop):
            total += max(_trips(node), 0) * work(node.body)
        elif isinstance(node, (Store, Update)):
            total += 1
        elif isinstance(node, Rebuild):
            total += math.prod(node.extents)
    return max(total, 1)
