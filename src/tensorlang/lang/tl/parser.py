"""Parser for ``.tl`` files: ``grammar.lark`` to the AST of :mod:`.ast`, built by an inline transformer
as lark parses (LALR: no parse tree is kept, no recursion over one)."""

from __future__ import annotations

import contextvars
import functools
from importlib import resources

from lark import Lark, Token, Transformer, v_args

from ...ein.index import affine
from ...ein.printer import RESERVED
from ... import limits
from ...errors import Span, error
from ...semantics.sizes import extent_of, never_positive, poly_arith, poly_of
from .. import lark_support
from ..lark_support import MAX_NESTING, cover as _cover, tok_span as _tok_span  # noqa: F401 - MAX_NESTING re-exported
from . import ast, hints

# How the grammar's terminals read in a message about what was expected.
_TERMINAL_WORDS = {  # beside lark_support.COMMON_WORDS
    "NUMBER": "a number",
    "FUNC": "a function name",
    "SUM": "'sum'",
    "DELTA": "'delta'",
    "EPS": "'eps'",
    "VAR": "'var'",
    "IN": "'in'",
    "OUT": "'out'",
    "INOUT": "'inout'",
}


@v_args(inline=True)
class OperatorForm(Transformer):
    """The rules the model language and its CFDlang dialect (``cfd/parser.py``) write
    alike: the binary operators, ``#``, variables, numbers and parentheses."""

    @staticmethod
    def _binary(op: str):  # a helper that builds methods
        def build(self, left, _op, right):
            return ast.Binary(op, left, right, _cover(left, right))

        return build

    add, sub, mul, div = _binary("+"), _binary("-"), _binary("*"), _binary("/")

    def outer(self, left, _hash, right):
        return ast.Outer(left, right, _cover(left, right))

    def var(self, name):
        return ast.Var(str(name), _tok_span(name))

    def number(self, tok):
        return ast.Number(float(tok), str(tok), _tok_span(tok))

    def paren(self, lpar, expr, rpar):
        return ast.Paren(expr, _cover(lpar, rpar))


@v_args(inline=True)
class _ToAst(OperatorForm):
    """One method per grammar rule; each returns the AST node with its span.

    The parser keeps every token (``keep_all_tokens``) so that a node's span can reach
    from its first token to its last, parentheses and brackets included.
    """

    def program(self, *items):
        decls = tuple(i for i in items if isinstance(i, ast.Decl))
        stmts = tuple(i for i in items if not isinstance(i, ast.Decl))
        return ast.Program(decls, stmts, "tl")

    def decl(self, *items):
        _count_statement(items[0], declaration=True)
        structure = items[-1] if isinstance(items[-1], ast.Annotation) else None
        if structure is not None:
            items = items[:-1]
        qual = str(items[0]) if len(items) == 5 else None
        name, shape = items[-3], items[-1]
        if str(name) in RESERVED:
            raise error("syntax", f"{str(name)!r} is a reserved word and cannot name a variable", _tok_span(name))
        return ast.Decl(str(name), shape[0], qual, _cover(items[0], structure or shape), _tok_span(name), structure)

    def structure_word(self, tok):
        return ast.Annotation(str(tok), span=_tok_span(tok))

    def structure_slice(self, tok, _lpar, number, rpar):
        return ast.Annotation(str(tok), lark_support.integer(number), span=_cover(tok, rpar))

    def structure_where(self, tok, *rest):
        conditions = tuple(c for c in rest if isinstance(c, tuple))
        last = conditions[-1][1]
        return ast.Annotation("where", None, tuple(c[0] for c in conditions), _cover(tok, last))

    def wcond(self, *items):
        """A chain ``i1 <= i2 < 5``: ((indices, operators), its last index, for the span)."""
        refs = tuple(i for i in items if isinstance(i, ast.IndexRef))
        ops = tuple("=" if str(t) == "==" else str(t) for t in items if isinstance(t, Token) and t.type == "WCMP")
        return (tuple(r.value for r in refs), ops), refs[-1]

    def qual(self, tok):
        return tok

    def shape(self, lsqb, *rest):
        dims, rsqb = tuple((extent_of(poly), span) for poly, span in rest[:-1]), rest[-1]
        lark_support.apart(span for _, span in dims)
        for extent, span in dims:
            if never_positive(extent) and not isinstance(extent, int):
                raise error("shape", f"the size expression {extent} is below 1 for every value of its sizes",
                            span, "s-var")
        return tuple(extent for extent, _ in dims), _cover(lsqb, rsqb)

    # a size expression (docs/language.md, "Size expressions"): (polynomial, span) pairs
    def dim_atom(self, *items):
        if len(items) == 3:
            return items[1][0], _cover(items[0], items[2])
        extent = lark_support.extents(items, RESERVED)[0]
        return poly_of(extent) or {}, _tok_span(items[0])

    def dim(self, first, *rest):
        poly, span = first
        for op, (other, last) in zip(rest[::2], rest[1::2]):
            span = Span(span.line, span.col, last.end_line, last.end_col)
            poly = poly_arith(str(op), poly, other, span)
        return poly, span

    dim_term = dim

    def assign(self, name, _eq, expr):
        _count_statement(name)
        return lark_support.shallow(ast.Assign(str(name), expr, _cover(name, expr), _tok_span(name)), ast.children)

    def contract(self, expr, _dot, cpairs):
        pairs, grouped, span = cpairs
        return ast.Contract(expr, pairs, grouped, _cover(expr, cpairs))

    def transpose(self, expr, _caret, pair):
        return ast.Transpose(expr, pair, _cover(expr, pair))

    def single_pair(self, pair):
        return (pair,), False, pair.span

    def pair_group(self, lsqb, *rest):
        return tuple(rest[:-1]), True, _cover(lsqb, rest[-1])

    def pair(self, lsqb, m, n, rsqb):
        return ast.Pair(lark_support.integer(m), lark_support.integer(n), _cover(lsqb, rsqb))

    def neg(self, minus, expr):
        return ast.Neg(expr, _cover(minus, expr))

    def call(self, fn, _lpar, arg, rpar):
        return ast.Call(str(fn), arg, _cover(fn, rpar))

    # ------------------------------------------------------------ index form
    iadd, isub, imul, idiv = OperatorForm.add, OperatorForm.sub, OperatorForm.mul, OperatorForm.div
    ineg, ivar, inumber, iparen, icall = neg, OperatorForm.var, OperatorForm.number, OperatorForm.paren, call

    def stack(self, lsqb, *rest):
        items = tuple(i for i in rest if not isinstance(i, Token))
        return ast.Stack(items, None, _cover(lsqb, rest[-1]))

    def concat(self, kw, _lpar, *rest):
        items = tuple(i for i in rest if not isinstance(i, Token))
        return ast.Concat(items, (), None, _cover(kw, rest[-1]))

    def vec(self, kw, _lpar, expr, rpar):
        return ast.Vec(expr, _cover(kw, rpar))

    def cpart(self, name, _colon, extent, _arrow, expr):
        ref = ast.IndexRef(str(name), _cover(name, extent), extent=lark_support.integer(extent))
        return ref, expr

    def iconcat(self, kw, _lpar, *rest):
        # rest: parts and commas, ")", "[", idx, "]"
        parts = tuple(i for i in rest[:-4] if isinstance(i, tuple))
        return ast.Concat(tuple(e for _, e in parts), tuple(r for r, _ in parts), rest[-2], _cover(kw, rest[-1]))

    def istack(self, lsqb, *rest):
        # rest: items and commas, "]", "[", idx, "]"
        items = tuple(i for i in rest[:-4] if not isinstance(i, Token))
        return ast.Stack(items, rest[-2], _cover(lsqb, rest[-1]))

    def idx_term(self, *toks):
        """(variable or None, coefficient or value, first token, last token)."""
        name = next((str(t) for t in toks if t.type == "NAME"), None)
        number = next((lark_support.integer(t) for t in toks if t.type == "INT"), 1)
        return name, number, toks[0], toks[-1]

    def idx(self, *items):
        """A lone name is an index variable, a lone integer a position; anything else
        is an affine expression: an ``int`` position when no variable is left, else an
        ``Affine`` (a lone variable written as an expression, ``i+0``, included)."""
        terms, offset, sign = [], 0, 1
        for item in items:
            if isinstance(item, Token):  # + or -
                sign = -1 if item.type == "MINUS" else 1
                continue
            name, number, _, _ = item
            if name is None:
                offset += sign * number
            else:
                terms.append((name, sign * number))
        first, last = items[0], items[-1]
        span = _cover(first if isinstance(first, Token) else first[2], last[3])
        if len(items) == 1 and first[2] is first[3]:  # a single NAME or INT token
            tok = first[2]
            return ast.IndexRef(lark_support.integer(tok) if tok.type == "INT" else str(tok), span)
        return ast.IndexRef(affine(terms, offset), span)

    def binder(self, name, *extent):
        """A reduction's variable, with its extent when written ``a:3``."""
        given = lark_support.integer(extent[-1]) if extent else None
        return ast.IndexRef(str(name), _cover(name, extent[-1]) if extent else _tok_span(name), extent=given)

    @staticmethod
    def _indices(items) -> tuple:
        return tuple(i for i in items if isinstance(i, ast.IndexRef))

    def index_assign(self, name, *rest):
        _count_statement(name)
        expr = rest[-1]
        stmt = ast.IndexAssign(str(name), self._indices(rest), expr, _cover(name, expr), _tok_span(name))
        return lark_support.shallow(stmt, ast.children)

    def scalar_assign(self, name, _eq, expr):
        """``s = sum(i) M[i,i]``: index form with no target indices, as ``s[] = ...``
        (the checker then requires ``s`` to be of rank 0, like any index statement)."""
        _count_statement(name)
        stmt = ast.IndexAssign(str(name), (), expr, _cover(name, expr), _tok_span(name))
        return lark_support.shallow(stmt, ast.children)

    def access(self, name, *rest):
        return ast.Access(str(name), self._indices(rest), _cover(name, rest[-1]))

    def delta(self, kw, *rest):
        first, second = self._indices(rest)
        return ast.Delta(first, second, _cover(kw, rest[-1]))

    def eps(self, kw, *rest):
        return ast.Epsilon(self._indices(rest), _cover(kw, rest[-1]))

    def isum_(self, kw, *rest):
        body = rest[-1]
        return ast.Sum(self._indices(rest[:-1]), body, _cover(kw, body))

    def ireduce_(self, word, *rest):
        if str(word) not in ast.REDUCTIONS:
            raise error("syntax", f"unknown reduction {str(word)!r}; index form has sum, {', '.join(ast.REDUCTIONS)}",
                        _tok_span(word))
        body = rest[-1]
        return ast.Reduce(str(word), self._indices(rest[:-1]), body, _cover(word, body))


@functools.lru_cache(maxsize=None)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text()
    grammar = grammar.replace("@FUNCTIONS@", "|".join(ast.FUNCTIONS))
    return lark_support.lalr_parser(grammar, start="program", keep_all_tokens=True, transformer=_ToAst())


def _hint(previous, tok):
    """Declarations in the wrong place get a message that says what is wrong."""
    # a name where the parser expected none may have been lexed as a size (SIZE)
    if previous is None or previous.type not in ("NAME", "SIZE"):
        return None
    if str(previous) in ("var", "in", "out", "inout") and lark_support.statement_before(_text.get(), previous):
        return "declarations must come before statements", _tok_span(previous)
    if str(previous) in ("in", "out", "inout") and tok.type in ("NAME", "SIZE"):  # `var in A`, `in A : [3]`
        return "a declaration is written '[in|out|inout] var NAME : [d1 ... dk]'", _tok_span(previous)
    return None


def parse_model(text: str) -> ast.Program:
    """Parse model-language source into a :class:`~tensorlang.syntax.ast.Program`.

    Raises :class:`TensorLangError` with code ``syntax`` at the first token the grammar
    cannot accept.
    """
    token, counted = _text.set(text), _statements.set([0, 0, limits.max_statements()])
    try:
        return lark_support.parse(_parser(), text, _TERMINAL_WORDS, _hint, hints.hint)
    finally:
        _text.reset(token)
        _statements.reset(counted)


def _count_statement(token, declaration: bool = False) -> None:
    """One more statement (or declaration) parsed: past ``limits.max_statements()`` of
    either the parse stops here with error[too-large] (the parser calls the rules'
    methods as it reduces, so a longer program costs no more than the limit's worth of
    parsing)."""
    counter = _statements.get()
    if counter is None:  # the transformer run outside parse_model: no limit
        return
    counter[declaration] += 1
    if counter[declaration] > counter[2]:
        limits.check_statements(counter[declaration], _tok_span(token), "declarations" if declaration else "statements")


#: Statements and declarations parsed so far, and the most allowed of each ([statements,
#: declarations, limit]), for the parse under way.
_statements: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("tensorlang_model_statements",
                                                                                 default=None)


#: The text being parsed, for the hint (lark's callbacks see tokens, not the text).
_text: contextvars.ContextVar[str] = contextvars.ContextVar("tensorlang_model_text", default="")
