"""The EIN verifier: the invariants every lowering and every pass must keep.

A program that breaks one is a compiler bug, never a user's mistake (the front ends'
type checkers report those, with spans).  :func:`verify` checks each statement once for
the invariants of :data:`CHECKS` (docs/optimizer.md, "The verifier", says what each
means); tests run it after every pass (``optimize(..., verify=True)``, or
``TENSORLANG_VERIFY=1`` for every optimization in a process).
"""

from __future__ import annotations

from ..semantics.values import EPSILON_RANKS, FUNCTIONS, REDUCTIONS
from . import ir
from .index import Affine, index_range, index_variables, to_text
from .printer import statement_to_text

#: The checks, by the names errors carry.
CHECKS = ("declared", "rank", "extent", "bound", "shadowing", "operator", "temporary")


class InvalidIR(Exception):
    """An EIN program breaks an invariant of the IR (a compiler bug).

    ``check`` names the broken invariant (one of :data:`CHECKS`), ``statement`` is the
    position (from 1) of the statement that breaks it, or None for the declarations,
    and ``after`` the stage that produced the program."""

    def __init__(self, check: str, message: str, statement: int | None, text: str = "", after: str | None = None):
        self.check, self.statement, self.after = check, statement, after
        where = "the declarations" if statement is None else f"statement {statement} `{text}`"
        stage = f" after {after}" if after else ""
        super().__init__(f"invalid EIN{stage}: {where}: {message} [{check}]")


def verify(program: ir.Program, after: str | None = None) -> ir.Program:
    """``program`` itself when it keeps every invariant; raise :class:`InvalidIR` naming
    the first statement that breaks one.  ``after`` names the stage in the message."""
    shapes: dict[str, tuple[int, ...]] = {}
    for d in program.decls:
        if d.name in shapes:
            raise InvalidIR("declared", f"{d.name!r} is declared twice", None, after=after)
        shapes[d.name] = d.shape
    temps = {d.name for d in program.decls if d.qual == ir.TEMP}
    assigned: set[str] = set()
    for n, stmt in enumerate(program.statements, 1):
        try:
            _statement(stmt, shapes, temps, assigned)
        except _Broken as broken:
            raise InvalidIR(broken.check, broken.message, n, _text(stmt), after) from None
        assigned.add(stmt.target)
    return program


class _Broken(Exception):
    def __init__(self, check: str, message: str):
        self.check, self.message = check, message


def _text(stmt: ir.Statement) -> str:
    try:
        return statement_to_text(stmt)
    except Exception:  # noqa: BLE001 - a node the printer does not know: show it raw
        return repr(stmt)


def _statement(stmt: ir.Statement, shapes, temps: set[str], assigned: set[str]) -> None:
    for name in (stmt.target, *stmt.reads):
        if name not in shapes:
            raise _Broken("declared", f"{name!r} is not declared")
    for name in stmt.reads:
        if name in temps and name not in assigned:
            raise _Broken("temporary", f"the temporary {name!r} is read before it is assigned")
    if stmt.target in temps and stmt.target in assigned:
        raise _Broken("temporary", f"the temporary {stmt.target!r} is assigned a second time")
    shape = shapes[stmt.target]
    if len(stmt.index) != len(shape):
        raise _Broken("rank", f"σ has {len(stmt.index)} indices but {stmt.target!r} has rank {len(shape)}")
    for (name, extent), dim in zip(stmt.index, shape):
        if extent != dim:
            raise _Broken("extent", f"σ's {name!r} ranges over {extent} but {stmt.target!r}'s dimension is {dim}")
    scope = _bind({}, stmt.index, "σ")
    _expr(stmt.body, scope, shapes)


def _bind(scope: dict[str, int], index: ir.IndexMap, who: str) -> dict[str, int]:
    inner = dict(scope)
    for name, extent in index:
        if not isinstance(name, str) or not isinstance(extent, int):
            raise _Broken("bound", f"{who} binds {name!r} with extent {extent!r}")
        if name in inner:
            what = "twice" if name not in scope else "which is already bound around it (by σ or a binder)"
            raise _Broken("shadowing", f"{who} binds {name!r} {what}")
        inner[name] = extent
    return inner


def _expr(e: ir.Expr, scope: dict[str, int], shapes) -> None:
    """Check every node of ``e``, parents first, left to right (an explicit stack: the
    depth is the parser's, not Python's)."""
    stack = [(e, scope)]
    while stack:
        node, around = stack.pop()
        inner = _node(node, around, shapes)
        stack.extend((child, inner) for child in reversed(ir.children(node)))


def _node(e: ir.Expr, scope: dict[str, int], shapes) -> dict[str, int]:
    """Check one node in ``scope``; the scope of its children."""
    if isinstance(e, ir.BinOp) and e.op not in ("+", "-", "*", "/"):
        raise _Broken("operator", f"{e.op!r} is not an arithmetic operator")
    if isinstance(e, ir.Apply) and e.fn not in FUNCTIONS:
        raise _Broken("operator", f"{e.fn!r} is not a function")
    if isinstance(e, ir.Reduce) and e.op not in REDUCTIONS:
        raise _Broken("operator", f"{e.op!r} is not a reduction")
    if isinstance(e, ir.Epsilon) and len(e.indices) not in EPSILON_RANKS:
        raise _Broken("rank", f"ε has {len(e.indices)} indices; it has rank {' or '.join(map(str, EPSILON_RANKS))}")
    uses = ir.index_uses(e)
    if uses:
        extents = ir.use_extents(e, shapes)
        what = _describe(e)
        if len(extents) != len(uses):
            raise _Broken("rank", f"{what} has {len(uses)} indices but rank {len(extents)}")
        for at, (i, extent) in enumerate(zip(uses, extents), 1):
            if isinstance(i, str):
                if i not in scope:
                    raise _Broken("bound", f"index {i!r} of {what} is not bound")
                if extent is not None and scope[i] != extent:
                    raise _Broken("extent", f"index {i!r} ranges over {scope[i]} but position {at} of {what} "
                                            f"has extent {extent}")
            elif isinstance(i, Affine):  # bounds, not extents: every position it reaches is inside
                free = [v for v in index_variables(i) if v not in scope]
                if free:
                    raise _Broken("bound", f"index {free[0]!r} (in {to_text(i)}) of {what} is not bound")
                lo, hi = index_range(i, scope)
                if lo < 1 or (extent is not None and hi > extent):
                    raise _Broken("extent", f"affine index {to_text(i)} reaches {lo}..{hi}, outside position {at} "
                                            f"of {what}" + (f", which has extent {extent}" if extent is not None else ""))
            elif not isinstance(i, int) or i < 1 or (extent is not None and i > extent):
                raise _Broken("extent", f"position {i!r} is outside position {at} of {what}"
                                        + (f", which has extent {extent}" if extent is not None else ""))
    bound = ir.binders(e)
    return _bind(scope, bound, _describe(e)) if bound else scope


def _describe(e: ir.Expr) -> str:
    if isinstance(e, ir.Tensor):
        return f"the access to {e.name!r}"
    if isinstance(e, ir.Stack):
        return f"a stack of {len(e.items)}"
    if isinstance(e, ir.Concat):
        return f"a concat of {len(e.items)}"
    if isinstance(e, ir.Epsilon):
        return f"ε of rank {len(e.indices)}"
    if isinstance(e, ir.Delta):
        return "δ"
    if isinstance(e, ir.Reduce):
        return f"{REDUCTIONS[e.op].word if e.op in REDUCTIONS else e.op}({','.join(n for n, _ in e.index)})"
    if isinstance(e, ir.Sum):
        return f"sum({','.join(n for n, _ in e.index)})"
    return type(e).__name__
