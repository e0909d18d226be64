"""In-place execution (paper 002): whether a statement may write its target while it runs.

002 calls two statements *compatible* when one may overwrite the other's storage while
it is computed.  For one statement and its own target that is the question whether
ev-stmt (the right side is evaluated completely before the store changes) still holds
when the target is written point by point.
"""

from __future__ import annotations

from ..ein import ir


def reads_only_its_own_point(stmt: ir.Statement) -> bool:
    """True when the statement may write its target while it runs (ev-stmt still holds):
    every read of the target is at exactly the point being written (``x[i] = s * x[i]``),
    so each point reads its old value before its new one is stored and no other point
    reads it.  Anything else (``x[i,j] = x[j,i]``, ``x[i] = sum(k) x[k]``) needs a copy."""
    here = tuple(name for name, _ in stmt.index)
    return all(t.indices == here for t in ir.tensors(stmt.body) if t.name == stmt.target)


def in_place_verdict(stmt: ir.Statement) -> str:
    """Whether the statement may write its target while it runs, and why (002's
    compatible statements, as the loop back end decides it)."""
    if stmt.target not in stmt.reads:
        return "in place (does not read its target)"
    if reads_only_its_own_point(stmt):
        return "in place (reads its target only at the point it writes)"
    return "copy (reads its target at other points)"
