"""A small coverage-guided fuzzer of the front ends (issue 41): program text in, the
invariant "a result or a TensorLangError that is not internal; no other exception, no
traceback in the message, no hang" checked on every input.

The loop keeps a corpus of inputs that reached new lines of ``tensorlang`` (line
coverage by ``sys.settrace``, on the package's own files only) and draws the next input
by mutating one of them: characters and tokens inserted, deleted, repeated or swapped,
lines duplicated, two inputs spliced, or a fresh text drawn from a front end's lark
grammar (``hypothesis.extra.lark.from_lark``).  Seeds: the example programs of the
repository, a few STUR programs, and what the grammars draw.

Each input runs through ``tensorlang.compile(text, lang=..., backend="numpy")`` (parse,
check, lower, optimize, schedule, numpy code: no C compiler, so an input costs
milliseconds) and, when the kernel's inputs are small, one call on small random inputs
with ⊥ among them.  An input that breaks the invariant is written to
``tests/fuzz/corpus/`` (``<lang>-<sha1>.<suffix>``), which ``test_fuzz_corpus.py``
replays in the quick tier.  Stdlib-only (atheris is optional: ``pip download atheris``
works on Python 3.11 here, but its libFuzzer loop exits the process it runs in, and a
pytest run with a time budget is what CI needs).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import tensorlang as tl

ROOT = Path(__file__).resolve().parents[2]
#: the package's files as imported (src/ here, site-packages where CI tests the wheel)
PACKAGE = str(Path(tl.__file__).resolve().parent)
CORPUS = Path(__file__).resolve().parent / "corpus"
SUFFIX = {"tl": ".tl", "teil": ".teil", "cfd": ".cfd", "stur": ".stur", "einsum": ".einsum"}
#: one input may take this long before it is a hang (a guard, not a speed test: the
#: issue's acceptance is 2 s per 1 KB input on an idle machine; the CI machine is shared)
INPUT_SECONDS = float(os.environ.get("TENSORLANG_FUZZ_INPUT_SECONDS", "20"))

STUR_SEEDS = [
    "symbols: N\ny(i) := M(i, j) * x(j)\nM:D(i, j) := (0 <= i < N) * (0 <= j < N)\nM:U(i, j) := (i = j)\n"
    "x:D(j) := (0 <= j < N)\ny:D(i) := (0 <= i < N)\n",
    "symbols: N\nA(i, j) := B^-1(i, j) * 5^-1 * f^-1()\nD(i, j) := B(i, j) * B^-1(i, j)\n"
    "A:D(i, j) := (0 <= i < N) * (0 <= j < N)\nB:D(i, j) := (0 <= i < N) * (0 <= j < N)\nB:U(i, j) := (i = j)\n"
    "D:D(i, j) := (0 <= i < N) * (0 <= j < N)\n",
    "symbols: N\nout(i, j) := S(i, j)\nout:D(i, j) := (0 <= i < N) * (0 <= j < N)\n"
    "S:D(i, j) := (0 <= i < N) * (0 <= j < N)\nS:U(i, j) := (0 <= i <= j < N)\n"
    "S:R(i, j, ip, jp) := (0 <= j < i < N) * (ip = j) * (jp = i)\n",
    "symbols: P, Q, K\n@preprocess_start\nrow(l) := T(l, j) * (j = K)\nT:D(l, j) := (0 <= l) * (l < P) * (0 <= j) "
    "* (j < Q)\n@preprocess_end\nr(l) := row(l) * 2\nrow:D(l) := (0 <= l < P)\nr:D(l) := (0 <= l < P)\n",
]
EINSUM_SEEDS = ["ij,jk->ik\n", "i,i->\n", "ijk,kl,lm->im\n", "...i,i->...\n", "ii->i\n"]
TOKENS = ["(", ")", "[", "]", ",", ":", "=", ":=", "+", "-", "*", "/", "#", ".", "^", "^-1", "->", "...", "\n",
          "0", "1", "2", "-1", "1e999", "99999999999999999999", "0.5", "var", "in", "out", "sum(k)", "concat(",
          "vec(", "delta[i,k]", "eps[i,k]", "symbols:", "N", "i", "j", "k", "x", "A", "@preprocess_start",
          "alloc", "contr", "red+", "input", "output", "type", "\t", " ", "//", "\u00e9", "\x00"]


@dataclass
class Finding:
    lang: str
    text: str
    problem: str


@dataclass
class Fuzzer:
    seed: int = 0
    corpus: list[tuple[str, str]] = field(default_factory=list)  # (lang, text)
    seen: set = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)
    runs: int = 0

    def __post_init__(self):
        self.rng = random.Random(self.seed)

    # ---------------------------------------------------------------- seeds
    def add_seeds(self) -> None:
        for path in sorted((ROOT / "examples").rglob("*")):
            lang = {".tl": "tl", ".teil": "teil", ".cfd": "cfd"}.get(path.suffix)
            if lang and path.stat().st_size < 4000:
                self.corpus.append((lang, path.read_text(encoding="utf-8", errors="replace")))
        self.corpus += [("stur", t) for t in STUR_SEEDS] + [("einsum", t) for t in EINSUM_SEEDS]

    # ---------------------------------------------------------------- mutations
    def mutate(self, text: str) -> str:
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            choice = rng.randrange(8)
            pos = rng.randint(0, len(text))
            if choice == 0 and text:  # delete a span
                end = min(len(text), pos + rng.randint(1, 8))
                text = text[:pos] + text[end:]
            elif choice == 1:  # insert a token
                text = text[:pos] + rng.choice(TOKENS) + text[pos:]
            elif choice == 2 and text:  # repeat a span (deep nesting, long names)
                end = min(len(text), pos + rng.randint(1, 12))
                text = text[:pos] + text[pos:end] * rng.randint(2, 40) + text[end:]
            elif choice == 3:  # duplicate or drop a line
                lines = text.split("\n")
                n = rng.randrange(len(lines))
                if rng.random() < 0.5:
                    lines.insert(n, lines[n])
                else:
                    del lines[n]
                text = "\n".join(lines)
            elif choice == 4 and text:  # replace a character by a neighbour byte
                c = text[min(pos, len(text) - 1)]
                text = text[:pos] + chr(max(0, min(0x10FFFF, ord(c) + rng.choice([-1, 1, 32, -32])))) + text[pos + 1:]
            elif choice == 5:  # splice another input of the corpus
                _, other = rng.choice(self.corpus)
                cut = rng.randint(0, len(other))
                text = text[:pos] + other[cut:cut + rng.randint(1, 60)] + text[pos:]
            elif choice == 6:  # a number made extreme
                digits = [i for i, c in enumerate(text) if c.isdigit()]
                if digits:
                    i = rng.choice(digits)
                    text = text[:i] + rng.choice(["0", "9" * rng.randint(2, 30), "1e309", "-1", "2**62"]) + text[i + 1:]
            else:  # swap two lines
                lines = text.split("\n")
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
                text = "\n".join(lines)
        return text[:4000]

    # ---------------------------------------------------------------- one input
    def run_one(self, lang: str, text: str, trace: bool = True) -> bool:
        """Run one input; record a finding; True when it reached new lines."""
        self.runs += 1
        lines: set = set()
        tracer = _tracer(lines) if trace else None
        problem = None
        try:
            with _deadline(INPUT_SECONDS):
                if tracer:
                    sys.settrace(tracer)
                try:
                    problem = check_invariant(lang, text)
                finally:
                    sys.settrace(None)
        except _Hang:
            problem = f"hang: more than {INPUT_SECONDS} s"
        if problem is not None:
            self.findings.append(Finding(lang, text, problem))
        new = lines - self.seen
        self.seen |= lines
        return bool(new)

    def fuzz(self, seconds: float) -> None:
        """Seeds first, then mutations (and grammar draws) until ``seconds`` pass."""
        stop = time.monotonic() + seconds
        self.add_seeds()
        interesting = []
        for lang, text in list(self.corpus):
            if time.monotonic() > stop:
                return
            if self.run_one(lang, text):
                interesting.append((lang, text))
        self.corpus = interesting or self.corpus
        grammars = _grammar_draws(self.rng)
        while time.monotonic() < stop:
            if grammars and self.rng.random() < 0.15:
                lang, text = grammars.pop()
            else:
                lang, text = self.rng.choice(self.corpus)
                text = self.mutate(text)
            if self.run_one(lang, text):
                self.corpus.append((lang, text))

    def save_findings(self) -> list[Path]:
        CORPUS.mkdir(exist_ok=True)
        saved = []
        for f in self.findings:
            name = f"{f.lang}-{hashlib.sha1(f.text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}{SUFFIX[f.lang]}"
            path = CORPUS / name
            path.write_text(f.text, encoding="utf-8", errors="surrogatepass")
            saved.append(path)
        return saved


# -------------------------------------------------------------------- the invariant
def check_invariant(lang: str, text: str) -> str | None:
    """None when ``text`` as a program of ``lang`` compiles and runs or is refused with a
    TensorLangError that is not internal; otherwise what went wrong."""
    try:
        if lang == "einsum":
            return _einsum(text)
        params = {}
        if lang == "stur":
            params = {name: 3 for name in _stur_symbols(text)}
        kernel = tl.compile(text, lang=lang, backend="numpy", params=params or None)
        _call(kernel)
    except tl.TensorLangError as exc:
        rendered = exc.render() if hasattr(exc, "render") else str(exc)
        if exc.code == "internal":
            return f"internal error: {rendered[:300]}"
        if "Traceback" in rendered:
            return f"traceback in the message: {rendered[:300]}"
        return None
    except _Hang:
        raise
    except RecursionError:
        return "RecursionError"
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return None


def _einsum(text: str) -> str | None:
    subscripts = text.strip()
    operands = subscripts.split("->")[0].split(",")
    ranks = [min(64, sum(1 for c in op if c.isalpha())) for op in operands]
    # extent 2 where the operands stay small, else 1 (a rank-64 operand is one number)
    arrays = [np.ones([2 if r <= 10 else 1] * r) for r in ranks]
    try:
        with np.errstate(all="ignore"):
            tl.einsum(subscripts, *arrays, backend="numpy")
    except tl.TensorLangError:
        raise
    except (ValueError, TypeError):
        # tl.einsum is numpy.einsum's drop-in: what it hands to numpy (one operand, an
        # unusual call) fails with numpy's own ValueError/TypeError (docs/einsum.md)
        return None
    return None


def _stur_symbols(text: str) -> list[str]:
    for line in text.split("\n"):
        if line.strip().startswith("symbols:"):
            names = [n.strip() for n in line.split(":", 1)[1].split(",")]
            return [n for n in names if n.isidentifier()][:8]
    return []


def _call(kernel) -> None:
    shapes = getattr(kernel, "shapes", None)
    names = list(getattr(kernel, "inputs", ()))
    if shapes is None or any(not all(isinstance(d, int) for d in shapes.get(n, (0,))) for n in names):
        return  # symbolic sizes: compiled is enough
    if sum(int(np.prod(shapes[n], dtype=np.int64)) for n in names) > 10_000:
        return
    rng = np.random.default_rng(0)
    inputs = {}
    for n in names:
        a = rng.uniform(-2, 2, size=shapes[n])
        a[rng.random(a.shape) < 0.2] = np.nan
        inputs[n] = a
    with np.errstate(all="ignore"):
        kernel(**inputs)


# -------------------------------------------------------------------- grammar draws
def _grammar_draws(rng: random.Random) -> list[tuple[str, str]]:
    """Texts drawn from the lark grammars of tl, teil, cfd (fuzz.grammars) and STUR."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from fuzz.grammars import grammar_programs, stur_programs

    drawn: list[tuple[str, str]] = []
    strategies = st.one_of(*[grammar_programs(lang).map(lambda t, lang=lang: (lang, t)) for lang in ("tl", "teil", "cfd")],
                           stur_programs().map(lambda t: ("stur", t)))

    @settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True)
    @given(strategies)
    def collect(item):
        drawn.append(item)

    try:
        collect()
    except Exception:  # noqa: BLE001 - the grammars are a bonus; mutations go on without them
        return []
    rng.shuffle(drawn)
    return drawn


# -------------------------------------------------------------------- tracing, deadline
def _tracer(lines: set):
    def local(frame, event, arg):
        if event == "line":
            lines.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def global_(frame, event, arg):
        if frame.f_code.co_filename.startswith(PACKAGE):
            return local
        return None

    return global_


class _Hang(BaseException):
    pass


@contextlib.contextmanager
def _deadline(seconds: float):
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum, frame):
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
