"""The STUR checker: the ``stur-*`` rules of docs/structure.md, "The checker's rules"."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from ...errors import Diagnostic, Span, TensorLangError, error
from ...semantics.interface import interface
from ...semantics.sizes import Sym
from ...semantics.types import CheckedProgram, Context, MAX_ELEMENTS, MAX_RANK, count
from . import ast
from .ast import Rule as _Rule
from .linear import INF, Constraint, Lin, comparisons, constraint, propagate, reciprocal, rename, text
from .printer import product_text

#: The value symbols stand for while a program without values is checked: boundedness
#: does not depend on it.
STAND_IN = 7


@dataclass(frozen=True)
class Decl:
    """A tensor of the program as the shared interface sees it."""

    name: str
    shape: tuple
    qual: str | None
    span: Span | None
    name_span: Span | None


#: One alternative of a mask: the comparisons that must all hold.
Alternative = tuple[tuple[ast.IExpr, str, ast.IExpr], ...]


@dataclass(frozen=True)
class Term:
    """One product of a rule, ready to evaluate or lower: its variables' boxes (0-based, inclusive),
    accesses, factor, ``masks`` (disjunctions of conjunctions) and their affine ``constraints``."""

    rule: ast.Rule
    product: ast.Product
    variables: tuple[str, ...]
    box: Mapping[str, tuple[int, int]]
    accesses: tuple[ast.Access, ...]
    coefficient: float
    masks: tuple[tuple[Alternative, ...], ...]
    constraints: tuple[Constraint, ...]
    affine: bool  # every mask is a single affine alternative


@dataclass(frozen=True)
class Model:
    """A checked STUR program (the ``program`` of its CheckedProgram)."""

    ast: ast.Program
    values: Mapping[str, int]
    ranks: Mapping[str, int]
    shapes: Mapping[str, tuple]
    dims: Mapping[str, _Rule]
    uniques: Mapping[str, _Rule]
    redundancies: Mapping[str, _Rule]
    order: tuple[_Rule, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    decls: tuple[Decl, ...] = field(default=())
    used: tuple[str, ...] = field(default=())  # the symbols some rule mentions (used_symbols)

    @property
    def unbound(self) -> tuple[str, ...]:
        """The symbols some rule uses without a value yet (one no rule uses needs none)."""
        return tuple(s for s in self.used if s not in self.values)

    def require_values(self) -> None:
        """error[input] for the first of :attr:`unbound`: what lowering and running need."""
        if self.unbound:
            s = self.unbound[0]
            raise error("input", f"symbol {s!r} has no value: give it with --param {s}=... (params={{'{s}': ...}})")


def check_program(program: ast.Program) -> CheckedProgram:
    diagnostics: list[Diagnostic] = []
    try:
        model = _check(program, diagnostics)
    except TensorLangError as exc:
        if exc.diagnostics is not diagnostics:  # (_check's own errors carry the list it filled)
            diagnostics.extend(exc.diagnostics)
        raise TensorLangError(diagnostics[0].code, diagnostics[0].message, diagnostics=diagnostics) from None
    shapes = {d.name: d.shape for d in model.decls}
    quals = {d.name: d.qual for d in model.decls}
    context = Context(MappingProxyType(shapes), MappingProxyType(quals), MappingProxyType({d.name: d for d in model.decls}),
                      True)
    # every symbol a rule uses is a size of the kernel, a position ((j = J)) as an extent
    return CheckedProgram(model, context, interface(model.decls), model.unbound)


def used_symbols(symbols: tuple[str, ...], rules: tuple[ast.Rule, ...]) -> tuple[str, ...]:
    """The ``symbols`` that some of ``rules`` mention (in a condition, or as a factor
    ``N^-1()``), in their order."""
    found = {n for r in rules for p in r.products for f in p.factors if not isinstance(f, ast.Number)
             for n in ((f.name,) if isinstance(f, ast.Access) else (m for e in f.exprs for m in ast.index_names(e)))}
    return tuple(s for s in symbols if s in found)


def _check(program: ast.Program, diagnostics: list[Diagnostic]) -> Model:
    symbols = set(program.symbols)
    values = dict(program.params)
    ranks: dict[str, int] = {}
    first_use: dict[str, Span] = {}

    def use(name: str, rank: int, span: Span) -> None:
        if name in symbols:
            if rank:
                raise error("shape", f"{name!r} is a symbol (a number); it takes no indices", span, "stur-rank")
            return
        if name in ranks and ranks[name] != rank:
            raise error("shape", f"{name!r} has {ranks[name]} indices at line {first_use[name].line} but {rank} here",
                        span, "stur-rank")
        ranks.setdefault(name, rank)
        first_use.setdefault(name, span)

    heads: dict[str, ast.Rule] = {}
    facts: dict[str, dict[str, ast.Rule]] = {"D": {}, "U": {}, "R": {}}
    for rule in program.rules:
        if rule.name in symbols:
            diagnostics.append(Diagnostic("redeclared", f"{rule.name!r} is a symbol and cannot be a tensor",
                                          rule.head_span, "stur-rule"))
            continue
        try:
            if rule.kind is None:
                _check_computation(rule, symbols, use, heads)
            else:
                _check_fact(rule, symbols, use, facts)
        except TensorLangError as exc:
            diagnostics.extend(exc.diagnostics)
    if diagnostics:
        raise TensorLangError(diagnostics[0].code, diagnostics[0].message, diagnostics=diagnostics)

    diagnostics += [Diagnostic("undeclared", f"output {name!r} is computed by no rule", dict(program.spans).get(name),
                               "stur-rule") for name in program.outputs if name not in heads]
    diagnostics += [Diagnostic("undeclared", f"iters: {name!r} is computed by no rule", None, "stur-rule")
                    for name, _ in program.iters if name not in heads]
    if diagnostics:
        raise TensorLangError(diagnostics[0].code, diagnostics[0].message, diagnostics=diagnostics)

    order = _order(program, heads)
    inputs = tuple(n for n in dict.fromkeys(a.name for r in program.computations for p in r.products
                                            for a in p.factors if isinstance(a, ast.Access))
                   if n not in heads and n not in symbols)
    outputs = (program.outputs or tuple(r.name for r in program.computations if not r.preprocess)
               or tuple(r.name for r in program.computations))
    shapes: dict[str, tuple] = {}
    for name in (*inputs, *(r.name for r in order)):
        rank = ranks[name]
        dim = facts["D"].get(name) or (rank and name in heads and _inferred_dims(heads[name], shapes, symbols)) or None
        if dim is not None:
            facts["D"][name] = dim
        else:
            if rank:
                span = heads[name].head_span if name in heads else first_use[name]
                diagnostics.append(Diagnostic(
                    "undeclared", f"tensor {name!r} has {rank} indices but no dimensions: add "
                    f"{name}:D({', '.join('ijklmn'[:rank] if rank <= 6 else 'i' * rank)}) := (0 <= i < N) * ...",
                    span, "stur-dims"))
                continue
            shapes[name] = ()
            continue
        try:
            shapes[name] = _extents(dim, values, symbols)
        except TensorLangError as exc:
            diagnostics.extend(exc.diagnostics)
    if diagnostics:
        raise TensorLangError(diagnostics[0].code, diagnostics[0].message, diagnostics=diagnostics)

    model = Model(program, MappingProxyType(values), MappingProxyType(ranks), MappingProxyType(shapes),
                  MappingProxyType(facts["D"]), MappingProxyType(facts["U"]), MappingProxyType(facts["R"]), order,
                  inputs, tuple(outputs), used=used_symbols(program.symbols, program.rules))
    stand_in = model if not model.unbound else _with_stand_ins(model)
    for rule in order:  # stur-bound
        for product in rule.products:
            try:
                prepare(stand_in, rule, product)
            except TensorLangError as exc:
                diagnostics.extend(exc.diagnostics)
    if diagnostics:
        raise TensorLangError(diagnostics[0].code, diagnostics[0].message, diagnostics=diagnostics)
    decls = tuple(Decl(name, shapes[name], "in", first_use.get(name), first_use.get(name)) for name in inputs) + tuple(
        Decl(r.name, shapes[r.name], "out" if r.name in outputs else None, r.span, r.head_span) for r in order)
    for d in decls:
        if (rank := len(d.shape)) > MAX_RANK or count(d.shape) >= MAX_ELEMENTS:
            raise error("too-large", f"{d.name!r} has {rank} dimensions; at most {MAX_RANK} (numpy's limit)" if rank > MAX_RANK
                        else f"{d.name!r} has more elements than any machine can index (2^62)", d.span, "stur-dims")
    return replace(model, decls=decls)


def _check_computation(rule: ast.Rule, symbols, use, heads) -> None:
    if rule.name in heads:
        raise error("redeclared", f"{rule.name!r} is computed by two rules (first at line {heads[rule.name].span.line})",
                    rule.head_span, "stur-rule")
    _distinct(rule)
    for a in rule.args:
        if a in symbols:
            raise error("repeated-index", f"{a!r} is a symbol and cannot index {rule.name!r}", rule.head_span,
                        "stur-rule")
    use(rule.name, len(rule.args), rule.head_span)
    heads[rule.name] = rule
    for product in rule.products:
        for f in product.factors:
            if isinstance(f, ast.Access):
                for a, span in zip(f.args, f.arg_spans or (f.span,) * len(f.args)):
                    if a in symbols:
                        raise error("repeated-index", f"{a!r} is a symbol and cannot index {f.name!r}", span,
                                    "stur-rule")
                use(f.name, len(f.args), f.span)


def _distinct(rule: ast.Rule) -> None:
    seen = set()
    for a in rule.args:
        if a in seen:
            raise error("repeated-index", f"index {a!r} appears twice in the head of {rule.name!r}", rule.head_span,
                        "stur-rule" if rule.kind is None else "stur-fact")
        seen.add(a)


def _check_fact(rule: ast.Rule, symbols, use, facts) -> None:
    _distinct(rule)
    kind = rule.kind
    assert kind is not None
    rank = len(rule.args)
    if kind == "R":
        if rank % 2:
            raise error("structure", f"{rule.name}:R needs twice {rule.name}'s indices (i, j, ip, jp), got {rank}",
                        rule.head_span, "stur-fact")
        rank //= 2
        first, second = rule.args[:rank], rule.args[rank:]
        if tuple(a + "p" for a in first) != second:
            raise error("structure", f"{rule.name}:R's second half of indices must be the first half's names with "
                        f"'p' ({', '.join(a + 'p' for a in first)}), got {', '.join(second)}", rule.head_span,
                        "stur-fact")
    use(rule.name, rank, rule.head_span)
    previous = facts[kind].get(rule.name)
    if previous is not None and not _same_fact(previous, rule):
        raise error("redeclared", f"{rule.name}:{kind} is given twice, differently (first at line {previous.span.line})",
                    rule.head_span, "stur-fact")
    for product in rule.products:
        for f in product.factors:
            if isinstance(f, ast.Access):
                raise error("structure", f"a fact {rule.name}:{kind} is made of conditions; {f.name!r} is a tensor",
                            f.span, "stur-fact")
            if isinstance(f, ast.Number):
                if kind != "R":
                    raise error("structure", f"a fact {rule.name}:{kind} is made of conditions, not numbers", f.span,
                                "stur-fact")
            if isinstance(f, ast.Condition):
                for e in f.exprs:
                    for name in ast.index_names(e):
                        if name not in rule.args and name not in symbols:
                            raise error("undeclared", f"{name!r} in {rule.name}:{kind} is neither one of its indices "
                                        f"({', '.join(rule.args)}) nor a symbol", e.span, "stur-fact")
    facts[kind].setdefault(rule.name, rule)


def _same_fact(a: ast.Rule, b: ast.Rule) -> bool:
    def shape(rule: ast.Rule):
        mapping = {x: f"_{n}" for n, x in enumerate(rule.args)}
        return tuple(product_text(p, mapping) for p in rule.products)
    return shape(a) == shape(b)


def _order(program: ast.Program, heads: Mapping[str, ast.Rule]) -> tuple[ast.Rule, ...]:
    """The computation rules in an order where each reads only tensors computed before
    (the order written, where it allows; a cycle is error[uninit])."""
    done: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str, trail: tuple[str, ...]) -> None:
        if state.get(name) == 2:
            return
        rule = heads[name]
        if state.get(name) == 1:
            raise error("uninit", f"{name!r} is computed from itself ({' -> '.join((*trail, name))})", rule.head_span,
                        "stur-rule")
        state[name] = 1
        for p in rule.products:
            for f in p.factors:
                if isinstance(f, ast.Access) and f.name in heads:
                    visit(f.name, (*trail, name))
        state[name] = 2
        done.append(name)

    for rule in program.computations:
        visit(rule.name, ())
    return tuple(heads[n] for n in done)


def _inferred_dims(rule: ast.Rule, shapes: Mapping[str, tuple], symbols) -> ast.Rule | None:
    """The D fact of a computed tensor that has none: each head index ranges as every dimension it
    indexes in the rule does (SPEC §4: ``covar(j, k) := X(i, j) * X(i, k)``); None where they disagree."""
    conditions = []
    for h in rule.args:
        found = {shapes[f.name][q] for p in rule.products for f in p.factors if isinstance(f, ast.Access)
                 and f.name in shapes for q, a in enumerate(f.args) if a == h}
        bound = found.pop() if len(found) == 1 else None
        if not (isinstance(bound, int) or isinstance(bound, Sym) and bound.name in symbols):
            return None
        s = rule.head_span
        end = ast.INum(bound, s) if isinstance(bound, int) else ast.IName(bound.name, s)
        conditions.append(ast.Condition((ast.INum(0, s), ast.IName(h, s), end), ("<=", "<"), s))
    return replace(rule, kind="D", products=(ast.Product(tuple(conditions), rule.span),))


def _extents(dim: ast.Rule, values: Mapping[str, int], symbols) -> tuple:
    """A tensor's extents from its D fact (the hull of its products' boxes); ``Sym`` where
    the symbols have no values yet."""
    if not dim.args:
        return ()
    if not all(s in values for s in used_symbols(tuple(symbols), (dim,))):
        return tuple(_symbolic_extent(dim, a) for a in dim.args)
    his: list[int | None] = [None] * len(dim.args)
    for product in dim.products:
        cons = [c for f in product.factors if isinstance(f, ast.Condition)
                for left, op, right in comparisons(f) if (c := constraint(left, op, right, values)) is not None]
        box = propagate(cons, {a: (INF, INF) for a in dim.args})
        if any(lo is not None and hi is not None and lo > hi for lo, hi in box.values()):
            continue  # a product that holds nowhere adds nothing to the hull (its other bounds stay unknown)
        for n, a in enumerate(dim.args):
            lo, hi = box[a]
            if lo is None or hi is None:
                raise error("shape", f"dimension {n + 1} of {dim.name!r} ({a}) is not bounded by its D fact; write "
                            f"(0 <= {a} < N)", dim.span, "stur-dims")
            if lo < 0:
                raise error("shape", f"dimension {n + 1} of {dim.name!r} ({a}) reaches {lo}; positions start at 0",
                            dim.span, "stur-dims")
            his[n] = hi if his[n] is None else max(his[n] or 0, hi)
    extents = []
    for n, hi in enumerate(his):
        if hi is None or hi < 0:
            raise error("shape", f"dimension {n + 1} of {dim.name!r} is empty for these sizes "
                        f"({', '.join(f'{k}={v}' for k, v in values.items())})", dim.span, "stur-dims")
        extents.append(hi + 1)
    return tuple(extents)


def _symbolic_extent(dim: ast.Rule, arg: str) -> Any:
    """``Sym(N)`` for a dimension bounded by ``arg < N``, else the bound's text as one."""
    for product in dim.products:
        for f in product.factors:
            if isinstance(f, ast.Condition):
                for left, op, right in comparisons(f):
                    if isinstance(left, ast.IName) and left.name == arg and op in ("<", "<="):
                        bound = right
                    elif isinstance(right, ast.IName) and right.name == arg and op in (">", ">="):
                        bound = left
                    else:
                        continue
                    if any(n in dim.args for n in ast.index_names(bound)):  # (arg is one of them)
                        continue
                    if op in ("<", ">") and isinstance(bound, ast.IName):
                        return Sym(bound.name)
                    return Sym(text(bound) + (" + 1" if op in ("<=", ">=") else ""))
    return Sym(f"{dim.name}:{arg}")


def _with_stand_ins(model: Model) -> Model:
    values = {s: model.values.get(s, STAND_IN) for s in model.ast.symbols}
    shapes = {name: _extents(model.dims[name], values, set(values)) if any(isinstance(d, Sym) for d in shape) else shape
              for name, shape in model.shapes.items()}
    return replace(model, values=MappingProxyType(values), shapes=MappingProxyType(shapes))


# ------------------------------------------------------------------ terms
def fact_masks(model: Model, name: str, args: tuple[str, ...], kind: str = "D"):
    """The fact ``name:kind`` at ``args``: (a mask, its affine constraints where it is one
    product, whether every comparison is affine)."""
    fact = {"D": model.dims, "U": model.uniques}[kind].get(name)
    if fact is None:
        return None, (), True
    mapping = dict(zip(fact.args, args))
    alternatives: list[Alternative] = [tuple((rename(left, mapping), op, rename(right, mapping)) for f in product.factors
                                             if isinstance(f, ast.Condition) for left, op, right in comparisons(f))
                                       for product in fact.products]
    found = [constraint(left, op, right, model.values) for pairs in alternatives for left, op, right in pairs]
    one = len(alternatives) == 1
    return tuple(alternatives), tuple(c for c in found if c is not None and one), one and None not in found


def prepare(model: Model, rule: ast.Rule, product: ast.Product) -> Term:
    """The product ``product`` of ``rule`` as a :class:`Term` (stur-bound)."""
    symbols = set(model.ast.symbols)
    masks: list[tuple[Alternative, ...]] = []
    cons: list[Constraint] = []
    box_cons: list[Constraint] = []
    is_affine = True
    variables: dict[str, None] = dict.fromkeys(rule.args)

    def add_box(name: str, args: tuple[str, ...]) -> None:
        nonlocal is_affine
        for a, ext in zip(args, model.shapes[name]):
            box_cons.append(Constraint(Lin(((a, 1),), 0), ">="))
            box_cons.append(Constraint(Lin(((a, -1),), int(ext) - 1), ">="))
        mask, fact_cons, fact_affine = fact_masks(model, name, args)
        if mask is not None:
            masks.append(mask)
            cons.extend(fact_cons)
            is_affine = is_affine and fact_affine

    add_box(rule.name, rule.args)
    coefficient = 1.0
    accesses: list[ast.Access] = []
    for f in product.factors:
        if isinstance(f, ast.Number):
            coefficient *= reciprocal(f.value) if f.inverse else f.value
        elif isinstance(f, ast.Access):
            if f.name in symbols:
                if f.name not in model.values:
                    raise error("input", f"symbol {f.name!r} has no value: give it with --param {f.name}=...", f.span,
                                "stur-rule")
                value = float(model.values[f.name])
                coefficient *= reciprocal(value) if f.inverse else value
                continue
            accesses.append(f)
            variables.update(dict.fromkeys(f.args))
            add_box(f.name, f.args)
        else:
            pairs = comparisons(f)
            masks.append((pairs,))
            for left, op, right in pairs:
                variables.update(dict.fromkeys(n for e in (left, right) for n in ast.index_names(e) if n not in symbols))
                c = constraint(left, op, right, model.values)
                is_affine = is_affine and c is not None
                cons.extend([c] if c is not None else [])
    variables = {v: None for v in variables if v not in symbols}
    all_cons = tuple(box_cons) + tuple(cons)
    box = propagate(all_cons, {v: (INF, INF) for v in variables})
    for v in variables:
        lo, hi = box[v]
        if lo is None or hi is None:
            raise error("free-index", f"index {v!r} of this product of {rule.name!r} is unbounded: no tensor it indexes "
                        f"and no condition limits it", product.span, "stur-bound")
    return Term(rule, product, tuple(variables), MappingProxyType({v: (int(box[v][0]), int(box[v][1]))
                                                                   for v in variables}),
                tuple(accesses), coefficient, tuple(masks), tuple(cons), is_affine)
