"""Row sums several rows at once (:func:`rows`), transposed reads in strips (:func:`strips`,
:func:`prefetch_strips`): docs/c-backend.md, "Row sums and strips"."""

from __future__ import annotations

import math
from dataclasses import replace

from ..ein.index import Affine
from ..ein.names import Fresh
from .structure import substitute_indices
from .ir import (Acc, Delta, Epsilon, Init, Load, Loop, Nest, Node, Prefetch, Select, Store, Update, loads, replace_nodes,
                 walk)

#: Rows summed together by :func:`rows`; rows shorter than MIN_ROW (two vectors) are no chain.
ROWS, MIN_ROW = 4, 16
#: The rows of the transposed operand a strip reads (at most an L1 set's ways).
STRIP = 8
#: :func:`prefetch_strips`: rows this far apart (bytes) get a prefetch this many rows ahead.
PREFETCH_ROW_BYTES, PREFETCH_AHEAD = 4096, 12


def _plain(nodes) -> bool:
    """No affine index, select, δ or ε in ``nodes`` (what the rewrites leave alone)."""
    return not any(isinstance(n, (Select, Delta, Epsilon)) or (isinstance(n, (Load, Store)) and any(
        isinstance(i, Affine) for i in n.indices)) for n in walk(nodes))


def _rows(loop: Loop) -> tuple[Node, ...] | None:
    """``acc = 0; for k: acc += ...; T[..] = f(acc)`` per iteration of ``loop``, the summed
    row contiguous and moving with ``loop``, as :data:`ROWS` rows per iteration."""
    if loop.start != 0 or loop.parallel or loop.simd or len(loop.body) != 3 or loop.extent < ROWS:
        return None
    init, inner, store = loop.body
    if not (isinstance(init, Init) and init.op == "+" and isinstance(inner, Loop) and isinstance(store, Store)):
        return None
    update = inner.body[0] if len(inner.body) == 1 else None
    if (inner.start != 0 or inner.extent < MIN_ROW or inner.reductions != (("+", init.acc),)
            or not isinstance(update, Update) or update.acc != init.acc or not _plain(loop.body)):
        return None
    i, read = loop.var, loads(inner.body)
    if not any(ld.indices[-1:] == (inner.var,) and i in ld.indices for ld in read):
        return None  # no row along the sum (a column sum is interchange's)
    if any(ld.slot == store.slot for ld in read) or any(ld.slot == store.slot and ld.indices != store.indices
                                                         for ld in loads((store.value,))):
        return None
    names = [f"{init.acc}r{r}" for r in range(ROWS)]
    # 0-based ROWS*i + r (affine indices count variables from 1: ein.index.zero_based_text)
    here = [Affine(((i, ROWS),), r + 1 - ROWS) for r in range(ROWS)]
    summed = replace(inner, body=tuple(Update(names[r], "+", substitute_indices(update.value, {i: here[r]}))
                                       for r in range(ROWS)),
                     reductions=tuple(("+", name) for name in names))
    stores = tuple(replace_nodes(substitute_indices(store, {i: here[r]}),
                                 lambda n, r=r: Acc(names[r]) if n == Acc(init.acc) else None) for r in range(ROWS))
    return _blocks(loop, ROWS, (*(Init(name, "+") for name in names), summed, *stores))


def _blocks(loop: Loop, size: int, body: tuple[Node, ...]) -> tuple[Node, ...]:
    """``loop`` as blocks of ``size`` iterations running ``body``, then the rest as it was."""
    block, done = replace(loop, extent=loop.extent // size, body=body), loop.extent // size * size
    return (block,) if done == loop.extent else (block, replace(loop, start=done))


def _strips(loop: Loop, fresh: Fresh) -> tuple[Node, ...] | None:
    """``for k: for a: acc += ...`` reading an operand at ``[.., a, .., k]``, in strips of k."""
    inner = loop.body[0] if len(loop.body) == 1 else None
    if (loop.start != 0 or loop.extent < 2 * STRIP or not isinstance(inner, Loop) or inner.start != 0
            or len(inner.body) != 1 or not isinstance(inner.body[0], Update)
            or not loop.reductions or inner.reductions != loop.reductions or not _plain(loop.body)):
        return None
    k, a, read = loop.var, inner.var, loads(inner.body)
    if not (any(ld.indices[-1:] == (k,) and a in ld.indices for ld in read)  # B[a,k]: a row further at each a
            and any(ld.indices[-1:] == (a,) for ld in read)):  # A[k,a]: contiguous in a
        return None
    kk = fresh(k)
    strip = Loop(kk, STRIP, (substitute_indices(inner.body[0], {k: Affine(((k, STRIP), (kk, 1)), -STRIP)}),),  # STRIP*k + kk
                 reductions=loop.reductions)
    return _blocks(loop, STRIP, (replace(inner, body=(strip,)),))


def _nodes(body: tuple[Node, ...], change) -> tuple[Node, ...]:
    """``body`` with each loop that ``change`` rewrites (into one or more nodes) replaced, at any depth."""
    out: list[Node] = []
    for node in body:
        found = change(node) if isinstance(node, Loop) else None
        if found is None and isinstance(node, Loop):
            node = replace(node, body=_nodes(node.body, change))
        out.extend(found if found is not None else (node,))
    return tuple(out)


def rows(nest: Nest) -> Nest:
    """``nest`` with every output loop of row sums running :data:`ROWS` rows at once."""
    return replace(nest, body=_nodes(nest.body, _rows))


def strips(nest: Nest) -> Nest:
    """``nest`` with every sum that reads an operand across its rows run in strips."""
    fresh = Fresh(n.var for n in walk(nest.body) if isinstance(n, Loop))
    return replace(nest, body=_nodes(nest.body, lambda loop: _strips(loop, fresh)))


def _ahead(loop: Loop, shapes, itemsize: int) -> tuple[Node, ...] | None:
    """``for a: for kk in range(STRIP): ...`` (a strip step of :func:`strips`) reading
    ``B[.., a, .., STRIP*k + kk]`` with rows :data:`PREFETCH_ROW_BYTES` or more apart: a
    prefetch of ``B[.., a + PREFETCH_AHEAD, .., STRIP*k]`` first, for each such operand."""
    strip = loop.body[0] if len(loop.body) == 1 else None
    if not isinstance(strip, Loop) or strip.extent != STRIP or strip.start != 0:
        return None
    a, kk = loop.var, strip.var
    hints: list[Node] = []
    for load in loads(strip.body):
        last = load.indices[-1] if load.indices else None
        if not (isinstance(last, Affine) and kk in dict(last.terms)) or a not in load.indices[:-1]:
            continue
        row = math.prod(shapes[load.slot][load.indices.index(a) + 1:]) * itemsize
        hint = Prefetch(load.slot, substitute_indices(load, {a: Affine(((a, 1),), PREFETCH_AHEAD), kk: 0}).indices)
        if row >= PREFETCH_ROW_BYTES and hint not in hints:
            hints.append(hint)
    return (replace(loop, body=(*hints, strip)),) if hints else None


def prefetch_strips(nest: Nest, shapes, itemsize: int) -> Nest:
    """``nest`` (after :func:`strips`) with a prefetch ahead of each strip step whose
    operand's rows are far apart (``shapes``: each slot's shape in memory)."""
    return replace(nest, body=_nodes(nest.body, lambda loop: _ahead(loop, shapes, itemsize)))
