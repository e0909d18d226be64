"""Parser for ``.teil`` files: ``grammar.lark`` to the AST of :mod:`.ast`, as the model-language parser does."""

from __future__ import annotations

import functools
from importlib import resources

from lark import Lark, Token, Transformer, v_args

from ...errors import error
from .. import lark_support
from ..lark_support import cover as _cover, tok_span as _tok_span
from . import ast

_TERMINAL_WORDS = {  # beside lark_support.COMMON_WORDS
    "BINARY": "add, mul or prod",
    "UNARY": "an operator (red+, transp, diag, ...)",
    "ALLOC": "'alloc'",
}


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
        extents = [t for t in rest if isinstance(t, Token) and t.type in ("INT", "NAME")]
        return lark_support.extents(extents, ast.RESERVED), _cover(lsqb, rest[-1])

    def stmt(self, name, _eq, expr):
        if str(name) in ast.RESERVED:
            raise error("syntax", f"{str(name)!r} is a TeIL keyword and cannot name a variable", _tok_span(name))
        return lark_support.shallow(ast.Assign(str(name), expr, _cover(name, expr), _tok_span(name)), ast.children)

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
            raise error("syntax", f"{word} takes {forms} integer argument{'s' if full != 1 else ''} before its "
                        f"operand, got {len(ints)}", head)
        return ast.Op(word, tuple(lark_support.integer(t) for t in ints), (operand,), _cover(op, operand), head,
                      tuple(_tok_span(t) for t in ints))


@functools.lru_cache(maxsize=None)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text()
    return lark_support.lalr_parser(grammar, start="program", keep_all_tokens=True, transformer=_ToAst())


def _hint(text, previous, tok):
    """An allocation after a statement: its words are read as names there (``alloc`` and
    the qualifiers are no keywords in a statement).  Only then, not for a malformed
    allocation such as ``in in alloc x``, is the order what is wrong."""
    if (previous is not None and previous.type == "NAME" and str(previous) in ("alloc", "in", "out", "inout")
            and lark_support.statement_before(text, previous)):
        return "allocations must come before statements", _tok_span(previous)
    if previous is not None and previous.type == "NAME" and str(previous) in ast.RESERVED:  # `alloc alloc x`
        return f"{str(previous)!r} is a TeIL keyword and cannot name a variable", _tok_span(previous)
    return None


def parse_teil(text: str) -> ast.Program:
    """Parse TeIL source into a :class:`~tensorlang.teil.ast.Program` (error[syntax] at the
    first token the grammar cannot accept)."""
    return lark_support.parse(_parser(), text, _TERMINAL_WORDS, functools.partial(_hint, text))
