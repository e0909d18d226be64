"""Parser for ``.stur`` files: ``grammar.lark`` (LALR(1)) to the AST of :mod:`.ast`, error[syntax]
at the offending token."""

from __future__ import annotations

import functools
from importlib import resources

from lark import Lark, Token, Transformer, v_args

from ...errors import Span, error
from .. import lark_support
from ..lark_support import tok_span
from . import ast, linear

_TERMINAL_WORDS = {"SYMBOLS": "'symbols'", "OUTPUTS": "'outputs'", "ITERS": "'iters'", "INV": "'^-1'",
                   "CMP": "a comparison", "NUMBER": "a number", "_NL": "end of line", "__ANON_0": "':='"}


def _span(meta) -> Span:
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def _names(items) -> tuple[Token, ...]:
    return tuple(t for t in items if isinstance(t, Token) and t.type == "NAME")


@v_args(inline=True, meta=True)
class _ToAst(Transformer):
    def program(self, meta, *items):
        symbols: list[str] = []
        outputs: list[str] = []
        iters: list[tuple[str, tuple[str, ...]]] = []
        rules: list[ast.Rule] = []
        spans: list[tuple[str, Span]] = []
        inside = False
        for item in items:
            if isinstance(item, Token) and item.type == "PRE_START":
                if inside:
                    raise error("syntax", "@preprocess_start inside a preprocessing block", tok_span(item))
                inside = True
            elif isinstance(item, Token) and item.type == "PRE_END":
                if not inside:
                    raise error("syntax", "@preprocess_end without @preprocess_start", tok_span(item))
                inside = False
            elif isinstance(item, ast.Rule):
                rules.append(ast.Rule(item.name, item.kind, item.args, item.products, item.span, item.head_span,
                                      inside))
            elif item[0] == "symbols":
                for tok in item[1]:
                    if str(tok) in symbols:
                        raise error("redeclared", f"symbol {str(tok)!r} is listed twice", tok_span(tok))
                    symbols.append(str(tok))
                    spans.append((str(tok), tok_span(tok)))
            elif item[0] == "outputs":
                outputs.extend(str(t) for t in item[1])
                spans.extend((str(t), tok_span(t)) for t in item[1])
            else:
                iters.extend(item[1])
        if inside:
            raise error("syntax", "@preprocess_start without @preprocess_end", rules[-1].span if rules else None)
        return ast.Program(tuple(symbols), tuple(dict.fromkeys(outputs)), tuple(iters), tuple(rules),
                           spans=tuple(spans))

    def symbols(self, meta, _kw, *names):
        return ("symbols", _names(names))

    def outputs(self, meta, _kw, *names):
        return ("outputs", _names(names))

    def iters(self, meta, _kw, *maps):
        return ("iters", tuple(m for m in maps if isinstance(m, tuple)))

    def iter_map(self, meta, name, *variables):
        return (str(name), tuple(str(v) for v in _names(variables)))

    def rule(self, meta, head, terms):
        name, kind, args, head_span = head
        return ast.Rule(name, kind, args, terms, _span(meta), head_span)

    def head(self, meta, name, *rest):
        kind = None
        if rest and isinstance(rest[0], tuple):
            kind_tok = rest[0][0]
            if str(kind_tok) not in ast.KINDS:
                raise error("syntax", f"unknown fact {str(name)}:{str(kind_tok)}; a head is T(...), T:D(...) "
                            "(dimensions), T:U(...) (unique set) or T:R(...) (redundancy map)", tok_span(kind_tok))
            kind = str(kind_tok)
        return str(name), kind, tuple(str(n) for n in _names(rest)), _span(meta)

    def kind(self, meta, tok):
        return (tok,)

    def terms(self, meta, *products):
        return tuple(products)

    def product(self, meta, *factors):
        return ast.Product(tuple(factors), _span(meta))

    def access(self, meta, name, *rest):
        inverse = any(isinstance(t, Token) and t.type == "INV" for t in rest)
        names = _names(rest)
        return ast.Access(str(name), tuple(str(n) for n in names), inverse, _span(meta),
                          tuple(tok_span(n) for n in names))

    def number(self, meta, *toks):
        negative = any(t.type == "MINUS" for t in toks)
        inverse = any(t.type == "INV" for t in toks)
        (num,) = [t for t in toks if t.type == "NUMBER"]
        value = float(str(num))
        return ast.Number(-value if negative else value, inverse, _span(meta))

    def paren(self, meta, *items):
        exprs = tuple(i for i in items if not isinstance(i, Token))
        ops = tuple("=" if str(t) == "==" else str(t) for t in items if isinstance(t, Token) and t.type == "CMP")
        if not ops:  # ``(-1)``: a parenthesized number
            value = _constant(exprs[0])
            if value is None:
                raise error("syntax", "a parenthesized factor must be a comparison such as (i <= j) or a number "
                            "such as (-1)", _span(meta))
            return ast.Number(float(value), False, _span(meta))
        return ast.Condition(exprs, ops, _span(meta))

    def ibin(self, meta, left, op, right):
        return ast.IBin(str(op), left, right, _span(meta))

    def iname(self, meta, tok):
        return ast.IName(str(tok), tok_span(tok))

    def inum(self, meta, tok):
        text = str(tok)
        if not text.isdigit():
            raise error("syntax", f"index expressions are integers; {text!r} is not one", tok_span(tok))
        if (value := lark_support.integer(tok)) > linear.MAX_INDEX_CONSTANT:
            raise error("too-large", f"{value} is past 2^62; no index or size comes near it", tok_span(tok))
        return ast.INum(value, tok_span(tok))

    def ineg(self, meta, _minus, arg):
        return ast.INeg(arg, _span(meta))


def _constant(e) -> int | None:
    if isinstance(e, ast.INum):
        return e.value
    if isinstance(e, ast.INeg):
        inner = _constant(e.arg)
        return None if inner is None else -inner
    return None


@functools.lru_cache(maxsize=None)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text()
    return lark_support.lalr_parser(grammar, start="program", propagate_positions=True, maybe_placeholders=False)


def parse_stur(text: str) -> ast.Program:
    """Parse STUR source (error[syntax] at the first token the grammar cannot accept)."""
    if not text.endswith("\n"):
        text += "\n"
    return lark_support.parse(_parser(), text, _TERMINAL_WORDS, marks="\n",  # (the transformer recurses)
                              finish=lambda tree: _ToAst().transform(lark_support.check_tree_depth(tree)))
