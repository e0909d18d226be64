"""tensorlang: a typed tensor language, its reference interpreter and compiler.

Public API (SPEC section 7)::

    import tensorlang as tl
    k = tl.compile("examples/matrix_product.tl")
    res = k(A=a, B=b)          # dict of results
    tl.check(source)           # raises tl.TensorLangError
"""

from __future__ import annotations

from .errors import TensorLangError, guard
from .kernel import Kernel, resolve_dtype
from .backends import resolve as _resolve_backend
from .syntax import load as _load, parse as _parse
from .typecheck import CheckedProgram, check_program as _check_program

__all__ = ["compile", "check", "Kernel", "TensorLangError", "__version__"]
__version__ = "0.1.0"


def _checked(source_or_path, lang):
    source, lang = _load(source_or_path, lang)
    program = _parse(source, lang)
    try:
        return source, _check_program(program)
    except TensorLangError as exc:
        raise exc.with_source(source) from None


@guard
def check(source_or_path, lang: str | None = None) -> CheckedProgram:
    """Parse and type-check a program (text or path); raise TensorLangError if ill-formed."""
    return _checked(source_or_path, lang)[1]


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
    source, checked = _checked(source_or_path, lang)
    backend = _resolve_backend(backend)
    resolved = resolve_dtype(dtype)
    if pad is not None:
        raise TensorLangError("backend", "padding (pad=) is not available in this version")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise TensorLangError("input", f"threads must be a positive integer, got {threads!r}")
    return Kernel(checked, source, backend, resolved)
