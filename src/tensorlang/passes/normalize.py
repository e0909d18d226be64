"""Normalization (004 §5.3-5.4): the algebraic rewrites, applied bottom-up to each body.

Every rewrite is a named rule (ein/rewrite.py), listed in :data:`RULES`, counted by
``tensorlang analyze`` and switched off by ``--skip NAME``: the local rules of
:data:`LOCAL`, which the rewrite driver tries on each node after its children, and the
steps of the polynomial normal form of a sum (:func:`normalize_sum`, a function: it
decides over a whole sum of products at once).  docs/optimizer.md lists the rules and
the decisions behind them: every identity is exact in IEEE arithmetic (±0, ±inf, NaN);
Σ is distributed over ± only where δ or ε then select; δ and ε are selectors, so a term
they make zero is dropped, never evaluated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..analysis.cost import body_flops
from ..ein import ir
from ..ein.forms import product
from ..ein.index import index_variables
from ..ein.names import Fresh, all_names, distinct_binders, free_indices, substitute
from ..ein.rewrite import Context, Rule, Tally, active, apply_first, rewrite
from ..semantics.values import FUNCTIONS, epsilon_sign, fold, power

#: A product is distributed over a sum only while the expansion has at most this many terms.
MAX_TERMS = 64

#: The most copies of its body a product over an unused index becomes (EIN has no power).
MAX_POWER_NODES = 4096


def normalize(program: ir.Program) -> ir.Program:
    tally = active()
    return ir.Program(program.decls, tuple(normalize_statement(s, tally) for s in program.statements))


def normalize_statement(stmt: ir.Statement, tally=None) -> ir.Statement:
    fresh = Fresh(all_names(stmt.body) | {name for name, _ in stmt.index})
    body = distinct_binders(stmt.body, {name for name, _ in stmt.index}, fresh)  # nested sums may then merge
    context = Context(fresh, dict(stmt.index), active() if tally is None else tally)
    return ir.Statement(stmt.target, stmt.index, rewrite(body, LOCAL, context))


# ------------------------------------------------------------------ local rules
def _is(e: ir.Expr, value: float) -> bool:
    """``e`` is the number ``value``, the sign of a zero included (ir.Const's equality)."""
    return e == ir.Const(value)


def _numbers(e: ir.BinOp) -> bool:
    """Both operands are numbers: constant folding's case (which leaves a non-finite
    result as written), never an identity's."""
    return isinstance(e.left, ir.Const) and isinstance(e.right, ir.Const)


def _constant_folding(e, ctx):
    if isinstance(e, ir.Neg):
        return ir.Const(-e.arg.value) if isinstance(e.arg, ir.Const) else None
    if _numbers(e):
        value = fold(e.op, e.left.value, e.right.value)
        return ir.Const(value) if math.isfinite(value) else None
    return None


def _function_folding(e, ctx):
    if isinstance(e.arg, ir.Const):
        value = float(FUNCTIONS[e.fn](e.arg.value))
        return ir.Const(value) if math.isfinite(value) else None
    return None


def _identity(*patterns: tuple[str, str, float, bool]):
    """A rule function from ``(operators, side, number, negate)`` patterns: ``x op n``
    (or ``n op x``) with the number on that side is ``x`` (``-x`` when ``negate``)."""

    def fn(e: ir.BinOp, ctx) -> ir.Expr | None:
        if _numbers(e):
            return None
        for ops, side, number, negate in patterns:
            if e.op in ops and _is(getattr(e, side), number):
                other = e.right if side == "left" else e.left
                return ir.Neg(other) if negate else other
        return None

    return fn


# Only identities exact on every double (±0, ±inf, NaN): x + 0 is +0 for x = -0, and
# 0 - x is +0 for x = +0, so the zero that vanishes is -0 in those places; x / ±1 is
# controlled division (±0 / ±1 is +0), so it stays.
_multiplicative_identity = _identity(("*", "left", 1.0, False), ("*", "right", 1.0, False))
_multiply_by_minus_one = _identity(("*", "left", -1.0, True), ("*", "right", -1.0, True))
_additive_identity = _identity(("+", "left", -0.0, False), ("+", "right", -0.0, False), ("-", "right", 0.0, False),
                               ("-", "left", -0.0, True))


def _double_negation(e, ctx):
    return e.arg.arg if isinstance(e.arg, ir.Neg) else None


def _delta_identical(e, ctx):
    return ir.Const(1.0) if e.first == e.second else None


def _delta_positions(e, ctx):
    return ir.Const(0.0) if isinstance(e.first, int) and isinstance(e.second, int) and e.first != e.second else None


def _epsilon_repeated(e, ctx):
    return ir.Const(0.0) if len(set(e.indices)) < len(e.indices) else None


def _epsilon_positions(e, ctx):
    if all(isinstance(i, int) for i in e.indices) and len(set(e.indices)) == len(e.indices):
        return ir.Const(float(epsilon_sign(e.indices)))
    return None


def _unused_reduction_indices(e: ir.Reduce, ctx) -> ir.Expr | None:
    """A reduction over indices its body does not depend on (left behind when δ or ε
    became numbers): max and min of n equal values are the value, a product is the
    n-th power (001 eq. (5)'s analogues, as TeIL's lowering does them)."""
    used = free_indices(e.body)
    unused = [(name, n) for name, n in e.index if name not in used]
    if not unused:
        return None
    count = math.prod(n for _, n in unused)
    body = e.body
    if e.op == "*":
        if isinstance(body, ir.Const):
            body = ir.Const(power(body.value, count))  # IEEE: an overflow is inf
        elif count * ir.size(body) <= MAX_POWER_NODES:
            body = product([body] * count)
        else:
            return None
    kept = tuple(item for item in e.index if item not in unused)
    return ir.Reduce(e.op, kept, body) if kept else body


CONSTANT_FOLDING = Rule("constant-folding", "004 §5.4", "numbers combine: 2 * 3 is 6, -(2) is -2",
                        (ir.BinOp, ir.Neg), _constant_folding)
FUNCTION_FOLDING = Rule("function-folding", "004 §5.4", "a function of a number is a number: exp(0) is 1",
                        (ir.Apply,), _function_folding)
MULTIPLICATIVE_IDENTITY = Rule("multiplicative-identity", "004 §5.4", "x * 1, 1 * x are x",
                               (ir.BinOp,), _multiplicative_identity)
MULTIPLY_BY_MINUS_ONE = Rule("multiply-by-minus-one", "004 §5.4", "x * -1, -1 * x are -x",
                             (ir.BinOp,), _multiply_by_minus_one)
ADDITIVE_IDENTITY = Rule("additive-identity", "004 §5.4", "x + -0, -0 + x, x - 0 are x; -0 - x is -x",
                         (ir.BinOp,), _additive_identity)
DOUBLE_NEGATION = Rule("double-negation", "004 §5.4", "--x is x", (ir.Neg,), _double_negation)
DELTA_IDENTICAL = Rule("delta-identical-indices", "004 §4", "delta[i,i] is 1", (ir.Delta,), _delta_identical)
DELTA_POSITIONS = Rule("delta-of-positions", "004 §4", "delta of two different positions is 0",
                       (ir.Delta,), _delta_positions)
EPSILON_REPEATED = Rule("epsilon-repeated-index", "004 §4", "an ε with a repeated index is 0",
                        (ir.Epsilon,), _epsilon_repeated)
EPSILON_POSITIONS = Rule("epsilon-of-positions", "004 §4", "an ε of positions is its permutation's sign",
                         (ir.Epsilon,), _epsilon_positions)
UNUSED_REDUCTION_INDEX = Rule("unused-reduction-index", "001 eq. (5)",
                              "max/min over an index the body ignores is the body, prod a power",
                              (ir.Reduce,), _unused_reduction_indices)

# the steps of the polynomial normal form (applied by normalize_sum itself)
DISTRIBUTION = Rule("distribution", "004 §5.3", "Σ over + and −; a product over a sum where δ or ε take part")
DELTA_ELIMINATION = Rule("delta-elimination", "004 §5.4", "Σ_j δ_ij T_j is T_i")
EPSILON_EPSILON = Rule("epsilon-epsilon", "004 §5.4", "Σ_i ε_ijk ε_ilm is δ_jl δ_km − δ_jm δ_kl")
UNUSED_SUMMATION_INDEX = Rule("unused-summation-index", "001 eq. (5)",
                              "a sum over an index nothing depends on is n times its body")
SUMMATION_BINDING = Rule("summation-binding", "004 §5.7.3", "a factor free of the summed indices leaves the sum")
SPLIT_INDEPENDENT_FACTORS = Rule("split-independent-factors", "004 §5.7.3",
                                 "factors sharing no summed index: a product of sums")
PRIVATE_SUMMATION_INDEX = Rule("private-summation-index", "004 §5.7.3",
                               "a summed index only one factor of a product reads is summed over that factor")


# ------------------------------------------------------------------ sums of products
@dataclass(frozen=True)
class Term:
    """coeff · Σ_sums Π factors; ``selected_away``: δ or ε made the term zero."""

    coeff: float
    sums: tuple[tuple[str, int], ...]
    factors: tuple[ir.Expr, ...]
    selected_away: bool = False


def normalize_sum(e: ir.Sum, ctx: Context) -> ir.Expr | None:
    """The sum as a polynomial of split monomials, or None when that changes nothing.
    Where that distributed Σ over a + or −, it is kept only if it costs no more flops
    than the sum as it is (distributing alone adds an addition per point; it pays when a
    rule then removes work: δ/ε, binding, splitting).  Merging nested sums into one
    product is always kept: contraction ordering then chooses the order the nesting had
    fixed.  The rules' counts are kept only with the rewrite."""
    trial = replace(ctx, tally=ctx.tally.trial())
    terms = expand(e, trial)
    out: list[Term] = []
    for term in terms:
        out.extend(simplify_term(term, trial))
    if len(terms) > 1 and not (any(m.selected_away for m in out)
                               or any(trial.tally.counts[rule.name] for rule in SELECTION)):
        # Σ(a ± b) = Σa ± Σb loses digits on cancelling data: only δ and ε selecting
        # make it pay exactly; otherwise the sum keeps its ± (docs/optimizer.md).
        trial = replace(ctx, tally=Tally(ctx.tally.off | {DISTRIBUTION.name}))
        terms = expand(e, trial)
        out = []
        for term in terms:
            out.extend(simplify_term(term, trial))
    rewritten = rebuild_polynomial(out, trial)
    # a zero taken out of a sum (Σ_k x_k·0 as 0·Σ_k x_k) is -0 where Σ_k x_k < 0: ``+ 0`` too
    zero_scaled = any(m.coeff == 0.0 and not m.selected_away and (m.factors or m.sums) for m in out)
    if not _never_minus_zero(rewritten) and (zero_scaled or not any(isinstance(n, ir.Sum) for n in ir.nodes(rewritten))):
        rewritten = ir.BinOp("+", rewritten, ir.Const(0.0))
    if len(terms) > 1:
        trial.fire(DISTRIBUTION)
    if rewritten == e or not (len(terms) == 1 or body_flops(rewritten) <= body_flops(e)):
        return None
    ctx.tally.merge(trial.tally)
    return rewritten


def _never_minus_zero(e: ir.Expr) -> bool:
    """Whether ``e`` is never -0, as a sum never is (it starts from +0).  Where the
    normal form removed every sum, ``+ 0`` keeps the sum's +0 unless this holds
    (``1/(sum(j:1) -x[i])`` is +inf at x = 0; docs/optimizer.md names the gap left)."""
    if isinstance(e, ir.Sum):
        return True
    if isinstance(e, ir.Const):
        return not (e.value == 0.0 and math.copysign(1.0, e.value) < 0)
    if isinstance(e, ir.BinOp) and e.op == "+":
        return _never_minus_zero(e.left) or _never_minus_zero(e.right)
    if isinstance(e, ir.BinOp) and e.op == "-":  # a - b is -0 only for a = -0 and b = +0
        return _never_minus_zero(e.left)
    return False


#: The rules that make distributing a sum over ± pay without losing accuracy: δ and ε
#: select terms exactly.
SELECTION = (DELTA_ELIMINATION, EPSILON_EPSILON, DELTA_IDENTICAL, DELTA_POSITIONS, EPSILON_REPEATED, EPSILON_POSITIONS)

SUM_NORMAL_FORM = Rule("sum-normal-form", "004 §5.3",
                       "a sum as a polynomial of split monomials, unless that costs flops", (ir.Sum,), normalize_sum)


def expand(e: ir.Expr, ctx: Context) -> list[Term]:
    """``e`` as a list of terms: sums distributed over + and −, nested sums merged,
    products distributed over sums when δ or ε take part."""
    if isinstance(e, ir.Const):
        return [Term(e.value, (), ())]
    if isinstance(e, ir.Neg):
        return [Term(-m.coeff, m.sums, m.factors) for m in expand(e.arg, ctx)]
    if isinstance(e, ir.Sum):
        return [Term(m.coeff, e.index + m.sums, m.factors) for m in expand(e.body, ctx)]
    if isinstance(e, ir.BinOp) and e.op in "+-" and ctx.enabled(DISTRIBUTION):
        right = expand(e.right, ctx)
        if e.op == "-":
            right = [Term(-m.coeff, m.sums, m.factors) for m in right]
        return expand(e.left, ctx) + right
    if isinstance(e, ir.BinOp) and e.op == "*":
        left, right = expand(e.left, ctx), expand(e.right, ctx)
        if any(not _exact_product(a.coeff, b.coeff) for a in left for b in right):
            return [Term(1.0, (), (e,))]  # (c1 x) c2 is not (c1 c2) x: 1e300 x 1e-300 overflows
        distribute = ctx.enabled(DISTRIBUTION) and _selects(e) and len(left) * len(right) <= MAX_TERMS
        if len(left) > 1 and not distribute:
            left = [Term(1.0, (), (e.left,))]
        if len(right) > 1 and not distribute:
            right = [Term(1.0, (), (e.right,))]
        return [Term(a.coeff * b.coeff, a.sums + b.sums, a.factors + b.factors) for a in left for b in right]
    return [Term(1.0, (), (e,))]


def _exact_product(a: float, b: float) -> bool:
    """Whether two coefficients may be multiplied ahead of the factors between them:
    when one of them is ±1 (a sign commutes with rounding), never otherwise."""
    return abs(a) == 1.0 or abs(b) == 1.0


def _selects(e: ir.Expr) -> bool:
    """Whether δ or ε occur in ``e`` outside any function, division or reduction."""
    if isinstance(e, (ir.Delta, ir.Epsilon)):
        return True
    if isinstance(e, ir.Neg):
        return _selects(e.arg)
    if isinstance(e, ir.Sum):
        return _selects(e.body)
    if isinstance(e, ir.BinOp) and e.op in "+-*":
        return _selects(e.left) or _selects(e.right)
    return False


def _selected(e: ir.Delta | ir.Epsilon, ctx: Context) -> ir.Const | None:
    """The number a δ or ε on its own is, by the first enabled rule that knows (counted)."""
    rules = (DELTA_IDENTICAL, DELTA_POSITIONS) if isinstance(e, ir.Delta) else (EPSILON_REPEATED, EPSILON_POSITIONS)
    number = apply_first(e, rules, ctx)
    return number if isinstance(number, ir.Const) else None  # these rules give numbers


def simplify_term(m: Term, ctx: Context) -> list[Term]:
    """δ elimination, ε·ε, δ and ε that are numbers, sums nothing depends on.
    ``ctx.scope``: the extents of the free index variables."""
    coeff, sums, factors = m.coeff, list(m.sums), list(m.factors)
    zero = [Term(0.0, (), (), True)]
    progress = True
    while progress:
        progress = False
        summed = {name for name, _ in sums}
        for n, f in enumerate(factors):
            if isinstance(f, (ir.Delta, ir.Epsilon)):
                known = _selected(f, ctx)
                if known is not None:
                    if known.value == 0.0:
                        return zero
                    coeff *= known.value
                    del factors[n]
                    progress = True
                    break
            if isinstance(f, ir.Delta) and ctx.enabled(DELTA_ELIMINATION):
                pair = _eliminable(f, dict(sums), ctx.scope)
                if pair == "zero":  # δ_k,5 with k < 5 everywhere
                    ctx.fire(DELTA_ELIMINATION)
                    return zero
                if pair is not None:  # Kronecker-delta elimination
                    k, x = pair
                    del factors[n]
                    sums = [(name, extent) for name, extent in sums if name != k]
                    factors = [substitute(g, {k: x}, ctx.fresh) for g in factors]
                    ctx.fire(DELTA_ELIMINATION)
                    progress = True
                    break
            elif isinstance(f, ir.Const):
                coeff *= f.value
                del factors[n]
                progress = True
                break
        if progress:
            continue
        contracted = _epsilon_pair(factors, summed) if ctx.enabled(EPSILON_EPSILON) else None
        if contracted is not None:  # ε·ε -> deltas, each term simplified again
            ctx.fire(EPSILON_EPSILON)
            k, rest, terms = contracted
            sums = [(name, extent) for name, extent in sums if name != k]
            out = []
            for sign, deltas in terms:
                out.extend(simplify_term(Term(coeff * sign, tuple(sums), tuple(rest) + deltas), ctx))
            return out
    if ctx.enabled(UNUSED_SUMMATION_INDEX):
        used = set().union(*(free_indices(f) for f in factors)) if factors else set()
        for name, extent in list(sums):  # a sum over an index nothing depends on: n times
            if name not in used:
                coeff *= extent
                sums.remove((name, extent))
                ctx.fire(UNUSED_SUMMATION_INDEX)
    return [Term(coeff, tuple(sums), tuple(factors))]


def _eliminable(d: ir.Delta, summed: dict[str, int], scope: dict[str, int]):
    """(summed index k, what replaces it) for a δ_kx with k summed, "zero" when δ_kx is 0
    over all of k's range, or None.

    Σ_k δ_kx T_k is T_x when x ranges over exactly k's range: then every dimension k
    indexed x indexes as well (index notation's typing: an index has one extent).  With
    different extents δ also restricts x, and it stays.  A position beyond k's range
    makes the term zero.  δ_kk is no elimination (it is 1: ``delta-identical-indices``)."""
    for k, x in ((d.second, d.first), (d.first, d.second)):
        if not (isinstance(k, str) and k in summed) or x == k:
            continue
        if isinstance(x, int):
            return (k, x) if x <= summed[k] else "zero"
        if not isinstance(x, str):  # an affine index: its reach is not one extent
            continue
        reach = summed.get(x, scope.get(x))
        if reach is not None and reach == summed[k]:
            return k, x
    return None


def _epsilon_pair(factors: list[ir.Expr], summed: set[str]):
    """Two ε sharing a summed index that nothing else uses: (index, other factors,
    [(sign, deltas)]) for Σ_k ε_k.. ε_k.. = δδ − δδ (rank 3) or δ (rank 2)."""
    eps = [(n, f) for n, f in enumerate(factors) if isinstance(f, ir.Epsilon)]
    for a in range(len(eps)):
        for b in range(a + 1, len(eps)):
            (na, ea), (nb, eb) = eps[a], eps[b]
            if len(ea.indices) != len(eb.indices):
                continue
            shared = [k for k in ea.indices if isinstance(k, str) and k in summed and k in eb.indices
                      and all(i == k or k not in index_variables(i) for i in ea.indices + eb.indices)]
            for k in shared:
                others = [f for n, f in enumerate(factors) if n not in (na, nb)]
                if any(k in free_indices(f) for f in others):
                    continue
                sa, ra = _rotate(ea.indices, k)
                sb, rb = _rotate(eb.indices, k)
                sign = sa * sb
                terms: list[tuple[int, tuple[ir.Delta, ...]]]
                if len(ra) == 1:
                    terms = [(sign, (ir.Delta(ra[0], rb[0]),))]
                else:
                    (a1, a2), (c1, c2) = ra, rb
                    terms = [(sign, (ir.Delta(a1, c1), ir.Delta(a2, c2))),
                             (-sign, (ir.Delta(a1, c2), ir.Delta(a2, c1)))]
                return k, others, terms
    return None


def _rotate(indices: tuple, k: str) -> tuple[int, tuple]:
    """ε_(indices) = sign · ε_(k, rest...): cyclic rotation for rank 3 (even), a swap for rank 2."""
    p = indices.index(k)
    if len(indices) == 3:
        return 1, tuple(indices[(p + s) % 3] for s in (1, 2))
    return (1 if p == 0 else -1), (indices[1 - p],)


def rebuild_polynomial(terms: list[Term], ctx: Context) -> ir.Expr:
    """Σ of terms as an expression: each split into independent factors."""
    kept = [m for m in terms if not m.selected_away and (m.factors or m.sums)]
    numbers = [m.coeff for m in terms if not m.selected_away and not m.factors and not m.sums]
    if numbers:  # constant folding across the terms
        kept.append(Term(sum(numbers), (), ()))
    if not kept:
        return ir.Const(0.0)
    result = None
    for m in kept:
        magnitude = abs(m.coeff) if result is not None else m.coeff
        product_ = _split_product(m.sums, m.factors, ctx)
        if product_ is None:
            term: ir.Expr = ir.Const(magnitude)
        elif magnitude == 1.0:
            term = product_
        elif magnitude == -1.0:
            term = ir.Neg(product_)
        else:
            term = ir.BinOp("*", ir.Const(magnitude), product_)
        if result is None:
            result = term
        else:
            result = ir.BinOp("-" if m.coeff < 0 else "+", result, term)
    assert result is not None  # kept is not empty
    return result


def _split_product(sums, factors, ctx: Context) -> ir.Expr | None:
    """Π factors under Σ_sums, as a product of independent sums (factors that share a
    summed index stay in one sum; factors with none are bound outside every sum).  With
    ``split-independent-factors`` off, every factor with a summed index is in one sum;
    with ``summation-binding`` off, the factors with none are in it too; a summed index
    no factor uses (``unused-summation-index`` off) stays on that sum."""
    summed = {name for name, _ in sums}
    if not factors:
        return ir.Sum(tuple(sums), ir.Const(1.0)) if sums else None
    parent = list(range(len(factors)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[str, int] = {}
    for n, f in enumerate(factors):
        for name in free_indices(f) & summed:
            if name in owner:
                parent[find(n)] = find(owner[name])
            else:
                owner[name] = n
    summing = [n for n in range(len(factors)) if free_indices(factors[n]) & summed]
    if summing and not ctx.enabled(SPLIT_INDEPENDENT_FACTORS):
        for n in summing:
            parent[find(n)] = find(summing[0])
    bare = [n for n in range(len(factors)) if n not in summing]
    if summing and bare and not ctx.enabled(SUMMATION_BINDING):
        for n in bare:
            parent[find(n)] = find(summing[0])
    unused = [(name, extent) for name, extent in sums if name not in owner]
    groups: dict[int, list[int]] = {}
    for n in range(len(factors)):
        groups.setdefault(find(n), []).append(n)
    private = _private_indices(sums, factors, groups, ctx)
    taken = {name for p in private.values() for name, _ in p}
    parts = []
    for members in groups.values():
        body = product([ir.Sum(private[n], factors[n]) if private.get(n) else factors[n] for n in members])
        root = find(members[0])
        index = tuple((name, extent) for name, extent in sums
                      if name in owner and name not in taken and find(owner[name]) == root)
        if unused and summing and root == find(summing[0]):
            index, unused = index + tuple(unused), []
        parts.append(ir.Sum(index, body) if index else body)
    sums_made = sum(isinstance(p, ir.Sum) for p in parts)
    if sums_made > 1:
        ctx.fire(SPLIT_INDEPENDENT_FACTORS)
    if sums_made and len(parts) > sums_made:
        ctx.fire(SUMMATION_BINDING)
    # bare factors first, then sums: a sum may only end a product in index notation
    parts.sort(key=lambda p: isinstance(p, ir.Sum))
    result = product(parts)
    return ir.Sum(tuple(unused), result) if unused else result


def _private_indices(sums, factors, groups, ctx: Context) -> dict[int, tuple[tuple[str, int], ...]]:
    """Factor -> the summed indices it alone reads, in a product of two factors that share a summed
    index: Σ_ka x_aak y_k is Σ_k (Σ_a x_aak) y_k, fewer flops, and an infinite y_k meets the sum the
    source wrote, not each of its terms (docs/optimizer.md, "Reassociation").  Among three or more
    factors contraction ordering decides (``order``: a private index inside a step of its path)."""
    private = {}
    summed = {name for name, _ in sums}
    for members in groups.values() if ctx.enabled(PRIVATE_SUMMATION_INDEX) else ():
        reads = [free_indices(factors[n]) & summed for n in members]
        if len(members) == 2 and reads[0] & reads[1]:
            for n, mine, theirs in ((members[0], *reads), (members[1], *reads[::-1])):
                private[n] = tuple((name, extent) for name, extent in sums if name in mine - theirs)
    if any(private.values()):
        ctx.fire(PRIVATE_SUMMATION_INDEX)
    return private


#: The rules the rewrite driver applies, in the order it tries them on a node.
LOCAL = (CONSTANT_FOLDING, FUNCTION_FOLDING, MULTIPLICATIVE_IDENTITY, MULTIPLY_BY_MINUS_ONE, ADDITIVE_IDENTITY,
         DOUBLE_NEGATION, DELTA_IDENTICAL, DELTA_POSITIONS, EPSILON_REPEATED, EPSILON_POSITIONS,
         UNUSED_REDUCTION_INDEX, SUM_NORMAL_FORM)

#: Every rule of normalization: the local ones, then the steps of the normal form.
RULES = LOCAL + (DISTRIBUTION, DELTA_ELIMINATION, EPSILON_EPSILON, UNUSED_SUMMATION_INDEX, SUMMATION_BINDING,
                 SPLIT_INDEPENDENT_FACTORS, PRIVATE_SUMMATION_INDEX)
