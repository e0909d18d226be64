"""Errors as values with source spans, rendered once at the boundary (docs/errors.md): a
:class:`TensorLangError` has a stable code (SPEC section 5), a position and the rule that
failed; the boundaries (:func:`guard`, the CLI) turn anything unexpected into ``internal``."""

from __future__ import annotations

import contextlib
import functools
import inspect
import numbers
import sys
import threading
from dataclasses import dataclass

#: The stable codes of SPEC section 5, plus the few this project adds (see docs/errors.md).
CODES = frozenset({
    "redeclared", "undeclared-assign", "assign-shape", "undeclared", "shape", "dim-range", "syntax", "uninit",
    "index-extent", "free-index", "repeated-index", "structure", "input",
    # project extensions, documented in docs/errors.md
    "read-only", "continuity", "too-large", "backend", "internal",
})


@dataclass(frozen=True)
class Span:
    """A region of source text: 1-based line and column of its first and last character."""

    line: int
    col: int
    end_line: int
    end_col: int

    @staticmethod
    def point(line: int, col: int) -> "Span":
        return Span(line, col, line, col + 1)


@dataclass
class Diagnostic:
    """One located message; a TensorLangError holds one or more."""

    code: str
    message: str
    span: Span | None = None
    rule: str | None = None


@dataclass
class Source:
    """The text a diagnostic points into, and the name to print for it."""

    text: str
    filename: str = "<string>"

    def line_text(self, line: int) -> str:
        lines = self.text.split("\n")  # the parser counts only \n as a line break
        return lines[line - 1].rstrip("\r") if 1 <= line <= len(lines) else ""


class TensorLangError(Exception):
    """A rejected program or a bad request: ``diagnostics`` lists every problem found, the
    first the primary one, whose ``code``, ``line`` and ``col`` the attributes repeat."""

    def __init__(self, code: str, message: str, span: Span | None = None, rule: str | None = None,
                 source: Source | None = None, diagnostics: list[Diagnostic] | None = None):
        if code not in CODES:  # a programming error inside tensorlang itself
            raise ValueError(f"unknown error code {code!r}")
        self.diagnostics = diagnostics or [Diagnostic(code, message, span, rule)]
        self.source = source
        super().__init__(self.render())

    # The primary diagnostic's fields, as the API promises them.
    code = property(lambda self: self.diagnostics[0].code)
    message = property(lambda self: self.diagnostics[0].message)
    rule = property(lambda self: self.diagnostics[0].rule)
    span = property(lambda self: self.diagnostics[0].span)
    line = property(lambda self: self.span.line if self.span else None)
    col = property(lambda self: self.span.col if self.span else None)
    filename = property(lambda self: self.source.filename if self.source else None)

    def with_source(self, source: Source) -> "TensorLangError":
        """Attach the program text (for the caret) unless one is attached already."""
        if self.source is None:
            self.source = source
            self.args = (self.render(),)
        return self

    def render(self) -> str:
        return "\n".join(render_diagnostic(d, self.source) for d in self.diagnostics)

    def __str__(self) -> str:
        return self.render()

    # pickled (a Dask worker's error, copy.copy) from its diagnostics and source, not from
    # ``args``; _rebuild bypasses __init__, so subclasses (EinsumError) come back as themselves
    def __reduce__(self):
        return (_rebuild, (type(self), self.diagnostics, self.source, self.__dict__.copy()))


@contextlib.contextmanager
def pointing_into(source: Source):
    """A TensorLangError raised in the block points into ``source`` (unless it points into one already)."""
    try:
        yield
    except TensorLangError as exc:
        raise exc.with_source(source) from None


def _rebuild(cls, diagnostics, source, state):
    """A TensorLangError (or subclass) with these diagnostics and source (see __reduce__)."""
    err = Exception.__new__(cls)
    err.__dict__.update(state)
    err.diagnostics = list(diagnostics)
    err.source = source
    err.args = (err.render(),)
    return err


class ArgumentError(TensorLangError, TypeError):
    """error[input] for a call whose arguments do not fit a public function's signature:
    also a ``TypeError``, as Python's own would be (docs/api.md, "Arguments")."""

    __init__ = functools.partialmethod(TensorLangError.__init__, "input")  # (message)


class Unpicklable:
    """A compiled object (a kernel, a strand program): pickling or deep-copying it is
    :class:`ArgumentError` (docs/api.md, "Processes"); ``copy.copy`` gives a second handle."""

    def __reduce_ex__(self, protocol):
        raise ArgumentError(f"a {type(self).__name__} cannot be pickled or deep-copied: it holds compiled code. "
                            "Send the program text and its compile options to the other process and compile "
                            "there (the compiled C comes from the on-disk cache; docs/api.md, 'Processes')")

    def __copy__(self):
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin


def closest(name, names) -> str:
    """`` (did you mean 'A'?)`` for the closest of ``names`` to a misspelt ``name`` (case
    aside: ``W`` finds ``w``), else ""."""
    import difflib

    lower = {str(n).lower(): n for n in reversed(list(names))} if isinstance(name, str) else {}
    found = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6) if lower else []
    return f" (did you mean {lower[found[0]]!r}?)" if found else ""


def unknown_keyword(function: str, keyword: str, accepted) -> ArgumentError:
    """``f() got an unexpected keyword argument 'bakend' (did you mean backend?; it takes ...)``."""
    accepted = list(accepted)
    close = closest(keyword, accepted)  # " (did you mean 'backend'?)"
    hint = close[2:-1].replace("'", "") + " " if close else ""
    takes = ", ".join(accepted) or "no keyword arguments"
    return ArgumentError(f"{function}() got an unexpected keyword argument {keyword!r} ({hint}it takes: {takes})")


def check_keywords(function: str, given, accepted) -> None:
    """Raise :func:`unknown_keyword` for the first of ``given`` not in ``accepted``."""
    for keyword in given:
        if keyword not in accepted:
            raise unknown_keyword(function, keyword, accepted)


def _misfit_error(function: str, signature, args, kwargs) -> ArgumentError | None:
    """Why a call does not fit ``signature`` as an ArgumentError (None: it fits)."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        params = signature.parameters
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            accepted = [n for n, p in params.items() if n != "self" and p.kind in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
            for keyword in kwargs:
                if keyword not in params or params[keyword].kind is inspect.Parameter.POSITIONAL_ONLY:
                    return unknown_keyword(function, keyword, accepted)
        return ArgumentError(f"{function}(): {exc}")
    return None


def signature_checked(fn):
    """For public functions that are not :func:`guard`-ed: a call that does not fit ``fn``'s
    signature raises :class:`ArgumentError` (checked once a TypeError was raised)."""
    return _boundary(fn, guarded=False)


class KernelFailed(TensorLangError):
    """A compiled kernel ran and reported failure (a nonzero status: no memory for copies,
    BLAS not set up).  It may have written part of its buffers, an in-place target among
    them, so no call path retries it: the callers pass this error on."""


def render_diagnostic(diag: Diagnostic, source: Source | None) -> str:
    """``FILE:LINE:COL: error[CODE]: message``, the source line, a caret, the rule."""
    where = shown_name(source.filename) if source else "tensorlang"
    if diag.span is not None:
        where += f":{diag.span.line}:{diag.span.col}"
    out = [f"{where}: error[{diag.code}]: {diag.message}"]
    if diag.span is not None and source is not None:
        text = source.line_text(diag.span.line)
        if text:
            start = diag.span.col - 1
            width = max(1, diag.span.end_col - diag.span.col if diag.span.end_line == diag.span.line else len(text) - start)
            text, start = _around(text, start)
            width = min(width, max(1, len(text) - start))
            gutter = f"{diag.span.line:>4} | "
            out.append(gutter + text)
            pad = "".join("\t" if c == "\t" else " " for c in text[:start])  # tabs line up as in the source
            pad += " " * (start - len(pad))
            out.append(" " * len(gutter) + pad + "^" + "~" * (width - 1))
    if diag.rule:
        out.append(f"  = rule: {diag.rule}")
    return "\n".join(out)


def shown_name(name: str) -> str:
    """A file name in a message: as it is, or in Python's escapes (``'a\\nb.tl'``) if a character is unprintable."""
    return name if name.isprintable() else repr(name)


def shown_value(value) -> str:
    """A value in a message: its ``repr``, 60 characters at most, and no ValueError for an int past Python's 4300 digits."""
    try:
        text = repr(value)
    except ValueError:
        text = "an int of more than 4300 digits" + ("" if isinstance(value, int) else f" in a {type(value).__name__}")
    return text if len(text) <= 60 else text[:57] + "..."


#: A source line longer than this is shown as the part around the caret, marked "...": a
#: diagnostic stays one screen line.
SHOWN_LINE = 200


def _around(text: str, start: int) -> tuple[str, int]:
    """``text`` cut to :data:`SHOWN_LINE` characters around column ``start``, and the caret's column there."""
    if len(text) <= SHOWN_LINE:
        return text, start
    left = min(max(0, start - SHOWN_LINE // 2), len(text) - SHOWN_LINE)
    right = left + SHOWN_LINE
    shown = ("..." if left > 0 else "") + text[left:right] + ("..." if right < len(text) else "")
    return shown, start - left + (3 if left > 0 else 0)


def error(code: str, message: str, span: Span | None = None, rule: str | None = None) -> TensorLangError:
    """Shorthand used by the stages: ``raise error("shape", "...", node.span, "t-elem")``."""
    return TensorLangError(code, message, span, rule)


def check_flag(name: str, value) -> bool:
    """``value`` of the keyword ``name`` when it is True or False, else error[input]."""
    if not isinstance(value, bool):
        raise error("input", f"{name} must be True or False, got {value!r}")
    return value


def is_integer(value, low: float, high: float = float("inf")) -> bool:
    """Whether ``value`` is an integer (numpy's too, never a bool) from ``low`` to ``high``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and low <= int(value) <= high


#: Expressions nested deeper than this are rejected after parsing (error[too-large]).
MAX_DEPTH = 2000
#: The Python recursion limit while a guarded entry point runs.
RECURSION_LIMIT = 10 * MAX_DEPTH


def guard(fn):
    """Decorator for public entry points: whatever goes wrong leaves as a TensorLangError:
    a call that does not fit ``fn``'s signature as ``input``, deep nesting and exhausted
    memory as ``too-large``, anything else as ``internal`` with the exception chained."""
    return _boundary(fn, guarded=True)


def _boundary(fn, guarded: bool):
    """:func:`guard` (``guarded``) or :func:`signature_checked` around ``fn``."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # room for every stage's recursion at MAX_DEPTH; the limit is shared by every thread:
        # raised by the first guarded call, put back when the last one (in any thread) returns
        if guarded:
            _guarded(1)
        try:
            return fn(*args, **kwargs)
        except TensorLangError:
            raise
        except Exception as exc:  # noqa: BLE001 - this is the boundary
            # a call that does not fit the signature is the caller's slip (checked only on failure)
            why = _misfit_error(fn.__qualname__, signature, args, kwargs) if isinstance(exc, TypeError) else None
            if why is not None:
                raise why from None
            if not guarded:
                raise
            if isinstance(exc, (RecursionError, MemoryError)):
                raise TensorLangError("too-large", "the program is nested too deeply to process" if isinstance(
                    exc, RecursionError) else "the machine ran out of memory for this program") from None
            raise TensorLangError("internal", f"internal error ({type(exc).__name__}: {exc}); please report it "
                                  "with the program") from exc
        finally:
            if guarded:
                _guarded(-1)

    return wrapper


_limit_lock = threading.Lock()
#: Guarded calls running now (all threads), and the recursion limit before the first.
_limit_users = 0
_limit_before: int | None = None


def _guarded(step: int) -> None:
    """A guarded call starts (1) or returns (-1): the first raises the recursion limit, the last puts it back."""
    global _limit_users, _limit_before
    with _limit_lock:
        if step > 0 and _limit_users == 0:
            previous = sys.getrecursionlimit()
            _limit_before = previous if previous < RECURSION_LIMIT else None
            if _limit_before is not None:
                sys.setrecursionlimit(RECURSION_LIMIT)
        _limit_users += step
        if _limit_users == 0 and _limit_before is not None:
            sys.setrecursionlimit(_limit_before)
            _limit_before = None
