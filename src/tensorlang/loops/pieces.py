"""Index-set splitting of direct sums: a loop over a ``concat``'s index as one loop per piece
(docs/c-backend.md, "From EIN to loops to C")."""

from __future__ import annotations

from dataclasses import replace

from ..ein.index import Affine
from .ir import Loop, Nest, Node, Select, replace_nodes, walk

#: the most cases a select may have for its loop to be split (each is a loop of its own)
MAX_PIECES = 32


def split_pieces(nest: Nest) -> Nest:
    """``nest`` with every loop over a direct sum's index split at the pieces' ends."""
    body = tuple(n for node in nest.body for n in _split(node))
    return nest if body == nest.body else replace(nest, body=body)


def _form(var) -> tuple[str, int] | None:
    """(v, o) where the select's 0-based position is the counter of loop v plus o."""
    if isinstance(var, str):
        return var, 0
    if isinstance(var, Affine) and len(var.terms) == 1 and var.terms[0][1] == 1:
        return var.terms[0][0], var.offset
    return None


def _split(node: Node) -> tuple[Node, ...]:
    if not isinstance(node, Loop):
        return (node,)
    body = tuple(n for child in node.body for n in _split(child))
    loop = node if body == node.body else replace(node, body=body)
    if loop.parallel or not isinstance(loop.start, int):
        return (loop,)
    found = _find(loop.body, loop.var)
    if found is None:
        return (loop,)
    offset, bounds, count = found
    pieces: list[Node] = []
    for k in range(count):  # case k: bounds[k-1] <= counter + offset < bounds[k]; the last: the rest
        lo = max(loop.start, (bounds[k - 1] if k else -(1 << 62)) - offset)
        hi = min(loop.extent, (bounds[k] if k < count - 1 else 1 << 62) - offset)
        if lo >= hi:
            continue
        chosen = tuple(_choose(child, loop.var, offset, bounds, k) for child in loop.body)
        pieces.extend(_split(replace(loop, start=lo, extent=hi, body=chosen)))
    return tuple(pieces)


def _find(nodes, var: str) -> tuple[int, tuple[int, ...], int] | None:
    """(offset, bounds, cases) of the first direct-sum select over loop ``var``."""
    for node in walk(nodes):
        if isinstance(node, Select) and node.bounds and len(node.cases) <= MAX_PIECES:
            form = _form(node.var)
            if form is not None and form[0] == var:
                return form[1], node.bounds, len(node.cases)
    return None


def _choose(node, var: str, offset: int, bounds: tuple[int, ...], k: int):
    """``node`` with every select over ``var`` + ``offset`` with ``bounds`` replaced by
    its case k (the piece the loop now runs)."""
    def chosen(n):
        if isinstance(n, Select) and n.bounds == bounds and _form(n.var) == (var, offset):
            return _choose(n.cases[k], var, offset, bounds, k)
        return None

    return replace_nodes(node, chosen)
