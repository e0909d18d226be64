"""Parser for ``.teil`` files: ``grammar.lark`` to the AST of :mod:`.ast`.

Like the model-language parser, lark runs LALR(1) with the transformer inline, every
token is kept so that nodes get spans from their first to their last token, and any
problem is error[syntax] at the offending token.
"""

from __future__ import annotations

import functools
from importlib import resources

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..errors import MAX_DEPTH, Span, TensorLangError, error
from ..syntax.model import _check_nesting, _end_position
from . import ast

_TERMINAL_WORDS = {
    "NAME": "a name",
    "INT": "an integer",
    "BINARY": "add, mul or prod",
    "UNARY": "an operator (red+, transp, diag, ...)",
    "LSQB": "'['",
    "RSQB": "']'",
    "LPAR": "'('",
    "RPAR": "')'",
    "EQUAL": "'='",
    "COLON": "':'",
    "COMMA": "','",
    "ALLOC": "'alloc'",
    "$END": "end of input",
}


def _tok_span(tok) -> Span:
    return Span(tok.line, tok.column, tok.end_line, tok.end_column)


def _start(item) -> Span:
    if isinstance(item, Token):
        return _tok_span(item)
    if isinstance(item, tuple):
        return item[-1]
    return item.span


def _cover(first, last) -> Span:
    a, b = _start(first), _start(last)
    return Span(a.line, a.col, b.end_line, b.end_col)


@v_args(inline=True)
class _ToAst(Transformer):
    def program(self, *items):
        allocs = tuple(i for i in items if isinstance(i, ast.Alloc))
        stmts = tuple(i for i in items if isinstance(i, ast.Assign))
        return ast.Program(allocs, stmts)

    def alloc(self, *items):
        qual = str(items[0]) if len(items) == 5 else None
        name, shape = items[-3], items[-1]
        if str(name) in ast.RESERVED:
            raise error("syntax", f"{str(name)!r} is a TeIL keyword and cannot name a variable", _tok_span(name))
        return ast.Alloc(str(name), shape[0], qual, _cover(items[0], shape), _tok_span(name))

    def qual(self, tok):
        return tok

    def shape(self, lsqb, *rest):
        ints = [t for t in rest if isinstance(t, Token) and t.type == "INT"]
        return tuple(int(i) for i in ints), _cover(lsqb, rest[-1])

    def stmt(self, name, _eq, expr):
        if str(name) in ast.RESERVED:
            raise error("syntax", f"{str(name)!r} is a TeIL keyword and cannot name a variable", _tok_span(name))
        return ast.Assign(str(name), expr, _cover(name, expr), _tok_span(name))

    def var(self, name):
        return ast.Var(str(name), _tok_span(name))

    def paren(self, lpar, expr, rpar):
        return ast.Paren(expr, _cover(lpar, rpar))

    def binary(self, op, left, right):
        return ast.Op(str(op), (), (left, right), _cover(op, right), _tok_span(op), ())

    def unary(self, op, *rest):
        ints, operand = rest[:-1], rest[-1]
        word = str(op)
        head = _cover(op, ints[-1]) if ints else _tok_span(op)
        full, core = ast.FULL_ARITY[word], ast.CORE_ARITY.get(word)
        if len(ints) not in (full, core):
            forms = f"{full}" + (f" (full TeIL) or {core} (Core-TeIL)" if core is not None else "")
            raise error(
                "syntax",
                f"{word} takes {forms} integer argument{'s' if full != 1 else ''} before its operand, got {len(ints)}",
                head,
            )
        return ast.Op(word, tuple(int(t) for t in ints), (operand,), _cover(op, operand), head,
                      tuple(_tok_span(t) for t in ints))


@functools.lru_cache(maxsize=None)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text()
    return Lark(grammar, start="program", parser="lalr", keep_all_tokens=True, transformer=_ToAst())


def _expected(names) -> str:
    words = sorted({_TERMINAL_WORDS.get(n, n.lower()) for n in names})
    if len(words) > 6:
        words = words[:6] + ["..."]
    return ("; expected " + ", ".join(words)) if words else ""


def parse_teil(text: str) -> ast.Program:
    """Parse TeIL source into a :class:`~tensorlang.teil.ast.Program` (error[syntax] at the
    first token the grammar cannot accept)."""
    _check_nesting(text)
    try:
        program = _parser().parse(text)
    except UnexpectedCharacters as exc:
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        raise error("syntax", f"unexpected character {ch!r}", Span.point(exc.line, exc.column)) from None
    except UnexpectedEOF as exc:
        line, col = _end_position(text)
        raise error("syntax", "unexpected end of input" + _expected(exc.expected), Span.point(line, col)) from None
    except UnexpectedToken as exc:
        tok = exc.token
        previous = (exc.token_history or [None])[-1]
        if previous is not None and str(previous) in ("alloc", "in", "out", "inout"):
            raise error("syntax", "allocations must come before statements", _tok_span(previous)) from None
        if tok.type == "$END":
            span = Span.point(*_end_position(text))
            what = "end of input"
        else:
            span, what = _tok_span(tok), repr(str(tok))
        raise error("syntax", f"unexpected {what}" + _expected(exc.expected), span) from None
    except UnexpectedInput as exc:  # pragma: no cover - lark's other cases
        raise error("syntax", str(exc).splitlines()[0], Span.point(exc.line, exc.column)) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, TensorLangError):
            raise exc.orig_exc from None
        raise
    for stmt in program.stmts:
        _check_depth(stmt)
    return program


def _check_depth(stmt: ast.Assign) -> None:
    """Bound the expression depth so that the recursive later stages stay in their limit."""
    stack = [(stmt.expr, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise error("too-large", f"the expression is nested more than {MAX_DEPTH} operators deep", stmt.span)
        stack.extend((child, depth + 1) for child in ast.children(node))

