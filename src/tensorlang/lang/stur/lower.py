"""Lowering STUR to EIN: one statement per rule, one Σ per product, by the six steps of
docs/structure.md, "Compiling: lowering to EIN"; any other product is error[backend]."""

from __future__ import annotations

import functools
from dataclasses import replace
from types import MappingProxyType

from ...ein import ir
from ...ein.index import Domain, affine
from ...ein.structure import Condition, Structure, position_names
from ...errors import error
from ...semantics.types import CheckedProgram
from . import ast
from .check import Model, Term, prepare
from .linear import MAX_INDEX_CONSTANT, Constraint, Lin, comparisons, constraint, lin_range, propagate
from .promise import redundancy_pieces


def reciprocal(x: ir.Expr) -> ir.Expr:
    """``x^-1`` in EIN as ``(tanh(x) / tanh(x)) / x`` over controlled division: 1/x, and 0
    where x is 0 (docs/structure.md, "Reciprocals", says why it is exact)."""
    t = ir.Apply("tanh", x)
    return ir.BinOp("/", ir.BinOp("/", t, t), x)


def lower_program(checked: CheckedProgram) -> ir.Program:
    model: Model = checked.program
    model.require_values()
    decls = tuple(ir.Decl(d.name, tuple(int(x) for x in d.shape), d.qual,
                          declared_structure(model, d.name) if d.qual == "in" else None) for d in model.decls)
    return ir.Program(decls, tuple(lower_rule(model, rule) for rule in model.order))


def declared_structure(model: Model, name: str) -> Structure | None:
    """An input's U (and R) facts as the EIN declaration's structure where they are affine conditions
    with no redundancy map or a matrix's symmetric one; else None (dense, always sound)."""
    fact = model.uniques.get(name)
    rank = len(model.shapes[name])
    if fact is None or not rank:
        return None
    positions = position_names(rank)
    mapping = dict(zip(fact.args, positions))
    unique = []
    for product in fact.products:
        conjunction = []
        for f in product.factors:
            if not isinstance(f, ast.Condition):
                return None
            for left, op, right in comparisons(f):
                c = constraint(left, op, right, model.values)
                if c is None:
                    return None
                # 0-based STUR positions a = i - 1 over the 1-based positions i
                terms = [(mapping[v], k) for v, k in c.lin.terms]
                offset = c.lin.const - sum(k for _, k in c.lin.terms)
                conjunction.append(Condition(affine(terms, offset), c.kind, 0))
        unique.append(tuple(conjunction))
    if name not in model.redundancies:
        return Structure(rank, tuple(unique), False, f"{name}:U")
    pieces = redundancy_pieces(model, name, fact.args)
    symmetric = (rank == 2 and pieces is not None and len(pieces) == 1 and pieces[0][0] == 1.0
                 and [t.name if isinstance(t, ast.IName) else None for t in pieces[0][2]] == [fact.args[1], fact.args[0]])
    return Structure(rank, tuple(unique), True, f"{name}:U, {name}:R") if symmetric else None


def lower_rule(model: Model, rule: ast.Rule) -> ir.Statement:
    shape = tuple(int(d) for d in model.shapes[rule.name])
    body = functools.reduce(lambda a, b: ir.BinOp("+", a, b),
                            [lower_term(model, prepare(model, rule, product), shape) for product in rule.products])
    return ir.Statement(rule.name, Domain(tuple(zip(rule.args, shape))), body)


def _unsupported(term: Term, why: str):
    return error("backend", f"{term.rule.name}: {why}; the compiled targets cannot compute this product of STUR's "
                 "yet: run it with the reference interpreter (backend='interp', --backend interp)", term.product.span)


def _box_constraints(v: str, lo: int, hi: int) -> tuple[Constraint, Constraint]:
    return Constraint(Lin(((v, 1),), -lo), ">="), Constraint(Lin(((v, -1),), hi), ">=")


def eliminate(term: Term) -> tuple[dict[str, Lin], list[Constraint]]:
    """Equality elimination: the substitution for each solved summed variable and the
    constraints left (every variable's box included)."""
    head = set(term.rule.args)
    cons = [c for v in term.variables for c in _box_constraints(v, *term.box[v])] + list(term.constraints)
    subst: dict[str, Lin] = {}
    while True:
        pick = next(((c, v) for c in cons if c.kind == "=" for v, k in c.lin.terms if v not in head and abs(k) == 1),
                    None)
        if pick is None:
            return subst, cons
        con, v = pick
        k = con.lin.coeff(v)
        rest = Lin.of({u: c for u, c in con.lin.terms if u != v}, con.lin.const)
        by = Lin.of({}, 0).plus(rest, -k)  # k*v + rest = 0, k = ±1  ->  v = -rest/k = -k*rest
        subst = {u: e.substitute(v, by) for u, e in subst.items()}
        subst[v] = by
        cons = [Constraint(c.lin.substitute(v, by), c.kind) for c in cons if c is not con]


#: A product whose conditions are affine only once one of its variables is fixed is
#: unrolled over that variable (step 6) when it takes at most this many values.
MAX_UNROLL = 32


def lower_term(model: Model, term: Term, shape: tuple[int, ...]) -> ir.Expr:
    if any(lo > hi for lo, hi in term.box.values()):
        return ir.Const(0.0)  # no point: the product adds nothing
    if not term.affine:
        unrolled = _unrolled(model, term, shape)
        if unrolled is None:
            raise _unsupported(term, "a condition or dimension fact is not affine (or is a union)")
        return unrolled
    head = term.rule.args
    subst, cons = eliminate(term)
    free = [v for v in term.variables if v not in subst]
    box = propagate(cons, {v: term.box[v] for v in free})
    for v in free:
        lo, hi = box[v]
        if lo is None or hi is None or lo > hi:
            return ir.Const(0.0)
    # a head index limited to part of its dimension: the product lowers over that part,
    # read at a local index, inside a direct sum with zero pieces around it (module docs)
    local: dict[str, str] = {}
    for n, h in enumerate(head):
        lo, hi = box[h]
        if lo < 0 or hi > shape[n] - 1:  # the head's own range bounds it: never past the dimension
            raise _unsupported(term, f"its conditions put head index {h!r} at {lo}..{hi}, outside 0..{shape[n] - 1}")
        if (lo, hi) != (0, shape[n] - 1):
            local[h] = _fresh(f"{h}_part", set(term.variables) | set(local.values()))
    selects: list[tuple[Constraint, int, int]] = []  # conditions on head indices only: step 5
    for c in cons:
        lo, hi = lin_range(c.lin, box)
        implied = (lo is not None and lo >= 0) if c.kind == ">=" else (lo == 0 and hi == 0)
        if implied:
            continue
        on = {v for v, _ in c.lin.terms}
        if on and on <= set(head) and lo is not None and hi is not None:
            if hi < 0 or c.kind == "=" and lo > 0:
                return ir.Const(0.0)  # no point: the product adds nothing
            if hi - lo >= MAX_INDEX_CONSTANT:  # a direct sum's positions count in int64 (C wrapped at 2^62)
                raise error("too-large", f"{term.rule.name}: a condition spans {hi - lo + 1} values over its "
                            "indices, past 2^62", term.product.span)
            selects.append((c, lo, hi))
            continue
        raise _unsupported(term, "a condition cuts its loops to a set that is not a box")
    extents = {v: box[v][1] - box[v][0] + 1 for v in free}

    def position(arg: str, dim_extent: int):
        lin = subst.get(arg, Lin(((arg, 1),), 0))
        if len(lin.terms) == 1 and lin.terms[0][1] == 1 and lin.const == 0:
            v = lin.terms[0][0]
            if box[v][0] == 0 and extents[v] == dim_extent:
                return local.get(v, v)
        # STUR v = x_v + lo_v - 1 over EIN's 1-based x_v; the 1-based position is L + 1
        offset = lin.const + 1 + sum(c * (box[v][0] - 1) for v, c in lin.terms)
        return affine([(local.get(v, v), c) for v, c in lin.terms], offset)

    factors: list[ir.Expr] = []
    used: set[str] = set()
    for access in term.accesses:
        indices = tuple(position(a, int(d)) for a, d in zip(access.args, model.shapes[access.name]))
        for a in access.args:
            used.update(v for v, _ in subst.get(a, Lin(((a, 1),), 0)).terms)
        tensor = ir.Tensor(access.name, indices)
        factors.append(reciprocal(tensor) if access.inverse else tensor)
    coefficient = term.coefficient
    summed = [v for v in free if v not in head]
    for v in summed:
        if v not in used:
            coefficient *= extents[v]  # a variable that indexes nothing: its count
    body = functools.reduce(lambda a, b: ir.BinOp("*", a, b),
                            factors if coefficient == 1.0 and factors else [ir.Const(coefficient), *factors])
    loops = tuple((v, extents[v]) for v in summed if v in used)
    result: ir.Expr = ir.Sum(Domain(loops), body) if loops else body
    taken = set(term.variables) | set(local.values())
    for c, lo, hi in selects:  # the value where the condition holds, exact zeros elsewhere
        # the condition's value L over EIN's 1-based head variables (STUR v = x_v - 1 + lo_v),
        # shifted to select at 1-based position L - lo + 1 of a direct sum lo..hi
        # (a head index limited to a part, step 4, is read at its local index: the select
        # lies inside that part's direct sum)
        index = affine([(local.get(v, v), k) for v, k in c.lin.terms],
                       c.lin.const + sum(k * (box[v][0] - 1) for v, k in c.lin.terms) - lo + 1)
        holds = 1 if c.kind == "=" else hi + 1
        pieces = [(_fresh("below", taken), -lo, ir.Const(0.0)), (_fresh("holds", taken), holds, result),
                  (_fresh("above", taken), hi if c.kind == "=" else 0, ir.Const(0.0))]
        taken.update(v for v, _, _ in pieces)  # a second condition's direct sum binds other names
        pieces = [p for p in pieces if p[1] > 0]
        result = ir.Concat(index, Domain(tuple((v, k) for v, k, _ in pieces)), tuple(e for _, _, e in pieces))
    for n in reversed(range(len(head))):
        h = head[n]
        if h in local:  # zeros before and after the part the conditions leave
            lo, hi = box[h]
            pieces = [(_fresh(f"{h}_before", set(term.variables) | set(local.values())), lo, ir.Const(0.0)),
                      (local[h], hi - lo + 1, result),
                      (_fresh(f"{h}_after", set(term.variables) | set(local.values())), shape[n] - 1 - hi, ir.Const(0.0))]
            pieces = [p for p in pieces if p[1] > 0]
            result = ir.Concat(h, Domain(tuple((v, k) for v, k, _ in pieces)), tuple(e for _, _, e in pieces))
    return result


def _unrolled(model: Model, term: Term, shape: tuple[int, ...]) -> ir.Expr | None:
    """Step 6: the product as the sum of its cases over the variable with the fewest values (at most
    :data:`MAX_UNROLL`) whose fixing makes every condition affine; None where no variable does."""
    for v in sorted(term.variables, key=lambda u: term.box[u][1] - term.box[u][0]):
        lo, hi = term.box[v]
        if hi - lo + 1 > MAX_UNROLL:
            return None
        cases = [_fixed(model, term, v, c) for c in range(lo, hi + 1)]
        if any(case is None for case in cases):
            continue
        result: ir.Expr | None = None
        for case in cases:
            assert case is not None
            part = lower_term(model, case, shape)
            if isinstance(part, ir.Const) and part.value == 0.0 and result is not None:
                continue  # a case without points
            result = part if result is None else ir.BinOp("+", result, part)
        return result
    return None


def _fixed(model: Model, term: Term, v: str, value: int) -> Term | None:
    """``term`` with ``v = value``, its conditions made affine (None where one is not, or
    a fact is a union)."""
    values = {**model.values, v: value}
    cons = [Constraint(Lin(((v, 1),), -value), "=")]
    for mask in term.masks:
        if len(mask) != 1:
            return None
        for left, op, right in mask[0]:
            c = constraint(left, op, right, values)
            if c is None:
                return None
            cons.append(c)
    box = dict(term.box)
    box[v] = (value, value)
    found = propagate(cons, box)
    if any(lo is None or hi is None for lo, hi in found.values()):
        return None
    bounds = {u: (int(lo), int(hi)) for u, (lo, hi) in found.items()}  # type: ignore[arg-type]
    return replace(term, box=MappingProxyType(bounds), constraints=tuple(cons), affine=True)


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    return name
