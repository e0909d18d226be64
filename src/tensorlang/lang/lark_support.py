"""What every lark-based front end (model language, TeIL, CFDlang) shares: spans from
tokens, lark's failures turned into error[syntax] at the right place, and the bounds on
nesting that keep the recursive later stages within Python's recursion limit."""

from __future__ import annotations

import hashlib
import itertools
import operator
import os
import re
import stat
import sys
from pathlib import Path
from typing import Callable, Iterable

import lark
from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..errors import MAX_DEPTH, Span, TensorLangError, error
from ..limits import env_path, max_statements
from ..semantics.sizes import Sym

#: The bounds on program text, each refused before parsing or as the parser reaches it
#: (docs/errors.md, "Limits on program size"; docs/security.md, §2 and §3).
MAX_NESTING = 200  # parentheses (error[syntax])
MAX_INTEGER_DIGITS = 100  # an integer token (Python refuses to convert 4300 digits)
MAX_STATEMENT_TOKENS = 50_000  # between two statement marks (docs/errors.md)
MAX_PROGRAM_TOKENS = 1_000_000  # or 50 a statement, where $TENSORLANG_MAX_STATEMENTS allows more
MAX_PARSE_STACK = 10 * MAX_DEPTH  # entries of the parser's stack: ten a level of nesting


def integer(tok: Token | str, span: Span | None = None) -> int:
    """An integer token's value; one of more than :data:`MAX_INTEGER_DIGITS` digits is
    error[too-large] at the token (``span``, else the token's own)."""
    text = str(tok).strip()
    digits = len(text.lstrip("+-").lstrip("0"))
    if digits > MAX_INTEGER_DIGITS:
        where = span if span is not None else (tok_span(tok) if isinstance(tok, Token) else None)
        shown = text if len(text) <= 24 else f"{text[:10]}...{text[-6:]}"
        raise error("too-large", f"the integer {shown} has {digits} digits; no size, position or dimension "
                    f"has more than {MAX_INTEGER_DIGITS}", where)
    return int(text)


def extents(tokens, reserved=frozenset()) -> tuple:
    """A declaration's extents: INT tokens as numbers, name tokens as symbolic sizes
    (:class:`~tensorlang.semantics.sizes.Sym`, bound later); a reserved word is no size."""
    found: list = []
    tokens = list(tokens)
    apart(tok_span(tok) for tok in tokens)
    for tok in tokens:
        if tok.type == "INT":
            found.append(integer(tok))
        elif str(tok) in reserved:
            raise error("syntax", f"{str(tok)!r} is a reserved word and cannot name a size", tok_span(tok))
        else:
            found.append(Sym(str(tok)))
    return tuple(found)


def apart(spans: Iterable[Span]) -> None:
    """Dimensions written with nothing between them (``[1e3]``, ``[2n]``) would read as two,
    ``[1 e3]`` and ``[2 n]``: error[syntax] at the second, saying how either is written."""
    for a, b in itertools.pairwise(spans):
        if (a.end_line, a.end_col) == (b.line, b.col):
            raise error("syntax", "dimensions written together: write 2*n for a product, 2 n for two "
                        "dimensions, and an extent as a whole number (1000, not 1e3)", b)


def tok_span(tok: Token) -> Span:
    # lark fills every position of a token it produced (the Optionals are for hand-made ones)
    return Span(tok.line or 0, tok.column or 0, tok.end_line or 0, tok.end_column or 0)


def start(item) -> Span:
    """The span of a token, a node (``.span``) or a tuple whose last element is a span."""
    if isinstance(item, Token):
        return tok_span(item)
    if isinstance(item, tuple):  # e.g. a (pairs, grouped, span) triple or a shape
        return item[-1]
    return item.span


def cover(first, last) -> Span:
    """The span from the start of ``first`` to the end of ``last`` (tokens or nodes)."""
    a, b = start(first), start(last)
    return Span(a.line, a.col, b.end_line, b.end_col)


def check_nesting(text: str) -> None:
    """Reject absurdly deep parenthesis nesting with a position, before the parser sees it
    (only the parentheses and comments are visited, by a regular expression)."""
    if text.count("(") <= MAX_NESTING:
        return
    depth = 0
    for found in _PARENS.finditer(text):
        if found.group() == ")":
            depth = max(0, depth - 1)
        elif found.group() == "(":
            depth += 1
            if depth > MAX_NESTING:
                raise error("syntax", f"parentheses nested more than {MAX_NESTING} deep", _point(text, found.start()))


_PARENS = re.compile(r"//[^\n]*|[()]")  # a comment is one match, and its parentheses none
_TOKEN = re.compile(r"\w+|[^\w\s]")  # at least as many as the lexer's tokens, never fewer


def check_statements(text: str, marks: str) -> None:
    """error[too-large] at the first statement of more than :data:`MAX_STATEMENT_TOKENS`
    tokens, found without parsing: only a run of that many characters free of ``marks``
    can hold that many tokens (a regular expression finds them, tried only where a run
    starts: from every character, it took minutes a megabyte), and only they are counted."""
    free = f"[^{re.escape(marks)}]"
    for run in re.finditer(f"(?<!{free}){free}{{{MAX_STATEMENT_TOKENS + 1},}}", text):
        tokens = _TOKEN.finditer(text, run.start(), run.end())
        if sum(1 for _ in itertools.islice(tokens, MAX_STATEMENT_TOKENS + 1)) > MAX_STATEMENT_TOKENS:
            at = _TOKEN.search(text, run.start()).start()  # type: ignore[union-attr]
            raise error("too-large", f"a statement of more than {MAX_STATEMENT_TOKENS} tokens; split it into several "
                        "statements", _point(text, at))


def check_program_tokens(text: str) -> None:
    """error[too-large] at the first token past the bound (only a longer text is counted)."""
    limit = max(MAX_PROGRAM_TOKENS, 50 * max_statements())
    past = next(itertools.islice(_TOKEN.finditer(text), limit, None), None) if len(text) > limit else None
    if past is not None:
        raise error("too-large", f"a program of more than {limit:,} tokens; split it into several programs",
                    _point(text, past.start()))


def _point(text: str, at: int) -> Span:
    """The position of the character at offset ``at`` of ``text`` (lines and columns from 1)."""
    return Span.point(text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at))


def end_position(text: str) -> tuple[int, int]:
    """Just after the last character that is neither blank nor inside a comment."""
    lines = text.split("\n")
    for number in range(len(lines), 0, -1):
        code = lines[number - 1].split("//", 1)[0].rstrip()
        if code:
            return number, len(code) + 1
    return 1, 1


#: How the terminals every grammar here shares read in a message; a front end's own
#: table adds (or overrides) the rest.
COMMON_WORDS = {
    "NAME": "a name",
    "SIZE": "a size",
    "INT": "an integer",
    "LSQB": "'['",
    "RSQB": "']'",
    "LPAR": "'('",
    "RPAR": "')'",
    "EQUAL": "'='",
    "COLON": "':'",
    "COMMA": "','",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "DOT": "'.'",
    "CIRCUMFLEX": "'^'",
    "HASH": "'#'",
    "$END": "end of input",
}


def expected(names: Iterable[str], words: dict[str, str]) -> str:
    """``; expected a, b, c`` from lark's terminal names, in the words of the language
    (its own ``words``, then :data:`COMMON_WORDS`)."""
    found = sorted({words.get(n) or COMMON_WORDS.get(n, n.lower()) for n in names})
    if len(found) > 6:
        found = found[:6] + ["..."]
    return "; expected " + ", ".join(found) if found else ""


#: A front end's more helpful message for a token in the wrong place: given the token
#: before and the offending token, ``(message, span)`` or None.
Hint = Callable[[Token | None, Token], "tuple[str, Span] | None"]


#: A front end's hint for a line written in another notation (numpy, einsum): given the
#: source line where parsing stopped, a one-line hint with the language's form, or None.
Foreign = Callable[[str], "str | None"]


#: The hint of a line (``Foreign``) reads at most this many characters either side of
#: the column where parsing stopped: a hint's regular expressions backtrack at a cost
#: up to the square of the text they read, and a line may be a megabyte.
HINT_WINDOW = 300


def _line(text: str, number: int, col: int | None = None) -> str:
    """Line ``number`` of ``text`` (no line breaks); with ``col``, only the part within
    :data:`HINT_WINDOW` characters of that column."""
    start = 0
    for _ in range(number - 1):  # (no split: one line of a large text is all we need)
        start = text.find("\n", start) + 1
        if start == 0:
            return ""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if col is not None and end - start > 2 * HINT_WINDOW:
        at = start + max(col - 1, 0)
        start, end = max(start, at - HINT_WINDOW), min(end, at + HINT_WINDOW)
    return text[start:end] if number >= 1 else ""


def parse(parser, text: str, words: dict[str, str], hint: Hint | None = None, foreign: Foreign | None = None,
          marks: str = "=:", finish: Callable | None = None):
    """Run a lark parser (with its transformer) over ``text``; every way lark can fail
    becomes error[syntax] at the first character or token it cannot accept.  Where
    ``foreign`` recognises the line as another notation, its hint replaces the list of
    expected tokens.  ``marks``: the characters that end a statement (:func:`check_statements`).
    ``finish``: what turns the tree into the program, where no transformer runs as it is parsed."""
    check_program_tokens(text)
    check_statements(text, marks)
    check_nesting(text)

    def fail(what: str, span: Span, otherwise: str = ""):
        better = foreign(_line(text, span.line, span.col)) if foreign is not None else None
        message = f"unexpected {what}: {better}" if better else f"unexpected {what}{otherwise}"
        return error("syntax", message, span)

    try:
        tree = _parse_watched(parser, text)
        return finish(tree) if finish is not None else tree
    except UnexpectedCharacters as exc:
        pos = exc.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        raise fail(f"character {ch!r}", Span.point(exc.line, exc.column)) from None
    except UnexpectedEOF as exc:
        raise fail("end of input", Span.point(*end_position(text)), expected(exc.expected, words)) from None
    except UnexpectedToken as exc:
        tok = exc.token
        previous = (exc.token_history or [None])[-1]
        better = hint(previous, tok) if hint is not None else None
        if better is not None:
            raise error("syntax", better[0], better[1]) from None
        if tok.type == "$END":
            span, what = Span.point(*end_position(text)), "end of input"
        else:
            span, what = tok_span(tok), repr(str(tok))
        raise fail(what, span, expected(exc.expected, words)) from None
    except UnexpectedInput as exc:  # pragma: no cover - lark's other cases
        raise error("syntax", str(exc).splitlines()[0], Span.point(exc.line, exc.column)) from None
    except VisitError as exc:  # an exception inside a transformer callback
        if isinstance(exc.orig_exc, TensorLangError):
            raise exc.orig_exc from None
        raise


def _parse_watched(parser: Lark, text: str):
    """``parser.parse(text)``, token by token, with the stack bounded (:data:`MAX_PARSE_STACK`)."""
    steps = parser.parse_interactive(text)
    state, token = steps.parser_state, None
    for token in steps.lexer_thread.lex(state):
        state.feed_token(token)
        if len(state.state_stack) > MAX_PARSE_STACK:
            raise error("too-large", f"the program is nested more than {MAX_DEPTH} levels deep (blocks, brackets, "
                        "operators); split it into several statements or functions", tok_span(token))
    return steps.feed_eof(token)


def statement_before(text: str, tok: Token | None) -> bool:
    """Whether an assignment (``=`` outside comments) comes before ``tok`` in ``text``:
    the difference between a declaration after statements and a malformed one."""
    if tok is None or tok.start_pos is None:
        return False
    return any("=" in line.split("//", 1)[0] for line in text[: tok.start_pos].split("\n"))


def _check_depth(root, children: Callable, message: str, where: Callable) -> None:
    """error[too-large] ``message`` at ``where(node)`` for the first node more than MAX_DEPTH deep below ``root``,
    found iteratively (every later stage recurses); lark's tokens and left-out optionals are no nodes."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        stack += [(child, depth + 1) for child in children(node) if not isinstance(child, (str, type(None)))]
        if depth > MAX_DEPTH:
            raise error("too-large", message, where(node))


def shallow(stmt, children: Callable):
    """``stmt``, or error[too-large] at it where its expression is nested too deep; called as the
    parser reduces each statement, so that the parse stops at the first one too deep."""
    _check_depth(stmt.expr, children, f"the expression is nested more than {MAX_DEPTH} operators deep; split it "
                 "into several statements", lambda _node: stmt.span)
    return stmt


def check_tree_depth(tree: lark.Tree, children: Callable = operator.attrgetter("children")) -> lark.Tree:
    """``tree``, or error[too-large] at its first node too deep; ``children``: a node's (a front end may check them)."""
    _check_depth(tree, children, f"the program is nested more than {MAX_DEPTH} levels deep (statements, blocks "
                 "or operators); split it into several statements or functions",
                 lambda node: None if node.meta.empty else Span.point(node.meta.line, node.meta.column))
    return tree


# ------------------------------------------------------------------ grammar tables
def grammar_cache_dir() -> Path:
    """``grammars/`` in the kernels' cache directory (docs/cli.md, "tensorlang cache")."""
    explicit = env_path("TENSORLANG_CACHE")
    if explicit:
        return Path(explicit).expanduser() / "grammars"
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tensorlang" / "grammars"


def _private_dir(path: Path) -> bool:
    """``path`` is (made) a directory this user owns and may write, that nobody else may
    write: the tables are pickles, so no other user may plant one."""
    try:
        if not path.parent.exists():  # the cache root the kernels share: private too
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.stat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or not os.access(path, os.W_OK | os.X_OK):
        return False
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return False
    return not info.st_mode & 0o022


def cache_file(grammar: str, options: dict) -> str:
    """The tables' file name: a digest of the grammar, the options, lark's and Python's versions."""
    key = "\n".join([grammar, repr(sorted((k, repr(v)) for k, v in options.items() if k != "transformer")),
                     lark.__version__, "%d.%d" % sys.version_info[:2]])
    return f"lalr-{hashlib.sha256(key.encode()).hexdigest()[:24]}.lark"


#: The most bytes of a grammar's cached tables lark may open (they are tens of KiB).
MAX_TABLE_BYTES = 16 * 2**20


def _usable_tables(path: Path) -> bool:
    """Whether lark may open ``path``: absent (lark writes it) or a regular file of at most
    :data:`MAX_TABLE_BYTES`.  lark reads its first line whole and opens what is there, so a
    FIFO blocked every parse and a link to ``/dev/zero`` read without end; such an entry
    is removed (lark writes the tables anew), and one that cannot be is not used."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_TABLE_BYTES:
        return True
    try:
        path.unlink()
    except OSError:  # a directory, say
        return False
    return True


def lalr_parser(grammar: str, **options) -> Lark:
    """``Lark(grammar, parser="lalr", **options)`` with its parse tables cached on disk
    (lark's ``cache=``, which rebuilds a file it cannot read back; docs/cli.md, "tensorlang cache")."""
    options["parser"] = "lalr"
    directory = grammar_cache_dir()
    tables = directory / cache_file(grammar, options)
    if not (_private_dir(directory) and _usable_tables(tables)):
        return Lark(grammar, **options)
    return Lark(grammar, cache=str(tables), **options)
