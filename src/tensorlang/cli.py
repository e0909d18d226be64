"""The ``tensorlang`` command line (SPEC section 6).

Every failure leaves as a rendered diagnostic on stderr with exit status 1 (a rejected
program, a bad input, a file that cannot be read); usage mistakes exit 2 as argparse
does.  No traceback reaches the terminal: unexpected errors print one line that asks
for a report (exit 3), and ``TENSORLANG_DEBUG=1`` shows the traceback for developers.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import __version__, stages
from .analysis.report import report
from .api import check_source, compile_source
from .targets import KNOWN
from .targets.c import build as c_build
from .errors import Source, TensorLangError, guard
from .lang import DEFAULT as DEFAULT_LANGUAGE, REGISTRY, language_of, read_source
from .passes import PASS_NAMES
from .semantics.types import show
from .kernel import Kernel
from .specialize import SymbolicKernel

#: The languages ``--lang`` accepts.
LANGUAGES = sorted(REGISTRY)


def _read_program(path: str, lang: str | None) -> tuple[Source, str]:
    if path == "-":
        return Source(sys.stdin.read().removeprefix("\ufeff"), "<stdin>"), lang or DEFAULT_LANGUAGE
    return read_source(path), language_of(path, lang)


# ------------------------------------------------------------------ check
def cmd_check(args) -> int:
    status = 0
    for path in args.programs:
        try:
            source, lang = _read_program(path, args.lang)
            guard(check_source)(source, lang, args.params, args.core)
        except TensorLangError as exc:
            print(exc.render(), file=sys.stderr)
            status = 1
            continue
        if not args.quiet:
            _out(f"{source.filename}: ok\n")
    return status


# ------------------------------------------------------------------ run
def _load_array_file(path: str, name: str | None = None):
    """np.load without pickles; a file that cannot be read for any reason is error[input]."""
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise TensorLangError("input", f"input file {path!r} does not exist") from None
    except Exception as exc:  # noqa: BLE001 - numpy raises many kinds for damaged files
        what = f"input {name!r} from " if name else "inputs from "
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TensorLangError("input", f"cannot read {what}{path!r}: {detail}") from None


def _gather_inputs(args, kernel) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    if args.inputs:
        archive = _load_array_file(args.inputs)
        if not hasattr(archive, "files"):
            raise TensorLangError("input", f"--inputs {args.inputs}: expected an .npz archive, got a single array")
        with archive:
            try:
                for name in archive.files:
                    arrays[name] = archive[name]
            except Exception as exc:  # noqa: BLE001 - a damaged member of the archive
                raise TensorLangError("input", f"cannot read inputs from {args.inputs!r}: {exc}") from None
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise TensorLangError("input", f"--input expects NAME=FILE.npy, got {item!r}")
        value = _load_array_file(path, name)
        if hasattr(value, "files"):
            value.close()
            raise TensorLangError("input", f"--input {name}={path}: expected a .npy file, got an .npz archive")
        arrays[name] = value
    if args.random_inputs is not None:
        if isinstance(kernel, SymbolicKernel):  # sizes from the files given, else --param
            kernel = kernel.for_inputs(arrays)
        kernel._check_store_size()  # an absurd program is refused before drawing numbers
        rng = np.random.default_rng(args.random_inputs)
        for name in _random_candidates(kernel):
            if name not in arrays:
                arrays[name] = rng.uniform(-1.0, 1.0, size=kernel.shapes[name])
    return arrays


def _random_candidates(kernel) -> list[str]:
    """With qualifiers: the in/inout variables.  Without: those read before assigned
    (in the lowered program, which keeps one statement per source statement and what
    each reads, whatever the front end)."""
    if kernel.checked.context.qualified:
        return list(kernel.inputs)
    assigned: set[str] = set()
    needed: list[str] = []
    for stmt in kernel.ein.statements:
        for name in stmt.reads:
            if name not in assigned and name not in needed:
                needed.append(name)
        assigned.add(stmt.target)
    return needed


def _output_path(path: str) -> Path:
    """The file ``--output PATH`` writes (``.npz`` appended when missing), or error[input]
    for a path that names no file (``/``, ``dir/``, an existing directory)."""
    if path.endswith(("/", os.sep)) or not Path(path).name or Path(path).name in (".", ".."):
        raise TensorLangError("input", f"cannot write output {path!r}: it names a directory, not a file")
    target = Path(path)
    if target.suffix != ".npz":
        target = target.with_name(target.name + ".npz")
    try:
        is_dir = target.is_dir()
    except OSError as exc:  # a name too long, say
        raise TensorLangError("input", f"cannot write output {str(target)!r}: {exc.strerror or exc}") from None
    if is_dir:
        raise TensorLangError("input", f"cannot write output {str(target)!r}: it is a directory")
    return target


def _save_npz(path: str, results: dict[str, np.ndarray]) -> str:
    """Write atomically: a failed write never leaves a half-written file behind.
    Returns the path written (``.npz`` appended when missing)."""
    target = _output_path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tensorlang-", suffix=".npz", dir=directory)
    except OSError as exc:
        raise TensorLangError("input", f"cannot write output {str(target)!r}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **results)  # type: ignore[arg-type]  # numpy's stub types the first keyword
            fh.flush()
            _sync(fh.fileno())  # a full disk shows here, not after the rename
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise TensorLangError("input", f"cannot write output {str(target)!r}: {exc.strerror or exc}") from None
    return str(target)


def _sync(fd: int) -> None:
    """fsync, for the errors that mean the data is not on disk; a file system that cannot
    sync at all (EINVAL, ENOTSUP) is no reason to refuse the output."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOTSUP, errno.EROFS):
            return
        raise


class _StdoutGone(TensorLangError):
    """Standard output was closed by the reader (``| head``): exit 1 without a message."""


def _out(text: str) -> None:
    """Write to standard output; a full disk or a closed pipe is error[input], never a
    traceback or an internal error."""
    try:
        sys.stdout.write(text)
    except BrokenPipeError:
        raise _StdoutGone("input", "standard output was closed") from None
    except OSError as exc:
        raise TensorLangError("input", f"cannot write to standard output: {exc.strerror or exc}") from None


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise _StdoutGone("input", "standard output was closed") from None
    except OSError as exc:
        raise TensorLangError("input", f"cannot write to standard output: {exc.strerror or exc}") from None


def _drop_stdout() -> None:
    """After a failed write, point standard output at /dev/null so that the buffered rest
    is not written again (and reported again) when the interpreter exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a replaced stdout (tests) has no descriptor
        pass


def _checksum(a: np.ndarray) -> str:
    with np.errstate(all="ignore"):  # inf - inf in a sum is a NaN checksum, not a warning
        total = float(np.sum(a, dtype=np.float64))
    return f"sum={total:.10g}"


def _check_writable(path: str) -> None:
    """Refuse an output path that cannot be written before any work is done."""
    directory = _output_path(path).parent
    try:
        usable = directory.is_dir() and os.access(directory, os.W_OK)
    except OSError:
        usable = False
    if not usable:
        raise TensorLangError("input", f"cannot write output {path!r}: directory {str(directory)!r} is not writable")


def cmd_run(args) -> int:
    if args.output:
        _check_writable(args.output)
    source, lang = _read_program(args.program, args.lang)
    kernel = compile_source(source, lang, backend=args.backend, dtype=args.dtype, threads=args.threads,
                            params=args.params, opt=not args.no_opt, skip_passes=args.skip)
    try:
        arrays = _gather_inputs(args, kernel)
    except TensorLangError as exc:
        raise exc.with_source(kernel.source) from None
    start = time.perf_counter()
    results = kernel.run(arrays)
    elapsed = time.perf_counter() - start
    width = max((len(n) for n in results), default=0)
    for name, value in results.items():
        _out(f"{name:<{width}}  {show(value.shape):<16} {_checksum(value)}\n")
    _out(f"time: {elapsed * 1e3:.3f} ms  (backend {kernel.backend}, {kernel.dtype.name})\n")
    if args.output:
        written = _save_npz(args.output, results)
        _out(f"wrote {len(results)} result(s) to {written}\n")
    return 0


# ------------------------------------------------------------------ compile
def cmd_compile(args) -> int:
    source, lang = _read_program(args.program, args.lang)
    # the interpreter's kernel compiles nothing: each stage below is generated on request
    kernel = compile_source(source, lang, backend="interp", dtype=args.dtype, params=args.params,
                            opt=not args.no_opt, skip_passes=args.skip)
    if args.emit == "opt" and args.no_opt:
        raise TensorLangError("input", "--emit opt shows the optimizer's output; it cannot be combined with --no-opt")
    text = kernel.ir(args.emit) if args.emit in stages.IR_STAGES else kernel.code(args.emit)
    if args.o:
        try:
            Path(args.o).write_text(text)
        except OSError as exc:
            raise TensorLangError("input", f"cannot write {args.o!r}: {exc.strerror or exc}") from None
    else:
        _out(text)
    return 0


# ------------------------------------------------------------------ analyze
def cmd_analyze(args) -> int:
    source, lang = _read_program(args.program, args.lang)
    kernel = compile_source(source, lang, backend="interp", dtype=args.dtype, params=args.params,
                            skip_passes=args.skip)
    if isinstance(kernel, SymbolicKernel):  # no values for its sizes: costs as polynomials
        _out(kernel.cost_report())
        return 0
    assert isinstance(kernel, Kernel)
    _out(report(kernel.ein, kernel.optimized, kernel.dtype.itemsize))
    return 0


# ------------------------------------------------------------------ cache
def cmd_cache(args) -> int:
    if args.action == "info":
        _out(c_build.cache_info() + "\n")
    else:
        removed = c_build.cache_clear()
        _out(f"removed {removed} cached kernel{'s' if removed != 1 else ''} from {c_build.cache_dir()}\n")
    return 0


# ------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tensorlang", description="A typed tensor language and its compiler.")
    parser.add_argument("--version", action="version", version=f"tensorlang {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="type-check programs; exit 1 with diagnostics if any is ill-formed")
    p.add_argument("programs", nargs="+", metavar="PROG")
    p.add_argument("--lang", choices=LANGUAGES)
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", dest="param",
                   help="a symbolic size used in the program's types (.cfd, .stur); repeatable")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing for well-formed programs")
    p.add_argument("--core", action="store_true", help="TeIL programs must also be Core-TeIL (paper 001 section 4)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("run", help="run a program and print a summary of its results")
    p.add_argument("program", metavar="PROG", help="a program file, or - for standard input")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    p.add_argument("--inputs", metavar="FILE.npz")
    p.add_argument("--random-inputs", action="store_const", const=0, dest="random_inputs",
                   help="fill inputs not given otherwise with uniform random numbers in [-1, 1]; "
                        "--random-inputs=SEED picks the seed (default 0)")
    p.add_argument("--random-seed", type=int, dest="random_inputs", help=argparse.SUPPRESS)
    p.add_argument("--output", metavar="OUT.npz")
    p.add_argument("--backend", default="auto", choices=("auto",) + KNOWN)
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--threads", type=int)
    p.add_argument("--lang", choices=LANGUAGES)
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", dest="param",
                   help="a symbolic size used in the program's types (.cfd, .stur); repeatable")
    _optimizer_switches(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("compile", help="show a stage of the compiler")
    p.add_argument("program", metavar="PROG")
    p.add_argument("--emit", default="ast", choices=stages.EMIT_STAGES)
    p.add_argument("-o", metavar="FILE")
    p.add_argument("--lang", choices=LANGUAGES)
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", dest="param",
                   help="a symbolic size used in the program's types (.cfd, .stur); repeatable")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"), help="element type of generated code")
    _optimizer_switches(p)
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("analyze", help="flops and bytes per statement before and after the optimizer")
    p.add_argument("program", metavar="PROG")
    p.add_argument("--lang", choices=LANGUAGES)
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", dest="param",
                   help="a symbolic size used in the program's types (.cfd, .stur); repeatable")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"), help="element size for bytes")
    _optimizer_switches(p, no_opt=False)
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("cache", help="show or clear the cache of compiled C kernels")
    p.add_argument("action", choices=("info", "clear"))
    p.set_defaults(func=cmd_cache)

    _add_bench_parser(sub)
    return parser


def _add_bench_parser(sub) -> None:
    """``tensorlang bench`` comes from the package ``tensorlang_bench`` (benchmarks/
    tensorlang_bench, installed beside tensorlang); only its light ``__init__`` is imported
    here.  Without it, ``bench`` stays listed and says how to get it."""
    try:
        from tensorlang_bench import add_parser
    except ImportError as exc:
        # every argument, --help included, is taken as it comes: the message is the answer
        p = sub.add_parser("bench", help="benchmarks against peers (needs the package tensorlang_bench)",
                           add_help=False, prefix_chars="\0")
        p.add_argument("rest", nargs="*")
        p.set_defaults(func=_bench_missing, why=str(exc))
    else:
        add_parser(sub)


def _bench_missing(args) -> int:
    raise TensorLangError("input", f"`tensorlang bench` needs the package tensorlang_bench, which cannot be imported "
                                   f"({args.why}); from a checkout of tensorlang, run: pip install -e '.[bench]'")


def _optimizer_switches(p: argparse.ArgumentParser, no_opt: bool = True) -> None:
    """``--no-opt`` and ``--skip NAME`` (a pass or a rewrite rule): for debugging the
    optimizer (docs/optimizer.md).  An unknown name is error[input], listing both."""
    if no_opt:
        p.add_argument("--no-opt", action="store_true", help="run the program as lowered, without the optimizer")
    else:
        p.set_defaults(no_opt=False)
    p.add_argument("--skip", action="append", default=[], metavar="NAME",
                   help=f"leave out an optimizer pass ({', '.join(PASS_NAMES)}) or switch off a rewrite rule "
                        "(`tensorlang analyze` shows those that fire; docs/optimizer.md lists them); repeatable")


def _normalize(argv: list[str]) -> list[str]:
    """``--random-inputs=SEED`` takes its seed only after '=', so that
    ``run --random-inputs prog.tl`` never mistakes the program for a seed."""
    return ["--random-seed=" + a.split("=", 1)[1] if a.startswith("--random-inputs=") else a for a in argv]


def _parse_params(items: list[str]) -> dict[str, int]:
    """``--param n=5`` (repeatable) as ``{"n": 5}``; a malformed one is error[input]."""
    params: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name.isidentifier():
            raise TensorLangError("input", f"--param expects NAME=VALUE with a positive integer VALUE, got {item!r}")
        try:
            number = int(value)
        except ValueError:
            number = 0
        if number < 1 or not value.isdigit():
            raise TensorLangError("input", f"--param {name}: a size must be a positive integer, got {value!r}")
        if name in params and params[name] != number:
            raise TensorLangError("input", f"--param {name} is given twice, as {params[name]} and {number}")
        params[name] = number
    return params


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(_normalize(list(sys.argv[1:] if argv is None else argv)))
    try:
        if hasattr(args, "param"):
            args.params = _parse_params(args.param)
        status = guard(args.func)(args)
        _flush_stdout()
        return status
    except _StdoutGone:
        _drop_stdout()
        return 1
    except TensorLangError as exc:
        if exc.message.startswith("cannot write to standard output"):
            _drop_stdout()
        print(exc.render(), file=sys.stderr)
        if exc.code == "internal" and os.environ.get("TENSORLANG_DEBUG"):
            import traceback

            traceback.print_exception(exc.__cause__ or exc)
        return 3 if exc.code == "internal" else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
