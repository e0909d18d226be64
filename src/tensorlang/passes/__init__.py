"""The optimizer: passes over EIN, each a plain function from program to program.

:data:`PIPELINE` runs them in order (004 §5, 001 §5; docs/optimizer.md has the table):
dead, fuse, normalize, hoist, split, order, cse, dead.  The rewrites inside the passes are
named rules (:data:`RULES`, ein/rewrite.py) whose firings ``optimize`` counts.
``optimize(program, skip={"fuse", "delta-elimination"})`` leaves out passes and rules
(``--skip NAME``); every pass is also usable alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..ein import ir
from ..limits import env_flag
from ..ein.rewrite import Tally, counting
from ..ein.verify import verify as verify_program
from ..analysis.cost import program_cost
from .cse import value_number
from .dead_code import eliminate_dead_code
from . import fuse as _fuse, normalize as _normalize
from .fuse import fuse
from .hoist import hoist
from .normalize import normalize
from .order import order_contractions
from .split import split

PIPELINE = (
    ("dead", eliminate_dead_code),
    ("fuse", fuse),
    ("normalize", normalize),
    ("hoist", hoist),
    ("split", split),
    ("order", order_contractions),
    ("cse", value_number),
    ("dead", eliminate_dead_code),
)

#: The pass names ``skip`` accepts (``--skip NAME``).
PASS_NAMES = tuple(dict.fromkeys(name for name, _ in PIPELINE))

#: Every rewrite rule of the passes, in pipeline order (ein/rewrite.py).
RULES = _fuse.RULES + _normalize.RULES

#: The rule names ``skip`` accepts.
RULE_NAMES = tuple(rule.name for rule in RULES)


def unknown_name(name: str) -> str:
    """The message for a ``skip`` name that is neither a pass nor a rule."""
    return f"unknown pass or rule {name!r} (passes: {', '.join(PASS_NAMES)}; rules: {', '.join(RULE_NAMES)})"


@dataclass(frozen=True)
class PassRecord:
    """One pass of a run: its name, the IR's node count and statement count after it,
    and the seconds it took (``tensorlang analyze`` prints these)."""

    name: str
    nodes: int
    statements: int
    seconds: float


@dataclass(frozen=True)
class Optimized:
    """The optimized program, the log of its passes, and how often each rule fired in
    the run that produced it (``(name, count)`` in :data:`RULES` order, rules that
    fired only)."""

    program: ir.Program
    log: tuple[PassRecord, ...]
    rules: tuple[tuple[str, int], ...] = ()


def verifying() -> bool:
    """Whether :func:`optimize` verifies by default: ``TENSORLANG_VERIFY=1`` (the tests
    set it, so every optimization they cause is checked after every pass)."""
    return env_flag("TENSORLANG_VERIFY")


def optimize(program: ir.Program, skip=(), verify: bool | None = None) -> Optimized:
    """Run the pipeline, except the passes and rules named in ``skip``, and log each
    pass and count each rule.

    ``verify=True`` checks the program with the IR verifier (ein/verify.py) as lowered
    and after every pass, raising ``InvalidIR`` naming the pass that broke it; by
    default only when :func:`verifying`.

    The optimizer never makes a program costlier in the flop model ``analyze`` reports.
    Fusion and merging nested sums bet that contraction ordering will refactor what they
    merged; where that does not pay off in the model, the pipeline is run again without
    fusion, then without normalization, and the cheapest result is kept, or else the
    program as lowered (the log says which)."""
    skip = set(skip)
    for name in sorted(skip):
        if name not in PASS_NAMES and name not in RULE_NAMES:
            raise ValueError(unknown_name(name))
    check = verifying() if verify is None else verify
    if check:
        verify_program(program, "lowering")
    result, log, tally = _run(program, skip, check)
    budget, cost = program_cost(program).flops, program_cost(result).flops
    for without in ("fuse", "normalize"):
        if cost <= budget or without in skip:
            continue
        retry, retry_log, retry_tally = _run(program, skip | {without}, check)
        retry_cost = program_cost(retry).flops
        if retry_cost < cost:
            note = PassRecord(f"(again without {without}: it cost flops)", retry.size, len(retry.statements), 0.0)
            result, log, cost, tally = retry, log + [note] + retry_log[1:], retry_cost, retry_tally
    if cost > budget:  # keep the program as it was, minus dead code
        result = eliminate_dead_code(program)
        log = log + [PassRecord("(kept as lowered: the passes cost flops)", result.size, len(result.statements), 0.0)]
        tally = Tally()
    fired = tuple((rule, tally.counts[rule]) for rule in RULE_NAMES if tally.counts[rule])
    return Optimized(result, tuple(log), fired)


def _run(program: ir.Program, skip: set[str], check: bool) -> tuple[ir.Program, list[PassRecord], Tally]:
    log = [PassRecord("lowered", program.size, len(program.statements), 0.0)]
    tally = Tally(name for name in skip if name in RULE_NAMES)
    with counting(tally):
        for name, run in PIPELINE:
            if name in skip:
                continue
            start = time.perf_counter()
            program = run(program)
            log.append(PassRecord(name, program.size, len(program.statements), time.perf_counter() - start))
            if check:
                verify_program(program, f"the {name} pass")
    return program, log, tally


__all__ = ["PIPELINE", "PASS_NAMES", "RULES", "RULE_NAMES", "optimize", "verifying", "unknown_name", "Optimized", "PassRecord", "eliminate_dead_code", "fuse", "hoist",
           "normalize", "split", "order_contractions", "value_number"]
