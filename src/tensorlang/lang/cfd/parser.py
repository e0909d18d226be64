"""Parser for ``.cfd`` files (``cfd.lark``) into the model language's AST, with spans into the
``.cfd`` text; what the model language has no words for is resolved here (docs/cfdlang.md)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Mapping

from lark import Lark, Token, v_args

from ...errors import Span, error
from ...semantics.sizes import Extent, Sym
from ..tl import ast
from .. import lark_support
from ..lark_support import cover as _cover, tok_span as _tok_span
from ..tl.parser import OperatorForm
from ..tl.typecheck import type_of

#: The public compiler's keywords; they cannot name a variable or a type.
KEYWORDS = frozenset({"var", "type", "input", "output", "elem"})

_TERMINAL_WORDS = {  # beside lark_support.COMMON_WORDS
    "DECIMAL": "a number",
    "VAR": "'var'",
    "TYPE": "'type'",
    "INPUT": "'input'",
    "OUTPUT": "'output'",
    "ELEM": "'elem'",
}


# ---------------------------------------------------------------- parse-time records
@dataclass(frozen=True)
class _TensorContract:
    """``x . y`` with y a tensor: resolved into ``(x # y) . [r r+1]`` once x's rank is known."""

    left: ast.Expr
    right: ast.Expr
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class _TypeExpr:
    """The right side of ``var x :`` / ``type T :``: a type name or a list of sizes."""

    name: Token | None
    sizes: tuple[Token, ...]
    span: Span


@dataclass(frozen=True)
class _Decl:
    kind: str  # "var" or "type"
    name: Token
    quals: tuple[str, ...]
    type_expr: _TypeExpr
    span: Span


def _check_name(tok: Token, what: str) -> None:
    if str(tok) in KEYWORDS:
        raise error("syntax", f"{str(tok)!r} is a keyword of CFDlang and cannot name {what}", _tok_span(tok))


def _int_list(e) -> bool:
    """A bracket of integer literals: one dimension list (CFDlang's ``isIntegerList``)."""
    return isinstance(e, ast.Stack) and all(
        isinstance(i, ast.Number) and i.text.isdigit() for i in e.items
    )


def _list_of_lists(e) -> bool:
    """CFDlang's ``isListOfLists``: ``[[0 1] [2 3]]``, the right side of ``.`` or ``^``."""
    return isinstance(e, ast.Stack) and all(_int_list(i) for i in e.items)


def _pair(lst: ast.Stack, what: str) -> ast.Pair:
    """A 0-based dimension list ``[m n]`` as the model's 1-based pair."""
    if len(lst.items) != 2:
        raise error("syntax", f"a {what} list names two dimensions, [m n]; this one names {len(lst.items)}", lst.span)
    m, n = (lark_support.integer(i.text, i.span) for i in lst.items if isinstance(i, ast.Number))
    return ast.Pair(m + 1, n + 1, lst.span)


@v_args(inline=True)
class _ToAst(OperatorForm):
    """Builds model-language AST nodes while lark parses (LALR, inline transformer)."""

    def program(self, *items):
        return items

    # ------------------------------------------------------------ declarations
    def var_decl(self, kw, iospec, name, _colon, type_expr):
        _check_name(name, "a variable")
        return _Decl("var", name, iospec, type_expr, _cover(kw, type_expr))

    def type_decl(self, kw, name, _colon, type_expr):
        _check_name(name, "a type")
        return _Decl("type", name, (), type_expr, _cover(kw, type_expr))

    def iospec(self, *toks):
        return tuple(str(t) for t in toks)

    def type_name(self, name):
        _check_name(name, "a type")
        return _TypeExpr(name, (), _tok_span(name))

    def type_dims(self, lsqb, *rest):
        sizes = tuple(rest[:-1])
        lark_support.apart(_tok_span(tok) for tok in sizes)
        return _TypeExpr(None, sizes, _cover(lsqb, rest[-1]))

    def size(self, tok):
        return tok

    def elem_directive(self, kw, bracket, count, position):
        raise error("syntax", "the 'elem' directive of the public CFDlang compiler (loops over elements) is not "
                    "supported; give the element dimension in the variables' types instead", _cover(kw, position))

    # ------------------------------------------------------------ statements
    def stmt(self, name, _eq, expr):
        _check_name(name, "a variable")
        return lark_support.shallow(ast.Assign(str(name), expr, _cover(name, expr), _tok_span(name)), _children)

    def contract(self, left, dot, right):
        span = _cover(left, right)
        if not _list_of_lists(right):
            return _TensorContract(left, right, span)
        if not right.items:
            raise error("syntax", "a contraction needs at least one pair of dimensions: x . [[m n]]", right.span)
        pairs = tuple(_pair(lst, "contraction") for lst in right.items if lst.items)  # [] is skipped, as CFDlang does
        if not pairs:
            return ast.Paren(left, span)
        # grouped: the list of lists reads as the model language's group [[m n] ...]
        return ast.Contract(left, pairs, True, span)

    def transpose(self, left, caret, right):
        if not _list_of_lists(right):
            raise error("syntax", "the right side of '^' must be a list of dimension pairs, such as [[0 1]]",
                        right.span)
        if not right.items:
            raise error("syntax", "a transposition needs at least one pair of dimensions: x ^ [[m n]]", right.span)
        # the pairs are applied one after the other, as CFDlang's type checker does;
        # pairs without a common dimension (the usual case) commute: all at once
        result = left
        for lst in right.items:
            result = ast.Transpose(result, _pair(lst, "transposition"), _cover(left, lst))
        return result

    def var(self, name):
        _check_name(name, "a variable")
        return ast.Var(str(name), _tok_span(name))

    def bracket(self, lsqb, *rest):
        return ast.Stack(tuple(rest[:-1]), None, _cover(lsqb, rest[-1]))


@functools.lru_cache(maxsize=None)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("cfd.lark").read_text()
    return lark_support.lalr_parser(grammar, start="program", keep_all_tokens=True, transformer=_ToAst())


def _hint(text, previous, tok):
    """A declaration after the statements: CFDlang's compiler requires them first too.
    Only where a statement comes before: ``var var x`` is a malformed declaration."""
    if tok.type == "$END":
        return None
    if (previous is not None and str(previous) in ("var", "type") and previous.type in ("NAME", "VAR", "TYPE")
            and lark_support.statement_before(text, previous)):
        return "declarations must come before statements", _tok_span(previous)
    if tok.type in ("VAR", "TYPE") and lark_support.statement_before(text, tok):
        return "declarations must come before statements", _tok_span(tok)
    if previous is not None and previous.type == "NAME" and str(previous) in KEYWORDS:  # `var var x`
        return f"{str(previous)!r} is a keyword of CFDlang and cannot name anything", _tok_span(previous)
    return None


# ---------------------------------------------------------------- resolution
def _qualifier(quals: tuple[str, ...]) -> str | None:
    """CFDlang's IO bits: ``input`` and ``output`` may repeat and combine."""
    is_in, is_out = "input" in quals, "output" in quals
    return {(True, True): "inout", (True, False): "in", (False, True): "out"}.get((is_in, is_out))


def _extent(tok: Token) -> Extent:
    """A number, or a symbolic size (bound later: --param, params=, or the inputs' shapes)."""
    if tok.type == "INT":
        return lark_support.integer(tok)
    if tok.type == "DECIMAL":
        raise error("syntax", f"an extent is a whole number, got {str(tok)}", _tok_span(tok))
    if str(tok) in KEYWORDS:
        raise error("syntax", f"{str(tok)!r} is a keyword and cannot name a size", _tok_span(tok))
    return Sym(str(tok))


class _Resolver:
    """Declarations to model declarations; type names and sizes to extents;
    tensor-tensor contractions to outer product and contraction."""

    def __init__(self):
        self.types: dict[str, tuple[tuple[int, ...], Token]] = {}
        self.vars: dict[str, Token] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}

    def shape(self, t: _TypeExpr) -> tuple[int, ...]:
        if t.name is None:
            return tuple(_extent(tok) for tok in t.sizes)  # type: ignore[misc]  # symbols until bound
        name = str(t.name)
        if name in self.types:
            return self.types[name][0]
        if name in self.vars:
            raise error("undeclared", f"{name!r} is a variable, not a type", t.span, "s-var")
        raise error("undeclared", f"type {name!r} is not declared (declare it first: type {name} : [...])", t.span)

    def declare(self, d: _Decl) -> ast.Decl | None:
        name = str(d.name)
        first = self.types.get(name, (None, None))[1] or (self.vars.get(name) if d.kind == "type" else None)
        if first is not None:
            raise error("redeclared", f"{name!r} is declared twice (first declared at line {first.line}); "
                        "types and variables share one name space", _tok_span(d.name), "s-var")
        shape = self.shape(d.type_expr)
        if d.kind == "type":
            self.types[name] = (shape, d.name)
            return None
        self.vars.setdefault(name, d.name)
        self.shapes.setdefault(name, shape)
        return ast.Decl(name, shape, _qualifier(d.quals), d.span, _tok_span(d.name))

    def statement(self, s: ast.Assign) -> ast.Assign:
        if s.target in self.types:
            raise error("undeclared-assign", f"{s.target!r} names a type; only variables are assigned",
                        s.target_span, "ok-stmt")
        return ast.Assign(s.target, self.expr(s.expr), s.span, s.target_span)

    def expr(self, e):
        if isinstance(e, ast.Var):
            if e.name in self.types:
                raise error("undeclared", f"{e.name!r} names a type, not a variable", e.span, "t-var")
            return e
        if isinstance(e, ast.Number):
            return e
        if isinstance(e, (ast.Paren, ast.Contract, ast.Transpose)):
            return replace(e, expr=self.expr(e.expr))
        if isinstance(e, (ast.Outer, ast.Binary)):
            return replace(e, left=self.expr(e.left), right=self.expr(e.right))
        if isinstance(e, ast.Stack):
            if not e.items:
                raise error("syntax", "a stack needs at least one operand: [a b c]", e.span, "t-stack")
            return ast.Stack(tuple(self.expr(i) for i in e.items), None, e.span)
        if isinstance(e, _TensorContract):
            return self.tensor_contract(e)
        raise TypeError(f"not a CFDlang expression: {e!r}")  # pragma: no cover

    def tensor_contract(self, e: _TensorContract) -> ast.Contract:
        """``x . y``: the last dimension of x against the first of y (CFDlang's Sema)."""
        left, right = self.expr(e.left), self.expr(e.right)
        rank = len(type_of(left, self.shapes))  # raises the checker's own errors
        for side, operand in (("left", left), ("right", right)):
            if side == "left" and rank == 0 or side == "right" and type_of(operand, self.shapes) == ():
                raise error("dim-range",
                            f"'.' between two tensors contracts the last dimension of the left operand with the "
                            f"first of the right one, but the {side} operand is a scalar", operand.span, "t-contr")
        return ast.Contract(ast.Outer(left, right, e.span), (ast.Pair(rank, rank + 1, e.span),), False, e.span)


def _children(e):
    if isinstance(e, _TensorContract):
        return (e.left, e.right)
    return ast.children(e)


def parse_cfd(text: str, params: Mapping[str, int] | None = None) -> ast.Program:
    """Parse a CFDlang program into the model language's AST (``lang="cfd"``).

    Symbolic sizes in types (``type m3 : [n n n]``) stay symbols here; the registry binds
    ``params`` (``--param n=5``) for every front end (:func:`tensorlang.semantics.sizes.bind`).
    Raises :class:`TensorLangError` with the span of the offending text."""
    items = lark_support.parse(_parser(), text, _TERMINAL_WORDS, functools.partial(_hint, text))
    resolver = _Resolver()
    decls, stmts = [], []
    for item in items:
        if isinstance(item, _Decl):
            decl = resolver.declare(item)
            if decl is not None:
                decls.append(decl)
        else:
            stmts.append(item)
    resolved = tuple(resolver.statement(s) for s in stmts)
    return ast.Program(tuple(decls), resolved, "cfd")
