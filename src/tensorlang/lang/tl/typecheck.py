"""Typing of model-language programs: paper 000's rules (Figures 8 and 9), SPEC's
extensions and index form, by name (docs/language.md and docs/errors.md list them; ok-prog,
ok-seq and s-var, TeIL's too, are :mod:`tensorlang.semantics.types`').  A type is a tuple
of extents, ``()`` the scalar's; symbolic sizes compare as written (docs/language.md, "Symbolic sizes")."""

from __future__ import annotations

import contextvars
from typing import Mapping, NamedTuple

from ...ein.index import Affine, index_range, index_variables
from ...errors import Diagnostic, Span, error
from ...semantics.sizes import Sym, free_sizes, is_derived, size_arith
from ...semantics.types import MAX_ELEMENTS, MAX_RANK, CheckedProgram, Context, Shape, check_statements, show
from . import ast
from .structure import check_annotations

# ------------------------------------------------------------------ Figure 9
def _rank_bound(shape: Shape, e: ast.Expr) -> Shape:
    """``shape``, unless it has more dimensions than numpy (so every target) supports."""
    if len(shape) > MAX_RANK:
        raise error("too-large", f"this expression has {len(shape)} dimensions; at most {MAX_RANK} "
                    "(numpy's limit) are supported", e.span)
    return shape


def type_of(expr: ast.Expr, gamma: Context | Mapping[str, Shape], memo: dict[int, Shape] | None = None) -> Shape:
    """Γ ⊢ e : t.  Raises :class:`TensorLangError` naming the rule whose premise fails.
    ``memo`` (by node id, kept by a caller asking for every subexpression, as lowering
    does) records each subexpression's type, so that each is checked once."""
    shapes = gamma.shapes if isinstance(gamma, Context) else gamma

    known: dict[int, Shape] = {} if memo is None else memo

    def t(e: ast.Expr) -> Shape:
        if id(e) not in known:
            known[id(e)] = rule(e)
        return known[id(e)]

    def rule(e: ast.Expr) -> Shape:
        if isinstance(e, ast.Var):  # t-var
            if e.name not in shapes:
                raise error("undeclared", f"{e.name!r} is not declared", e.span, "t-var")
            return shapes[e.name]
        if isinstance(e, ast.Number):  # t-num
            return ()
        if isinstance(e, (ast.Paren, ast.Neg)):  # t-paren, t-neg
            return t(e.expr)
        if isinstance(e, ast.Call):  # t-fn
            return t(e.arg)
        if isinstance(e, ast.Outer):  # t-prod: the types concatenate
            if isinstance(e.right, ast.Var) and e.right.name not in shapes:  # '# note', written as Python's comment
                raise error("undeclared", f"{e.right.name!r} is not declared (if '# {e.right.name}' is meant as a "
                            "comment: comments start with //)", e.right.span, "t-var")
            return _rank_bound(t(e.left) + t(e.right), e)
        if isinstance(e, ast.Transpose):
            return _t_trans(e, t(e.expr))
        if isinstance(e, ast.Contract):
            return _t_contr(e, t(e.expr))
        if isinstance(e, ast.Binary):
            return _t_binary(e, t(e.left), t(e.right))
        if isinstance(e, ast.Stack):
            return _rank_bound(_t_stack(e, [t(item) for item in e.items]), e)
        if isinstance(e, ast.Concat):
            return _t_concat(e, [t(item) for item in e.items])
        if isinstance(e, ast.Vec):
            return _t_vec(e, t(e.expr))
        raise TypeError(f"not an expression: {e!r}")  # pragma: no cover

    return t(expr)


#: The number a message gives the first dimension: 1 in the model language, 0 in the
#: CFDlang dialect (whose programs count from 0).  The AST is always 1-based;
#: :func:`check_program` sets this from its ``first_dimension`` so messages quote the program.
FIRST_DIMENSION = contextvars.ContextVar("first_dimension", default=1)


def _dim(d: int) -> int:
    """A 1-based dimension number as the program being checked writes it."""
    return d - 1 + FIRST_DIMENSION.get()


def _t_stack(e: ast.Stack, types: list[Shape]) -> Shape:
    """t-stack: operands of one type t stack into ``[len(items)] + t``."""
    if not types:
        raise error("syntax", "a stack needs at least one operand", e.span, "t-stack")
    for item, shape in zip(e.items[1:], types[1:]):
        if shape != types[0]:
            raise error("shape", f"stacked operands must have equal types: the first has type {show(types[0])}, "
                        f"this one {show(shape)}", item.span or e.span, "t-stack")
    return (len(types),) + types[0]


def _extent_sum(op: str, extents, e: ast.Expr, rule: str, what: str):
    """The sum or product of extents (a size expression where one is symbolic: concat of
    ``[p]`` and ``[p*p]`` is ``[p+p*p]``), below the limit on elements."""
    total = extents[0]
    for extent in extents[1:]:
        total = size_arith(op, total, extent)
        if total is None:
            raise error("shape", f"{what} needs sizes written as sums of products, not {extent}", e.span, rule)
    if isinstance(total, int) and total >= MAX_ELEMENTS:
        raise error("too-large", f"{what} gives a dimension of {total} entries", e.span, rule)
    return total


def _t_concat(e: ast.Concat, types: list[Shape]) -> Shape:
    """t-concat: ``[s.. a1] ⊕ [s.. a2] ⊕ ...`` is ``[s.. a1+a2+...]``: operands of rank
    at least 1 whose leading extents agree, joined along their last dimension."""
    if e.index is not None or e.parts:  # the index form is typed by check_index_stmt
        raise error("syntax", "an index-form concat(a:3 => ..)[p] stands in index form only", e.span, "t-concat")
    for item, shape in zip(e.items, types):
        if shape == ():
            raise error("shape", "concat joins along the last dimension; this operand is a scalar "
                        "(make it a vector, e.g. [x])", item.span or e.span, "t-concat")
        if shape[:-1] != types[0][:-1]:
            raise error("shape", f"concat joins along the last dimension, so the other extents must agree: "
                        f"the first operand has type {show(types[0])}, this one {show(shape)}",
                        item.span or e.span, "t-concat")
    return types[0][:-1] + (_extent_sum("+", [shape[-1] for shape in types], e, "t-concat", "concat"),)


def _t_vec(e: ast.Vec, shape: Shape) -> Shape:
    """t-vec: ``vec`` of ``[s.. a b]`` is ``[s.. a*b]`` (row-major: position (i-1)*b + j)."""
    if len(shape) < 2:
        raise error("shape", f"vec flattens the last two dimensions, but its operand has type {show(shape)} "
                    f"of rank {len(shape)}", e.span, "t-vec")
    return shape[:-2] + (_extent_sum("*", list(shape[-2:]), e, "t-vec", "vec"),)


def _check_dim(d: int, shape: Shape, pair: ast.Pair, rule: str, what: str) -> None:
    if not 1 <= d <= len(shape):
        rank = len(shape)
        allowed = f"{_dim(1)}..{_dim(rank)}" if rank else "none: the operand is a scalar"
        numpy = "; dimensions are numbered from 1 here, not from 0 as in numpy" if d == 0 and _dim(1) == 1 else ""
        raise error("dim-range", f"{what} names dimension {_dim(d)}, but the operand has type {show(shape)} of rank "
                    f"{rank} (dimensions {allowed}){numpy}", pair.span, rule)


def _t_trans(e: ast.Transpose, shape: Shape) -> Shape:
    """t-trans: ``e ^ [m n]`` swaps extents m and n."""
    m, n = e.pair.first, e.pair.second
    for d in (m, n):
        _check_dim(d, shape, e.pair, "t-trans", "the transposition")
    out = list(shape)
    out[m - 1], out[n - 1] = out[n - 1], out[m - 1]
    return tuple(out)


def _t_contr(e: ast.Contract, shape: Shape) -> Shape:
    """t-contr (and t-contr-group): pairs of distinct dimensions with equal extents are removed."""
    rule = "t-contr-group" if e.grouped else "t-contr"
    used: dict[int, ast.Pair] = {}
    for pair in e.pairs:
        m, n = pair.first, pair.second
        for d in (m, n):
            _check_dim(d, shape, pair, rule, "the contraction")
        if m == n:
            raise error("dim-range", f"a contraction pair needs two different dimensions, got [{_dim(m)} {_dim(n)}]", pair.span, rule)
        for d in (m, n):
            if d in used:
                raise error("dim-range", f"dimension {_dim(d)} appears in two pairs of one contraction group",
                            pair.span, rule)
            used[d] = pair
        if shape[m - 1] != shape[n - 1]:
            raise error("shape",
                        f"contracted dimensions {_dim(m)} and {_dim(n)} of {show(shape)} have different extents "
                        f"{shape[m - 1]} and {shape[n - 1]}", pair.span, rule)
    return tuple(d for i, d in enumerate(shape, start=1) if i not in used)


def _t_binary(e: ast.Binary, left: Shape, right: Shape) -> Shape:
    """t-elem for equal shapes; t-smul / t-sdiv when one side is a scalar."""
    if left == right:
        return left  # t-elem (two scalars included)
    if e.op == "*" and left == ():
        return right  # t-smul
    if e.op == "*" and right == ():
        return left  # t-smul-right
    if e.op == "/" and right == ():
        return left  # t-sdiv
    if e.op == "/":
        rule, hint = "t-sdiv", "'/' needs equal shapes or a scalar on the right"
    elif e.op == "*":
        rule, hint = "t-smul", "'*' needs equal shapes or a scalar on one side"
    else:
        rule, hint = "t-elem", f"'{e.op}' needs equal shapes (there is no broadcasting)"
        if () in (left, right) and len(left or right) <= 8:  # a scalar: index form takes it entry by entry
            at = ",".join("ijklmnpq"[:len(left or right)])
            example = f"1 {e.op} A[{at}]" if left == () else f"A[{at}] {e.op} 1"
            hint = f"{hint[:-1]}; index form takes a scalar entry by entry: B[{at}] = {example})"
    raise error("shape", f"operands of '{e.op}' have types {show(left)} and {show(right)}; {hint}", e.span, rule)


# ------------------------------------------------------------------ Figure 8 and section 5
def check_program(program: ast.Program, first_dimension: int = 1) -> CheckedProgram:
    """ok-prog: form Γ from the declarations, then check every statement (ok-seq, ok-stmt).

    All problems are collected (one per statement at most) and raised together.
    ``first_dimension`` is the number the program's dialect gives the first dimension
    (0 for CFDlang), so that messages quote dimensions as the program writes them.
    """
    _check_size_expressions(program)
    diagnostics: list[Diagnostic] = check_annotations(program)
    reset = FIRST_DIMENSION.set(first_dimension)
    try:
        return check_statements(program, diagnostics, ok_stmt, ast.variables_read)
    finally:
        FIRST_DIMENSION.reset(reset)


def _check_size_expressions(program: ast.Program) -> None:
    """A size written only inside size expressions (``[p+p*p]``) gets no value from a
    shape: it must be given with params (it is bound before checking, so here it is an
    error naming it)."""
    plain = {d.name for decl in program.decls for d in decl.shape if isinstance(d, Sym) and not is_derived(d.name)}
    for decl in program.decls:
        for d in decl.shape:
            if isinstance(d, Sym) and is_derived(d.name):
                for name in free_sizes(d):
                    if name not in plain:
                        raise error("shape", f"the size {name!r} appears only in the size expression {d} of "
                                    f"{decl.name!r}, and no shape determines it; give its value with --param "
                                    f"{name}=N (params= in Python) or declare a dimension of size {name}",
                                    decl.span, "s-var")


def ok_stmt(stmt, gamma: Context, right=None, rule: str = "ok-stmt", declared: str = "declared") -> None:
    """ok-stmt (TeIL's OK-Stmt: ``rule``): x is declared, not an ``in`` variable, and the right
    side's type, ``right(stmt, gamma)`` (the model language's: :func:`_right_type`), is x's."""
    if stmt.target not in gamma:
        raise error("undeclared-assign", f"assignment to {stmt.target!r}, which is not {declared}", stmt.target_span, rule)
    expected = gamma[stmt.target]
    if (actual := (right or _right_type)(stmt, gamma)) != expected:
        raise error("assign-shape",
                    f"{stmt.target!r} has type {show(expected)} but the right side has type {show(actual)}",
                    stmt.target_span, rule)
    if gamma.quals[stmt.target] == "in":
        raise error("read-only", f"{stmt.target!r} is an 'in' variable and cannot be assigned", stmt.target_span, "d-in-var")


# ------------------------------------------------------------------ index form (SPEC section 3)
class _Binding:
    """One binding of an index variable (a left-side index or a ``sum``) and the extents
    its uses demand, each with the place that demands it."""

    def __init__(self, name: str, span: Span | None):
        self.name = name
        self.span = span
        self.extent: int | None = None
        self.origin = ""
        self.affine_uses = 0  # uses inside affine indices: they fix no extent

    def demand(self, extent: int, where: str, span: Span | None) -> None:
        """index-extent: every use of one index must agree on its extent."""
        if self.extent is None:
            self.extent, self.origin = extent, where
        elif self.extent != extent:
            raise error("index-extent",
                        f"index {self.name!r} ranges over {extent} in {where} but over {self.extent} in {self.origin}",
                        span, "index-extent")


def _right_type(stmt: ast.Stmt, gamma: Context) -> Shape:
    return check_index_stmt(stmt, gamma) if isinstance(stmt, ast.IndexAssign) else type_of(stmt.expr, gamma)


def check_index_stmt(stmt: ast.IndexAssign, gamma: Context) -> Shape:
    """An index-form statement: extents inferred, no implicit summation, distinct left
    indices; its type is its target's."""
    shape = gamma[stmt.target]
    _check_rank(stmt.target, shape, stmt.indices, "the left side gives", stmt.target_span)
    scope: dict[str, _Binding] = {}
    for position, (ref, extent) in enumerate(zip(stmt.indices, shape), start=1):
        name = ref.value
        if isinstance(name, Affine):
            raise error("syntax", f"the left side takes index variables only, not the affine index {name} "
                        "(a statement assigns its whole target; shift the right side's indices instead)", ref.span)
        if not isinstance(name, str):
            raise error("syntax", "the left side needs an index variable for every dimension (a statement assigns "
                        "a whole tensor)", ref.span)
        if name in scope:
            raise error("repeated-index", f"index {name!r} appears twice on the left side", ref.span, "repeated-index")
        scope[name] = _Binding(name, ref.span)
        scope[name].demand(extent, f"dimension {position} of {stmt.target!r}", ref.span)
    pending: list[_AffineUse] = []  # affine uses, checked once every extent is known
    _check_iexpr(stmt.expr, scope, gamma.shapes, pending)
    for use in pending:
        _check_affine(*use)
    return shape


def _check_rank(name: str, shape: Shape, indices, given: str, span: Span | None) -> None:
    """t-access: a variable takes exactly one index per dimension."""
    if len(indices) != len(shape):
        count = f"{len(indices)} ind{'ex' if len(indices) == 1 else 'ices'}"
        raise error("shape", f"{name!r} has type {show(shape)} of rank {len(shape)} but {given} {count}", span,
                    "t-access")


def _bound(name: str, ref: ast.IndexRef, scope: dict[str, _Binding]) -> _Binding:
    """The binding of an index variable used at ``ref``: free-index if there is none."""
    if name not in scope:
        inside = f" (in {ref.value})" if ref.is_affine else ""
        raise error("free-index",
                    f"index {name!r}{inside} is not bound: it is not on the left side and no sum({name}) encloses it "
                    "(there is no implicit summation)", ref.span, "free-index")
    return scope[name]


class _AffineUse(NamedTuple):
    """A use of an affine index, checked (t-access-affine) once every extent is known."""

    ref: ast.IndexRef
    value: Affine  # ref.value
    bindings: dict[str, _Binding]
    extent: int | None  # None: no upper bound, as in delta
    where: str


def _use(ref: ast.IndexRef, extent: int, where: str, scope: dict[str, _Binding], pending: list[_AffineUse]) -> None:
    """A use of one index at a dimension of the given extent.  An affine index is
    checked once its variables' extents are all known."""
    value = ref.value
    if isinstance(value, Affine):
        _use_affine(ref, value, extent, where, scope, pending)
    elif isinstance(value, str):
        _bound(value, ref, scope).demand(extent, where, ref.span)
    elif isinstance(extent, Sym) and value < 1:
        raise error("dim-range", f"position {value} is outside {where}; positions start at 1", ref.span, "t-access")
    elif not isinstance(extent, Sym) and not 1 <= value <= extent:  # a symbol: checked once bound (sizes)
        first = "; positions count from 1" if value < 1 else ""  # numpy's 0 for the first is the usual slip
        raise error("dim-range", f"position {value} is outside {where}, which has extent {extent}{first}", ref.span,
                    "t-access")


def _use_affine(ref: ast.IndexRef, value: Affine, extent: int | None, where: str, scope: dict[str, _Binding],
                pending: list[_AffineUse]) -> None:
    """A use of the affine index ``value`` (``ref``'s) at a dimension of the given extent
    (None: no upper bound, as in delta): its variables must be bound; its range is
    checked later, by :func:`_check_affine`."""
    bindings = {name: _bound(name, ref, scope) for name in index_variables(value)}
    for binding in bindings.values():
        binding.affine_uses += 1
    pending.append(_AffineUse(ref, value, bindings, extent, where))


def _check_affine(ref: ast.IndexRef, value: Affine, bindings: dict[str, _Binding], extent: int | None,
                  where: str) -> None:
    """t-access-affine: the affine index's positions over the box of its variables (its
    least and greatest, exactly) lie in 1..extent, so no access can leave its tensor."""
    extents = {name: binding.extent for name, binding in bindings.items()}
    if isinstance(extent, Sym) or any(isinstance(n, Sym) for n in extents.values()):
        return  # a range over symbolic extents is decided once they are bound (semantics/sizes.py)
    lo, hi = index_range(value, extents)
    inside_bounds = lo >= 1 and (extent is None or hi <= extent)
    if inside_bounds and max(abs(c) for c in (*dict(value.terms).values(), value.offset, hi)) < MAX_ELEMENTS:
        return
    if inside_bounds:  # numbers that cancel (or a delta's) would overflow the targets' int64 arithmetic
        raise error("too-large", f"index {value} uses numbers of 2^62 or more", ref.span, "t-access-affine")
    ranges = ", ".join(f"{name} in 1..{n}" for name, n in extents.items())
    inside = f"{where}, which has extent {extent}" if extent is not None else f"{where}, whose positions start at 1"
    raise error("dim-range", f"index {value} reaches positions {lo}..{hi} (for {ranges}), outside {inside}", ref.span,
                "t-access-affine")


def _check_iexpr(e: ast.Expr, scope: dict[str, _Binding], shapes: Mapping[str, Shape],
                 pending: list[_AffineUse]) -> None:
    if isinstance(e, (ast.Access, ast.Var)) and e.name not in shapes:
        raise error("undeclared", f"{e.name!r} is not declared", e.span, "t-var")
    if isinstance(e, ast.Access):
        shape = shapes[e.name]
        _check_rank(e.name, shape, e.indices, "is indexed with", e.span)
        for position, (ref, extent) in enumerate(zip(e.indices, shape), start=1):
            _use(ref, extent, f"dimension {position} of {e.name!r}", scope, pending)
    elif isinstance(e, ast.Var):
        if shapes[e.name] != ():
            raise error("shape",
                        f"{e.name!r} has type {show(shapes[e.name])}; in index form a tensor needs its indices, "
                        f"e.g. {e.name}[{', '.join('ijkl'[:len(shapes[e.name])] or '')}]", e.span, "t-access")
    elif isinstance(e, ast.Delta):
        for ref in (e.first, e.second):
            value = ref.value
            if isinstance(value, str):
                _bound(value, ref, scope)  # delta fixes no extent
            elif isinstance(value, Affine):
                _use_affine(ref, value, None, "delta", scope, pending)
            elif value < 1:
                raise error("dim-range", f"position {value} in delta must be at least 1", ref.span, "t-access")
            elif value >= MAX_ELEMENTS:  # C's 64-bit indices would wrap it; no extent reaches it
                raise error("too-large", f"position {value} in delta is 2^62 or more", ref.span, "t-access")
    elif isinstance(e, ast.Epsilon):
        n = len(e.indices)
        for ref in e.indices:
            _use(ref, n, f"the {n}-dimensional Levi-Civita symbol", scope, pending)
    elif isinstance(e, (ast.Sum, ast.Reduce)):  # every reduction binds like sum
        word = e.op if isinstance(e, ast.Reduce) else "sum"
        inner = dict(scope)
        bound = []
        for ref in e.indices:
            name = ref.variable  # a binder (the grammar's binder: NAME)
            if name in inner:
                raise error("repeated-index",
                            f"{word}({name}) binds an index that is already bound here; choose another name", ref.span,
                            "repeated-index")
            inner[name] = _Binding(name, ref.span)
            bound.append(inner[name])
            if ref.extent is not None:  # sum(a:3): the extent as written
                _check_written_extent(ref, ref.extent, "t-sum-extent")
                inner[name].demand(ref.extent, f"{word}({name}:{ref.extent})", ref.span)
        _check_iexpr(e.body, inner, shapes, pending)
        for binding in bound:
            if binding.extent is None:
                only = (", except inside affine indices, which fix no extent"
                        if binding.affine_uses else "")
                raise error("index-extent",
                            f"the extent of {binding.name!r} cannot be inferred: it indexes no tensor inside its {word}"
                            f"{only}; index a tensor with it or write its extent, {word}({binding.name}:N)",
                            binding.span, "index-extent")
    elif isinstance(e, ast.Stack):  # [e1, e2, ...][i]: i ranges over the items (t-stack)
        if e.index is None:
            raise error("syntax", "in index form a stack needs its index: [e1, e2][i]", e.span, "t-stack")
        _use(e.index, len(e.items), f"a stack of {len(e.items)}", scope, pending)
        for item in e.items:
            _check_iexpr(item, scope, shapes, pending)
    elif isinstance(e, ast.Concat):  # concat(a:3 => e1, b:4 => e2)[p] (t-concat)
        if e.index is None:
            raise error("syntax", "in index form a concat needs its parts and index: concat(a:3 => x[a], "
                        "b:4 => y[b])[p]", e.span, "t-concat")
        total = 0
        for n, (ref, item) in enumerate(zip(e.parts, e.items)):
            name = ref.variable
            if name in scope or name in {r.value for r in e.parts[:n]}:
                raise error("repeated-index", f"concat binds {name!r}, which is already bound here; choose "
                            "another name", ref.span, "repeated-index")
            extent = ref.extent if ref.extent is not None else 0
            _check_written_extent(ref, extent, "t-concat")
            total += extent
            inner = dict(scope)
            inner[name] = _Binding(name, ref.span)
            inner[name].demand(extent, f"concat({name}:{extent})", ref.span)
            _check_iexpr(item, inner, shapes, pending)
        if total >= MAX_ELEMENTS:
            raise error("too-large", f"concat gives a dimension of {total} entries", e.span, "t-concat")
        _use(e.index, total, f"a concat of {total}", scope, pending)
    elif isinstance(e, ast.Vec):
        raise error("syntax", "vec stands in operator form only (x = vec(e)); in index form write the "
                    "position, e.g. A[i,j] with p = (i-1)*n + j", e.span, "t-vec")
    elif isinstance(e, ast.Number):
        pass
    else:  # Binary, Neg, Call, Paren
        for child in ast.children(e):
            _check_iexpr(child, scope, shapes, pending)


def _check_written_extent(ref: ast.IndexRef, extent: int, rule: str) -> None:
    """The extent written for a bound index (``sum(a:3)``, ``concat(a:3 => ..)``) is a
    positive integer below 2^62."""
    if not 1 <= extent < MAX_ELEMENTS:
        code = "shape" if extent < 1 else "too-large"
        raise error(code, f"the extent of {ref.value!r} must be a positive integer below 2^62, got {extent}",
                    ref.span, rule)


def sum_extents(e: ast.Sum | ast.Reduce, shapes: Mapping[str, Shape]) -> tuple[int, ...]:
    """The extents of the indices a (well-typed) ``sum`` or other reduction binds: as
    written (``sum(a:3)``), else read off their first plain use."""
    found: dict[str, int] = {ref.variable: ref.extent for ref in e.indices if ref.extent is not None}
    wanted = {ref.variable for ref in e.indices}
    stack = [e.body]
    while stack and len(found) < len(wanted):
        node = stack.pop()
        # a plain use is a str index; positions and affine indices fix no extent
        if isinstance(node, ast.Access):
            for ref, extent in zip(node.indices, shapes[node.name]):
                if isinstance(ref.value, str) and ref.value in wanted:
                    found.setdefault(ref.value, extent)
        elif isinstance(node, ast.Epsilon):
            for ref in node.indices:
                if isinstance(ref.value, str) and ref.value in wanted:
                    found.setdefault(ref.value, len(node.indices))
        elif (isinstance(node, ast.Stack) and node.index is not None and isinstance(node.index.value, str)
              and node.index.value in wanted):
            found.setdefault(node.index.value, len(node.items))
        elif (isinstance(node, ast.Concat) and node.index is not None and isinstance(node.index.value, str)
              and node.index.value in wanted):
            found.setdefault(node.index.value, sum(ref.extent or 0 for ref in node.parts))
        stack.extend(ast.children(node))
    return tuple(found[ref.variable] for ref in e.indices)
