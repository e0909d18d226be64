"""Contraction ordering, lifting nested contractions (001 §5, 004 §5.7): the path, the
temporaries' layout, the order of three and sparse supports are docs/optimizer.md's
"Decisions" (and docs/structure.md, "Contraction order at the support")."""

from __future__ import annotations

import math

import opt_einsum

from ..ein import ir
from ..ein.index import as_terms, has_affine
from ..analysis.cost import SPARSE_GAIN, body_flops
from ..ein.forms import Monomial, monomial, product
from ..ein.names import TempNames, free_indices
from .program import lift_into_temporaries

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

#: Beyond this many operands the exhaustive 'optimal' search gives way to opt_einsum's
#: dynamic programming ('dp'), which is fast and still optimal for the flop count.
OPTIMAL_UP_TO = 6

#: Beyond this many operands 'dp' (about 3^n when all share an index: docs/optimizer.md,
#: "Every pass is bounded") gives way to 'greedy', polynomial and optimal on chains and rings.
DP_UP_TO = 10

#: The flops a product of three may add so its first step fuses with its last (docs/optimizer.md).
FUSED_SLACK = 1 / 64


def strategy(operands: int) -> str:
    """opt_einsum's path finder for a product of this many operands: each bounded in
    time (at most DP_UP_TO operands searched exhaustively)."""
    if operands <= OPTIMAL_UP_TO:
        return "optimal"
    return "dp" if operands <= DP_UP_TO else "greedy"


def order_contractions(program: ir.Program) -> ir.Program:
    sparse = sparse_densities(program)

    def rewrite(e: ir.Expr, scope: dict[str, int], names: TempNames, lifted: list[ir.Statement]) -> ir.Expr:
        return _order(e, scope, names, lifted, sparse)

    return lift_into_temporaries(program, rewrite)


def sparse_densities(program: ir.Program) -> dict[str, float]:
    """The tensors declared with a structure whose support (``analysis.structure``) has at most
    1/SPARSE_GAIN of their points, with that fraction, where the restricted loops visit just
    that support (:func:`_loops_state`).  Empty, and isl not loaded, for a program without one."""
    if not any(d.structure is not None for d in program.decls):
        return {}
    from ..analysis.structure import declared  # only for structured programs

    found = {}
    for d in program.decls:
        if d.structure is None or not d.shape or not _loops_state(d.structure):
            continue
        try:
            t = declared(d.name, d.shape, d.structure)
            fraction = t.support_size / t.dense_size
        except Exception:  # noqa: BLE001 - a promise the analysis cannot read: costed dense
            continue
        if fraction * SPARSE_GAIN <= 1:
            found[d.name] = fraction
    return found


def _loops_state(structure) -> bool:
    """Whether the restricted loops visit about the support of ``structure`` and no more
    (``i1 = 3``, ``i1 = i2``, ``i2 <= i3``; not ``i1 + i2 <= 3``): docs/structure.md,
    "Contraction order at the support"."""
    if structure.symmetric or len(structure.unique) != 1:
        return False
    for c in structure.unique[0]:
        (left, a), (right, b) = as_terms(c.left), as_terms(c.right)
        if len(left) > 1 or len(right) > 1 or any(abs(k) != 1 for _, k in left + right):
            return False
        if left and right and a != b:  # a band (i1 = i2 + 3): its loops may keep the whole range
            return False
    return True


def _density(e: ir.Expr, sparse: dict[str, float]) -> float:
    """The fraction of its dense points the C schedule visits for a product ``e``: the smallest support fraction
    of its factors that are sparse tensors read at distinct plain indices (a slice's differs), else 1."""
    fraction = 1.0
    while sparse and (isinstance(e, ir.Neg) or (isinstance(e, ir.BinOp) and e.op == "*" and isinstance(e.left, ir.Const))):
        e = e.arg if isinstance(e, ir.Neg) else e.right  # the numbers and sign the last step carries
    if not sparse or not isinstance(e, ir.Sum):  # the schedule restricts sums only
        return fraction
    for t in monomial(e).factors:
        if (isinstance(t, ir.Tensor) and t.name in sparse and all(isinstance(i, str) for i in t.indices)
                and len(set(t.indices)) == len(t.indices)):
            fraction = min(fraction, sparse[t.name])
    return fraction


def _order(e: ir.Expr, scope: dict[str, int], names: TempNames, lifted: list[ir.Statement],
           sparse: dict[str, float]) -> ir.Expr:
    def enter(node: ir.Expr, outer: dict[str, int]):
        return node, outer | dict(ir.binders(node))

    def leave(node: ir.Expr, outer: dict[str, int], inner: dict[str, int]) -> ir.Expr:
        if isinstance(node, ir.Sum):
            m = monomial(node)
            if m.sums == node.index and len(m.factors) >= 3:  # a product with no Σ inside
                chain = contraction_chain(node, m, inner, names, sparse)
                if chain is not None:
                    steps, result = chain
                    lifted.extend(steps)
                    return result
        return node

    return ir.transform(e, scope, enter, leave)  # iterative: as deep as the parser allows


def _labels(factor: ir.Expr) -> tuple[str, ...] | None:
    """The index variables an operand is indexed by, in order; None when one repeats
    (a diagonal) or the operand is a number."""
    if isinstance(factor, ir.Tensor) and not has_affine(factor.indices):  # else: by its variables
        labels = tuple(i for i in factor.indices if isinstance(i, str))
    else:
        labels = tuple(sorted(free_indices(factor)))
    return labels if len(set(labels)) == len(labels) else None


def contraction_chain(e: ir.Sum, m: Monomial, scope: dict[str, int], names: TempNames,
                      sparse: dict[str, float] | None = None):
    """(statements for all but the last pairwise contraction, the expression of the last),
    or None when the sum is not a product of indexed operands or the order is as written.
    ``m``: the sum as a monomial (forms.py); its numbers and sign scale the last step.
    ``sparse``: :func:`sparse_densities` of the program (module docs)."""
    consts = [f for f in m.factors if isinstance(f, ir.Const)]
    operands = [f for f in m.factors if not isinstance(f, ir.Const)]
    found = [_labels(f) for f in operands]
    labels = [lab for lab in found if lab is not None]
    if len(operands) < 3 or len(labels) < len(found):
        return None
    output = tuple(v for v in scope if v in free_indices(e))
    variables = list(dict.fromkeys(list(output) + [v for lab in labels for v in lab]))
    if len(variables) > len(_LETTERS):  # more indices than einsum has letters
        return None
    letter = {v: _LETTERS[n] for n, v in enumerate(variables)}
    eq = ",".join("".join(letter[v] for v in lab) for lab in labels) + "->" + "".join(letter[v] for v in output)
    shapes = [tuple(scope[v] for v in lab) for lab in labels]
    path, info = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=strategy(len(labels)))
    if len(labels) == 3 and not _fuses(path, labels, output):  # docs/optimizer.md, "Order of three"
        most = float(info.opt_cost) * (1 + FUSED_SLACK)
        path = next((o for o in ([(0, 2), (0, 1)], [(1, 2), (0, 1)], [(0, 1), (0, 1)]) if _fuses(o, labels, output)
                     and float((i := opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=o)[1]).opt_cost) <= most
                     and i.largest_intermediate <= info.largest_intermediate), path)
    ops: list[tuple[ir.Expr, tuple[str, ...]]] = list(zip(operands, labels))
    steps: list[ir.Statement] = []
    for n, step in enumerate(path):
        taken = [ops.pop(p) for p in sorted(step, reverse=True)][::-1]
        last = n == len(path) - 1
        needed = set(output) | {v for _, lab in ops for v in lab}
        present = [v for _, lab in taken for v in lab]
        kept = tuple(dict.fromkeys(v for v in present if v in needed))
        summed = tuple(dict.fromkeys(v for v in present if v not in needed))
        body = product([x for x, _ in taken])
        if summed:
            body = ir.Sum(tuple((v, scope[v]) for v in summed), body)
        if last:
            for c in consts:
                body = ir.BinOp("*", c, body)
            if m.sign < 0:
                body = ir.Neg(body)
            return (steps, body) if _cheaper(e, steps, body, scope, sparse or {}) else None
        layout = _layout(taken, kept)
        target = names()
        steps.append(ir.Statement(target, tuple((v, scope[v]) for v in layout), body))
        ops.append((ir.Tensor(target, layout), layout))
    return None  # pragma: no cover - a path always ends with the last contraction


def _cheaper(e: ir.Sum, steps: list[ir.Statement], final: ir.Expr, scope: dict[str, int],
             sparse: dict[str, float]) -> bool:
    """Whether the chain costs fewer flops than the sum as written, in the loop-nest cost model ``tensorlang
    analyze`` reports (not opt_einsum's), a sum over a sparse operand at the fraction the C schedule visits."""
    bound = {name for name, _ in e.index}
    outer = math.prod(n for v, n in scope.items() if v not in bound)
    chain = sum(math.prod(n for _, n in s.index) * body_flops(s.body) * _density(s.body, sparse) for s in steps)
    return (chain + outer * body_flops(final) * _density(final, sparse)
            < outer * body_flops(e) * _density(e, sparse))


def _layout(taken, kept: tuple[str, ...]) -> tuple[str, ...]:
    """The larger operand's index order, the other operand's new indices where the first
    contracted index was (at the end if none was)."""
    big = max(taken, key=lambda op: len(op[1]))[1]
    new = [v for v in kept if v not in big]
    order: list[str] = []
    for v in big:
        if v in kept:
            order.append(v)
        elif new:
            order.extend(new)
            new = []
    order.extend(new)
    return tuple(dict.fromkeys(order))


def _fuses(path, labels, output) -> bool:
    """Whether the first intermediate of a path over three operands (in its :func:`_layout`) leads
    with the result's first index and its step sums over its larger operand's last index."""
    taken = [(None, labels[p]) for p in path[0]]
    needed = set(output) | {v for n, lab in enumerate(labels) if n not in path[0] for v in lab}
    big = max(taken, key=lambda op: len(op[1]))[1]
    kept = tuple(dict.fromkeys(v for _, lab in taken for v in lab if v in needed))
    return bool(output) and _layout(taken, kept)[:1] == output[:1] and bool(big) and big[-1] not in needed
