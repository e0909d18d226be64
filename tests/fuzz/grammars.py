"""Grammar-based program text: every front end's own lark grammar drives hypothesis's
``from_lark``, with each terminal drawn from a small, meaningful pool (a few names, small
integers, the keywords), spaced so adjacent words never fuse.  Names repeat across
declarations and statements, so a good share of the programs drawn also type-check and
reach the optimizer and the targets; the rest exercise the checker's errors."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark.lexer import PatternStr

from tensorlang.lang.cfd.parser import _parser as cfd_parser
from tensorlang.lang.teil.parser import _parser as teil_parser
from tensorlang.lang.tl.parser import _parser as tl_parser
from tensorlang.semantics.values import FUNCTIONS

NAMES = ["x", "y", "A", "B", "i", "j", "k"]
INTS = ["1", "2", "3", "0", "4", "7"]


def _words(words) -> st.SearchStrategy[str]:
    return st.sampled_from([f" {w} " for w in words])


#: The pools of the regular-expression terminals, per front end (string terminals are
#: their own words).
POOLS = {
    "tl": {"NAME": NAMES + ["sum", "prod", "max", "min"], "INT": INTS,
           "NUMBER": INTS + ["0.5", "1e300", "1e-300", "2.5e3"], "FUNC": sorted(FUNCTIONS)[:4]},
    "teil": {"NAME": NAMES, "INT": INTS, "BINARY": ["add", "mul", "prod"],
             "UNARY": ["red+", "red*", "redmax", "redmin", "transp", "diag", "expa", "proj", "contr"]},
    "cfd": {"NAME": NAMES + ["n"], "INT": INTS, "DECIMAL": ["0.5", "2.5"]},
}
PARSERS = {"tl": tl_parser, "teil": teil_parser, "cfd": cfd_parser}


def _fresh(factory):
    """The front end's parser built anew without the on-disk parse tables: a parser lark
    loaded from them has no ``.grammar``, which ``from_lark`` reads (whether a process
    loads them depends on whether another test or worker wrote them first)."""
    from unittest import mock

    from tensorlang.lang import lark_support

    with mock.patch.object(lark_support, "_private_dir", lambda path: False):
        return factory.__wrapped__()


def grammar_programs(lang: str) -> st.SearchStrategy[str]:
    """Program text of front end ``lang`` drawn from its grammar."""
    parser = _fresh(PARSERS[lang])
    explicit: dict[str, st.SearchStrategy[str]] = {}
    for terminal in parser.terminals:
        if terminal.name in POOLS[lang]:
            explicit[terminal.name] = _words(POOLS[lang][terminal.name])
        elif isinstance(terminal.pattern, PatternStr):
            explicit[terminal.name] = st.just(f" {terminal.pattern.value} ")
        elif terminal.name in ("WS", "COMMENT"):
            explicit[terminal.name] = st.sampled_from([" ", "\n", " // c\n"])
        else:
            explicit[terminal.name] = st.just(f" {terminal.name.lower()} ")
    return from_lark(parser, start="program", explicit=explicit)


#: STUR's pools: a few tensor and index names, the symbols, small numbers
STUR_POOL = {"NAME": ["A", "B", "X", "y", "i", "j", "k", "N", "M", "D", "U", "R", "ip", "jp"],
             "NUMBER": ["0", "1", "2", "3", "0.5", "1e999"], "CMP": ["<", "<=", "=", "==", ">", ">="],
             "INV": ["^-1"], "_NL": ["\n"]}


def stur_programs() -> st.SearchStrategy[str]:
    """STUR text drawn from its grammar (lang/stur/grammar.lark)."""
    from tensorlang.lang.stur.parser import _parser as stur_parser

    fresh = _fresh(stur_parser)
    parser = fresh.lark if hasattr(fresh, "lark") else fresh
    explicit: dict[str, st.SearchStrategy[str]] = {}
    for terminal in parser.terminals:
        if terminal.name in STUR_POOL:
            explicit[terminal.name] = st.sampled_from([f" {w} " if w != "\n" else w for w in STUR_POOL[terminal.name]])
        elif isinstance(terminal.pattern, PatternStr):
            explicit[terminal.name] = st.just(f" {terminal.pattern.value} ")
        else:
            explicit[terminal.name] = st.just(f" {terminal.name.lower()} ")
    return from_lark(parser, start="program", explicit=explicit)
