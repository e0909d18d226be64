"""Compatible statements (paper 002): may a statement write its target while it runs?

A statement ``x[σ] = e`` that reads x can run *in place* (002's ev-c-stmt: no temporary,
no copy back) exactly when every read of x in e is at the index being written (002
Definition 2).  :func:`compatible` derives it by 002's augmented type system (Fig. 6
with Lemma 1's primed rules, Fig. 7) in one walk down the body, keeping for every read
of x the index it is read at and the rules down to it, so that a verdict names the read
that decides it.  docs/compatible.md has the rules over EIN and the consumers of the one
derivation (``tensorlang analyze``, the buffer plan, the loop IR).  Soundness is 002
Corollary 1; tests/analysis checks it by brute force against Fig. 5's ``eval_Γ``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ein import ir
from ..ein.index import Affine, Index, as_terms, to_text, variables_of
from ..ein.names import free_index_sets

#: How many of the innermost rules a :class:`Read` keeps (an expression may be as deep
#: as the parser accepts; the reason for a verdict is always among the innermost rules).
PATH_KEPT = 8


@dataclass(frozen=True)
class Read:
    """One occurrence of the target in the right side.

    ``indices`` are the indices it is read at, as the body writes them; ``rules`` the
    rules of the derivation from ``ok-c-stmt`` down to this occurrence (the innermost
    :data:`PATH_KEPT`, with ``…`` in front when the path was longer); ``reason`` is empty
    when the read is at the written index (tc-var-xx applies) and otherwise says which
    rule moved it off ℓ̄: ``in tc-contr`` (a summation or reduction variable), ``in
    tc-trans`` (a permutation or diagonal of σ), ``at a fixed position`` or ``at a
    shifted index`` (EIN's positions and affine indices, which 002's DSL does not have)."""

    indices: tuple[Index, ...]
    rules: tuple[str, ...]
    reason: str

    @property
    def at_written_index(self) -> bool:
        return not self.reason

    @property
    def path(self) -> str:
        """The rules between ok-c-stmt and the read, outermost first: ``tc-contr > tc-prod
        > tc-var-xx`` (``tc-var-xx fails`` when the read is not at ℓ̄, where no
        rule applies)."""
        inner = self.rules[1:] if self.rules[:1] == ("ok-c-stmt",) else self.rules
        if not self.at_written_index:
            inner = inner[:-1] + ("tc-var-xx fails",)
        return " > ".join(inner)

    @property
    def where(self) -> str:
        return "(" + ", ".join(to_text(i) for i in self.indices) + ")"


@dataclass(frozen=True)
class Verdict:
    """002's verdict on one statement: the written index ℓ̄ (σ's variables), every read
    of the target with its derivation, and whether the statement is compatible."""

    target: str
    written: tuple[str, ...]
    reads: tuple[Read, ...]

    @property
    def compatible(self) -> bool:
        """ok-c-stmt derives: every read of the target is at the written index."""
        return all(r.at_written_index for r in self.reads)

    @property
    def in_place(self) -> bool:
        """The statement may write its target while it runs (ev-c-stmt): no temporary."""
        return self.compatible

    @property
    def culprit(self) -> Read | None:
        """The first read of the target that is not at the written index."""
        return next((r for r in self.reads if not r.at_written_index), None)

    def line(self) -> str:
        """The verdict in one line, naming the occurrence that decides it and the rules
        that lead to it (``x read at (k) in tc-contr: needs a temporary [tc-contr >
        tc-prod > tc-var-xx fails]``)."""
        x = self.target
        bad = self.culprit
        if bad is not None:
            return f"{x} read at {bad.where} {bad.reason}: needs a temporary [{bad.path}]"
        if not self.reads:
            return f"does not read {x}"
        if len(self.reads) > 1:
            return f"{x} read {len(self.reads)} times, each at the written index: in place [{self.reads[0].path}]"
        return f"{x} read at {self.reads[0].where} = written index: in place [{self.reads[0].path}]"


def _rule(node: ir.Expr, free: dict[int, frozenset[str]]) -> str:
    """The rule of 002 Fig. 6 that concludes ``node``'s judgement (EIN's node kinds
    mapped onto the DSL's operators as docs/compatible.md tabulates them)."""
    if isinstance(node, (ir.Sum, ir.Reduce)):
        return "tc-contr"
    if isinstance(node, (ir.Neg, ir.Apply)):
        return "tc-paren"
    if isinstance(node, ir.Stack):
        # CFDlang's stacking, not in 002: each item is read without the selector, so a read
        # of x inside one is never at ℓ̄.  (Item s only matters where the selector is s,
        # but the loop nest loads every item at every point: treating x[s,...] in item s
        # as the written point would let one thread load a slice another is writing.)
        return "tc-stack"
    if isinstance(node, ir.BinOp):
        left, right = free[id(node.left)], free[id(node.right)]
        if node.op == "*" and (not left) != (not right):
            return "tc-smul'"
        if node.op == "/" and right == frozenset() and left:
            return "tc-sdiv'"
        if left == right:
            return "tc-elem"
        return "tc-prod" if node.op == "*" else "tc-elem (broadcast)"
    return "tc-var-xy"


def _reason(indices: tuple[Index, ...], written: tuple[str, ...], bound: frozenset[str]) -> str:
    """Why a read of the target at ``indices`` is not at the written index ('' if it is)."""
    if any(v in bound for v in variables_of(indices)):
        return "in tc-contr"
    if len(indices) == len(written) and all(as_terms(i) == (((v, 1),), 0) for i, v in zip(indices, written)):
        return ""  # i, or the lone-variable affine i+0, which is the same position
    if any(isinstance(i, int) for i in indices):
        return "at a fixed position"
    if any(isinstance(i, Affine) for i in indices):
        return "at a shifted index"
    return "in tc-trans"


def _contains(body: ir.Expr, target: str) -> set[int]:
    """The ids of the nodes whose subtree reads ``target``."""
    found: set[int] = set()
    stack: list[tuple[ir.Expr, bool]] = [(body, False)]
    while stack:
        node, visited = stack.pop()
        kids = ir.children(node)
        if kids and not visited:
            stack.append((node, True))
            stack.extend((c, False) for c in kids)
            continue
        if (isinstance(node, ir.Tensor) and node.name == target) or any(id(c) in found for c in kids):
            found.add(id(node))
    return found


def compatible(stmt: ir.Statement) -> Verdict:
    """002's derivation for ``stmt``: ``Γ ⊢ x = e ok`` by ok-c-stmt, read by read; kept on the
    statement object as its ``reads`` are (a cache by value hashed and compared statements)."""
    if "_verdict" not in stmt.__dict__:  # frozen: set as functools.cached_property does
        object.__setattr__(stmt, "_verdict", derive(stmt, stmt.target))
    return stmt.__dict__["_verdict"]


def derive(stmt: ir.Statement, x: str) -> Verdict:
    """The derivation with ``x`` in the role of the target: would ``stmt`` still be
    compatible if it wrote x's storage (memory reuse asks this of a dying variable,
    002 Fig. 16)?"""
    written = tuple(name for name, _ in stmt.index)
    reads: list[Read] = []
    if x in stmt.reads:
        free = free_index_sets(stmt.body)
        holds = _contains(stmt.body, x)
        stack: list[tuple[ir.Expr, tuple[str, ...], frozenset[str]]] = [(stmt.body, ("ok-c-stmt",), frozenset())]
        while stack:
            node, rules, bound = stack.pop()
            if isinstance(node, ir.Tensor):
                reason = _reason(node.indices, written, bound)
                reads.append(Read(node.indices, _keep(rules + ("tc-var-xx",)), reason))
                continue
            rules = _keep(rules + (_rule(node, free),))
            inner = bound | {name for name, _ in ir.binders(node)}
            # in source order: push the children reversed
            stack.extend((c, rules, inner) for c in reversed(ir.children(node)) if id(c) in holds)
    return Verdict(x, written, tuple(reads))


def _keep(rules: tuple[str, ...]) -> tuple[str, ...]:
    if len(rules) <= PATH_KEPT:
        return rules
    return ("…",) + rules[-(PATH_KEPT - 1):]


def in_place_verdict(stmt: ir.Statement) -> str:
    """The verdict in one line (``tensorlang analyze``, ``--emit schedule``)."""
    return compatible(stmt).line()
