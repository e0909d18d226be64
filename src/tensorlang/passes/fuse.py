"""Fusion (004 §5.2): substitute a single-use temporary into the statement that uses it.

``t[i,j] = e`` followed by ``y[...] = ... t[a,b] ...`` becomes ``y[...] = ... e[i:=a, j:=b] ...``
and the statement for ``t`` disappears.  Fusing exposes the algebra across statements
(the cross-product identities of 004 only appear once both cross products sit in one
expression) and lets contraction ordering see a whole chain of contractions at once.

A temporary is fused when
* it is assigned once and read by exactly one later statement (a result, or a variable
  assigned twice, keeps its statement);
* nothing its body reads is reassigned in between (the use must see the same values);
* fusing adds no work: either every evaluation of the use is at a distinct point of the
  temporary (the use's loop nest is no larger than the temporary), or both the
  temporary and its use are multilinear (a sum of a product of tensors, inside a
  product under sums) so that normalization flattens them into one product whose
  evaluation order contraction ordering chooses afresh, or the temporary is as cheap to
  recompute as to read (a tensor access, a number).

The substitution itself is the rule ``fusion`` (ein/rewrite.py): counted per access it
replaces, and ``--skip fusion`` turns fusion off as ``--skip fuse`` does.
"""

from __future__ import annotations

import math

from ..ein import ir
from ..ein.forms import monomial
from ..ein.names import Fresh, all_names, rename_bound, substitute
from ..ein.rewrite import Context, Rule, Tally, active, rewrite
from .program import assignments, readers, temporaries


def _substitute_definition(e: ir.Tensor, ctx: Context) -> ir.Expr | None:
    """An access to the temporary being fused: its body at the access's indices."""
    target, params, body = ctx.env
    if e.name != target:
        return None
    return substitute(body, dict(zip(params, e.indices)), ctx.fresh)


FUSION = Rule("fusion", "004 §5.2", "a single-use temporary's access becomes its body",
              (ir.Tensor,), _substitute_definition)

#: The rules of fusion.
RULES = (FUSION,)


def fuse(program: ir.Program) -> ir.Program:
    tally = active()
    if not tally.enabled(FUSION):
        return program
    changed = True
    while changed:
        changed = False
        temps = temporaries(program)
        assigned = assignments(program)
        read_by = readers(program)
        for d, stmt in enumerate(program.statements):
            t = stmt.target
            if t not in temps or len(assigned[t]) != 1 or t in stmt.reads:
                continue
            users = read_by.get(t, [])
            if len(users) != 1 or users[0] <= d:
                continue
            u = users[0]
            between = {program.statements[n].target for n in range(d + 1, u)}
            if between & set(stmt.reads):
                continue
            fused = fuse_into(stmt, program.statements[u], tally)
            if fused is None:
                continue
            statements = list(program.statements)
            statements[u] = fused
            del statements[d]
            program = ir.Program(program.decls, tuple(statements))
            changed = True
            break
    return program


def fuse_into(definition: ir.Statement, use: ir.Statement, tally: Tally | None = None) -> ir.Statement | None:
    """``use`` with ``definition``'s target replaced by its body, or None when fusing
    would add work (or fusion is switched off)."""
    tally = active() if tally is None else tally
    if not tally.enabled(FUSION):
        return None
    t = definition.target
    size = math.prod(n for _, n in definition.index)
    occurrences = list(_occurrences(use.body, t, dict(use.index), True))
    cheap = isinstance(definition.body, (ir.Tensor, ir.Const))
    multilinear_def = is_multilinear(definition.body)
    for scope, linear in occurrences:
        if cheap:
            continue
        if len(occurrences) > 1:
            return None
        if math.prod(scope.values()) <= size:
            continue
        if not (multilinear_def and linear):
            return None
    taken = all_names(use.body) | {name for name, _ in use.index} | all_names(definition.body)
    fresh = Fresh(taken | {name for name, _ in definition.index})
    params = [name for name, _ in definition.index]
    # the definition's own binders must not shadow a name bound or free at the use
    # (index notation has no shadowing: `sum(j) ... sum(j)` nested is repeated-index)
    around = all_names(use.body) | {name for name, _ in use.index} | set(params)
    body = rename_bound(definition.body, fresh, around)
    context = Context(fresh, dict(use.index), tally, (t, params, body))
    return ir.Statement(use.target, use.index, rewrite(use.body, RULES, context))


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
