"""Front ends: source text in, :class:`~tensorlang.syntax.ast.Program` out.

The file suffix picks the front end (``.tl`` today; ``.teil``, ``.stur`` and ``.cfd``
join with their issues); ``lang=`` overrides it.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

from ..errors import Source, TensorLangError, error
from . import ast
from .model import parse_model

SUFFIXES = {".tl": "tl", ".teil": "teil", ".stur": "stur", ".cfd": "cfd"}


def _parse_cfd(text: str, params=None) -> ast.Program:
    from ..cfd.parser import parse_cfd  # imported on use: it needs the type checker

    return parse_cfd(text, params)


def _parse_teil(text: str) -> ast.Program:
    from ..teil.parser import parse_teil  # imported on use: TeIL's parser reuses model.py's helpers

    return parse_teil(text)


_FRONT_ENDS = {"tl": parse_model}
_FRONT_ENDS["teil"] = _parse_teil
_FRONT_ENDS["cfd"] = _parse_cfd


def looks_like_path(source_or_path) -> bool:
    """A PathLike, or a one-line string that names a file or ends in a known suffix."""
    if isinstance(source_or_path, os.PathLike):
        return True
    if not isinstance(source_or_path, str) or "\n" in source_or_path or not source_or_path.strip():
        return False
    if Path(source_or_path).suffix in SUFFIXES:
        return True
    try:
        return os.path.isfile(source_or_path)
    except (OSError, ValueError):
        return False


def read_source(path) -> Source:
    """Read a program file; an unreadable one is error[input], never an OSError."""
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise error("input", f"cannot read program: {exc.strerror or exc}").with_source(Source("", name)) from None
    try:
        return Source(data.decode("utf-8-sig"), name)  # a leading byte order mark is no program text
    except UnicodeDecodeError:
        raise error("input", "the program is not UTF-8 text").with_source(Source("", name)) from None


def load(source_or_path, lang: str | None = None) -> tuple[Source, str]:
    """Resolve a path or a source string into its text and its language."""
    if looks_like_path(source_or_path):
        source = read_source(source_or_path)
        lang = lang or SUFFIXES.get(Path(source.filename).suffix, "tl")
    elif isinstance(source_or_path, str):
        source = Source(source_or_path, "<string>")
    else:
        raise error("input", f"expected program text or a path, got {type(source_or_path).__name__}")
    return source, (lang or "tl")


def parse(source: Source, lang: str = "tl", params=None) -> ast.Program:
    """Parse ``source`` with the front end for ``lang``; errors carry the source for carets.

    ``params`` (name -> positive int, SPEC section 4's ``--param``) goes to the front ends
    that have symbolic sizes (a ``params`` argument); the others have no use for it and
    ignore it, as every front end ignores names its program does not use."""
    front_end = _FRONT_ENDS.get(lang)
    if front_end is None:
        available = ", ".join(sorted(_FRONT_ENDS))
        raise error("input", f"no front end for language {lang!r} in this version (available: {available})").with_source(source)
    try:
        if params and "params" in inspect.signature(front_end).parameters:
            return front_end(source.text, params=params)
        return front_end(source.text)
    except TensorLangError as exc:
        raise exc.with_source(source) from None
