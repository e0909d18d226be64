"""Liveness of variables and memory reuse by it (paper 002 §6.2-6.3, Fig. 16 and Fig. 20).

A statement writes its whole target, so liveness over a straight-line program is one
backward pass: a variable is live after statement n when a later statement reads it
before overwriting it, or when it is a result.  From that, each temporary (a variable
the caller never sees: semantics.interface's ``temp`` role) has a *live range*, from its
first assignment to its last read, and two temporaries may share one buffer when

* (Fig. 20, "memory reusing for incompatible statements") the first's range ends
  before the second's begins: the statement that starts the second may be anything,
  it reads nothing that lives in that buffer any more; or
* (Fig. 16, "reduce-cache-miss") the first is read for the last time by the very
  statement that assigns the second, and that statement, with the first renamed to the
  second, is *compatible* (002 Definition 2, :mod:`.inplace`): it may then write the
  buffer it is reading, point by point.  Such a statement must run as a loop nest
  (``loop_statement``; a statement without Σ or reduction never becomes a BLAS step or
  an interchanged nest, which is the default).

Only temporaries of one shape share a buffer (the loop IR indexes a slot by its
variable's shape).  :func:`reuse` gives the sharing, :func:`temporary_bytes` the memory
the temporaries take without and with it (``tensorlang analyze`` prints both; the C
target's pool allocates one buffer per owner).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import math

from ..ein import ir
from ..semantics.interface import Role
from .inplace import compatible


def live_after(program: ir.Program, results: Iterable[str]) -> tuple[frozenset[str], ...]:
    """The variables live after each statement (``results`` are live at the end)."""
    live = set(results)
    out: list[frozenset[str]] = []
    for stmt in reversed(program.statements):
        out.append(frozenset(live))
        live.discard(stmt.target)
        live.update(stmt.reads)
    return tuple(reversed(out))


@dataclass(frozen=True)
class Sharing:
    """``name`` lives in ``owner``'s buffer from statement ``at`` (0-based) on, by the
    rule of ``figure`` ("Fig. 16": the statement that assigns it reads ``owner``'s
    buffer for the last time, compatibly; "Fig. 20": the buffer's last user was dead
    before)."""

    name: str
    owner: str
    at: int
    figure: str


def _ranges(program: ir.Program, temps: set[str]) -> dict[str, tuple[int, int]]:
    """Each temporary's live range: (first assignment, last read or assignment),
    statement numbers (a later dead assignment still writes the buffer)."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for n, stmt in enumerate(program.statements):
        for name in stmt.reads:
            if name in temps:
                last[name] = n
        if stmt.target in temps:
            first.setdefault(stmt.target, n)
            last[stmt.target] = n
    return {name: (start, max(last.get(name, start), start)) for name, start in first.items()}


def _sum_free(stmt: ir.Statement) -> bool:
    return not any(isinstance(node, (ir.Sum, ir.Reduce)) for node in ir.nodes(stmt.body))


def reuse(program: ir.Program, roles: Mapping[str, str],
          loop_statement: Callable[[int, ir.Statement], bool] | None = None) -> tuple[Sharing, ...]:
    """Which temporaries live in another's buffer (greedy, in statement order: a
    temporary takes the buffer of a Fig. 16 partner when it has one, else the one free
    the longest).  ``loop_statement(n, stmt)`` says whether statement n runs as a loop
    nest (Fig. 16 needs one); by default the statements without Σ or reduction."""
    if loop_statement is None:
        loop_statement = lambda n, stmt: _sum_free(stmt)  # noqa: E731
    shapes = program.shapes
    temps = {name for name in shapes if str(roles.get(name, Role.TEMP)) == Role.TEMP}
    ranges = _ranges(program, temps)
    holder: dict[str, str] = {}  # owner -> the temporary in its buffer now
    ends: dict[str, int] = {}  # owner -> the last read of that temporary
    shared: list[Sharing] = []
    by_start = sorted(ranges, key=lambda name: (ranges[name][0], name))
    for name in by_start:
        start, end = ranges[name]
        stmt = program.statements[start]
        choice = None
        for owner, user in holder.items():
            if shapes[owner] != shapes[name] or ends[owner] > start:
                continue
            if ends[owner] < start:
                if choice is None or choice[1] == "Fig. 20" and ends[owner] < ends[choice[0]]:
                    choice = (owner, "Fig. 20")
            elif (user in stmt.reads and user != stmt.target and loop_statement(start, stmt)
                  and _compatible_renamed(stmt, user)):
                choice = (owner, "Fig. 16")
                break
        if choice is None:
            holder[name], ends[name] = name, end
            continue
        owner, figure = choice
        holder[owner], ends[owner] = name, end
        shared.append(Sharing(name, owner, start, figure))
    return tuple(shared)


def _compatible_renamed(stmt: ir.Statement, dying: str) -> bool:
    """002 Fig. 16: ``t = e`` may write ``dying``'s buffer while reading it when
    ``t = e[dying := t]`` is compatible (t itself is not read)."""
    if stmt.target in stmt.reads:
        return False
    body = ir.rename_tensors(stmt.body, {dying: stmt.target})
    return compatible(ir.Statement(stmt.target, stmt.index, body)).compatible


def temporary_bytes(program: ir.Program, roles: Mapping[str, str], itemsize: int,
                    sharing: tuple[Sharing, ...] = ()) -> tuple[int, int]:
    """(buffers, bytes) the temporaries take: one buffer each, less the shared ones."""
    shapes = program.shapes
    gone = {s.name for s in sharing}
    temps = [name for name in shapes if str(roles.get(name, Role.TEMP)) == Role.TEMP and name not in gone]
    return len(temps), sum(math.prod(shapes[name]) for name in temps) * itemsize
