"""Repeatable timing: warm-up, many repetitions, the median, contenders interleaved.

Why interleaved: on a shared machine the background load drifts over seconds.  Timing
contender A for a second and then contender B for a second would charge each with a
different load.  Instead every *round* runs one batch of every contender (in an order
rotated from round to round), so that drift spreads evenly over all of them.

Why batches: a call of a few microseconds is shorter than the clock's useful resolution
and than ``perf_counter``'s own cost, so each sample times ``inner`` calls back to back
and divides.  ``inner`` is chosen per contender from a calibration call so that a
batch lasts at least ``min_batch_s``.

Why the median: it ignores the occasional sample that an interrupt or another process
spoiled, where a mean would absorb it.  The inter-quartile range is reported with it, as
the honest width of the measurement.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence


@dataclass(frozen=True)
class Stats:
    """Summary of the per-call times of one contender (seconds)."""

    median: float
    q1: float
    q3: float
    minimum: float
    samples: int  # number of batches timed
    inner: int  # calls per batch

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def as_dict(self) -> dict:
        return {
            "median_s": self.median,
            "q1_s": self.q1,
            "q3_s": self.q3,
            "min_s": self.minimum,
            "samples": self.samples,
            "calls_per_sample": self.inner,
        }


def summarize(per_call: Sequence[float], inner: int = 1) -> Stats:
    """Median, quartiles and minimum of per-call times (one value per batch)."""
    if not per_call:
        raise ValueError("no samples to summarize")
    data = sorted(per_call)
    if len(data) >= 2:
        q1, _, q3 = statistics.quantiles(data, n=4, method="inclusive")
    else:
        q1 = q3 = data[0]
    return Stats(statistics.median(data), q1, q3, data[0], len(data), inner)


@dataclass(frozen=True)
class Plan:
    """How hard to measure: warm-up calls, rounds, and the time budget of one case."""

    warmup: int = 3
    rounds: int = 31
    min_rounds: int = 5
    min_batch_s: float = 2e-3
    budget_s: float = 4.0  # all contenders of one case together, roughly

    @classmethod
    def quick(cls) -> "Plan":
        return cls(warmup=2, rounds=9, min_rounds=3, min_batch_s=1e-3, budget_s=0.6)


def calibrate(fn: Callable[[], object], min_batch_s: float, clock=time.perf_counter) -> tuple[int, float]:
    """Calls per batch so a batch lasts ``min_batch_s``, and the time of one call."""
    start = clock()
    fn()
    one = clock() - start
    inner = 1
    while one * inner < min_batch_s and inner < 1_000_000:
        inner *= 2
        start = clock()
        for _ in range(inner):
            fn()
        one = (clock() - start) / inner
    return inner, one


def time_interleaved(
    fns: Mapping[str, Callable[[], object]], plan: Plan = Plan(), clock=time.perf_counter, on_round=None
) -> dict[str, Stats]:
    """Time every callable in ``fns``, interleaved round by round; per-call statistics.

    The number of rounds is ``plan.rounds``, reduced (never below ``plan.min_rounds``)
    so that all rounds of all contenders fit ``plan.budget_s``.
    """
    names = list(fns)
    if not names:
        return {}
    inner: dict[str, int] = {}
    cost = 0.0
    for name in names:
        for _ in range(plan.warmup):
            fns[name]()
        inner[name], one = calibrate(fns[name], plan.min_batch_s, clock)
        cost += one * inner[name]
    rounds = plan.rounds
    if cost > 0:
        rounds = max(plan.min_rounds, min(plan.rounds, int(plan.budget_s / cost)))
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            fn, n = fns[name], inner[name]
            start = clock()
            for _ in range(n):
                fn()
            samples[name].append((clock() - start) / n)
        if on_round is not None:
            on_round(r + 1, rounds)
    return {name: summarize(samples[name], inner[name]) for name in names}
