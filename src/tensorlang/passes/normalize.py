"""Normalization (004 §5.3-5.4): the algebraic rewrites, applied bottom-up to each body.

Rules, by the names 004 gives them:

* **Constant folding**: numbers combine (``2 * 3`` is ``6``; ``/`` is controlled division),
  ``x * 1``, ``x + 0``, ``x - 0``, ``x / 1`` are ``x``, ``--x`` is ``x``.  ``x * 0`` is *not*
  ``0``: for ``x`` undefined it is ⊥ (000 Definition 4).
* **δ and ε on their own**: ``delta[i,i]`` is 1, ``delta[1,2]`` is 0, an ε with a repeated
  index is 0, an ε of positions is its sign.
* **Kronecker-delta elimination**: Σ_j δ_ij T_j  ->  T_i (the summed index is replaced).
* **ε·ε**: two Levi-Civita symbols sharing a summed index become deltas,
  Σ_k ε_kab ε_kcd = δ_ac δ_bd − δ_ad δ_bc  (and Σ_k ε_ka ε_kc = δ_ac for rank 2).
* **Distributing sums over + and −**: Σ (a ± b) = Σ a ± Σ b; a product is distributed over
  a sum only when δ or ε take part (so that elimination follows: distributing
  Σ_k (A+B)_ik C_kj would double the work instead).
* **Summation binding**: a factor that does not depend on a summed index leaves the sum
  (Σ_k c a_k = c Σ_k a_k); a sum over an index nothing depends on is n times its body
  (TeIL's red+ over an expanded dimension, 001 eq. (5)).
* **Splitting**: a sum of a product of factors that share no summed index is the product
  of their sums, Σ_jk a_j b_k = (Σ_j a_j)(Σ_k b_k).

So 004's identities come out by themselves: the trace of an outer product is a dot product
(δ elimination), and (a×b)·(c×d) is (a·c)(b·d) − (a·d)(b·c) (fusion, ε·ε, δ elimination,
splitting).

δ and ε are *selectors* here, not numbers: a term they make zero is dropped, never
evaluated.  The reference interpreter multiplies by 0 instead, so where such a term is ⊥
(NaN) or infinite the interpreter's component is ⊥ and the optimized one may be defined;
every component the interpreter defines, the optimized program computes the same
(docs/optimizer.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ein import ir
from ..semantics.values import FUNCTIONS, epsilon_sign, fold
from ..analysis.cost import body_flops
from ..ein.forms import product
from ..ein.names import Fresh, all_names, distinct_binders, free_indices, substitute

#: A product is distributed over a sum only while the expansion has at most this many terms.
MAX_TERMS = 64


def normalize(program: ir.Program) -> ir.Program:
    return ir.Program(program.decls, tuple(normalize_statement(s) for s in program.statements))


def normalize_statement(stmt: ir.Statement) -> ir.Statement:
    fresh = Fresh(all_names(stmt.body) | {name for name, _ in stmt.index})
    body = distinct_binders(stmt.body, {name for name, _ in stmt.index}, fresh)  # nested sums may then merge
    return ir.Statement(stmt.target, stmt.index, simplify(body, fresh, dict(stmt.index)))


def simplify(e: ir.Expr, fresh: Fresh, scope: dict[str, int]) -> ir.Expr:
    """``e`` with every rule applied, children first; ``scope`` gives the extent of every
    index variable in scope (δ elimination must respect them)."""
    if isinstance(e, ir.Delta):
        return _delta(e) or e
    if isinstance(e, ir.Epsilon):
        sign = _epsilon_sign(e)
        return e if sign is None else ir.Const(float(sign))
    if isinstance(e, (ir.Tensor, ir.Const)):
        return e
    inner = scope | dict(ir.binders(e))
    e = ir.map_children(e, lambda c: simplify(c, fresh, inner))
    if isinstance(e, ir.Sum):
        return normalize_sum(e, fresh, scope)
    if isinstance(e, ir.Reduce):
        return _unused_reduction_indices(e)
    if isinstance(e, ir.Neg):
        if isinstance(e.arg, ir.Const):
            return ir.Const(-e.arg.value)
        if isinstance(e.arg, ir.Neg):
            return e.arg.arg
        return e
    if isinstance(e, ir.BinOp):
        return _fold(e)
    if isinstance(e, ir.Apply) and isinstance(e.arg, ir.Const):
        value = float(FUNCTIONS[e.fn](e.arg.value))
        return ir.Const(value) if math.isfinite(value) else e
    return e


#: The most copies of its body a product over an unused index becomes (EIN has no power).
MAX_POWER_NODES = 4096


def _unused_reduction_indices(e: ir.Reduce) -> ir.Expr:
    """A reduction over indices its body does not depend on (left behind when δ or ε
    became numbers): max and min of n equal values are the value, a product is the
    n-th power (001 eq. (5)'s analogues, as TeIL's lowering does them)."""
    used = free_indices(e.body)
    unused = [(name, n) for name, n in e.index if name not in used]
    if not unused:
        return e
    count = math.prod(n for _, n in unused)
    body = e.body
    if e.op == "*":
        if isinstance(body, ir.Const):
            body = ir.Const(body.value ** count)
        elif count * ir.size(body) <= MAX_POWER_NODES:
            body = product([body] * count)
        else:
            return e
    kept = tuple(item for item in e.index if item not in unused)
    return ir.Reduce(e.op, kept, body) if kept else body


def _delta(e: ir.Delta) -> ir.Const | None:
    if e.first == e.second:
        return ir.Const(1.0)
    if isinstance(e.first, int) and isinstance(e.second, int):
        return ir.Const(0.0)
    return None


def _epsilon_sign(e: ir.Epsilon) -> int | None:
    """0 for a repeated index, the permutation's sign when every index is a position."""
    if len(set(e.indices)) < len(e.indices):
        return 0
    if all(isinstance(i, int) for i in e.indices):
        return int(epsilon_sign(e.indices))
    return None


def _fold(e: ir.BinOp) -> ir.Expr:
    left, right, op = e.left, e.right, e.op
    if isinstance(left, ir.Const) and isinstance(right, ir.Const):
        value = fold(op, left.value, right.value)
        return ir.Const(value) if math.isfinite(value) else e
    if op == "*" and _is(left, 1.0):
        return right
    if op in "*/" and _is(right, 1.0):
        return left
    if op == "*" and _is(left, -1.0):
        return ir.Neg(right)
    if op in "*/" and _is(right, -1.0):
        return ir.Neg(left)
    if op == "+" and _is(left, 0.0):
        return right
    if op in "+-" and _is(right, 0.0):
        return left
    if op == "-" and _is(left, 0.0):
        return ir.Neg(right)
    return e


def _is(e: ir.Expr, value: float) -> bool:
    return isinstance(e, ir.Const) and e.value == value


# ------------------------------------------------------------------ sums of products
@dataclass(frozen=True)
class Term:
    """coeff · Σ_sums Π factors; ``selected_away``: δ or ε made the term zero."""

    coeff: float
    sums: tuple[tuple[str, int], ...]
    factors: tuple[ir.Expr, ...]
    selected_away: bool = False


def normalize_sum(e: ir.Sum, fresh: Fresh, scope: dict[str, int]) -> ir.Expr:
    """The sum as a polynomial of split monomials.  Where that distributed Σ over a + or −,
    it is kept only if it costs no more flops than the sum as it is (distributing alone
    adds an addition per point; it pays when a rule then removes work: δ/ε, binding,
    splitting).  Merging nested sums into one product is always kept: contraction
    ordering then chooses the order the nesting had fixed."""
    terms = expand(e)
    out: list[Term] = []
    for term in terms:
        out.extend(simplify_monomial(term, fresh, scope))
    rewritten = rebuild_polynomial(out)
    return rewritten if len(terms) == 1 or body_flops(rewritten) <= body_flops(e) else e


def expand(e: ir.Expr) -> list[Term]:
    """``e`` as a list of monomials: sums distributed over + and −, nested sums merged,
    products distributed over sums when δ or ε take part."""
    if isinstance(e, ir.Const):
        return [Term(e.value, (), ())]
    if isinstance(e, ir.Neg):
        return [Term(-m.coeff, m.sums, m.factors) for m in expand(e.arg)]
    if isinstance(e, ir.Sum):
        return [Term(m.coeff, e.index + m.sums, m.factors) for m in expand(e.body)]
    if isinstance(e, ir.BinOp) and e.op in "+-":
        right = expand(e.right)
        if e.op == "-":
            right = [Term(-m.coeff, m.sums, m.factors) for m in right]
        return expand(e.left) + right
    if isinstance(e, ir.BinOp) and e.op == "*":
        left, right = expand(e.left), expand(e.right)
        if len(left) > 1 and not (_selects(e) and len(left) * len(right) <= MAX_TERMS):
            left = [Term(1.0, (), (e.left,))]
        if len(right) > 1 and not (_selects(e) and len(left) * len(right) <= MAX_TERMS):
            right = [Term(1.0, (), (e.right,))]
        return [Term(a.coeff * b.coeff, a.sums + b.sums, a.factors + b.factors) for a in left for b in right]
    return [Term(1.0, (), (e,))]


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


def simplify_monomial(m: Term, fresh: Fresh, scope: dict[str, int]) -> list[Term]:
    """δ elimination, ε·ε, zeros of δ and ε, sums nothing depends on.  ``scope``: the
    extents of the free index variables."""
    coeff, sums, factors = m.coeff, list(m.sums), list(m.factors)
    progress = True
    while progress:
        progress = False
        summed = {name for name, _ in sums}
        for n, f in enumerate(factors):
            if isinstance(f, ir.Delta):
                known = _delta(f)
                if known is not None:
                    if known.value == 0.0:
                        return [Term(0.0, (), (), True)]
                    del factors[n]
                    progress = True
                    break
                pair = _eliminable(f, dict(sums), scope)
                if pair == "zero":  # δ_k,5 with k < 5 everywhere
                    return [Term(0.0, (), (), True)]
                if pair is not None:  # Kronecker-delta elimination
                    k, x = pair
                    del factors[n]
                    sums = [(name, extent) for name, extent in sums if name != k]
                    factors = [substitute(g, {k: x}, fresh) for g in factors]
                    progress = True
                    break
            elif isinstance(f, ir.Epsilon):
                sign = _epsilon_sign(f)
                if sign == 0:
                    return [Term(0.0, (), (), True)]
                if sign is not None:
                    coeff *= sign
                    del factors[n]
                    progress = True
                    break
            elif isinstance(f, ir.Const):
                coeff *= f.value
                del factors[n]
                progress = True
                break
        if progress:
            continue
        contracted = _epsilon_pair(factors, summed)
        if contracted is not None:  # ε·ε -> deltas, each term simplified again
            k, rest, terms = contracted
            sums = [(name, extent) for name, extent in sums if name != k]
            out = []
            for sign, deltas in terms:
                out.extend(simplify_monomial(Term(coeff * sign, tuple(sums), tuple(rest) + deltas), fresh, scope))
            return out
    used = set().union(*(free_indices(f) for f in factors)) if factors else set()
    for name, extent in list(sums):  # a sum over an index nothing depends on: n times
        if name not in used:
            coeff *= extent
            sums.remove((name, extent))
    return [Term(coeff, tuple(sums), tuple(factors))]


def _eliminable(d: ir.Delta, summed: dict[str, int], scope: dict[str, int]):
    """(summed index k, what replaces it) for a δ_kx with k summed, "zero" when δ_kx is 0
    over all of k's range, or None.

    Σ_k δ_kx T_k is T_x when x ranges over exactly k's range: then every dimension k
    indexed x indexes as well (index notation's typing: an index has one extent).  With
    different extents δ also restricts x, and it stays.  A position beyond k's range
    makes the term zero."""
    for k, x in ((d.second, d.first), (d.first, d.second)):
        if not (isinstance(k, str) and k in summed):
            continue
        if isinstance(x, int):
            return (k, x) if x <= summed[k] else "zero"
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
            shared = [k for k in ea.indices if isinstance(k, str) and k in summed and k in eb.indices]
            for k in shared:
                others = [f for n, f in enumerate(factors) if n not in (na, nb)]
                if any(k in free_indices(f) for f in others):
                    continue
                sa, ra = _rotate(ea.indices, k)
                sb, rb = _rotate(eb.indices, k)
                sign = sa * sb
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


def rebuild_polynomial(terms: list[Term]) -> ir.Expr:
    """Σ of monomials as an expression: each split into independent factors."""
    kept = [m for m in terms if not m.selected_away and m.factors]
    numbers = [m.coeff for m in terms if not m.selected_away and not m.factors]
    if numbers:  # constant folding across the terms
        kept.append(Term(sum(numbers), (), ()))
    if not kept:
        return ir.Const(0.0)
    result = None
    for m in kept:
        magnitude = abs(m.coeff) if result is not None else m.coeff
        product = _splitproduct(m.sums, m.factors)
        if product is None:
            term: ir.Expr = ir.Const(magnitude)
        elif magnitude == 1.0:
            term = product
        elif magnitude == -1.0:
            term = ir.Neg(product)
        else:
            term = ir.BinOp("*", ir.Const(magnitude), product)
        if result is None:
            result = term
        else:
            result = ir.BinOp("-" if m.coeff < 0 else "+", result, term)
    return result


def _splitproduct(sums, factors) -> ir.Expr | None:
    """Π factors under Σ_sums, as a product of independent sums (factors that share a
    summed index stay in one sum; factors with none are bound outside every sum)."""
    if not factors:
        return None
    summed = {name for name, _ in sums}
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
    groups: dict[int, list[int]] = {}
    for n in range(len(factors)):
        groups.setdefault(find(n), []).append(n)
    parts = []
    for members in groups.values():
        body = product([factors[n] for n in members])
        index = tuple((name, extent) for name, extent in sums if owner.get(name) is not None
                      and find(owner[name]) == find(members[0]))
        parts.append(ir.Sum(index, body) if index else body)
    # bare factors first, then sums: a sum may only end a product in index notation
    parts.sort(key=lambda p: isinstance(p, ir.Sum))
    return product(parts)
