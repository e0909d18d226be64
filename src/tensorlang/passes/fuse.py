"""Fusion (004 §5.2): substitute a single-use temporary into the statement that uses it.

``t[i,j] = e`` followed by ``y[...] = ... t[a,b] ...`` becomes ``y[...] = ... e[i:=a, j:=b] ...``
for a temporary assigned once and read by one later statement, none of whose reads is
reassigned in between, where that adds no work and a contraction stays one
(docs/optimizer.md, "Decisions").  The substitution is the rule ``fusion``, counted per
access it replaces.
"""

from __future__ import annotations

import bisect
import heapq
import math

from ..ein import ir
from ..ein.forms import monomial
from ..ein.names import Fresh, all_names, rename_indices
from ..ein.rewrite import Context, Rule, Tally, active, rewrite
from .program import assignments, readers, temporaries


def _substitute_definition(e: ir.Tensor, ctx: Context) -> ir.Expr | None:
    """An access to the temporary being fused: its body at the access's indices, its
    binders renamed apart from the use's names in the same walk (see :func:`fuse_into`)."""
    target, params, body, bind = ctx.env
    if e.name != target:
        return None
    return rename_indices(body, dict(zip(params, e.indices)), bind)


FUSION = Rule("fusion", "004 §5.2", "a single-use temporary's access becomes its body",
              (ir.Tensor,), _substitute_definition)

#: The rules of fusion.
RULES = (FUSION,)


#: Fusion stops where the fused statement would exceed this many expression nodes: a
#: chain ``t1 = x*2; t2 = t1*2; ...`` would otherwise grow one expression as long as the
#: program, every fusion copying it (docs/optimizer.md, "Every pass is bounded").
MAX_FUSED_NODES = 128


def fuse(program: ir.Program) -> ir.Program:
    """Fuse until no temporary can be: each round fuses the first fusable statement, as
    a rescan from the start would, but only the statements a fusion affects (the use,
    and the definitions of what the use now reads) are looked at again."""
    tally = active()
    if not tally.enabled(FUSION):
        return program
    temps = temporaries(program)
    statements: list[ir.Statement | None] = list(program.statements)
    reads = [s.reads for s in program.statements]
    sizes = [ir.size(s.body) for s in program.statements]
    assigned = {name: list(at) for name, at in assignments(program).items()}
    read_by = {name: set(at) for name, at in readers(program).items()}
    pending = list(range(len(statements)))  # a heap of positions to (re)examine
    queued = set(pending)
    while pending:
        d = heapq.heappop(pending)
        queued.discard(d)
        stmt = statements[d]
        if stmt is None:
            continue
        t = stmt.target
        if t not in temps or len(assigned[t]) != 1 or t in reads[d]:
            continue
        users = read_by.get(t, set())
        if len(users) != 1:
            continue
        (u,) = users
        if u <= d or sizes[d] + sizes[u] > MAX_FUSED_NODES:
            continue
        if any(_assigned_between(assigned.get(name, ()), d, u) for name in reads[d]):
            continue
        use = statements[u]
        assert use is not None
        fused = fuse_into(stmt, use, tally)
        if fused is None:
            continue
        statements[u], statements[d] = fused, None
        assigned[t].remove(d)
        for name in reads[d]:
            read_by[name].discard(d)
        for name in reads[u]:
            read_by[name].discard(u)
        reads[u], sizes[u] = _reads_and_size(fused.body)
        for name in reads[u]:
            read_by.setdefault(name, set()).add(u)
        for n in [u] + [n for name in reads[u] for n in assigned.get(name, ()) if n < u]:
            if n not in queued:
                queued.add(n)
                heapq.heappush(pending, n)
    kept = tuple(s for s in statements if s is not None)
    if len(kept) == len(program.statements):
        return program
    return ir.Program(program.decls, kept)


def _reads_and_size(body: ir.Expr) -> tuple[tuple[str, ...], int]:
    """A statement's ``reads`` and its body's ``ir.size`` in one walk."""
    reads: dict[str, None] = {}
    count = 0
    for node in ir.nodes(body):
        count += 1
        if isinstance(node, ir.Tensor):
            reads.setdefault(node.name)
    return tuple(reads), count


def _assigned_between(positions, d: int, u: int) -> bool:
    """Whether a statement strictly between ``d`` and ``u`` assigns the variable
    (``positions``: where it is assigned, ascending)."""
    n = bisect.bisect_right(positions, d)
    return n < len(positions) and positions[n] < u


def fuse_into(definition: ir.Statement, use: ir.Statement, tally: Tally | None = None) -> ir.Statement | None:
    """``use`` with ``definition``'s target replaced by its body, or None when fusing
    would add work, would put a contraction under anything but products, negations and
    sums (:func:`contracts`), or fusion is switched off."""
    tally = active() if tally is None else tally
    if not tally.enabled(FUSION):
        return None
    t = definition.target
    size = math.prod(n for _, n in definition.index)
    occurrences = list(_occurrences(use.body, t, dict(use.index), True))
    cheap = isinstance(definition.body, (ir.Tensor, ir.Const))
    multilinear_def: bool | None = None  # computed when needed (monomial is not cheap)
    for scope, linear in occurrences:
        if cheap:
            continue
        if len(occurrences) > 1:
            return None
        if not linear and contracts(definition.body):
            return None  # a product kernel's statement would become an elementwise loop's
        if math.prod(scope.values()) <= size:
            continue
        if not linear:
            return None
        if multilinear_def is None:
            multilinear_def = is_multilinear(definition.body)
        if not multilinear_def:
            return None
    at_use = all_names(use.body) | {name for name, _ in use.index}  # (one walk of the use, not two)
    params = [name for name, _ in definition.index]
    fresh = _LazyFresh(at_use | set(params), definition.body)
    # the definition's own binders must not shadow a name bound or free at the use
    # (index notation has no shadowing: `sum(j) ... sum(j)` nested is repeated-index):
    # a binder whose name is in sight is renamed to a fresh one.  The renaming and the
    # substitution of the access's indices for the parameters are one walk of the
    # definition (a renamed binder never captures an index of the use, so renaming
    # first and substituting after gives the same expression, and the same fresh names).
    seen = at_use | set(params)

    def bind(name: str, outer) -> str:
        new = fresh(name) if name in seen else name
        seen.add(new)
        return new

    context = Context(fresh, dict(use.index), tally, (t, params, definition.body, bind))
    return ir.Statement(use.target, use.index, rewrite(use.body, RULES, context))


class _LazyFresh(Fresh):
    """A :class:`Fresh` avoiding ``taken`` and every name of ``body``, whose names are
    only collected when a first fresh name is asked for (a walk of the definition that
    most fusions, which rename no binder, never need)."""

    def __init__(self, taken: set[str], body: ir.Expr):
        super().__init__(taken)
        self._body: ir.Expr | None = body

    def take(self, candidates) -> str:
        if self._body is not None:
            self.taken |= all_names(self._body)
            self._body = None
        return super().take(candidates)


def _occurrences(e: ir.Expr, name: str, scope: dict[str, int], linear: bool):
    """(scope, multilinear context) for every access of ``name`` in ``e``: the index
    variables in scope there with their extents, and whether the path from the root only
    goes through products, negations and sums."""
    if isinstance(e, ir.Tensor):
        if e.name == name:
            yield dict(scope), linear
        return
    bound = ir.binders(e)
    if bound:
        scope = scope | dict(bound)
    keeps = isinstance(e, (ir.Neg, ir.Sum)) or (isinstance(e, ir.BinOp) and e.op == "*")
    for child in ir.children(e):
        yield from _occurrences(child, name, scope, linear and keeps)


def is_multilinear(e: ir.Expr) -> bool:
    """A (scaled) sum of a product of tensor accesses and numbers, Σ anywhere in the
    product: what normalization flattens and contraction ordering then reorders."""
    return all(isinstance(f, (ir.Tensor, ir.Const)) for f in monomial(e).factors)


def contracts(e: ir.Expr) -> bool:
    """Whether ``e`` holds a contraction: a sum over a product of two or more tensor
    accesses (what BLAS and the targets' product kernels compute)."""
    return any(isinstance(node, ir.Sum) and sum(isinstance(f, ir.Tensor) for f in monomial(node).factors) >= 2
               for node in ir.nodes(e))
