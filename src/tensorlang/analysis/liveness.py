"""Liveness of variables and memory reuse by it (paper 002 §6.2-6.3, Fig. 16 and Fig. 20).

:func:`live_after` is one backward pass over the straight-line program, and :func:`reuse`
lets a temporary live in another's buffer or a result's, by the rules of docs/compatible.md
("Memory reuse by liveness"); :func:`temporary_bytes` and :func:`peak_temporary_bytes`
give what ``tensorlang analyze`` prints.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import math

from ..ein import ir
from ..semantics.interface import Role
from .inplace import derive


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
    #: Fig. 16: the variable the statement reads for the last time, whose buffer it writes
    #: (the schedule renames it to ``name`` in that statement, which then runs in place)
    dying: str = ""

    @property
    def in_result(self) -> bool:
        """Whether ``owner`` is a result whose buffer holds ``name`` before the result is
        first written (002 Fig. 20 literally: ``v = C # u . [2 5]`` puts tmp1 in v)."""
        return self.figure.endswith("(result)")


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


def _result_windows(program: ir.Program, roles: Mapping[str, str]) -> dict[str, int]:
    """The results (``out``: returned only, never supplied) whose buffers are free before
    their first assignment, each with the number of that statement: no statement up to
    and including it reads the result, so its buffer holds nothing until then."""
    windows: dict[str, int] = {}
    seen: set[str] = set()
    shapes = program.shapes  # (a dict built per call: once, not per statement)
    for n, stmt in enumerate(program.statements):
        seen.update(stmt.reads)
        name = stmt.target
        if (name not in windows and name not in seen and str(roles.get(name, Role.TEMP)) == Role.OUT
                and name in shapes):
            windows[name] = n
        seen.add(name)
    return windows


def reuse(program: ir.Program, roles: Mapping[str, str],
          loop_statement: Callable[[int, ir.Statement], bool] | None = None,
          by_size: bool = True, into_results: bool = True) -> tuple[Sharing, ...]:
    """Which temporaries live in another's buffer (greedy, in statement order: a
    temporary takes the buffer of a Fig. 16 partner when it has one, else a result's
    buffer before the result is first written (Fig. 20 literally, ``into_results``), else
    a dead buffer: with ``by_size`` the smallest that is large enough, of any shape, else
    one of its own shape, the one free the longest).  ``loop_statement(n, stmt)`` says
    whether statement n runs as a loop nest (Fig. 16 needs one: the statement then reads
    and writes one buffer point by point); by default the statements without Σ or
    reduction (the schedule passes its own test: every statement no BLAS step can take).

    A result's buffer is taken only by temporaries of the result's shape (the result's
    buffer is made per call, or is the caller's ``out=`` array, so it has no slot of
    another shape to alias), and only by temporaries whose range ends before the result's
    first assignment, or ends *in* it when that statement, reading the temporary for the
    last time, is compatible with it (Fig. 16 into the result).

    Linear in the statements up to a log factor (programs may have thousands of
    temporaries): busy buffers wait in a heap by the end of their current user's range,
    free ones in a list sorted by size."""
    if loop_statement is None:
        loop_statement = lambda n, stmt: _sum_free(stmt)  # noqa: E731
    shapes = program.shapes
    temps = {name for name in shapes if str(roles.get(name, Role.TEMP)) == Role.TEMP}
    ranges = _ranges(program, temps)
    deadline = _result_windows(program, roles) if into_results else {}
    holder: dict[str, str] = {}  # owner -> the temporary in its buffer now
    ends: dict[str, int] = {}  # owner -> the end of that temporary's range
    owner_of: dict[str, str] = {}
    # by size every buffer is in one group; else one group per shape
    group = (lambda shape: ()) if by_size else (lambda shape: shape)  # noqa: E731
    busy: dict[tuple[int, ...], list[tuple[int, str]]] = {}  # group -> heap of (end, owner)
    free: dict[tuple[int, ...], list[tuple[int, int, str]]] = {}  # group -> sorted (size, end, owner)
    shared: list[Sharing] = []

    def fig16(n: int, stmt: ir.Statement, dying: str) -> bool:
        return loop_statement(n, stmt) and _compatible_renamed(stmt, dying)

    def before_result(result: str, name: str, end: int) -> bool:
        """May ``name``, live until ``end``, sit in ``result``'s buffer?"""
        first = deadline[result]
        return end < first or (end == first and fig16(first, program.statements[first], name))

    for name in sorted(ranges, key=lambda name: (ranges[name][0], name)):
        start, end = ranges[name]
        shape = shapes[name]
        size = math.prod(shape)
        stmt = program.statements[start]
        choice = None
        for read in stmt.reads:  # Fig. 16: a buffer whose user this statement reads last
            owner = owner_of.get(read)
            if (owner is not None and holder[owner] == read and ends[owner] == start and shapes[read] == shape
                    and read != stmt.target and fig16(start, stmt, read)
                    and (owner not in deadline or before_result(owner, name, end))):
                choice = (owner, "Fig. 16 (result)" if owner in deadline else "Fig. 16", read)
                break
        if choice is None:  # Fig. 20 into a result not yet written: the tightest that fits
            fits = [(first, result) for result, first in deadline.items()
                    if shapes[result] == shape and ends.get(result, -1) < start and before_result(result, name, end)]
            if fits:
                result = min(fits)[1]
                choice = (result, "Fig. 20 (result)", "")
        if choice is None:  # Fig. 20: a buffer whose user was dead before this statement
            key = group(shape)
            heap, spare = busy.setdefault(key, []), free.setdefault(key, [])
            while heap and heap[0][0] < start:
                done, owner = heapq.heappop(heap)
                if ends[owner] == done:  # else a stale entry: the buffer was taken since
                    bisect.insort(spare, (math.prod(shapes[owner]), done, owner))
            at = bisect.bisect_left(spare, (size,))  # the smallest buffer that is large enough
            while at < len(spare) and choice is None:
                _, done, owner = spare.pop(at)
                if ends[owner] == done:
                    choice = (owner, "Fig. 20", "")
        if choice is None:
            owner = name
        else:
            owner = choice[0]
            shared.append(Sharing(name, owner, start, choice[1], choice[2] if choice[1].startswith("Fig. 16") else ""))
        holder[owner], ends[owner], owner_of[name] = name, end, owner
        if owner not in deadline:  # a result's buffer is never pooled for later temporaries
            heapq.heappush(busy.setdefault(group(shapes[owner]), []), (end, owner))
    return tuple(shared)


def peak_temporary_bytes(program: ir.Program, roles: Mapping[str, str], itemsize: int,
                         sharing: tuple[Sharing, ...] = ()) -> int:
    """The most bytes of temporaries live at once (over the statements, each temporary
    from its first assignment to its last read): what no sharing among temporaries can go
    below.  With ``sharing``, the temporaries that live in a result's buffer (Fig. 20
    literally) are left out: that memory is the result's, which the call needs anyway."""
    shapes = program.shapes
    inside = {s.name for s in sharing if s.in_result}
    temps = {name for name in shapes if str(roles.get(name, Role.TEMP)) == Role.TEMP and name not in inside}
    changes: dict[int, int] = {}
    for name, (start, end) in _ranges(program, temps).items():
        size = math.prod(shapes[name]) * itemsize
        changes[start] = changes.get(start, 0) + size
        changes[end + 1] = changes.get(end + 1, 0) - size
    peak = live = 0
    for n in sorted(changes):
        live += changes[n]
        peak = max(peak, live)
    return peak


def _compatible_renamed(stmt: ir.Statement, dying: str) -> bool:
    """002 Fig. 16: ``t = e`` may write ``dying``'s buffer while reading it when
    ``t = e[dying := t]`` is compatible (t itself is not read): every read of ``dying``
    is at the written index."""
    return stmt.target not in stmt.reads and derive(stmt, dying).compatible


def temporary_bytes(program: ir.Program, roles: Mapping[str, str], itemsize: int,
                    sharing: tuple[Sharing, ...] = ()) -> tuple[int, int]:
    """(buffers, bytes) the temporaries take: one buffer each, less the shared ones."""
    shapes = program.shapes
    gone = {s.name for s in sharing}
    temps = [name for name in shapes if str(roles.get(name, Role.TEMP)) == Role.TEMP and name not in gone]
    return len(temps), sum(math.prod(shapes[name]) for name in temps) * itemsize
