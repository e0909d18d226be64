"""Rewrite rules as named units: a rule carries its paper's name and citation, can be
listed, is counted when it fires and can be switched off by name (docs/optimizer.md,
"Rules", has the driver and the tally)."""

from __future__ import annotations

import contextlib
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from . import ir
from .names import Fresh


@dataclass(frozen=True)
class Rule:
    """A named rewrite.  ``kinds``: the node kinds ``fn`` is tried on (empty for a rule a
    pass applies itself, ``fn`` None); ``summary``: one line for listings."""

    name: str
    citation: str
    summary: str
    kinds: tuple[type, ...] = ()
    # Callable[..., ...]: a rule's function takes the node kinds it is registered for
    fn: Optional[Callable[..., Optional[ir.Expr]]] = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.name} ({self.citation})"


class Tally:
    """Which rules are switched off, and how often each rule fired."""

    def __init__(self, off: Iterable[str] = ()):
        self.off = frozenset(off)
        self.counts: Counter[str] = Counter()

    def enabled(self, rule: Rule) -> bool:
        return rule.name not in self.off

    def fire(self, rule: Rule, times: int = 1) -> None:
        self.counts[rule.name] += times

    def trial(self) -> "Tally":
        """A tally with the same switches and no counts: for a rewrite that may still be
        discarded (merge it with :meth:`merge` when it is kept)."""
        return Tally(self.off)

    def merge(self, other: "Tally") -> None:
        self.counts.update(other.counts)


_ACTIVE: ContextVar[Optional[Tally]] = ContextVar("tensorlang_rule_tally", default=None)


def active() -> Tally:
    """The tally of the optimizer run in progress; outside one, a fresh tally with every
    rule on (its counts go nowhere)."""
    tally = _ACTIVE.get()
    return Tally() if tally is None else tally


@contextlib.contextmanager
def counting(tally: Tally) -> Iterator[Tally]:
    """Make ``tally`` the active one while the block runs."""
    token = _ACTIVE.set(tally)
    try:
        yield tally
    finally:
        _ACTIVE.reset(token)


@dataclass(frozen=True)
class Context:
    """What a rule may need besides its node: fresh index names, the extents of the
    index variables in scope at the node, the tally, and whatever the pass adds
    (``env``)."""

    fresh: Fresh
    scope: dict[str, int]
    tally: Tally
    env: Any = None

    def within(self, index: ir.IndexMap) -> "Context":
        """The context inside a binder of ``index``."""
        return replace(self, scope=self.scope | dict(index))

    def enabled(self, rule: Rule) -> bool:
        return self.tally.enabled(rule)

    def fire(self, rule: Rule, times: int = 1) -> None:
        self.tally.fire(rule, times)


def rewrite(e: ir.Expr, rules: Sequence[Rule], context: Context) -> ir.Expr:
    """``e`` rewritten bottom up with ``rules``: each node's children first, then the
    first enabled rule for the node's kind that returns a replacement (which stands: it
    is not rewritten again)."""
    table: dict[type, list[Rule]] = {}
    for rule in rules:
        if rule.fn is not None:
            for kind in rule.kinds:
                table.setdefault(kind, []).append(rule)

    def enter(node: ir.Expr, ctx: Context) -> tuple[ir.Expr, Context]:
        bound = ir.binders(node)
        return node, (ctx.within(bound) if bound else ctx)

    def leave(node: ir.Expr, ctx: Context, inner: Context) -> ir.Expr:
        new = apply_first(node, table.get(type(node), ()), ctx)
        return node if new is None else new

    return ir.transform(e, context, enter, leave)  # iterative: as deep as the parser allows


def apply_first(node: ir.Expr, rules: Sequence[Rule], ctx: Context) -> ir.Expr | None:
    """The replacement the first enabled rule of ``rules`` gives ``node`` (counted), or
    None when none applies."""
    for rule in rules:
        if ctx.enabled(rule):
            new = rule.fn(node, ctx)  # type: ignore[misc]
            if new is not None:
                ctx.fire(rule)
                return new
    return None
