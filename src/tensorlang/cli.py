"""The ``tensorlang`` command line (SPEC section 6; docs/cli.md).  No traceback reaches
the terminal: failures exit 1 with a diagnostic, usage mistakes 2, anything unexpected 3
with one line (``TENSORLANG_DEBUG=1`` shows the traceback)."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import errno
import io
import json
import os
import re
import stat
import sys
import tempfile
import time
import traceback
import zipfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from . import __version__, limits, stages
from .analysis.cost import program_cost, statement_cost
from .analysis.report import duration, report
from .schedule.fusion import fusion_groups, fusion_report
from .schedule.padding import padding_decisions, padding_report
from .schedule.plan import gemm_splits, loop_statements
from .ein.printer import statement_to_text
from .explain import EXPLANATIONS, render as render_explanation
from .api import check_source, compile_options, compile_source, strand_backend
from .machine import usable_cpus
from .targets import KNOWN
from .targets.c import build as c_build
from .errors import Source, TensorLangError, guard, pointing_into, shown_name
from .lang import DEFAULT as DEFAULT_LANGUAGE, PUBLIC, REGISTRY, decode_source, language_of, parse, read_source, to_json
from .passes import PASS_NAMES
from .semantics import progress
from .semantics.types import show
from .kernel import check_input
from .specialize import SymbolicKernel
from .strands import StrandRun
from .strands.runner import same_file, write_text_file


def _read_program(path: str, lang: str | None) -> tuple[Source, str]:
    return (_read_stdin(), lang or DEFAULT_LANGUAGE) if path == "-" else (read_source(path), language_of(path, lang))


def _read_stdin() -> Source:
    """The program on standard input as bytes, bounded (docs/cli.md, "What run reads")."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # standard input closed (0<&-) or replaced by a text-only object
        if sys.stdin is None:
            raise TensorLangError("input", "cannot read the program from standard input: it is closed")
        text = sys.stdin.read(limits.max_source_bytes() + 1)
        stream = io.BytesIO(text.encode("utf-8", "surrogateescape"))
    try:
        with pointing_into(Source("", "<stdin>")):
            data = limits.read_bounded(stream, limits.max_source_bytes(), "the program on standard input")
    except OSError as exc:
        raise TensorLangError("input", f"cannot read the program from standard input: {exc.strerror or exc}") from None
    return decode_source(data, "<stdin>")


# ------------------------------------------------------------------ check
def cmd_check(args) -> int:
    if args.programs.count("-") > 1:  # the second would read an empty program and call it fine
        raise TensorLangError("input", "standard input (-) can be checked once: it is read to its end")
    reports = []
    for path in args.programs:
        try:
            source, lang = _read_program(path, args.lang)
            guard(check_source)(source, lang, args.params, args.core)
            reports.append({"file": source.filename, "ok": True, "diagnostics": []})
        except TensorLangError as exc:
            # every diagnostic as JSON values for editors (1-based lines and columns; the end column is one past the last character)
            reports.append({"file": exc.filename or path, "ok": False, "diagnostics": [
                {"code": d.code, "message": d.message, "rule": d.rule,
                 **{key: getattr(d.span, key) if d.span else None for key in ("line", "col", "end_line", "end_col")}}
                for d in exc.diagnostics]})
            if not args.json:
                _print_error(exc)
        if not args.json and not args.quiet and reports[-1]["ok"]:
            _out(f"{shown_name(source.filename)}: ok\n")
    if args.json:
        _out(json.dumps(reports, indent=2) + "\n")
    return 0 if all(r["ok"] for r in reports) else 1


# ------------------------------------------------------------------ run
def _read_arrays(path: str, name: str | None, kernel) -> dict[str, np.ndarray]:
    """The arrays of ``--inputs FILE.npz`` (``name`` None) or ``--input NAME=FILE.npy``, from a
    regular file; anything but np.save's and np.savez's files is error[input]."""
    with os.fdopen(limits.open_regular(path, "input file"), "rb") as fh:
        try:
            head = fh.read(4096)
            fh.seek(0)
        except OSError as exc:
            raise TensorLangError("input", f"cannot read {path!r}: {exc.strerror or exc}") from None
        if not head.startswith((b"\x93NUMPY", b"PK")):
            # no array file at all (empty, text, CSV): numpy would try to unpickle it and say "pickled data"
            kind = "neither a .npy array nor an .npz archive"
            if head.decode("utf-8", "ignore").encode() == head:
                kind = "text" if head else "empty"
            what = f"input {name!r}" if name else "inputs"
            raise TensorLangError("input", f"cannot read {what} from {path!r}: the file is {kind}; "
                                           "numpy array files are written by np.save (.npy) and np.savez (.npz), "
                                           "e.g. np.save('A.npy', np.loadtxt('A.txt'))")
        if name is None and not head.startswith(b"PK"):
            raise TensorLangError("input", f"--inputs {shown_name(path)}: expected an .npz archive, got a single array")
        if name is not None and head.startswith(b"PK"):
            raise TensorLangError("input", f"--input {name}={shown_name(path)}: expected a .npy file, got an .npz archive")
        return _read_npz(fh, path, kernel) if name is None else {name: _read_npy(fh, path, name, kernel)}


def _read_npy(stream, path: str, name: str, kernel) -> np.ndarray:
    """One array from a .npy stream, its header checked first (docs/cli.md, "What run reads")."""
    where = f"input {name!r} from {path!r}"
    try:
        version = np.lib.format.read_magic(stream)
        header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = header(stream)
    except Exception as exc:  # noqa: BLE001 - numpy raises many kinds for damaged headers
        raise TensorLangError("input", f"cannot read {where}: {_first_line(exc)}") from None
    if dtype.hasobject:
        raise TensorLangError("input", f"cannot read {where}: it holds Python objects (pickled data), not numbers")
    # the declared shape where it is known before reading (not with symbolic sizes, nor for no input)
    if not isinstance(kernel, SymbolicKernel) and name in kernel.checked.accepted_inputs:
        check_input(where, dtype, tuple(shape), tuple(kernel.checked.context[name]), kernel.dtype,
                    note=" (read from the file's header; no data was read)")
    limits.check_allocation(int(np.prod(shape, dtype=object)), max(dtype.itemsize, 1), where)
    try:
        stream.seek(0)
        return np.lib.format.read_array(stream, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - truncated or damaged data
        raise TensorLangError("input", f"cannot read {where}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _read_npz(fh, path: str, kernel) -> dict[str, np.ndarray]:
    """Every member of an .npz archive, named as np.load names them, each read by :func:`_read_npy`."""
    arrays: dict[str, np.ndarray] = {}
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise TensorLangError("input", f"cannot read inputs from {path!r}: {_first_line(exc)}") from None
    with archive:
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            try:
                member = archive.open(info)
            except Exception as exc:  # noqa: BLE001 - a damaged, encrypted or unsupported member
                raise TensorLangError("input", f"cannot read input {name!r} from {path!r}: {_first_line(exc)}") from None
            with member:
                arrays[name] = _read_npy(member, path, name, kernel)
    return arrays


def _gather_inputs(args, kernel) -> dict[str, np.ndarray]:
    arrays = _read_arrays(args.inputs, None, kernel) if args.inputs else {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise TensorLangError("input", f"--input expects NAME=FILE.npy, got {item!r}")
        if sum(other.partition("=")[0] == name for other in args.input) > 1:
            raise TensorLangError("input", f"--input {name}= is given more than once: give each input once")
        arrays.update(_read_arrays(path, name, kernel))
    if args.random_inputs is not None:
        if isinstance(kernel, SymbolicKernel):  # sizes from the files given, else --param
            kernel = kernel.for_inputs(arrays)
        kernel._check_store_size()  # an absurd program is refused before drawing numbers
        rng = np.random.default_rng(int(args.random_inputs))
        keep = kernel.language.keep_structure
        for name in kernel.inputs + kernel.unassigned_reads:  # unassigned_reads: without qualifiers
            if name not in arrays:
                value = rng.uniform(-1.0, 1.0, size=kernel.shapes[name])
                # a structured input keeps its promise (zeros, copies): every back end then agrees
                arrays[name] = keep(kernel.checked, name, value) if keep is not None else value
                if arrays[name] is not value:
                    args.kept_structure = getattr(args, "kept_structure", set()) | {name}
    return arrays


def _output_target(path: str) -> Path:
    """The file ``--output PATH`` writes, checked before any work (docs/cli.md, "What run reads")."""
    if path.endswith(("/", os.sep)) or Path(path).name in ("", ".", ".."):
        raise TensorLangError("input", f"cannot write output {path!r}: it names a directory, not a file")
    target = Path(path) if Path(path).suffix == ".npz" else Path(path + ".npz")  # (no path ends in / here)
    try:
        is_dir = target if target.is_dir() else Path(path) if Path(path).is_dir() else None  # `--output d`: d, d.npz
        usable = path != "-" and target.parent.is_dir() and os.access(target.parent, os.W_OK)
    except OSError as exc:  # a name too long, say
        raise TensorLangError("input", f"cannot write output {str(target)!r}: {exc.strerror or exc}") from None
    if is_dir:
        raise TensorLangError("input", f"cannot write output {str(is_dir)!r}: it is a directory")
    if path == "-":
        raise TensorLangError("input", "--output '-' names no .npz file (without --output the results are printed; "
                                       "--json: machine-readable)")
    if not usable:  # (a folder not there was "not writable")
        raise TensorLangError("input", f"cannot write output {path!r}: directory {str(target.parent)!r} " + (
            "is not writable" if target.parent.is_dir() else "does not exist" if not target.parent.exists() else "is no directory"))
    return target


def _save_npz(target: Path, results: dict[str, np.ndarray]) -> str:
    """Write atomically: a failed write never leaves a half-written file behind."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tensorlang-", suffix=".npz", dir=target.parent)
        os.umask(mask := os.umask(0o022))  # the umask, read (and set back): mkstemp's 0600 is no result's mode
        os.fchmod(fd, stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666 & ~mask)
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **results)  # type: ignore[arg-type]  # numpy's stub types the first keyword
            fh.flush()
            try:  # a full disk shows here, not after the rename
                os.fsync(fh.fileno())
            except OSError as exc:  # a file system that cannot sync at all is no reason to refuse the output
                if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EROFS):
                    raise
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise TensorLangError("input", f"cannot write output {str(target)!r}: {exc.strerror or exc}") from None
    return str(target)


class _StdoutGone(TensorLangError):
    """Standard output was closed by the reader (``| head``): exit 1 without a message."""


def _out(text: str) -> None:
    if sys.stdout is None:  # started with standard output closed (>&-)
        raise TensorLangError("input", "cannot write to standard output: it is closed")
    _on_stdout(sys.stdout.write, text)


def _on_stdout(action, *args) -> None:
    """``action(*args)`` on standard output: a full disk or a closed pipe is error[input]."""
    try:
        action(*args)
    except BrokenPipeError:
        raise _StdoutGone("input", "standard output was closed") from None
    except OSError as exc:
        raise TensorLangError("input", f"cannot write to standard output: {exc.strerror or exc}") from None


def _drop_stdout() -> None:
    """After a failed write, point standard output at /dev/null so that the buffered rest
    is not written again (and reported again) when the interpreter exits."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # a replaced stdout (tests) has no descriptor
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


#: Results with at most this many elements are printed whole; larger ones as shape, min, max and checksum.
SMALL_RESULT = 100


def _describe(value: np.ndarray) -> dict:
    """A result's shape, min, max and checksum (its float64 sum) as JSON values ("nan", "inf": strings)."""
    with np.errstate(all="ignore"):  # inf - inf in a sum is a NaN checksum, not a warning
        facts = {"min": float(np.min(value)) if value.size else None,
                 "max": float(np.max(value)) if value.size else None, "checksum": float(np.sum(value, dtype=np.float64))}
    return {"shape": list(value.shape), "dtype": value.dtype.name,
            **{k: x if x is None or np.isfinite(x) else str(x) for k, x in facts.items()}}


#: Warm calls are repeated for this many seconds, at most MAX_WARM (a slower first call: none).
WARM_SECONDS = 0.5
MAX_WARM = 50


def cmd_run(args) -> int:
    if args.random_inputs is not None and not re.fullmatch(r"[0-9]+", str(args.random_inputs)):  # (numpy's take none)
        raise TensorLangError("input", f"--random-inputs={args.random_inputs}: the seed must be a non-negative integer")
    target = _output_target(args.output) if args.output is not None else None
    for read in (args.program, args.inputs, *(spec.partition("=")[2] for spec in args.input)) if target is not None else ():
        with contextlib.suppress(OSError, ValueError):  # (a file missing: the reading says so; the program p.npz too)
            if read and os.path.samefile(str(target), read):
                raise TensorLangError("input", f"cannot write output {str(target)!r}: it is the file {read!r} this run reads, "
                                      "which the results would replace")
    source, lang = _read_program(args.program, args.lang)
    options = compile_options(args.backend, args.dtype, args.pad, args.threads, not args.no_opt, args.skip,
                              args.fma, args.allow_missing)
    kernel, compile_seconds = _timed(compile_source, source, lang, options, args.params, args.check_structure)
    try:
        arrays = _gather_inputs(args, kernel)
    except TensorLangError as exc:
        raise _for_the_command_line(exc, kernel, args).with_source(kernel.source) from None
    try:
        with _interpreter_progress(args, kernel):
            results, first, warm = _timed_runs(kernel, arrays)
    except TensorLangError as exc:
        raise _for_the_command_line(exc, kernel, args) from None
    written = _save_npz(target, results) if target is not None else None
    report = _run_report(args, kernel, lang, arrays, results, compile_seconds, first, warm, written)
    text = json.dumps(report, indent=2) + "\n" if args.json else (f"{written}\n" if written else "") if args.quiet \
        else _run_text(report, results)
    if text:
        _out(text)
    return 0


#: The interpreter's estimated flops from which ``run`` shows progress (docs/cli.md, "Long interpreter runs").
INTERP_LONG_FLOPS = 10**7


def _terminal() -> bool:
    with contextlib.suppress(AttributeError, ValueError):
        return sys.stderr.isatty()
    return False


def _interpreter_progress(args, kernel):
    """The note and progress bar of docs/cli.md, "Long interpreter runs"."""
    if kernel.backend != "interp" or args.quiet or args.json or not _terminal():
        return contextlib.nullcontext()
    try:
        flops = program_cost(kernel.ein, kernel.dtype.itemsize).flops
    except TensorLangError:  # a program the interpreter runs but EIN cannot express
        return contextlib.nullcontext()
    if flops < INTERP_LONG_FLOPS:
        return contextlib.nullcontext()
    print(f"note: the reference interpreter evaluates this program's ~{flops:.2g} flops one operator at a "
          "time; --backend c compiles it (much faster)", file=sys.stderr)
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        return contextlib.nullcontext()
    from rich.console import Console

    @contextlib.contextmanager
    def bar():
        columns = (TextColumn("interpreter"), BarColumn(), MofNCompleteColumn(), TextColumn("statements"),
                   TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True, force_terminal=True), transient=True) as shown:
            task = shown.add_task("run", total=None)
            with progress.observing(lambda done, total: shown.update(task, completed=done, total=total)):
                yield
    return bar()


#: Seconds of one timed span, on the wall clock and in CPU time (docs/cli.md, "Timings").
Timing = NamedTuple("Timing", [("wall", float), ("cpu", float)])


#: Warm calls whose CPU time is under this fraction of their wall time waited for a CPU: the machine was busy.
BUSY_CPU_FRACTION = 0.5


def _timed(fn, *args) -> tuple:
    """``fn(*args)`` and the Timing of the call."""
    def cpu() -> float:  # this process and the children it waited for (the C compiler)
        children = os.times()
        return time.process_time() + children.children_user + children.children_system

    start, start_cpu = time.perf_counter(), cpu()
    result = fn(*args)
    return result, Timing(time.perf_counter() - start, cpu() - start_cpu)


def _timed_runs(kernel, arrays) -> tuple[dict[str, np.ndarray], Timing, list[Timing]]:
    """The results, the first call's Timing and the warm calls' (docs/cli.md, "Timings")."""
    results, first = _timed(kernel.run, arrays)
    warm: list[Timing] = []
    deadline = time.perf_counter() + WARM_SECONDS
    while first.wall < WARM_SECONDS and len(warm) < MAX_WARM and (len(warm) < 3 or time.perf_counter() < deadline):
        warm.append(_timed(kernel.run, arrays)[1])
    return results, first, warm


def _load() -> float | None:
    """The one-minute load average, or None where the system has none (Windows)."""
    with contextlib.suppress(AttributeError, OSError):
        return os.getloadavg()[0]
    return None


def _busy(first: Timing, warm: list[Timing]) -> str | None:
    """Why the timings are not the kernel's own, or None (docs/cli.md, "Timings")."""
    runs = warm or [first]
    wall, cpu = sum(t.wall for t in runs), sum(t.cpu for t in runs)
    load, cpus = _load(), usable_cpus()
    reasons = [f"load average {load:.1f} on {cpus} CPU{'s' if cpus != 1 else ''}"] if load is not None and load > cpus else []
    waited = wall > 0 and cpu < BUSY_CPU_FRACTION * wall
    if waited:
        calls = f"the {len(runs)} timed calls" if len(runs) > 1 else "the call"
        reasons.append(f"{calls} had the CPU {100 * cpu / wall:.0f}% of their wall time: wall {duration(wall)}, "
                       f"CPU {duration(cpu)} in all")
    return f"the machine was busy ({'; '.join(reasons)})" + (
        "; the CPU time is closer to the kernel's own cost" if waited else "") if reasons else None


def _for_the_command_line(exc: TensorLangError, kernel, args) -> TensorLangError:
    """A missing input says how a command line gives one; a too-large error, which back end refused it."""
    if exc.code == "input" and exc.message.startswith("missing input ") and args.random_inputs is None:
        extra = "; on the command line: --input NAME=FILE.npy, --inputs FILE.npz, or --random-inputs"
    elif exc.code == "too-large":
        extra = f" (back end {kernel.backend}" + (
            "; the reference interpreter is the slowest: try --backend c)" if kernel.backend == "interp" else ")")
    else:
        return exc
    first = replace(exc.diagnostics[0], message=exc.message + extra)
    return TensorLangError(first.code, first.message, first.span, first.rule, exc.source,
                           [first, *exc.diagnostics[1:]])


def _run_report(args, kernel, lang, arrays, results, compile_seconds, first, warm, written) -> dict:
    """What ``run`` says, as JSON values: ``--json`` prints it, :func:`_run_text` renders it."""
    origins = dict.fromkeys(arrays, args.inputs) if args.inputs else {}
    origins.update(item.partition("=")[::2] for item in args.input)
    for name in arrays:  # the rest are random numbers
        kept = ", made to keep the structure the program promises for it" if name in getattr(
            args, "kept_structure", ()) else ""
        origins.setdefault(name, f"random uniform in [-1, 1], seed {args.random_inputs}{kept}")
    median = Timing(*map(float, np.median(warm, axis=0))) if warm else Timing(None, None)  # type: ignore[arg-type]
    return {
        "program": kernel.source.filename, "language": lang, "backend": kernel.backend,
        "dtype": kernel.dtype.name, "optimized": kernel.opt,
        "inputs": {n: {"shape": list(np.shape(arrays[n])), "from": origins[n]} for n in arrays},
        "results": {n: _describe(v) for n, v in results.items()},
        "seconds": {"compile": compile_seconds.wall, "first_call": first.wall, "warm_median": median.wall,
                    "warm_calls": len(warm), "compile_cpu": compile_seconds.cpu, "first_call_cpu": first.cpu,
                    "warm_median_cpu": median.cpu},
        "machine": {"cpus": usable_cpus(), "load_average": _load(), "busy": _busy(first, warm)},
        "output": written,
    }


def _run_text(report: dict, results: dict[str, np.ndarray]) -> str:
    """The run report as text: small results printed whole."""
    lines = [f"ran {report['program']} ({report['language']}) on back end {report['backend']}, {report['dtype']}"
             f"{'' if report['optimized'] else ', optimizer off'}"]
    inputs = report["inputs"]
    width = max(map(len, inputs), default=0)
    lines += ["inputs:" if inputs else "inputs: none"] + [
        f"  {n:<{width}}  {show(tuple(i['shape'])):<12} {i['from']}" for n, i in inputs.items()]
    lines.append("results (checksum: the sum of all elements, to compare runs by):")
    width = max(map(len, results), default=0)
    for name, d in report["results"].items():
        lines.append(f"  {name:<{width}}  {show(tuple(d['shape'])):<12} min={_fmt(d['min'])} max={_fmt(d['max'])} "
                     f"checksum={_fmt(d['checksum'], 10)}")
        if results[name].size <= SMALL_RESULT:
            lines.append("    " + np.array2string(results[name], prefix="    "))
    t = report["seconds"]
    run = (f"{_both(t['warm_median'], t['warm_median_cpu'])} (median of {t['warm_calls']} warm calls; first call "
           f"{duration(t['first_call'])})" if t["warm_calls"] else
           f"{_both(t['first_call'], t['first_call_cpu'])} (one call; too slow to repeat)")
    lines.append(f"time: compile {_both(t['compile'], t['compile_cpu'])}; run {run}")
    lines += [f"note: {report['machine']['busy']}"] * bool(report["machine"]["busy"])
    lines += [f"wrote {len(results)} result(s) to {report['output']}"] * bool(report["output"])
    return "\n".join(lines) + "\n"


def _both(wall: float, cpu: float) -> str:
    return f"{duration(wall)} wall, {duration(cpu)} CPU"


def _fmt(x, digits: int = 6) -> str:
    return "-" if x is None else (x if isinstance(x, str) else f"{x:.{digits}g}")


# ------------------------------------------------------------------ compile
#: The stages ``compile --json`` prints as trees (lang/json_form.py)
JSON_STAGES = ("ast", "ein", "opt")


def cmd_compile(args) -> int:
    text = _stage_text(args)
    _out(text) if args.o in (None, "-") else write_text_file(args.o, text, keep=args.program)  # UTF-8, as programs are read
    return 0


def _stage_text(args) -> str:
    """What ``compile`` shows: the program at ``--emit``'s stage, as text or JSON."""
    source, lang = _read_program(args.program, args.lang)
    if args.emit == "ast" and getattr(REGISTRY[lang], "strands", None) is not None:  # a strand program: no kernel
        tree = parse(source, lang, args.params)
        return json.dumps(to_json(tree, "ast", lang), indent=1) + "\n" if args.json else REGISTRY[lang].print(tree)
    # the interpreter's kernel compiles nothing: each stage below is generated on request
    options = compile_options("interp", args.dtype, args.pad, opt=not args.no_opt, skip_passes=args.skip,
                              fma=args.fma)
    kernel = compile_source(source, lang, options, args.params)
    if args.emit == "opt" and args.no_opt:
        raise TensorLangError("input", "--emit opt shows the optimizer's output; it cannot be combined with --no-opt")
    text = kernel.ir(args.emit) if args.emit in stages.IR_STAGES else kernel.code(args.emit)
    if args.json:  # the tree as JSON (docs/cli.md, "JSON form"); the text above checked the stage exists
        if args.emit not in JSON_STAGES:
            raise TensorLangError("input", f"--json prints the trees of --emit {', '.join(JSON_STAGES)}, "
                                  f"not of {args.emit}")
        if args.emit == "ast":  # the tree as parsed
            tree = parse(source, lang, args.params)
        else:
            assert not isinstance(kernel, SymbolicKernel), "its ir() refused ein and opt"
            tree = kernel.ein if args.emit == "ein" else kernel.optimized.program
        text = json.dumps(to_json(tree, "ast" if args.emit == "ast" else "ein", kernel.language.name), indent=1) + "\n"
    return text


# ------------------------------------------------------------------ analyze
def cmd_analyze(args) -> int:
    source, lang = _read_program(args.program, args.lang)
    kernel = compile_source(source, lang, compile_options("interp", args.dtype, args.pad, skip_passes=args.skip),
                            args.params)
    if args.plot and isinstance(kernel, SymbolicKernel):  # (--plot's refusals before the report, not after it)
        raise TensorLangError("input", "--plot needs values for the program's sizes: give them with --param")
    if args.plot and os.path.exists(args.plot) and stat.S_ISFIFO(os.stat(args.plot).st_mode):  # savefig would block
        raise TensorLangError("input", f"--plot: cannot write {args.plot}: it is a FIFO (named pipe), not a file")
    if args.plot and args.program != "-" and same_file(args.plot, args.program):  # (analyze p.svg --plot p.svg)
        raise TensorLangError("input", f"--plot: cannot write {args.plot}: it is the program, which it would replace")
    if isinstance(kernel, SymbolicKernel):  # no values for its sizes: costs as polynomials
        text = kernel.cost_report()
        facts = {"program": kernel.source.filename, "dtype": kernel.dtype.name, "symbols": list(kernel.symbols),
                 "report": text}
    elif args.json:
        facts = _analyze_json(kernel)
    else:
        # which statements run as loops (Fig. 16) in the C target's schedule (docs/compatible.md)
        loops = partial(loop_statements, from_c=kernel.blas_from_c)
        text = report(kernel.ein, kernel.optimized, kernel.dtype.itemsize, loops, isl=args.isl)
        # which statements run over padded extents (000 §4), else which share one loop over their batch (schedule/fusion.py)
        extra = padding_report(kernel.executed, kernel.pad) if kernel.pad > 1 else fusion_report(
            kernel.executed, kernel.roles(), kernel.dtype.itemsize, gemm_splits(kernel.executed.shapes, kernel.blas_from_c))
        text = text.rstrip("\n") + "\n" + extra + "\n" if extra else text
    _out(json.dumps(facts, indent=2) + "\n" if args.json else text)
    if args.plot and not isinstance(kernel, SymbolicKernel):  # (refused above)
        from .analysis.structure_plot import plot_structure
        plot_structure(kernel.ein, args.plot)
    return 0


def _analyze_json(kernel) -> dict:
    """``analyze --json``: the same facts as the text report, as JSON values."""
    itemsize = kernel.dtype.itemsize

    def table(program) -> dict:
        costs = [(stmt, statement_cost(stmt, program.shapes, itemsize)) for stmt in program.statements]
        total = program_cost(program, itemsize)
        return {"statements": [{"statement": statement_to_text(s), "target": s.target, "shape": list(program.shapes[s.target]),
                                "flops": c.flops, "bytes": c.bytes} for s, c in costs],
                "flops": total.flops, "bytes": total.bytes, "ir_nodes": program.size}

    optimized = kernel.optimized
    facts = {
        "program": kernel.source.filename, "dtype": kernel.dtype.name,
        "before": table(kernel.ein), "after": table(optimized.program),
        "passes": [{"name": r.name, "ir_nodes": r.nodes, "statements": r.statements, "seconds": r.seconds}
                   for r in optimized.log],
        "rules": dict(getattr(optimized, "rules", ())),
    }
    if kernel.pad > 1:  # per statement of the executed program, as the text report says
        facts["padding"] = {"pad": kernel.pad, "statements": [
            {"statement": statement_to_text(stmt), "mode": chosen.mode, "re_zeroed": chosen.rezero, "why": chosen.why}
            for stmt, chosen in padding_decisions(kernel.executed, kernel.pad)]}
    else:
        facts["fusion"] = [{"statements": [g.start + 1, g.stop], "batch": g.var, "extent": g.extent,
                            "locals": [l.name for l in g.locals], "working_set_bytes": g.working_set,
                            "bytes_unfused": g.bytes_unfused, "bytes_fused": g.bytes_fused}
                           for g in fusion_groups(kernel.executed, kernel.roles(), itemsize, None,
                                                 gemm_splits(kernel.executed.shapes, kernel.blas_from_c))]
    return facts


# ------------------------------------------------------------------ explain
def cmd_explain(args) -> int:
    if args.code is None:
        width = max(len(c) for c in EXPLANATIONS)
        _out("".join(f"{c:<{width}}  {e.summary}\n" for c, e in sorted(EXPLANATIONS.items())))
        return 0
    code = args.code.strip().removeprefix("error[").removesuffix("]")
    if code not in EXPLANATIONS:
        raise TensorLangError("input", f"no error code {args.code!r}; the codes are {', '.join(sorted(EXPLANATIONS))}")
    _out(render_explanation(code))
    return 0


# ------------------------------------------------------------------ cache
def cmd_cache(args) -> int:
    if args.action == "info":
        _out(c_build.cache_info() + "\n")
    else:
        removed = c_build.cache_clear()
        _out(f"removed {removed} cached kernel{'s' if removed != 1 else ''} from {c_build.cache_dir()}\n")
    return 0


# ------------------------------------------------------------------ the commands' table and main
def _pad(text: str) -> int | str:
    """``--pad M`` or ``--pad auto`` as compile's ``pad=`` takes it (checked there)."""
    text = text.strip()
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    try:  # (int() reads every digit isdecimal() admits, up to 4300 of them)
        return int(sign + (digits.lstrip("0") or "0")) if digits.isdecimal() else text
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of {len(digits)} digits is too large") from None


def _arg(*flags: str, **options) -> tuple:
    """An argument of a command: what ``add_argument`` takes (a list of them: exclusive)."""
    return flags, options


_PROGRAM = _arg("program", metavar="PROG", help="a program file, or - for standard input")
#: The options every command that reads a program shares (--lang: not the internal front ends).
_COMMON = [_arg("--lang", choices=PUBLIC,
                help="the program's language when its suffix does not say (default: by suffix, else tl)"),
           _arg("--param", action="append", default=[], metavar="NAME=VALUE", dest="param",
                help="a symbolic size used in the program's types, e.g. n=8 (.cfd, .tl, .stur symbols); repeatable")]
_PAD = _arg("--pad", type=_pad, metavar="M",
            help="pad every buffer of the C back end to multiples of M (a power of two) with zeros, "
                 "000 §4; auto: the SIMD width in elements where padding removes vector remainders at no "
                 "other cost, else none (a kernel's auto_pad says why; numpy and interp ignore it)")
_FMA = [_arg("--fma", dest="fma", action="store_true", default=True,
             help="the C back end computes each multiply-add of a sum as one fused multiply-add (one "
                  "rounding; the default, as in BLAS, XLA and numba): finite results within rounding, "
                  "but an overflowing product no longer becomes inf on its own (docs/optimizer.md, "
                  "\"Fused multiply-add\"); numpy and interp ignore it"),
        _arg("--no-fma", dest="fma", action="store_false",
             help="round every product on its own, as the reference does (fma=False): see --fma")]
#: For debugging the compiler (docs/optimizer.md).
_NO_OPT = _arg("--no-opt", action="store_true", help="run the program as lowered, without the optimizer")
_SKIP = _arg("--skip", action="append", default=[], metavar="NAME",
             help=f"leave out an optimizer pass ({', '.join(PASS_NAMES)}), switch off a rewrite rule "
                  "(`tensorlang analyze` shows those that fire; docs/optimizer.md lists them) or leave out "
                  "a loop rewrite (`--emit loops` lists those that ran); repeatable")


def _dtype(help: str) -> tuple:
    return _arg("--dtype", default="float64", choices=("float64", "float32"), help=help)


def _flag(*flags: str, help: str, **options) -> tuple:
    return _arg(*flags, action="store_true", help=help, **options)


#: The commands: name -> (function, --help's one line, description, arguments in --help's order).
COMMANDS: dict[str, tuple[Callable[..., int], str, str, list]] = {
    "check": (cmd_check, "type-check programs; exit 1 with diagnostics if any is ill-formed",
              "Type-check programs; exit 1 with diagnostics if any is ill-formed.", [
                  _arg("programs", nargs="+", metavar="PROG",
                       help="program files (.tl, .cfd, .teil), or - for standard input"),
                  *_COMMON,
                  _flag("-q", "--quiet", help="print nothing for well-formed programs"),
                  _flag("--json", help="print one JSON list: per file its name, ok and diagnostics (code, message, "
                                       "rule, line, col, end_line, end_col)"),
                  _flag("--core", help="TeIL programs must also be Core-TeIL (paper 001 section 4)")]),
    "run": (cmd_run, "run a program and show its results and timings",
            "Run a program: say what ran and where its inputs came from, print small results whole and large ones "
            "as shape, min, max and checksum, and time the compile and the warm calls (median) apart.", [
                _PROGRAM,
                _arg("--input", action="append", default=[], metavar="NAME=FILE.npy",
                     help="read input NAME from a .npy file; repeatable"),
                _arg("--inputs", metavar="FILE.npz", help="read inputs from an .npz archive, one array per variable"),
                _arg("--random-inputs", action="store_const", const=0, dest="random_inputs",
                     help="fill inputs not given otherwise with uniform random numbers in [-1, 1], made to keep "
                          "the structure the program promises for them (zeros, copies); --random-inputs=SEED picks "
                          "the seed (default 0)"),
                _arg("--random-seed", dest="random_inputs", help=argparse.SUPPRESS),
                _arg("--output", metavar="OUT.npz",
                     help="write the results to an .npz archive (.npz is appended if missing)"),
                _arg("--backend", default="auto", choices=("auto",) + KNOWN,
                     help="what runs the program: c (generated C), numpy, interp (the reference interpreter, "
                          "slow); auto: c where a C compiler works, else numpy, and interp for a program "
                          "the compiled targets cannot lower yet (with a note)"),
                _dtype("element type: float64 (default) or float32"),
                _arg("--threads", type=int, metavar="N",
                     help="threads for the C back end, 1 to 256 (default: OpenMP's)"),
                _PAD, _FMA, *_COMMON,
                _flag("--check-structure", dest="check_structure",
                      help="check that the inputs keep the structure the program promises (error[structure] at the "
                           "first entry that does not)"),
                _flag("--allow-missing", dest="allow_missing",
                      help="in a program without in/out qualifiers, let a variable it reads before assigning start "
                           "as ⊥ (NaN) when no input gives it (default: error[input] naming it)"),
                [_flag("-q", "--quiet", help="print nothing but the file --output wrote"),
                 _flag("--json", help="print what ran, the results' summaries and the timings as JSON")],
                _NO_OPT, _SKIP]),
    "compile": (cmd_compile, "show a stage of the compiler", "Show the program at a stage of the compiler.", [
        _PROGRAM,
        _arg("--emit", default="ast", choices=stages.EMIT_STAGES,
             help="the stage to show (default ast: the program as parsed)"),
        _arg("-o", metavar="FILE", help="write to FILE instead of standard output (-o -: standard output)"),
        _flag("--json", help="print the tree of --emit ast, ein or opt as JSON (docs/cli.md, 'JSON form')"),
        *_COMMON, _dtype("element type of generated code: float64 (default) or float32"), _PAD, _FMA, _NO_OPT, _SKIP]),
    "analyze": (cmd_analyze, "flops and bytes per statement before and after the optimizer",
                "Flops and bytes per statement before and after the optimizer, each pass's log and the rewrite "
                "rules that fired.", [
                    _PROGRAM, *_COMMON, _dtype("element size for bytes: float64 (default) or float32"), _PAD,
                    _flag("--json", help="print the same facts as JSON"),
                    _flag("--isl", help="also print each structured tensor's unique set and redundancy map as isl "
                                        "text (docs/structure.md)"),
                    _arg("--plot", metavar="OUT.png", help="also draw each tensor's structure (unique set, copies, "
                                                           "zeros) as a PNG (needs matplotlib)"),
                    _SKIP]),
    "explain": (cmd_explain, "what an error code means, with an example and its fix",
                "What an error code means, an example that produces it and the example fixed.", [
                    _arg("code", nargs="?", metavar="CODE",
                         help="an error code such as shape or dim-range; none lists them all")]),
    "cache": (cmd_cache, "show or clear the cache of compiled C kernels", "Show or clear the cache of compiled C kernels.",
              [_arg("action", choices=("info", "clear"), help="info: where and how big; clear: remove every kernel")]),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensorlang", description="A typed tensor language and its compiler.",
        epilog="`tensorlang COMMAND --help` describes a command; `tensorlang explain CODE` an error code.")
    parser.add_argument("--version", action="version", version=f"tensorlang {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (func, summary, description, arguments) in COMMANDS.items():
        p = sub.add_parser(name, help=summary, description=description)
        p.set_defaults(func=func)
        for item in arguments:
            into = p.add_mutually_exclusive_group() if isinstance(item, list) else p
            for flags, options in item if isinstance(item, list) else [item]:
                into.add_argument(*flags, **options)
    _add_bench_parser(sub)
    return parser


def _add_bench_parser(sub) -> None:
    """``tensorlang bench`` from the package ``tensorlang_bench``; without it, ``bench`` says how to get it."""
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


def _parse(argv: list[str]) -> argparse.Namespace:
    """argparse's reading of ``argv``: ``--random-inputs=SEED`` takes its seed only after '=' (never the
    program's name); ``--OPTION=--`` is refused as ``--OPTION --`` is (argparse reads that '--' as an empty list)."""
    parser = build_parser()
    for word in argv[:argv.index("--")] if "--" in argv else argv:
        if word.startswith("-") and word.partition("=")[2] == "--":
            parser.error(f"argument {word.partition('=')[0]}: expected one argument")
    return parser.parse_args(["--random-seed=" + a.split("=", 1)[1] if a.startswith("--random-inputs=") else a for a in argv])


def _parse_params(items: list[str]) -> dict[str, int]:
    """``--param n=5`` (repeatable) as ``{"n": 5}``; a malformed one is error[input]."""
    params: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name.isidentifier():
            raise TensorLangError("input", f"--param expects NAME=VALUE with a positive integer VALUE, got {item!r}")
        try:
            number = int(value.lstrip("0") or "0") if value.isdecimal() else 0  # (int() reads what isdecimal() admits)
        except ValueError:  # over int()'s 4300 digits (a traceback, before)
            raise TensorLangError("too-large", f"--param {name}: a size of {len(value)} digits is 2^62 or more") from None
        if number < 1:
            raise TensorLangError("input", f"--param {name}: a size must be a positive integer, got {value!r}" + ("; give one --param per size: --param n=4 --param m=5" if "=" in value else ""))
        if name in params and params[name] != number:
            raise TensorLangError("input", f"--param {name} is given twice, as {params[name]} and {number}")
        params[name] = number
    return params


def _print_error(exc: TensorLangError) -> None:
    if sys.stderr is None:  # started with standard error closed (2>&-): the exit status says it
        return
    text = exc.render()
    if _terminal() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb":  # colour
        text = re.sub(r"error\[[a-z-]+\]", lambda m: f"\033[1;31m{m[0]}\033[0m", text)
    with contextlib.suppress(OSError, ValueError):  # standard error gone too: the exit status says it
        print(text, file=sys.stderr)


def _standard_streams() -> None:
    """A standard descriptor closed at start gets /dev/null, and a stream that cannot
    encode everything writes escapes (docs/cli.md, "What run reads")."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, os.O_RDWR)
            except OSError:  # no /dev/null: left closed
                continue
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and getattr(stream, "errors", None) in ("strict", "surrogateescape", "backslashreplace") \
                and hasattr(stream, "reconfigure"):
            try:
                "\u22a5\u00b5\u03b6".encode(getattr(stream, "encoding", None) or "utf-8")
            except (UnicodeEncodeError, LookupError):  # escapes, where the stream can be reconfigured
                with contextlib.suppress(ValueError, OSError, LookupError):
                    stream.reconfigure(errors=_ESCAPE)


def _escape_unencodable(exc: UnicodeError):
    """The error handler of :func:`_standard_streams`: surrogateescape's bytes as they
    came in, anything else as a backslash escape."""
    if isinstance(exc, UnicodeEncodeError):
        chunk = exc.object[exc.start:exc.end]
        if all("\udc80" <= c <= "\udcff" for c in chunk):
            return bytes(ord(c) - 0xDC00 for c in chunk), exc.end
    return codecs.backslashreplace_errors(exc)


_ESCAPE = "tensorlang-escape"
codecs.register_error(_ESCAPE, _escape_unencodable)


def _take(words: list[str], option: str, choices: tuple[str, ...] | None) -> tuple[str | None, list[str]]:
    """The (last) value of ``OPTION V`` or ``OPTION=V`` among ``words`` (one of ``choices``; None: any), and the words without it."""
    taken, rest, n = None, [], 0
    while n < len(words):
        name, eq, value = words[n].partition("=")
        if not eq:  # OPTION V: V is the next word
            value = words[n + 1] if n + 1 < len(words) else ""
        if name == option and (choices is None or value in choices):
            taken, n = value, n + (1 if eq else 2)
        else:
            rest.append(words[n])
            n += 1
    return taken, rest


def _strand_run(argv: list[str]) -> argparse.Namespace | None:
    """``run PROG ...`` for a strand program: its own command line but for ``--lang`` and
    ``--backend`` (docs/cli.md, "Diderot programs")."""
    lang, words = _take(argv[1:], "--lang", PUBLIC)
    backend, words = _take(words, "--backend", None)  # (strand_backend refuses a wrong one: it was an "unknown option")
    at = next((n for n, a in enumerate(words) if a == "-" or not a.startswith("-")), None) if argv[:1] == ["run"] else None
    language = REGISTRY.get(lang or (language_of(words[at]) if at is not None and words[at] != "-" else ""))
    if at is None or language is None or language.strands is None:
        return None
    path, rest = words[at], words[:at] + words[at + 1:]
    return argparse.Namespace(func=lambda _: StrandRun.compile(
        language, _read_program(path, lang)[0], None, strand_backend("auto" if backend is None else backend, language)).main(
        rest, prog=f"tensorlang run {shown_name(path)}", out=argparse.Namespace(write=_out)))  # a closed pipe: one line


def main(argv: list[str] | None = None) -> int:
    _standard_streams()
    words = list(sys.argv[1:] if argv is None else argv)
    if not words:  # a first try: the commands, not argparse's one line
        build_parser().print_help(sys.stderr)
        return 2
    args = _strand_run(words) or _parse(words)
    try:
        if hasattr(args, "param"):
            args.params = _parse_params(args.param)
        status = guard(args.func)(args)
        if sys.stdout is not None:
            _on_stdout(sys.stdout.flush)
        return status
    except _StdoutGone:
        _drop_stdout()
        return 1
    except TensorLangError as exc:
        if exc.message.startswith("cannot write to standard output"):
            _drop_stdout()
        _print_error(exc)
        if exc.code == "internal" and limits.env_flag("TENSORLANG_DEBUG", warn=True):
            traceback.print_exception(exc.__cause__ or exc)
        return 3 if exc.code == "internal" else 1
    except KeyboardInterrupt:
        if sys.stderr is not None:  # else print would fall back to standard output
            print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
