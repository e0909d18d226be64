"""Data parallelism along a batch dimension: may a program run chunk by chunk?

A *batch* is a symbolic size (``E`` in ``in var u : [E n n n]``) that every variable
having it has in exactly one dimension.  :func:`batch_verdict` says how each statement's
target comes out of a run cut into chunks along it: ``map`` (each point reads only its
own chunk), ``sum`` (a Σ over the batch: the chunks' partial sums add up) or
``replicated`` (no batched variable takes part), or raises :class:`NotDataParallel`
naming the statement, the access and why (docs/dask.md, 'The batch and what
"data-parallel" means').  It runs on the program as lowered, at stand-in sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..ein import ir
from ..ein.index import index_variables


@dataclass(frozen=True)
class Verdict:
    """How each variable assigned by the program comes out of a chunked run."""

    kinds: dict[str, str]  # target -> "map", "sum" or "replicated"
    positions: dict[str, int]  # batched variable -> its batch dimension (0-based)


class NotDataParallel(Exception):
    """The program is not data-parallel along the batch; the message says why."""

    def __init__(self, message: str, statement: int | None = None):
        super().__init__(message)
        self.statement = statement


def batch_verdict(program: ir.Program, positions: dict[str, int], line_of=lambda n: None) -> Verdict:
    """The kind of every statement's target (map, sum, replicated), or NotDataParallel.

    ``positions`` gives each batched variable's batch dimension; ``line_of(n)`` the source
    line of statement n (0-based), for messages."""
    kinds: dict[str, str] = {}
    reduced_at: dict[str, int] = {}
    for n, stmt in enumerate(program.statements):
        where = f"statement {n + 1}" + (f" (line {line_of(n)})" if line_of(n) else "")
        reads = {node.name for node in ir.nodes(stmt.body) if isinstance(node, ir.Tensor)}
        for name in reads & set(reduced_at):
            raise NotDataParallel(f"{where} reads {name!r}, a sum over the batch (statement {reduced_at[name] + 1}): "
                                  "each chunk has only its part of it; compute it in a separate program", n)
        if stmt.target in reduced_at:
            raise NotDataParallel(f"{where} assigns {stmt.target!r} again after its sum over the batch", n)
        if stmt.target in positions:
            index = tuple(stmt.index)
            b = index[positions[stmt.target]][0]
            _only_at_batch(stmt.body, b, positions, where)
            kind = "map"
        elif isinstance(stmt.body, ir.Sum) and any(_batched_reads(stmt.body, positions)):
            b = _batch_index(stmt.body, positions, where)
            if b not in {name for name, _ in stmt.body.index}:
                raise NotDataParallel(f"{where}: {stmt.target!r} has no batch dimension, but its sum does not run "
                                      f"over the batch index {b}", n)
            if stmt.target in reads:
                raise NotDataParallel(f"{where}: {stmt.target!r} is a sum over the batch that reads itself", n)
            _only_at_batch(stmt.body.body, b, positions, where)
            kind = "sum"
            reduced_at[stmt.target] = n
        elif any(_batched_reads(stmt.body, positions)):
            access = next(_batched_reads(stmt.body, positions))
            raise NotDataParallel(
                f"{where}: {stmt.target!r} has no batch dimension but reads the batched {access.name!r} outside a "
                "sum over the whole batch (only a sum over the batch combines across chunks: a max, min, "
                "product or a sum inside another expression does not)", n)
        else:
            kind = "replicated"
        if kinds.get(stmt.target, kind) != kind:
            raise NotDataParallel(f"{where}: {stmt.target!r} is assigned both per chunk and otherwise", n)
        kinds[stmt.target] = kind
    return Verdict(kinds, dict(positions))


def _batched_reads(e: ir.Expr, positions: dict[str, int]) -> Iterator[ir.Tensor]:
    for node in ir.nodes(e):
        if isinstance(node, ir.Tensor) and node.name in positions:
            yield node


def _batch_index(e: ir.Expr, positions: dict[str, int], where: str) -> str:
    """The index variable a batched read uses in its batch dimension."""
    access = next(_batched_reads(e, positions))
    index = access.indices[positions[access.name]]
    if not isinstance(index, str):
        raise NotDataParallel(f"{where}: {access.name!r} is read at {index} in its batch dimension; a chunked "
                              "run needs a plain index there")
    return index


def _only_at_batch(e: ir.Expr, b: str, positions: dict[str, int], where: str) -> None:
    """Every batched read uses ``b`` at its batch dimension, and ``b`` appears nowhere else."""
    for node in ir.nodes(e):
        uses = ir.index_uses(node)
        batch_dim = positions.get(node.name, -1) if isinstance(node, ir.Tensor) else -1
        for d, index in enumerate(uses):
            if d == batch_dim:
                if index != b:
                    raise NotDataParallel(
                        f"{where}: {getattr(node, 'name', '?')!r} is read at {index} in its batch dimension, but "
                        f"the statement's batch index is {b}: it would read another chunk's elements (a "
                        "contraction or transposition across the batch)")
            elif not isinstance(index, int) and b in index_variables(index):
                what = f"dimension {d + 1} of {node.name!r}" if isinstance(node, ir.Tensor) else type(node).__name__
                raise NotDataParallel(f"{where}: the batch index {b} is also used in {what}: it would mix the "
                                      "batch with another dimension")
        for name, _ in ir.binders(node):
            if name == b:
                raise NotDataParallel(f"{where}: the batch index {b} is summed over inside the statement")
