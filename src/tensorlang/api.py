"""The Python API of SPEC section 7: ``compile`` and ``check``.

Both accept program text or a path (``looks_like_path`` decides), and both are guarded:
whatever goes wrong leaves as a :class:`~tensorlang.errors.TensorLangError`.
"""

from __future__ import annotations

from .backends import resolve as resolve_backend
from .errors import Source, TensorLangError, guard
from .kernel import Kernel, resolve_dtype
from .syntax import load, parse
from .typecheck import CheckedProgram, check_program


def check_source(source: Source, lang: str = "tl") -> CheckedProgram:
    """Parse and type-check already-read source text."""
    program = parse(source, lang)
    try:
        return check_program(program)
    except TensorLangError as exc:
        raise exc.with_source(source) from None


def compile_source(
    source: Source,
    lang: str = "tl",
    backend: str = "auto",
    dtype="float64",
    pad: int | None = None,
    threads: int | None = None,
) -> Kernel:
    """Compile already-read source text into a :class:`Kernel`."""
    checked = check_source(source, lang)
    chosen = resolve_backend(backend)
    resolved = resolve_dtype(dtype)
    if pad is not None:
        raise TensorLangError("backend", "padding (pad=, --pad) is not available in this version")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise TensorLangError("input", f"threads must be a positive integer, got {threads!r}")
    return Kernel(checked, source, chosen, resolved)


@guard
def check(source_or_path, lang: str | None = None) -> CheckedProgram:
    """Parse and type-check a program (text or path); raise TensorLangError if ill-formed."""
    source, lang = load(source_or_path, lang)
    return check_source(source, lang)


@guard
def compile(  # noqa: A001 - the API's name, as SPEC section 7 fixes it
    source_or_path,
    backend: str = "auto",
    dtype="float64",
    pad: int | None = None,
    threads: int | None = None,
    lang: str | None = None,
) -> Kernel:
    """Compile a program (text or path) into a callable :class:`Kernel`.

    ``threads`` is accepted for every back end; the interpreter runs on one thread.
    ``pad`` (000 section 4) is not implemented yet and must be None.
    """
    source, lang = load(source_or_path, lang)
    return compile_source(source, lang, backend, dtype, pad, threads)
