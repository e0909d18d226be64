"""The Python API of SPEC section 7 (docs/api.md): ``compile`` and ``check`` take program
text or a path, and whatever goes wrong leaves as a :class:`~tensorlang.errors.TensorLangError`."""

from __future__ import annotations

import numbers
import operator

from . import lang as languages
from .lang.language import folder_of
from .targets import available as _available_backends, resolve as resolve_backend
from .errors import Source, TensorLangError, check_flag, guard, is_integer, pointing_into, signature_checked
from .kernel import Kernel, Options, check_threads, resolve_dtype
from .loops import LOOP_REWRITE_NAMES
from .passes import PASS_NAMES, RULE_NAMES, unknown_name
from .schedule import padding
from .semantics.types import MAX_RANK, CheckedProgram
from .targets.c.padded import padded_empty as _padded_empty
from .machine import simd_elements
from .targets.c.build import find_compiler
from .specialize import SymbolicKernel
from .strands import StrandRun


def check_params(params) -> dict[str, int]:
    """``params={"n": 5}`` (``--param n=5``): values for symbolic sizes, each a positive integer."""
    if params is None:
        return {}
    if not hasattr(params, "items"):
        raise TensorLangError("input", f"params must be a dict from names to positive integers, got {type(params).__name__}")
    checked = {}
    for name, value in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise TensorLangError("input", f"parameter names must be identifiers, got {name!r}")
        if not is_integer(value, 1):
            raise TensorLangError("input", f"parameter {name!r} must be a positive integer, got {value!r}")
        checked[name] = int(value)
    return checked


def check_pad(pad, dtype) -> int:
    """``pad=M`` (``--pad M``, 000 §4): a power of two, ``"auto"`` (the SIMD width in elements
    of ``dtype``) or None (1: no padding); anything else is error[input]."""
    if pad is None:
        return 1
    if isinstance(pad, str) and pad.strip().lower() == "auto":
        return simd_elements(find_compiler(), dtype.itemsize)
    pad = int(pad) if isinstance(pad, numbers.Integral) and not isinstance(pad, bool) else pad
    try:
        return padding.check_pad(pad)
    except ValueError as exc:
        raise TensorLangError("input", str(exc)) from None


def check_passes(opt, skip_passes) -> tuple[str, ...]:
    """``opt`` and ``skip_passes``: names of passes, rewrite rules and loop rewrites
    (``lower`` aside) to leave out (docs/optimizer.md)."""
    check_flag("opt", opt)
    skip_passes = (skip_passes,) if isinstance(skip_passes, str) else skip_passes
    try:
        names = tuple(skip_passes)
    except TypeError:
        raise TensorLangError("input", f"skip_passes must be a list of pass or rule names, got {skip_passes!r}") from None
    for name in names:  # a loop rewrite too, but for "lower"
        if name not in PASS_NAMES and name not in RULE_NAMES and (name not in LOOP_REWRITE_NAMES or name == "lower"):
            loops = ", ".join(n for n in LOOP_REWRITE_NAMES if n != "lower")
            raise TensorLangError("input", f"{unknown_name(name)}; loop rewrites: {loops}")
    return names


def check_source(source: Source, lang: str = languages.DEFAULT, params=None, core: bool = False) -> CheckedProgram:
    """Parse and type-check already-read source text; ``core=True`` also checks that a TeIL
    program is Core-TeIL (001 section 4)."""
    program = languages.parse(source, lang, check_params(params))
    language = languages.get(lang)
    with pointing_into(source):
        if core and language.core_check is None:
            raise TensorLangError("input", "the Core-TeIL check (core=True, --core) applies to TeIL programs only")
        checked = language.check_from(program, folder_of(source.filename))
        if core and language.core_check is not None:
            language.core_check(program)
        return checked


def compile_options(backend: str = "auto", dtype="float64", pad: int | str | None = None, threads: int | None = None,
                    opt: bool = True, skip_passes=(), fma: bool = True, allow_missing: bool = False) -> Options:
    """The one place the compile keywords (docs/api.md) are checked and made an :class:`Options`."""
    skip_passes = check_passes(opt, skip_passes)
    chosen = resolve_backend(backend)
    resolved = resolve_dtype(dtype)
    padded = check_pad(pad, resolved)  # the C target pads; numpy and interp ignore it
    check_threads(threads)  # 1..MAX_THREADS: OpenMP crashes or aborts on absurd counts
    check_flag("fma", fma)  # fused multiply-adds in the C back end's loops
    check_flag("allow_missing", allow_missing)
    pad_auto = isinstance(pad, str) and padded > 1  # "auto": the kernel decides (schedule.padding.auto_pad)
    return Options(chosen, resolved, threads, opt, tuple(skip_passes), padded, fma, allow_missing=allow_missing,
                   auto=backend == "auto", pad_auto=pad_auto)


def strand_backend(backend, language: languages.Language) -> str | None:
    """``backend=`` for a strand program: "c" or "interp", or None for "auto"
    (``TENSORLANG_STRAND_BACKEND`` decides); anything else is error[backend]."""
    if not isinstance(backend, str) or backend not in ("auto", "c", "interp"):
        raise TensorLangError("backend", f"back end {backend!r} does not run a {language.name} program's strands; "
                              "choose one of auto, c (generated C), interp (the interpreter)")
    return None if backend == "auto" else backend


def compile_source(source: Source, lang: str = languages.DEFAULT, options: Options | None = None, params=None,
                   check_structure: bool = False) -> Kernel | SymbolicKernel:
    """Compile already-read source text into a :class:`Kernel` or a :class:`SymbolicKernel`."""
    checked = check_source(source, lang, params)
    return compile_checked(languages.get(lang), checked, source, options, params, check_structure)


def compile_checked(language: languages.Language, checked: CheckedProgram, source: Source,
                    options: Options | None = None, params=None, check_structure: bool = False) -> Kernel | SymbolicKernel:
    """Compile a front end's checked program (also the entry of einsum and the builder,
    which have no text to read); ``source`` is what errors point into."""
    options = compile_options() if options is None else options
    if getattr(language, "strands", None) is not None:  # Diderot: strands, not one kernel
        raise TensorLangError("backend", f"a {language.name} program is a program of strands, not one kernel: run it "
                              "with `tensorlang run PROG [-input value ...]` (of run's options, only --lang and --backend "
                              "apply) or `tl.compile(path)(...)` (docs/diderot.md); `tensorlang compile PROG --emit ast` "
                              "prints it as parsed")
    if checked.symbols or checked.derived_symbols:  # sizes left to bind: specialised per binding at call time
        symbolic = SymbolicKernel(language, checked, source, options, check_params(params))
        symbolic.check_structure = bool(check_structure)
        return symbolic
    with pointing_into(source):  # lowering errors (e.g. too-large) point into the source too
        return Kernel(language, checked, source, options, check_params(params), check_structure)


@guard
def check(source_or_path, lang: str | None = None, params=None, core: bool = False) -> CheckedProgram:
    """Parse and type-check a program (text or path); raise TensorLangError if ill-formed.
    ``params``: symbolic sizes (``{"n": 5}``); ``core=True``: a TeIL program must be Core-TeIL."""
    source, lang = languages.load(source_or_path, lang)
    return check_source(source, lang, params, core)


@guard
def compile(source_or_path, backend: str = "auto", dtype="float64", pad: int | str | None = None,  # noqa: A001 - SPEC 7's name
            threads: int | None = None, lang: str | None = None, params=None, opt: bool = True, skip_passes=(),
            check_structure: bool = False, fma: bool = True, allow_missing: bool = False,
            ) -> Kernel | SymbolicKernel | StrandRun:
    """Compile a program (text or path) into a callable :class:`Kernel` (a :class:`SymbolicKernel`
    where sizes are left symbolic; a :class:`~tensorlang.strands.StrandRun` for a Diderot
    program).  Every keyword is described in docs/api.md; a bad value is error[input]."""
    source, lang = languages.load(source_or_path, lang)
    language = languages.get(lang)
    if language.strands is not None:  # a strand program (Diderot's): backend= says where its strands run
        return StrandRun.compile(language, source, check_threads(threads) or None, strand_backend(backend, language))
    options = compile_options(backend, dtype, pad, threads, opt, skip_passes, fma, allow_missing)
    return compile_source(source, lang, options, params, check_flag("check_structure", check_structure))


@guard
def padded_empty(shape, pad: int | str, dtype="float64"):
    """A zero array of ``shape`` laid out as a kernel compiled with ``pad`` lays out its buffers,
    read without a copy (docs/c-backend.md, "Padding")."""
    resolved = resolve_dtype(dtype)
    try:
        given = tuple(shape)  # (read once: an iterator too)
        dims = tuple(operator.index(n) for n in given)
    except TypeError:
        raise TensorLangError("input", f"shape must be a tuple of non-negative integers, got {shape!r}") from None
    if any(n < 0 for n in dims) or any(isinstance(n, bool) for n in given):  # (True was 1, as numpy reads it)
        raise TensorLangError("input", f"shape must be a tuple of non-negative integers, got {shape!r}")
    if len(dims) > MAX_RANK:
        raise TensorLangError("too-large", f"shape has {len(dims)} dimensions; at most {MAX_RANK} (numpy's limit)")
    return _padded_empty(dims, check_pad(pad, resolved), resolved)


@signature_checked
def available_backends() -> tuple[str, ...]:
    """The back ends that work on this machine, in the order ``backend="auto"`` prefers them."""
    return _available_backends()
