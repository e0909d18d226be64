"""The command line of a strand program, as a Diderot executable has it (docs/diderot.md, "From the
command line"), read into Python values (an image stays its path) for :mod:`.runner` to convert and check."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import error
from .nrrd_out import is_dynamic

#: The super-steps a run takes at most when neither ``-l`` nor ``limit=`` says otherwise (Diderot's
#: run until every strand is stable or dead; docs/diderot.md, "From the command line").
DEFAULT_LIMIT = 10_000

#: The most super-steps ``-l`` may say: Diderot's executables hold the limit in 32 bits
#: (past it they wrap: 2^32 is 0, no limit); a larger one is error[input] here.
MAX_LIMIT = 2**32 - 1

#: The most threads a run may ask for (the same bound as ``--threads`` of ``tensorlang run``).
MAX_THREADS = 256

_TRUE = {"true", "t", "yes", "y", "on", "1"}
_FALSE = {"false", "f", "no", "n", "off", "0"}


@dataclass
class RunOptions:
    """The run options of one command line (the program's inputs are apart)."""

    limit: int = 0                      # 0: DEFAULT_LIMIT
    snapshot: int = 0                   # 0: no snapshots
    outputs: dict[str, str] = field(default_factory=dict)     # output -> file
    snapshot_prefix: dict[str, str] = field(default_factory=dict)  # output -> prefix
    threads: int | None = None
    print_to: str = "-"
    verbose: bool = False
    timing: bool = False
    help: str | None = None             # "short" (-h) or "long" (--help)

    @property
    def steps(self) -> int:
        """The super-steps the run may take: ``limit``, or DEFAULT_LIMIT for 0."""
        return self.limit or DEFAULT_LIMIT


def _numbers(inp) -> bool:
    """Whether the input takes numbers, one per component: a tensor, a fixed-size sequence."""
    return inp.kind == "tensor" or (inp.kind == "sequence" and bool(inp.shape) and inp.shape[0] > 0)


def _count(inp) -> int:
    return int(np.prod(inp.shape)) if _numbers(inp) else 1


def executable_default(inp) -> Any:
    """An input's default on the command line: Diderot's executables hand it to their option
    parser as text, each real as C++ streams write it (``%g``, six significant digits), and
    read it back, so 0.083333336 is 0.0833333 there, and a string's is made one line (``", "`` is ``","``)."""
    value = inp.default
    if inp.kind == "string" and isinstance(value, str):  # (airOneLinify: a blank a space, a run one, none at the end)
        t = "".join(" " if c in " \t\n\v\f\r" else c for c in value if " " <= c <= "~" or c in "\t\n\v\f\r")  # (C's)
        return value if (one := "".join(c for k, c in enumerate(t) if c != " " or t[k - 1:k] != " ").removesuffix(" ")) == value else one
    if value is None or isinstance(value, str) or inp.type.startswith(("int", "bool")) or not (
            inp.kind == "real" or _numbers(inp)):
        return value
    return np.vectorize(lambda v: float("%.6g" % v), otypes=[float])(value) if np.ndim(value) else float("%.6g" % value)


def _metavar(inp) -> str:
    """What an input's option takes, in words, for the usage text."""
    if _numbers(inp):
        n = _count(inp)
        return " ".join(("x", "y", "z", "w")[:n]) if n <= 4 else f"x1 ... x{n}"
    return {"image": "file.nrrd", "sequence": "file.nrrd", "real": "x"}.get(inp.kind, inp.kind)


def show_value(value: Any) -> str:
    """A value as the command line writes it: ``-4 -4`` for a tensor, ``true`` for a bool."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (np.ndarray, tuple, list)):  # (an int{2}'s default was "(1, 2)")
        return " ".join(show_value(v) for v in np.asarray(value, dtype=object).reshape(-1).tolist())
    if isinstance(value, float):
        return repr(value) if not value.is_integer() or abs(value) >= 1e16 else str(int(value))
    return str(value)


def output_files(program, opts: RunOptions | None = None) -> dict[str, str]:
    """The file each output is written to: ``NAME.nrrd`` unless ``-o`` (one output) or
    ``-o-NAME`` (several) says otherwise."""
    chosen = opts.outputs if opts else {}
    return {out.name: chosen.get(out.name, _file(out.name) if is_dynamic(out) else f"{_file(out.name)}.nrrd")
            for out in program.outputs}


def _file(name: str) -> str:  # an output's name in its files and options: Diderot's y' is yp (yp.nrrd, -o-yp)
    return name.replace("'", "p")


def snapshot_prefixes(program, opts: RunOptions | None = None) -> dict[str, str]:
    """The file prefix of each output's snapshots (``PREFIX-NNNN.nrrd``): the output's
    name unless ``-sp`` / ``-sp-NAME`` says otherwise."""
    chosen = opts.snapshot_prefix if opts else {}
    return {out.name: chosen.get(out.name, _file(out.name)) for out in program.outputs}


def _run_options(program) -> list[tuple[tuple[str, ...], str, str, str]]:
    """(spellings, metavar, description, default) of every run option, in usage order."""
    rows: list[tuple[tuple[str, ...], str, str, str]] = [
        (("-l", "--limit"), "N", "stop after N super-steps; 0 means the default cap "
                                 f"({DEFAULT_LIMIT}; Diderot: unlimited)", "0"),
        (("-s", "--snapshot"), "N", "write a snapshot of every output every N super-steps (0: none)", "0"),
    ]
    if len(program.outputs) > 1:
        for out in program.outputs:
            f = _file(out.name)
            rows.append(((f"-o-{f}", f"--output-{f}"), "FILE", f"output file for {out.name}", f if is_dynamic(out) else f"{f}.nrrd"))
            rows.append(((f"-sp-{f}", f"--snapshot-prefix-{f}"), "PREFIX", f"snapshot file prefix for {out.name}", f))
    elif program.outputs:
        name = _file(program.outputs[0].name)
        dyn = is_dynamic(program.outputs[0])
        rows.append((("-o", "--output"), "FILE" if not dyn else "PREFIX",
                     "output file" if not dyn else "output files' prefix (PREFIX-len.nrrd, PREFIX-data.nrrd)",
                     name if dyn else f"{name}.nrrd"))
        rows.append((("-sp", "--snapshot-prefix"), "PREFIX", "snapshot file prefix", name))
    rows += [
        (("-n", "--nworkers", "--threads"), "N", f"worker threads, 1 to {MAX_THREADS}", "1"),
        (("-print",), "FILE", "where print writes (- is standard output)", "-"),
        (("-v", "--verbose"), "", "say what the run does, and show its progress, on standard error", ""),
        (("-t", "--timing"), "", "print the run time (usr=SECONDS) on standard output", ""),
        (("-h", "--help"), "", "-h: the usage line; --help: every option with its description", ""),
    ]
    return rows


def usage(program, prog: str, long: bool = True) -> str:
    """The usage text: one line (``-h``), and with ``long`` every input with its type,
    description and default, then the run options (``--help``)."""
    words = [f"usage: {prog}"]
    for inp in program.inputs:
        item = f"-{inp.name} {_metavar(inp)}"
        words.append(item if inp.default is None else f"[{item}]")
    words.append("[options]")
    lines = [" ".join(words)]
    if not long:
        return lines[0] + "\n"
    if program.inputs:
        lines += ["", "inputs:"]
        for inp in program.inputs:
            head = f"  -{inp.name} {_metavar(inp)}"
            text = f"({inp.type}) {inp.description or ''}".rstrip()
            default = "required" if inp.default is None else f"default: {show_value(executable_default(inp))}"
            lines.append(f"{head:<28} {text}; {default}" if len(head) < 28 else f"{head}\n{'':<28} {text}; {default}")
    lines += ["", "run options:"]
    for spellings, metavar, text, default in _run_options(program):
        head = "  " + ", ".join(spellings) + (f" {metavar}" if metavar else "")
        more = f" (default: {default})" if default else ""
        lines.append(f"{head:<28} {text}{more}" if len(head) < 28 else f"{head}\n{'':<28} {text}{more}")
    return "\n".join(lines) + "\n"


def _bool(word: str, what: str) -> bool:
    if word.lower() in _TRUE | _FALSE:
        return word.lower() in _TRUE
    raise error("input", f"{what} (bool) expects true or false, got {word!r}")


def _number(text: str, integer: bool, what: str):
    try:
        if "_" in text or not text.isascii():  # Python's spellings (1_000, digits ٣ ５), not C's (strtod, strtol)
            raise ValueError(text)
        if integer:
            return int(text, 10)
        # (strtod's hexadecimal reals too: 0x10, -0x1.8p1)
        value = float.fromhex(text) if text.lstrip(" \t+-")[:2] in ("0x", "0X") else float(text)
        value = abs(value) if value != value else value  # "-nan": Teem's parser gives the quiet NaN, sign clear
    except OverflowError:  # (a hexadecimal real past the doubles: strtod's ±inf, as 1e999)
        return -float("inf") if text.lstrip(" \t").startswith("-") else float("inf")
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise error("input", f"{what} expects {kind}, got {text!r}") from None
    return value


def parse_value(inp, words: Sequence[str], what: str | None = None):
    """The value of input ``inp`` from its option's words (one, or one per component of
    a tensor): error[input] naming the option when they do not fit its type."""
    what = what or f"-{inp.name}"
    if _numbers(inp):  # int{n} and bool{n}: ints and bools (read as reals, 2^53 + 1 was 2^53; true was refused)
        kind = inp.type.split("{")[0].split("[")[0]
        values = [_bool(w, what) if kind == "bool" else _number(w, kind == "int", f"{what} ({inp.type})") for w in words]
        return np.array(values, dtype=object).reshape(inp.shape).tolist() if kind in ("int", "bool") else np.array(values).reshape(inp.shape)
    (word,) = words
    if inp.kind == "int":
        return _number(word, True, f"{what} ({inp.type})")
    if inp.kind == "real":
        return _number(word, False, f"{what} ({inp.type})")
    if inp.kind == "bool":
        return _bool(word, what)
    if inp.kind in ("string", "image", "sequence"):  # a dynamic sequence: its NRRD file
        return word
    raise error("input", f"{what}: inputs of type {inp.type} cannot be given on the command line in this version")


def count(value: Any, what: str, low: int = 0, high: int | None = None, verb: str = "must be", shown: Any = None) -> int:
    """``value`` as an int from ``low`` to ``high`` (None: 0), else error[input] "``what`` ``verb`` an integer ..."."""
    if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
                              or int(value) < low or (high is not None and int(value) > high)):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise error("input", f"{what} {verb} an integer {bound}, got {value if shown is None else shown!r}")
    return 0 if value is None else int(value)


def _nonnegative(text: str, what: str, low: int = 0, high: int | None = None) -> int:
    return count(_number(text, True, what), what, low, high, "expects", text)


def parse(program, argv: Sequence[str]) -> tuple[dict[str, Any], RunOptions]:
    """The inputs given on the command line (by name; those left out keep their
    defaults, which the program applies) and the run options.  A missing required input,
    an unknown option, a missing or malformed value are error[input] naming the option."""
    inputs = {f"-{inp.name}": inp for inp in program.inputs}
    inputs.update({f"--{inp.name}": inp for inp in program.inputs})
    outs = [out.name for out in program.outputs]
    several = len(outs) > 1
    per_output = {f"{prefix}{_file(out)}": (which, out) for out in outs for prefix, which in (
        ("-o-", "o"), ("--output-", "o"), ("-sp-", "sp"), ("--snapshot-prefix-", "sp"))}
    opts = RunOptions()
    values: dict[str, Any] = {}
    if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence) or not all(isinstance(a, str) and "\0" not in a
                                                                                for a in argv):  # ("a\0b": a ValueError)
        raise error("input", f"a command line is a list of strings without NUL, as a shell passes it, got {argv!r:.80}")
    args = list(argv)
    i = 0

    def take(option: str, n: int) -> list[str]:
        nonlocal i
        words = args[i + 1:i + 1 + n]
        if len(words) < n:
            got = f"got {len(words)}" if words else "got none"
            raise error("input", f"{option} expects {n} value{'s' if n > 1 else ''}, {got}")
        i += n
        return words

    while i < len(args):
        arg = args[i]
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if eq:  # --limit=5, --isoval=0.5
            args[i:i + 1] = [name, attached]
            arg = name
        if arg in inputs:  # an input wins over a run option of the same spelling
            inp = inputs[arg]
            values[inp.name] = parse_value(inp, take(arg, _count(inp)), arg)
        elif arg in ("-h", "--help"):
            opts.help = "short" if arg == "-h" else "long"
        elif arg in ("-l", "--limit"):
            opts.limit = _nonnegative(take(arg, 1)[0], arg, 0, MAX_LIMIT)
        elif arg in ("-s", "--snapshot"):
            opts.snapshot = _nonnegative(take(arg, 1)[0], arg)
        elif arg in ("-n", "--nworkers", "--threads"):
            opts.threads = _nonnegative(take(arg, 1)[0], arg, 1, MAX_THREADS)
        elif arg == "-print":
            opts.print_to = take(arg, 1)[0]
        elif arg in ("-v", "--verbose"):
            opts.verbose = True
        elif arg in ("-t", "--timing"):
            opts.timing = True
        elif arg in ("-o", "--output", "-sp", "--snapshot-prefix") and outs:
            if several:
                stem = "-o" if arg.startswith("-o") or arg == "--output" else "-sp"
                raise error("input", f"{arg}: the program has {len(outs)} outputs ({', '.join(outs)}); name one, "
                                     f"as in {stem}-{outs[0]} FILE")
            (opts.outputs if arg in ("-o", "--output") else opts.snapshot_prefix)[outs[0]] = take(arg, 1)[0]
        elif several and arg in per_output:
            which, out = per_output[arg]
            (opts.outputs if which == "o" else opts.snapshot_prefix)[out] = take(arg, 1)[0]
        else:
            raise error("input", _unknown(arg, program))
        i += 1
    for inp in program.inputs:  # the defaults as the executable's option parser has them
        default = executable_default(inp)
        if inp.name not in values and default is not inp.default and (isinstance(default, str) or not np.array_equal(default, inp.default, True)):
            values[inp.name] = default
    if opts.help is None:
        missing = [f"-{inp.name} ({inp.type})" for inp in program.inputs
                   if inp.default is None and inp.name not in values]
        if missing:
            raise error("input", f"missing required input{'s' if len(missing) > 1 else ''}: {', '.join(missing)} "
                                 "(--help lists the inputs)")
    return values, opts


def _unknown(arg: str, program) -> str:
    names = ", ".join(f"-{inp.name}" for inp in program.inputs) or "none"
    if not arg.startswith("-"):
        return f"unexpected argument {arg!r}: inputs are given as -NAME VALUE (the program's inputs: {names})"
    guess = _closest(arg, program)
    hint = f": did you mean {guess}?" if guess else ""
    return f"unknown option {arg!r}{hint} (the program's inputs: {names}; --help lists every option)"


def _closest(arg: str, program) -> str | None:
    """The input or run option most like ``arg`` (a misspelling, another case, one dash
    too many or too few), spelled as it is given, or None."""
    import difflib  # (not loaded by ``import tensorlang``)
    word = arg.split("=", 1)[0].lstrip("-")
    spellings: dict[str, str] = {}
    for inp in program.inputs:
        spellings.setdefault(inp.name.lower(), f"-{inp.name}")
    for names, _meta, _text, _default in _run_options(program):
        for name in names:
            spellings.setdefault(name.lstrip("-").lower(), name)
    if word.lower() in spellings:
        return spellings[word.lower()]
    found = difflib.get_close_matches(word.lower(), list(spellings), n=1, cutoff=0.75)
    return spellings[found[0]] if found else None
