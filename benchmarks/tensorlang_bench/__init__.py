"""``tensorlang bench``: tensorlang against the peers a user would pick instead.

Every performance claim of the project is a ratio measured in the same run, on the same
machine, next to that machine's measured limits.  Modules:

* ``timing``       warm-up, repetitions, median, contenders interleaved;
* ``machine``      the machine's description and limits (bandwidth, BLAS peak);
* ``contenders``   tensorlang's back ends, optional peers (skipped with a note), baselines;
* ``suites``       one module a suite (cfd, inplace, blas, small, einsum, fields, structure, padding, diderot): kernels, sizes, flop/byte
                   counts, references, each peer's implementation;
* ``runner``       correctness gate, timing, metrics, progress bar;
* ``report``       JSON, markdown tables, PNG plots.

The command line is ``tensorlang bench [SUITE...] [--quick] [--threads N] [--out DIR]``.

This is a package of its own, beside ``tensorlang`` (benchmarks/tensorlang_bench, installed
with it), and uses only tensorlang's public API.  ``tensorlang``'s command line imports
this module to register ``bench``, so it stays light: the peers, matplotlib and the suites
are imported only when a benchmark runs.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

import tensorlang as tl

SUITE_NAMES = ("cfd", "inplace", "blas", "small", "einsum", "fields", "structure", "padding", "diderot")
PEER_NAMES = ("opt_einsum", "torch", "jax", "numba")
DEFAULT_OUT = os.path.join("benchmarks", "results")


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``bench`` on the CLI's subparsers (cli.py calls this)."""
    p = sub.add_parser("bench", help="benchmark tables and plots against peers (numpy, opt_einsum, torch, jax, numba)")
    p.add_argument("suites", nargs="*", metavar="SUITE",
                   help=f"suites to run (default: all): {', '.join(SUITE_NAMES)}")
    p.add_argument("--quick", action="store_true", help="small sizes and few repetitions: a smoke check (< 2 minutes)")
    p.add_argument("--threads", default="1", metavar="N[,N...]",
                   help="threads for every contender (default 1); several counts (1,2) run every suite at each "
                        "and compare them in one table")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"where results go (default {DEFAULT_OUT})")
    p.add_argument("--without", default="", metavar="PEER,...",
                   help=f"treat these peers as missing: {', '.join(PEER_NAMES)}")
    p.add_argument("--docs", metavar="PAGE.md",
                   help="also refresh the generated part of this page (e.g. docs/performance.md)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--fma", action="store_true",
                   help="also time tensorlang's C kernels compiled with fma=False (every product rounded on its own; "
                        "fused multiply-adds are the default) in every suite (the cfd suite always does)")
    p.set_defaults(func=cmd_bench)
    return p


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def thread_counts(text) -> list[int]:
    """``--threads``: one count (``2``) or several (``1,2``), each a positive integer."""
    counts = []
    for part in str(text).split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise tl.TensorLangError("input", f"--threads must be a positive integer or a list of them (1,2), got {text}")
        counts.append(int(part))
    return list(dict.fromkeys(counts))


def docs_page(text: str) -> Path:
    """``--docs PAGE.md``, checked before the run (minutes of it): a markdown page, new in a
    writable directory or a writable regular UTF-8 file.  The page gets the generated part
    appended where it has none, so any other file is refused: ``--docs /etc/passwd`` (as
    root) appended the tables to it, and ``--docs .`` failed only after the whole run."""
    page = Path(text)
    if page.suffix != ".md":
        raise tl.TensorLangError("input", f"--docs takes a markdown page (PAGE.md), got {text!r}")
    if not page.exists():
        if not os.access(page.parent if page.parent.parts else Path("."), os.W_OK):
            raise tl.TensorLangError("input", f"cannot write {text!r}: its directory is not writable")
        return page
    if not page.is_file() or not os.access(page, os.R_OK | os.W_OK):
        raise tl.TensorLangError("input", f"cannot update {text!r}: not a regular file this user can read and write")
    try:
        page.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise tl.TensorLangError("input", f"cannot update {text!r}: not a UTF-8 markdown page ({exc})") from None
    return page


def cmd_bench(args) -> int:
    suites = list(dict.fromkeys(args.suites)) or list(SUITE_NAMES)
    unknown = [s for s in suites if s not in SUITE_NAMES]
    if unknown:
        raise tl.TensorLangError("input", f"unknown suite {unknown[0]!r}; choose from {', '.join(SUITE_NAMES)}")
    counts = thread_counts(args.threads)
    usable = usable_cpus()
    for count in counts:
        if count > usable:
            raise tl.TensorLangError("input", f"--threads {count} is more than the {usable} CPU(s) this process may use: "
                                              "the threads would share cores and the timings would mean little")
    without = [w.strip() for w in args.without.split(",") if w.strip()]
    bad = [w for w in without if w not in PEER_NAMES]
    if bad:
        raise tl.TensorLangError("input", f"--without: unknown peer {bad[0]!r}; choose from {', '.join(PEER_NAMES)}")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise tl.TensorLangError("input", f"cannot create output directory {str(out)!r}: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK):
        raise tl.TensorLangError("input", f"output directory {str(out)!r} is not writable")
    if args.docs:
        docs_page(args.docs)

    from . import report, runner

    command = "tensorlang bench " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 1 and sys.argv[1] == "bench" else ""
    results = runner.run(suites, quick=args.quick, threads=counts if len(counts) > 1 else counts[0], disabled=without,
                         progress=not args.no_progress, command=command.strip(), fma=args.fma)
    try:
        written = report.write_all(results, out)
    except OSError as exc:
        raise tl.TensorLangError("input", f"cannot write the results into {str(out)!r}: {exc.strerror or exc}") from None
    print("\n".join(report.summary_markdown(results) + report.threads_markdown(results)))
    for note in results["missing_peers"].values():
        print(f"note: {note}")
    print(f"wrote {written['json']}, {written['markdown']}" + "".join(f", {p}" for p in written["plots"]))
    if written["plot_note"]:
        print(written["plot_note"])
    if args.docs:
        try:
            page = report.update_doc(results, Path(args.docs), out, [p.name for p in written["plots"]])
        except OSError as exc:
            raise tl.TensorLangError("input", f"cannot update {args.docs!r}: {exc.strerror or exc}") from None
        print(f"updated {page}")
    return 0
