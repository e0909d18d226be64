"""Register blocks (:func:`vector_block`) and register tiles (:func:`tile_of`) for the small products
inside a fused loop: docs/c-backend.md, "Register blocks" and "Register tiles"."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..ein import ir as ein
from ..ein.index import Affine
from ..ein.names import Fresh, all_names
from ..machine import TILE_BYTES, TILE_VECTORS  # a tile's vector bytes and register budget
from ..schedule.padding import RAGGED_TILE_BYTES, decide as decide_padding
from ..schedule.plan import BufferPlan
from .interchange import contraction
from .ir import Acc, BinOp, Const, Init, Load, Loop, Neg, Node, Scalar, Store, Update, around, loads, substitute, walk
from .lower import scalar

#: Whether fused loops use these micro-kernels (:mod:`.fusion`) without, and with, fused multiply-add.
ENABLED, ENABLED_WITH_FMA = True, True

#: The most rows of a vector block (docs/performance.md, "Measurement history").
MAX_BLOCK_ROWS = 16


def enabled(fma: bool) -> bool:
    """Whether a fused loop with (``fma``) or without fused multiply-adds uses the micro-kernels."""
    return ENABLED_WITH_FMA if fma else ENABLED


#: Rows longer than this many elements are no small product (and not worth blocking).
MAX_ROW = 64


def _factors(e: Scalar) -> list[Scalar]:
    if isinstance(e, BinOp) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    if isinstance(e, Neg):
        return _factors(e.arg)
    return [e]


def _mentions(index: Any, var: str) -> bool:
    """Whether loop variable ``var`` occurs in ``index`` (the variable itself, or a term of an affine index)."""
    return index == var or (isinstance(index, Affine) and var in dict(index.terms))


def _uses(e: Scalar, var: str) -> bool:
    return any(_mentions(i, var) for load in loads((e,)) for i in load.indices)


@dataclass(frozen=True)
class _Site:
    """Where a register block goes (:func:`_block_site`): the statement's loops ``here``, the row x, the
    output loop y it blocks, the summed k, the product, the target's slot and fresh names."""
    here: tuple[tuple[str, int], ...]
    x: str
    width: int
    y: str
    rows: int
    k: str
    extent: int
    product: Scalar
    target: int
    yb: str
    u: str
    fresh: Fresh
    moving: tuple[Scalar, ...]  # the product's factors that move with x (loaded per k)

    def where(self, point: Any) -> tuple[Any, ...]:
        """The target's index with y at ``point``."""
        return tuple(point if name == self.y else name for name, _ in self.here)

    def outside(self, nest: tuple[Node, ...]) -> tuple[Node, ...]:
        """``nest`` inside the statement's loops other than x and y, in their order."""
        return around(nest, [(name, n) for name, n in self.here[:-1] if name != self.y])


def _block_site(stmt: ein.Statement, buffers: BufferPlan, keep: int) -> _Site | None:
    """What a register block needs of ``stmt`` (the first ``keep`` output loops stay
    outermost), or None (:func:`vector_block` says when)."""
    found = contraction(stmt, buffers.variable_shapes)
    if found is None or len(found.summed) != 1 or found.scale is not None:
        return None
    here = tuple(stmt.index)
    (x, width), outputs = here[-1], here[keep:-1]
    if buffers.fused_pad > 1:  # 000 §4: the row runs to its padded extent where padding allows it
        width = decide_padding(stmt, buffers.fused_pad, True, buffers.padded_names).extent(x, width)
    if not outputs or width > MAX_ROW:
        return None
    (k, extent), = found.summed
    product = scalar(found.product, buffers.slot_of)
    moving = [f for f in _factors(product) if _uses(f, x)]
    # y: the innermost output loop the row operands do not depend on, else the innermost
    free = [name for name, _ in outputs if not any(_uses(f, name) for f in moving)]
    y = free[-1] if free else outputs[-1][0]
    fresh = Fresh(all_names(stmt.body) | {name for name, _ in here})
    yb, u = fresh("yb"), fresh("u")
    return _Site(here, x, width, y, dict(outputs)[y], k, extent, product, buffers.slot_of[stmt.target], yb, u, fresh,
                 tuple(moving))


#: The most 64-byte accumulator vectors of a block gcc unrolls at a time where its moving
#: operand may be re-read (past it gcc spills; docs/performance.md, "Measurement history").
UNROLL_VECTORS = 24


def unroll_rows(height: int, width: int, itemsize: int, contiguous: bool) -> int:
    """How many rows of a vector block gcc unrolls at a time: all ``height``, unless the
    moving operand is ``contiguous`` (or a local) and the accumulators exceed
    :data:`UNROLL_VECTORS`: then the largest divisor that fits, if 8 or more."""
    vectors = math.ceil(width * itemsize / 64)
    if not contiguous or height * vectors <= UNROLL_VECTORS:
        return height
    fits = max(d for d in range(1, height + 1) if height % d == 0 and d * vectors <= UNROLL_VECTORS)
    return fits if fits >= 8 else height


#: The most iterations of a sum gcc unrolls by itself (``max-completely-peel-times``), and
#: the most multiply-adds (rows × sum) a block is unrolled into (docs/c-backend.md, "Long sums unrolled").
COMPILER_PEELS, UNROLLED_STEPS = 16, 256


def unrolled_sum(extent: int, height: int, whole_vectors: bool) -> bool:
    """Whether a block's rows and sum are unrolled whole: a sum past :data:`COMPILER_PEELS`
    up to :data:`UNROLLED_STEPS`, not of whole vectors (docs/c-backend.md, "Long sums unrolled")."""
    return not whole_vectors and COMPILER_PEELS < extent and extent * height <= UNROLLED_STEPS


def unrolled_height(rows: int, extent: int) -> int:
    """The largest divisor of ``rows`` from 2 to :data:`MAX_BLOCK_ROWS` whose block fits
    :data:`UNROLLED_STEPS` with a sum of ``extent`` terms, else 0."""
    return max((h for h in range(2, min(rows, MAX_BLOCK_ROWS) + 1)
                if rows % h == 0 and h * extent <= UNROLLED_STEPS), default=0)


#: The most blocks :func:`split_rows` cuts rows into (31 rows of 31 terms: four).
MAX_SPLIT = 4


def split_rows(rows: int, extent: int) -> tuple[int, ...] | None:
    """``rows`` cut in the fewest blocks (2 to :data:`MAX_SPLIT`, the larger first: 17 is 9
    and 8) that fit :data:`MAX_BLOCK_ROWS` and :data:`UNROLLED_STEPS`, else None."""
    for count in range(2, min(MAX_SPLIT, rows // 2) + 1):
        size, more = divmod(rows, count)
        if size + (more > 0) <= MAX_BLOCK_ROWS and (size + (more > 0)) * extent <= UNROLLED_STEPS:
            return (size + 1,) * more + (size,) * (count - more)
    return None


def _whole(site: _Site, buffers: BufferPlan) -> bool:
    return site.width * buffers.itemsize % TILE_BYTES == 0


def _ragged_tile(site: _Site, buffers: BufferPlan) -> bool:
    """Whether the block's row becomes a register tile with a masked last vector."""
    return not _whole(site, buffers) and site.width * buffers.itemsize >= RAGGED_TILE_BYTES


def tile_passes(blocks: tuple[int, ...], width: int, itemsize: int) -> int:
    """The passes over the summed index that register tiles make for blocks of these rows
    (each pass loads the row operand's vectors once: :meth:`Tile.groups`)."""
    vectors = -(-width * itemsize // TILE_BYTES)
    return sum(-(-rows // max(1, TILE_VECTORS // vectors)) for rows in blocks)


def _block_rows(site: _Site, buffers: BufferPlan, height: int, point: Any, reused: bool, u: str | None = None,
                tile_only: bool = False) -> Loop:
    """The simd loop over x of ``height`` rows, row u at y = ``point``; ``reused``:
    :func:`unroll_rows`; ``tile_only``: cut for a ragged tile, its sum not unrolled."""
    u, acc = u or site.u, site.fresh("acc")
    unrolled = unrolled_sum(site.extent, height, _whole(site, buffers)) and not tile_only
    unroll = height if unrolled else unroll_rows(height, site.width, buffers.itemsize, reused)
    row = Loop(u, height, (
        Init(acc, "+"),
        Loop(site.k, site.extent, (Update(acc, "+", substitute(site.product, {site.y: point})),),
             unroll=site.extent if unrolled else 0),
        Store(site.target, site.where(point), Acc(acc)),
    ), unroll=unroll)
    return Loop(site.x, site.width, (row,), simd=True)


def vector_block(stmt: ein.Statement, buffers: BufferPlan, keep: int = 1) -> tuple[Node, ...] | None:
    """The outer-vectorized register block of ``stmt``, its first ``keep`` output loops
    outermost, or None where it does not apply (docs/c-backend.md, "Register blocks")."""
    site = _block_site(stmt, buffers, keep)
    if site is None:
        return None
    rows = site.rows
    height = max((u for u in range(1, min(rows, MAX_BLOCK_ROWS) + 1) if rows % u == 0), default=1)  # 1: no block
    contiguous = bool(site.moving) and all(isinstance(f, Load) and len(f.indices) >= 2 and f.indices[-1] == site.x
                                           and f.indices[-2] == site.k for f in site.moving)
    # a per-iteration temporary (a slot after the program's) read across its rows may be
    # re-read: it is in the caches; a program input read so is not (UNROLL_VECTORS)
    local = bool(site.moving) and all(isinstance(f, Load) and f.slot >= len(buffers.names) for f in site.moving)
    split = None
    if unrolled_sum(site.extent, 1, _whole(site, buffers)):
        height = unrolled_height(rows, site.extent) or height  # a height that unrolls, where one does
        split = split_rows(rows, site.extent)
        if height >= 2 and not (split is not None and _ragged_tile(site, buffers)
                                and tile_passes(split, site.width, buffers.itemsize)
                                < tile_passes((height,) * (rows // height), site.width, buffers.itemsize)):
            split = None  # the divisor's blocks, unless a tile runs fewer passes over split rows
    if split is not None or height < 2:  # blocks of split rows (each its simd loop), where their sums unroll
        if split is None or not unrolled_sum(site.extent, split[0], _whole(site, buffers)):
            return None
        # more than two blocks, or blocks instead of a divisor, exist for a ragged tile only:
        # unrolled whole they cost gcc 12-43 s where the plain branch is compiled
        tile_only = (len(split) > 2 or height >= 2) and _ragged_tile(site, buffers)
        if (len(split) > 2 or height >= 2) and not tile_only:
            return None
        names = [site.u] + [site.fresh("u") for _ in split[1:]]
        starts = [sum(split[:i]) for i in range(len(split))]
        return site.outside(tuple(_block_rows(site, buffers, size, Affine(((u, 1),), start) if start else u,
                                              contiguous or local, u, tile_only)
                                  for size, start, u in zip(split, starts, names)))
    # 0-based: height*yb + u (the loop IR carries affine indices as lowering does)
    point: Any = site.u if rows == height else Affine(((site.yb, height), (site.u, 1)), -height)
    nest: tuple[Node, ...] = (_block_rows(site, buffers, height, point, contiguous or local),)
    if rows != height:
        nest = (Loop(site.yb, rows // height, nest),)
    return site.outside(nest)


# ------------------------------------------------------------------ register tiles
#: Register tiles (:class:`Tile`): None where the C compiler targets AVX-512 (``TL_TILES``,
#: the plain nest the other branch); True or False: always or never (tests).
TILES: bool | None = None


@dataclass(frozen=True)
class Tile:
    """A vector block as a register tile (docs/c-backend.md, "Register tiles"); ``moving``: the loads
    with x as last index."""
    x: str
    width: int
    u: str
    height: int
    k: str
    extent: int
    init: Init
    update: Update
    store: Store
    moving: tuple[Load, ...]

    def vectors(self, itemsize: int) -> int:
        """The 64-byte vectors of one row, its part vector (:meth:`tail`) included."""
        return -(-self.width * itemsize // TILE_BYTES)

    def tail(self, itemsize: int) -> int:
        """The lanes of the row's last vector where the row is not whole vectors (its
        loads and stores are masked to them: nothing past the row is read or written), else 0."""
        return self.width % (TILE_BYTES // itemsize)

    def groups(self, itemsize: int) -> tuple[tuple[int, int, int], ...]:
        """The tile's loops over groups of rows (first row, end, rows a group) that fit
        :data:`TILE_VECTORS`: whole vectors, the largest divisor; else the fewest, as even as can be."""
        vectors = self.vectors(itemsize)
        if not self.tail(itemsize):
            return ((0, self.height, max(r for r in range(1, self.height + 1)
                                         if self.height % r == 0 and r * vectors <= TILE_VECTORS)),)
        count = -(-self.height // max(1, TILE_VECTORS // vectors))
        rows, more = divmod(self.height, count)  # ``more`` groups of rows + 1, then rows
        return tuple((first, end, size) for first, end, size in
                     ((0, more * (rows + 1), rows + 1), (more * (rows + 1), self.height, rows)) if end > first)


def _tile_scalar(e: Scalar, x: str, moving: list[Load], acc: str | None = None) -> bool:
    """Whether ``e`` is made of loads, constants, negation and + - * only (and accumulator
    ``acc``), with ``x`` only as the last index of a load (collected in ``moving``)."""
    if isinstance(e, Acc):
        return e.name == acc
    if isinstance(e, Load):
        *rest, last = e.indices or (None,)
        if any(_mentions(i, x) for i in rest):
            return False
        if last == x:
            moving.append(e)
        return last == x or not _mentions(last, x)
    if isinstance(e, Const):
        return True
    if isinstance(e, Neg):
        return _tile_scalar(e.arg, x, moving, acc)
    if isinstance(e, BinOp):
        return e.op in ("+", "-", "*") and _tile_scalar(e.left, x, moving, acc) and _tile_scalar(e.right, x, moving, acc)
    return False


def tile_of(loop: Node, itemsize: int) -> Tile | None:
    """``loop`` (``simd for x: for u: acc = 0; for k: acc += p; T[.., x] = acc``) as a register tile,
    or None: not such a loop, too short a row, or a value of more than :func:`_tile_scalar` takes."""
    if not (isinstance(loop, Loop) and loop.simd and not loop.parallel and loop.start == 0 and len(loop.body) == 1):
        return None
    row = loop.body[0]
    if not (isinstance(row, Loop) and not (row.simd or row.parallel or row.prefetch) and row.start == 0
            and len(row.body) == 3):
        return None
    init, summed, store = row.body
    if not (isinstance(init, Init) and init.op == "+" and isinstance(summed, Loop) and summed.start == 0
            and not (summed.simd or summed.parallel or summed.prefetch) and len(summed.body) == 1
            and isinstance(store, Store) and Acc(init.acc) in walk((store.value,))):
        return None
    update = summed.body[0]
    if not (isinstance(update, Update) and update.acc == init.acc and update.op == "+") or (
            loop.extent * itemsize < RAGGED_TILE_BYTES and (loop.extent * itemsize) % TILE_BYTES):
        return None
    x = loop.var
    if not store.indices or store.indices[-1] != x or any(_mentions(i, x) for i in store.indices[:-1]):
        return None
    moving: list[Load] = []
    # the stored value: the sum, or an elementwise statement's value computed from it
    # (loops/fusion.py ``epilogue``), under the same rule
    if not (_tile_scalar(update.value, x, moving) and _tile_scalar(store.value, x, moving, init.acc)):
        return None
    return Tile(x, loop.extent, row.var, row.extent, summed.var, summed.extent, init, update, store, tuple(moving))


def row_by_row(tile: Tile, loop: Loop, itemsize: int) -> bool:
    """Whether the plain branch of ``tile`` (of ``loop``) runs row by row (:attr:`.ir.Tile.rows`):
    a ragged tile whose block's sum is a loop gcc would not vectorize (``tile_only``)."""
    summed: Any = loop.body[0].body[1]  # type: ignore[union-attr]  # (tile_of found these loops)
    return bool(tile.tail(itemsize)) and not summed.unroll and summed.extent > COMPILER_PEELS


