"""Front ends behind one registry: a program's text in, its :class:`Language` out; the suffix picks
the front end, ``lang=`` overrides it (docs/architecture.md, "The packages", says how to add one)."""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Callable

from .. import limits
from ..errors import Source, TensorLangError, error, pointing_into
from ..semantics.sizes import bind
from ..semantics.types import CheckedProgram
from . import builder, ein_built, einsum
from .json_form import from_json, to_json  # the JSON form of any tree (compile --json)
from .language import Language, Params

#: The language of program text that names none (no suffix, no ``lang=``).
DEFAULT = "tl"

#: Each front end's suffixes, by name: REGISTRY imports ``lang/NAME`` on first lookup, not
#: ``import tensorlang`` (tests/test_architecture.py checks this against each LANGUAGE).
FRONT_ENDS: dict[str, tuple[str, ...]] = {"tl": (".tl",), "cfd": (".cfd",), "teil": (".teil",), "stur": (".stur",),
                                          "einsum": (".einsum",), "builder": (), "ein_built": (), "diderot": (".diderot",)}


class _Registry(MutableMapping[str, Language]):
    """Front ends by name (a test may add one); ``lang/NAME`` is imported on first lookup."""

    def __init__(self) -> None:
        self._languages: dict[str, Language | None] = dict.fromkeys(FRONT_ENDS)  # None: not imported yet

    def __getitem__(self, name: str) -> Language:
        language = self._languages[name]
        if language is None:
            language = self._languages[name] = importlib.import_module(f"{__name__}.{name}").LANGUAGE
        return language

    def __setitem__(self, name: str, language: Language) -> None:
        self._languages[name] = language

    def __delitem__(self, name: str) -> None:
        del self._languages[name]

    def __contains__(self, name: object) -> bool:  # without importing the front end
        return name in self._languages

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._languages))

    def __len__(self) -> int:
        return len(self._languages)


def __getattr__(name: str):  # ``lang.diderot`` as before, a front end's folder imported on first use
    if name in FRONT_ENDS:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Every front end, by name.
REGISTRY: MutableMapping[str, Language] = _Registry()

#: The two front ends whose programs come from Python calls rather than files: the
#: Python surface above the compiler (``tensorlang.einsum_api``, ``tensorlang.builder``)
#: reaches them through these names, not by importing their folders.
EINSUM = einsum
BUILDER = builder
#: Programs built as EIN in Python (einsum, the builder, field probes) enter here.
EIN = ein_built.LANGUAGE
PUBLIC = tuple(sorted(set(FRONT_ENDS) - {EIN.name, builder.LANGUAGE.name}))  # users' names (--lang): not Python's two

#: File suffix -> language name.
SUFFIXES: dict[str, str] = {suffix: name for name, suffixes in FRONT_ENDS.items() for suffix in suffixes}


def _view(checked: CheckedProgram, stage: str) -> str:
    from . import stur
    from .teil.convert import emit

    return emit(stur.as_model(checked), stage)


#: The program in another language, whatever its own: ``--emit tl|teil|core``.
VIEWS: dict[str, Callable[[CheckedProgram], str]] = {
    stage: functools.partial(_view, stage=stage) for stage in ("tl", "teil", "core")
}


def reader_of(stage: str, language: str) -> str:
    """The front end that reads what ``--emit STAGE`` prints for a program in ``language``:
    TeIL for ``teil`` and ``core``, for ``ast`` TeIL and STUR themselves (every other
    front end prints the model language), the model language for ``tl``, ``ein`` and ``opt``."""
    if stage == "ast" and language in ("teil", "stur"):
        return language
    return "teil" if stage in ("teil", "core") else "tl"


def reads_back(text: str, stage: str, program_language: str) -> str:
    """``text`` (what ``--emit STAGE`` printed for a program in ``program_language``) when
    the front end that reads it (:func:`reader_of`) does, or error[too-large] naming the
    bound it would pass: parentheses nested more than MAX_NESTING deep (counted on the
    text) or an expression more than MAX_DEPTH operators deep (found by parsing the text,
    only where a line is long enough: every node of a parsed expression takes a character)."""
    from ..errors import MAX_DEPTH
    from .lark_support import MAX_NESTING, check_nesting

    language = reader_of(stage, program_language)

    def refuse(bound: str) -> TensorLangError:
        return error("too-large", f"--emit {stage}: the printed program would nest {bound}, more than the "
                                  f"{language} front end reads back (docs/security.md); split the expression "
                                  "into several statements")
    try:
        check_nesting(text)
    except TensorLangError:
        raise refuse(f"parentheses more than {MAX_NESTING} deep") from None
    if max(map(len, text.split("\n"))) <= MAX_DEPTH:
        return text
    try:
        get(language).parse(text, {})
    except TensorLangError as exc:
        if exc.code == "too-large" and "nested" in exc.message:
            raise refuse(f"an expression more than {MAX_DEPTH} operators deep") from None
        if exc.code == "too-large" and "tokens" in exc.message:  # lark_support.check_statements
            raise error("too-large", f"--emit {stage}: {exc.message}") from None
        # any other complaint is no bound of this check's (tests/hostile/test_resources.py reads
        # every stage back)
    return text


def get(name: str) -> Language:
    """The front end called ``name``, or error[input] naming those there are."""
    language = REGISTRY.get(name) if isinstance(name, str) else None  # a list is unhashable
    if language is None:
        raise error("input", f"no front end for language {name!r} in this version (available: {', '.join(PUBLIC)})")
    return language


def language_of(path: str, lang: str | None = None) -> str:
    """The language name for a program file: ``lang`` if given, else by its suffix."""
    suffix = Path(path).suffix
    return lang or SUFFIXES.get(suffix, DEFAULT)


def looks_like_path(source_or_path) -> bool:
    """A PathLike, or a one-line string that names what exists (read_source refuses a folder) or ends in a known suffix."""
    if isinstance(source_or_path, os.PathLike):
        return True
    if not isinstance(source_or_path, str) or "\n" in source_or_path or not source_or_path.strip():
        return False
    if Path(source_or_path).suffix in SUFFIXES:
        return True
    try:
        return os.path.exists(source_or_path)
    except (OSError, ValueError):
        return False


def read_source(path) -> Source:
    """Read a program file; an unreadable one is error[input], never an OSError.

    Only a regular file is read (a FIFO would block, ``/dev/zero`` never ends), and at
    most :func:`~tensorlang.limits.max_source_bytes` of it: a larger one is
    error[too-large] before it is read whole (docs/security.md)."""
    try:
        name = os.fspath(path)
    except TypeError as exc:
        raise error("input", f"cannot read program: {exc}") from None
    try:
        fd = limits.open_regular(name, "program")
        with os.fdopen(fd, "rb") as fh:
            data = limits.read_bounded(fh, limits.max_source_bytes(), "the program")
    except TensorLangError as exc:
        raise exc.with_source(Source("", name)) from None
    except (OSError, ValueError) as exc:
        raise error("input", f"cannot read program: {getattr(exc, 'strerror', None) or exc}").with_source(
            Source("", name)) from None
    return decode_source(data, name)


def decode_source(data: bytes, name: str) -> Source:
    """Program bytes as text: UTF-8, a leading byte order mark dropped; anything else is
    error[input] (whatever the locale says)."""
    try:
        return Source(data.decode("utf-8-sig"), name)  # a leading byte order mark is no program text
    except UnicodeDecodeError:
        raise error("input", "the program is not UTF-8 text").with_source(Source("", name)) from None


def load(source_or_path, lang: str | None = None) -> tuple[Source, str]:
    """Resolve a path or a source string into its text and its language name."""
    if lang is not None and not isinstance(lang, str):
        get(lang)  # not a name: error[input] naming the front ends there are
    if looks_like_path(source_or_path):
        source = read_source(source_or_path)
        return source, language_of(source.filename, lang)
    if isinstance(source_or_path, str):
        return Source(source_or_path, "<string>"), (lang or DEFAULT)
    raise error("input", f"expected program text or a path, got {type(source_or_path).__name__}")


def parse(source: Source, lang: str = DEFAULT, params: Params | None = None):
    """Parse ``source`` with the front end for ``lang``; errors carry the source for carets.

    ``params`` (name -> positive int, ``--param``) binds symbolic sizes in the
    declarations (:func:`~tensorlang.semantics.sizes.bind`, the same for every front
    end); a name the program does not use is error[input]."""
    with pointing_into(source):
        language = get(lang)
        program = language.parse(source.text, params or {})
        return program if language.binds_params else bind(program, params or {})


__all__ = ["BUILDER", "DEFAULT", "EIN", "EINSUM", "FRONT_ENDS", "Language", "from_json", "to_json", "PUBLIC", "REGISTRY", "SUFFIXES", "VIEWS", "get", "language_of", "load", "looks_like_path", "parse",
           "decode_source", "read_source", "reader_of", "reads_back"]
