"""Running a strand program (Diderot's) from Python (:class:`StrandRun`, its :class:`Result`) and as
``tensorlang run`` (:meth:`StrandRun.main`): docs/diderot.md, "From Python".  What users give is
checked and converted for the front end's ``StrandProgram.run``, what it returns made arrays and files."""

from __future__ import annotations

import io
import math
import numbers
import os
import re
import sys
import time
import warnings
from collections.abc import Mapping
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import limits
from ..errors import TensorLangError, Unpicklable, error, pointing_into, shown_name, shown_value as shown
from ..lang.language import file_path, folder_of
from ..fields import Image, image as make_image, load as load_image
from ..sampling.image import data_paths, file_key, kept_image
from . import nrrd_out, options


#: Chooses where strand programs run: ``c`` (or error[backend] before the run), ``interp``, ``auto``
#: (the default: C where it can, else the interpreter, saying so). docs/diderot.md, "C or the interpreter".
BACKEND_ENV = "TENSORLANG_STRAND_BACKEND"


class InterpreterFallbackWarning(UserWarning):
    """A strand program ran in the reference interpreter, not in C (why: the message; :data:`BACKEND_ENV`)."""


def strand_backend() -> str | None:
    """The executor :data:`BACKEND_ENV` asks for: "c", "interp", or None (auto)."""
    value = limits.env(BACKEND_ENV, "auto, c or interp", lambda t: t.lower() if t.lower() in ("auto", "c", "interp")
                       else None, "auto")
    return value if value in ("c", "interp") else None


def fallback_message(name: str, note: str) -> str:
    """What a run that fell back to the interpreter tells the user: why (for generated C
    that did not compile, the compiler's first error line) and whether it was intended."""
    from ..strand_ir import UNAVAILABLE

    no_compiler = UNAVAILABLE["c"]() if "c" in UNAVAILABLE else None
    if no_compiler is not None:
        why = f"as intended where no C compiler works ({no_compiler})"
    elif "did not compile: " in note:
        lines = note.split("did not compile: ", 1)[1].split(" | ")
        first = next((line for line in lines if "error" in line), lines[0])
        why = f"the generated C did not compile (a bug in tensorlang: please report it): {first.strip()}"
    else:
        why = f"{note} (docs/diderot-compiled.md lists what runs in C)"
    return f"{name} ran in the interpreter, not in C: {why}; {BACKEND_ENV}=c makes this an error"


class Result(Mapping):
    """The outputs of a run by name (numpy arrays: the grid's shape, or the number of
    stable strands for a collection, followed by the output's shape), and how it ended:
    ``grid_shape`` (None for a collection), the super-``steps`` run, the strands still
    ``active`` at the limit, the ``stable`` ones, and what ``print`` wrote (``printed``)."""

    def __init__(self, run_result, program) -> None:
        self._outputs: dict[str, np.ndarray] = {out.name: np.asarray(run_result.outputs[out.name])
                                                for out in program.outputs}
        self.grid_shape: tuple[int, ...] | None = run_result.grid_shape
        self.steps: int = run_result.steps
        self.active: int = run_result.active
        self.stable: int = run_result.stable
        self.printed: str = run_result.printed

    def __getitem__(self, name: str) -> np.ndarray:
        return self._outputs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._outputs)

    def __len__(self) -> int:
        return len(self._outputs)

    def __getattr__(self, name: str) -> np.ndarray:
        outputs = self.__dict__.get("_outputs", {})
        if name in outputs:
            return outputs[name]
        raise AttributeError(f"the program has no output {name!r} (outputs: {', '.join(outputs) or 'none'})")

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}: {v.shape}" for k, v in self._outputs.items())
        return f"Result({shapes}; steps={self.steps}, active={self.active}, stable={self.stable})"


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _image_input(inp, value: Any, base_dirs: Sequence[str] = ()) -> Image:
    """An image input from a path (NRRD or .npy), an array (space axes first, then the
    voxel's shape) or an Image, checked against the declared ``image(d)[shape]``."""
    what = f"input {inp.name} ({inp.type})"
    try:
        if isinstance(value, Image):
            img = value
        elif _is_path(value):
            path = _found(os.fspath(value), base_dirs)
            key = file_key(path)
            kept = kept_image(key) if key and _FILES.get(path) == (key, limits.memory_budget_bytes()) else None
            if kept is None:
                nrrd_out.check_image_file(path)
                _FILES.clear() if len(_FILES) > 8 else None
                kept = load_image(path)
                _FILES[path] = (key, limits.memory_budget_bytes())
            img = kept
        else:
            try:
                array = np.asarray(value) if not isinstance(value, np.ndarray) else value
            except (TypeError, ValueError) as exc:  # a ragged list
                raise error("input", f"an image is an array of real numbers: {exc}") from None
            if array.dtype.kind in "biuf":
                limits.check_allocation(array.size, 8, what)
            img = make_image(array, inp.dim if inp.dim is not None and np.ndim(array) >= inp.dim else None)
    except TensorLangError as exc:
        raise TensorLangError(exc.code, f"{what}: {exc.message}") from None
    if inp.dim is not None and img.dim != inp.dim:
        raise error("input", f"{what}: the image has {img.dim} space axes, the program declares {inp.dim}")
    if tuple(img.voxel_shape) != tuple(inp.shape):
        declared = "scalar" if not inp.shape else f"shape {tuple(inp.shape)}"
        raise error("input", f"{what}: the image's samples have shape {tuple(img.voxel_shape)}, the program "
                             f"declares {declared} samples")
    return img


#: an image file's last call (path: its file_key, the memory budget): called again unchanged under the same budget,
#: the image the reader keeps (kept_image), without the header check's and the reader's look-ups; no image held here
_FILES: dict[str, tuple] = limits.kept({})


def convert(inp, value: Any, base_dirs: Sequence[str] = ()) -> Any:
    """``value`` as the program's ``run`` takes input ``inp``: int, float, bool, str, a
    float64 array of the tensor's shape, or an Image; error[input] when it does not fit."""
    what = f"input {inp.name} ({inp.type})"
    if inp.kind in ("image", "sequence") and isinstance(value, (bytes, bytearray)):  # (a real{} took the bytes' codes)
        raise error("input", f"{what} is given bytes {bytes(value)[:60]!r}; give a file's path as a str, or the values")
    if inp.kind == "image":
        return _image_input(inp, value, base_dirs)
    if isinstance(value, np.ndarray) and value.ndim == 0 and inp.kind in ("int", "real", "bool", "string"):
        value = value[()]  # a 0-d array: its one item, a numpy scalar (np.array(2) was refused, rev56)
    if inp.kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise error("input", f"{what} must be an integer, got {shown(value)}")
        if not limits.is_int64(value):
            raise error("input", f"{what} must be a 64-bit integer (-2^63 to 2^63-1), got {shown(int(value))}")
        return int(value)
    if inp.kind == "real":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise error("input", f"{what} must be a real number, got {shown(value)}")
        return _real(value, what)
    if inp.kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise error("input", f"{what} must be True or False, got {shown(value)}")
        return bool(value)
    if inp.kind == "string":
        if not isinstance(value, str):
            raise error("input", f"{what} must be a string, got {shown(value)}")
        # a NUL ends a C string (C printed "a" of "a\0b"); a lone surrogate is no UTF-8 (bar a command line's bytes)
        if bad := next((c for c in value if c == "\0" or "\ud800" <= c <= "\udc7f" or "\udd00" <= c <= "\udfff"), None):
            raise error("input", f"{what} holds {bad!a}, which no command line and no C string carries")
        return value
    if inp.kind == "tensor":
        try:  # (not cast at once: None became NaN, a complex number its real part; those are TypeErrors here)
            array = np.array(value)
            array = np.array([_real(v, what) for v in array.flat]).reshape(array.shape) if array.dtype.kind == "O" else array
            array = array.astype(np.float64, casting="same_kind")
        except (TypeError, ValueError):
            raise error("input", f"{what} must be an array of shape {tuple(inp.shape)} of real numbers, "
                                 f"got {shown(value)}") from None
        if array.shape != tuple(inp.shape):
            raise error("input", f"{what} must have shape {tuple(inp.shape)}, got shape {array.shape}")
        return array
    if inp.kind == "sequence" and _is_path(value) and os.path.exists(value) and not os.path.isabs(value):
        return os.path.abspath(value)  # a file the caller names: the working folder's first, as an image's
    return value  # a type the front end checks itself (sequences; a file name in the program's folder)


def _real(value, what: str) -> float:
    """``value`` as a double; error[input] past the doubles (``float(10**400)`` is an OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        raise error("input", f"{what}: a number beyond the doubles (about 1.8e308)") from None


class StrandRun(Unpicklable):
    """A compiled strand program: call it with its inputs by name (``p(img=..., isoval=0)``)
    for a :class:`Result`, or run it with Diderot's command line (:meth:`main`)."""

    def __init__(self, program, source=None, threads: int | None = None, backend: str | None = None) -> None:
        self.program, self.source, self.threads = program, source, threads
        self.name: str = program.name
        #: the program's inputs (name, type, kind, shape, dim, default, description) and outputs
        self.inputs, self.outputs = tuple(program.inputs), tuple(program.outputs)
        self.grid = bool(program.grid)
        #: "c" or "interp" (``tl.compile``'s ``backend=``, before :data:`BACKEND_ENV`), or None: the variable decides
        self.backend = backend
        folder = folder_of(source.filename) if source is not None else None  # every Source has a filename
        #: where a relative image path is looked for after the working directory
        self.base_dirs: tuple[str, ...] = (folder,) if folder else ()

    @classmethod
    def compile(cls, language, source, threads: int | None = None, backend: str | None = None) -> "StrandRun":
        """The program of ``source`` in ``language``, a front end with a ``strands(checked, folder)`` hook
        (no symbolic sizes: the registry's size binding is skipped); errors point into the source."""
        with pointing_into(source):
            folder = folder_of(source.filename)
            checked = language.check_from(language.parse(source.text, {}), folder)
            return cls(language.strands(checked, folder), source, threads, backend)

    def __repr__(self) -> str:
        ins = ", ".join(f"{i.name}: {i.type}" for i in self.inputs)
        outs = ", ".join(f"{o.name}: {o.type}" for o in self.outputs)
        return f"StrandRun({self.name}; inputs: {ins or 'none'}; outputs: {outs or 'none'})"

    def usage(self, prog: str | None = None, long: bool = True) -> str:
        """The ``--help`` text (``long=False``: the ``-h`` line)."""
        return options.usage(self.program, prog or self.name, long)

    def __call__(self, **inputs: Any) -> Result:
        return self.run(inputs)

    # ------------------------------------------------------------------ Python
    def values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The inputs converted for the program: error[input] for an unknown name (the
        message lists the inputs), a missing required input or a value of the wrong type.
        An image input left out is read from its default path (``image("f.nrrd")``)."""
        known = {inp.name: inp for inp in self.inputs}
        if not isinstance(given, Mapping):  # (a string's letters, a list of pairs: no names)
            raise error("input", f"the inputs are a mapping from names to values, got {type(given).__name__}")
        if unknown := sorted((k for k in given if not isinstance(k, str) or k not in known), key=repr):  # (1 and 'a': repr)
            names = ", ".join(f"{i.name} ({i.type})" for i in self.inputs) or "none"
            raise error("input", f"the program has no input {', '.join(map(repr, unknown))}; its inputs: {names}")
        if missing := [f"{inp.name} ({inp.type})" for inp in self.inputs if inp.default is None and inp.name not in given]:
            raise error("input", f"missing required input{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
        values = {name: convert(known[name], value, self.base_dirs) for name, value in given.items()}
        for inp in self.inputs:
            if inp.kind == "image" and inp.name not in values and _is_path(inp.default):
                values[inp.name] = convert(inp, inp.default, self.base_dirs)
        return values

    def run(self, inputs: Mapping[str, Any] | None = None, *, limit: int | None = None, threads: int | None = None,
            snapshot: int = 0, on_snapshot: Callable[[int, Result], None] | None = None,
            progress: Callable[[int, int], None] | None = None) -> Result:
        """Run with ``inputs`` by name.  ``limit``: at most that many super-steps (None or
        0: :data:`~.options.DEFAULT_LIMIT`); ``threads``: 1 to 256; ``snapshot=N`` calls
        ``on_snapshot(step, result)`` every N super-steps and after the last; ``progress(step, active)``
        after each super-step."""
        return self._run(inputs, limit, threads, snapshot, on_snapshot, progress,
                         lambda text: warnings.warn(text, InterpreterFallbackWarning, stacklevel=2))

    def _run(self, inputs: Mapping[str, Any] | None, limit: int | None, threads: int | None, snapshot: int,
             on_snapshot: Callable[[int, Result], None] | None, progress: Callable[[int, int], None] | None,
             report: Callable[[str], None]) -> Result:
        """:meth:`run`; a run that falls back to the interpreter is ``report``-ed once: as
        soon as ``progress`` first hears from it, else at the end."""
        steps = options.count(limit, "limit", 0, options.MAX_LIMIT) or options.DEFAULT_LIMIT
        workers = options.count(threads if threads is not None else self.threads, "threads", 1, options.MAX_THREADS)
        every = options.count(snapshot, "snapshot", 0)
        values = self.values({} if inputs is None else inputs)
        if bad := [(w, f) for w, f in (("on_snapshot", on_snapshot), ("progress", progress)) if f is not None and not callable(f)]:
            raise error("input", f"{bad[0][0]} must be callable or None, got {bad[0][1]!r:.80}")
        backend = self.backend or strand_backend()
        told: list[str] = []

        def tell() -> None:
            note = getattr(self.program, "executor_note", None)
            if note and backend is None and not told:
                told.append(note)
                report(fallback_message(self.name, note))
        hook = None if on_snapshot is None else lambda step, state: on_snapshot(step, Result(state, self.program))
        try:
            state = self.program.run(values, limit=steps, snapshot=every, on_snapshot=hook, threads=workers or 1,
                                     progress=None if progress is None else _telling(progress, tell),
                                     **({"backend": backend} if backend else {}))
        except MemoryError:
            raise error("too-large", f"the run of {self.name} does not fit in memory (its strands and their state; "
                                     "a smaller grid or image, or TENSORLANG_MAX_BYTES to say the budget)") from None
        tell()
        return Result(state, self.program)

    # ------------------------------------------------------------------ command line
    def main(self, argv: Sequence[str], prog: str | None = None, out=None, err=None) -> int:
        """Run as Diderot's executable would with command line ``argv`` (docs/diderot.md, "From the command
        line"); returns the exit status, errors leave as TensorLangError."""
        out = out if out is not None else sys.stdout or io.StringIO()  # a closed stream (>&-) is None
        err = err if err is not None else sys.stderr or io.StringIO()
        prog = prog or self.name
        given, opts = options.parse(self.program, argv)
        if opts.help:
            out.write(self.usage(prog, opts.help == "long"))
            return 0
        files = options.output_files(self.program, opts)
        targets = [(f"output {o.name}", p) for o in self.outputs
                   for p in (nrrd_out.dynamic_files(files[o.name]) if nrrd_out.is_dynamic(o) else (files[o.name],))]
        targets += [("the printed output (-print)", opts.print_to)] if opts.print_to != "-" else []
        targets += [(f"the data of {who}", os.path.splitext(p)[0] + ".raw") for who, p in targets if p.endswith(".nhdr")]  # (as _save)
        read = [("the program", self.source.filename)] if self.source else []  # (-o prog.diderot would overwrite it)
        read += [(f"input {i.name}", _found(v, self.base_dirs) if i.kind == "image" or i.name in given
                  else file_path(v, (*self.base_dirs, None)[0]))
                 for i in self.inputs if i.kind in ("image", "sequence") and isinstance(v := given.get(i.name, i.default), str)]
        read += [(f"the file {p!r} the program names", file_path(p, (*self.base_dirs, None)[0])) for p in getattr(self.program, "files", ())]
        read += [(who, data) for who, path in read for data in data_paths(path)]  # (-o img.raw beside img.nhdr)
        _check_distinct(targets, "file", read)  # (the files as opened: as convert, a sequence's default as the program)
        prefixes = options.snapshot_prefixes(self.program, opts)
        for _, path in targets + [("", nrrd_out.snapshot_name(p, 0)) for p in prefixes.values() if opts.snapshot]:
            _check_writable(path)  # the -print file and the snapshots' folders too: a long run is not wasted on them
        if opts.snapshot:
            _check_distinct([(f"output {name}", prefix) for name, prefix in prefixes.items()], "snapshot prefix")
            _check_distinct(targets + [(f"a snapshot of output {n}", s) for n, pre in prefixes.items() for _, p in targets if (s := _snapshot_of(pre, p)) != pre], "file")
            _check_distinct([(f"a snapshot of output {name}", path) for name, prefix in prefixes.items() for _, file in read
                             if same_file(file, path := _snapshot_of(prefix, file))], "file", read)
        with nrrd_out.fifos_opened(targets):  # (a FIFO no process reads: refused before the run)
            say = _Progress(err, opts.verbose)
            if opts.verbose:
                say.line("initializing inputs and creating strands ...")

            def snap(step: int, res: Result) -> None:
                if (0 in res.grid_shape) if res.grid_shape is not None else any(len(v) == 0 for v in res.values()):
                    return  # no strand alive (or a grid of none): NRRD holds no empty arrays
                nrrd_out.write_all(prefixes, self.outputs, dict(res), self.grid, say.line, step)

            started = time.perf_counter()
            with pointing_into(self.source):  # a run-time error at a position points into the program's text
                res = self._run(given, opts.limit, opts.threads, opts.snapshot, snap if opts.snapshot else None, say,
                                lambda text: say.line(f"tensorlang: note: {text}"))
            seconds = time.perf_counter() - started
            say.done()
            if res.printed and opts.print_to == "-":
                out.write(res.printed)
            elif opts.print_to != "-":  # (written though empty: Diderot's executables open it at the start)
                write_text_file(opts.print_to, res.printed, "the printed output to")
            if res.active and (opts.verbose or not opts.limit):
                why = f"the default cap of {options.DEFAULT_LIMIT} super-steps" if not opts.limit else "the step limit"
                hint = "; -l N sets the limit" if not opts.limit else ""
                say.line(f"stopped at {why}: {res.active} strand{'s' if res.active != 1 else ''} still active{hint}")
            if opts.verbose:
                say.line(f"done: {res.steps} steps, in {seconds:.3f} seconds; {res.stable} stable strands")
            elif opts.timing:
                out.write(f"usr={seconds:.6f}\n")
            empty_grid = self.grid and 0 in (res.grid_shape or ())  # an empty range: Teem reads no axis of size 0
            if empty_grid or not self.grid and (any(len(v) == 0 for v in res.values()) if res else res.stable == 0):
                say.line("no stable strands at termination, so no output")
                return 1
            written = nrrd_out.write_all(files, self.outputs, dict(res), self.grid, warn=say.line)
            if opts.verbose:
                say.line("wrote " + ", ".join(map(shown_name, written)))
            return 0


def _found(path: str, base_dirs: Sequence[str]) -> str:
    """``path`` where it is there (or absolute), else in the first of ``base_dirs`` that has it."""
    found = (os.path.join(b, path) for b in base_dirs if path and not os.path.isabs(path) and not os.path.exists(path))
    return next((p for p in found if os.path.exists(p)), path)


def _check_distinct(targets: list[tuple[str, str]], what: str, read: Sequence[tuple[str, str]] = ()) -> None:
    """error[input] before the run when two of ``targets`` (who, path) name the same ``what`` (``-o-a x.nrrd
    -o-b x.nrrd``), or one is the file of ``read`` (who, the path read), links too: one would overwrite the other's."""
    seen: dict[str, str] = {}
    for who, path in targets:
        key = os.path.realpath(path)
        first = seen.get(key) or next((by for by, file in read if same_file(file, path)), None)
        if first:
            raise error("input", f"{first} and {who} have the same {what} {path!r}: "
                                 "one would overwrite the other (-o-NAME, -sp-NAME name each its own)")
        seen[key] = who


def _snapshot_of(prefix: str, file: str) -> str:
    """The snapshot ``prefix`` writes under ``file``'s step number (``r-0003.nrrd``: step 3), or ``prefix``."""
    step = re.fullmatch(r".*-(\d{4,})\.nrrd", os.path.basename(file))
    return nrrd_out.snapshot_name(prefix, int(step[1])) if step else prefix


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # a file missing, or a name the system refuses: not one file
        return False


def _check_writable(path: str) -> None:
    """error[input] before the run when an output file cannot be written (a directory, a
    folder that does not exist or is not writable): a long run is not wasted."""
    folder = os.path.dirname(path) or "."
    if path == "-":  # standard output
        return
    if not path or os.path.isdir(path) or os.path.exists(path) and not os.access(path, os.W_OK):  # (all failed after the run)
        raise error("input", f"cannot write output {path!r}: it is {'a directory' if os.path.isdir(path) else 'a file that is not writable' if path else 'no name'}")
    if path.endswith(".nhdr") and any(c in os.path.basename(path) for c in "\n\r"):  # (its header names the .raw)
        raise error("input", f"cannot write output {path!r}: a detached header's data file name is one line")
    if os.path.exists(path) and os.access(path, os.W_OK):  # a file (or /dev/stdout) that may be written
        return
    if not os.path.isdir(folder):
        raise error("input", f"cannot write output {path!r}: the folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise error("input", f"cannot write output {path!r}: the folder {folder!r} is not writable")


def write_text_file(path: str, text: str, what: str = "", keep: str | None = None) -> None:
    """``text`` (UTF-8) into the file ``path``, or error[input] (at once for a FIFO no process reads,
    and for the file ``keep`` names: the program that was read, which the text would replace)."""
    if keep is not None and keep != "-" and same_file(path, keep):  # (a link to it, too)
        raise error("input", f"cannot write {path!r}: it is the program {keep!r}, which it would replace")
    try:
        with open(path, "w", encoding="utf-8", opener=nrrd_out.open_nonblocking) as fh:
            fh.write(text)
    except OSError as exc:
        raise error("input", f"cannot write {what + ' ' if what else ''}{path!r}: {exc.strerror or exc}") from None


def _telling(progress: Any, tell: Callable[[], object]) -> Callable[[int, int], None]:
    """``progress`` (and its ``within``) calling ``tell`` first: the run knows its executor by then."""
    def told(step: int, active: int) -> None:
        tell()
        progress(step, active)
    if hasattr(progress, "within"):
        told.within = lambda done, total: (tell(), progress.within(done, total))  # type: ignore[attr-defined]
    return told


class _Progress:
    """Progress on standard error: the super-step and the active strands, on one line
    rewritten in place on a terminal, a line every few seconds with ``-v`` elsewhere."""

    def __init__(self, stream, verbose: bool) -> None:
        self.stream, self.verbose, self.last, self.pending, self.steps = stream, verbose, -math.inf, False, 0
        try:
            self.tty = bool(stream.isatty())
        except (AttributeError, ValueError):
            self.tty = False

    def __call__(self, step: int, active: int) -> None:
        self.steps = step
        self._say(f"step {step}: {active} active strand{'s' if active != 1 else ''}")

    def within(self, done: int, total: int) -> None:
        """Progress inside a long super-step (the interpreter's): strands updated so far."""
        self._say(f"step {self.steps + 1}: {done} of {total} strands updated")

    def _say(self, text: str) -> None:
        if not (self.tty or self.verbose):
            return
        now = time.monotonic()
        if now - self.last < (0.2 if self.tty else 5.0):
            return
        self.last = now
        if self.tty:
            self.stream.write("\r" + text + "\033[K")
            self.pending = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.pending:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.pending = False

    def line(self, text: str) -> None:
        self.done()
        self.stream.write(text + "\n")
        self.stream.flush()
