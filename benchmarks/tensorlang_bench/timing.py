"""Repeatable timing: warm-up, many repetitions, the median, contenders interleaved.

Why interleaved: on a shared machine the background load drifts over seconds.  Timing
contender A for a second and then contender B for a second would charge each with a
different load.  Instead every *round* runs one batch of every contender, so that drift
spreads evenly over all of them, in an order that changes from round to round
(:func:`round_order`): each contender comes first equally often, and the contender run
just before it changes too.  Which call precedes a kernel matters on a loaded machine: a
kernel timed right after a long call of the same process is preempted more often
(measured: tensorlang's CFD Helmholtz at n = 16 took 1.09x its CPU time after 20 ms of
spinning, 1.17x after a JAX call, docs/performance.md), and an order merely rotated
keeps every contender behind the same neighbour in all but one round of ``n``.

Why batches: a call of a few microseconds is shorter than the clock's useful resolution
and than ``perf_counter``'s own cost, so each sample times ``inner`` calls back to back
and divides.  ``inner`` is chosen per contender from a calibration call so that a
batch lasts at least ``min_batch_s``.

Why the median: it ignores the occasional sample that an interrupt or another process
spoiled, where a mean would absorb it.  The inter-quartile range is reported with it, as
the honest width of the measurement.
"""

from __future__ import annotations

import math
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
    #: untimed calls before every timed batch: a call after another contender's (or after a
    #: pause) runs cold, 5-30x slower on a VM whose memory the host lets go (docs/performance.md)
    warm_each: int = 1

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


class ContenderFailed(Exception):
    """A contender raised while it was being timed; ``name`` says which one."""

    def __init__(self, name: str, cause: BaseException):
        super().__init__(f"{name}: {type(cause).__name__}: {cause}")
        self.name, self.cause = name, cause


def round_order(names: Sequence[str], r: int) -> list[str]:
    """The order of round ``r``: from ``names[r % n]`` on, in steps of ``k`` through the
    list (cyclically), ``k`` the ``r``-th of the steps coprime to ``n`` taken in turn.
    Every contender starts one round in ``n``; with ``n`` = 2 the rounds alternate
    a b, b a; with more, the contender just before a given one changes from round to
    round (through ``names[i - k]`` for every step ``k``), instead of staying the same."""
    n = len(names)
    if n == 0:
        return []
    steps = [k for k in range(1, n) if math.gcd(k, n) == 1] or [1]
    shift, step = r % n, steps[r % len(steps)]
    return [names[(shift + i * step) % n] for i in range(n)]


def time_interleaved(
    fns: Mapping[str, Callable[[], object]], plan: Plan = Plan(), clock=time.perf_counter, on_round=None,
    resets: Mapping[str, Callable[[], None]] | None = None, failed: dict[str, BaseException] | None = None,
) -> dict[str, Stats]:
    """Time every callable in ``fns``, interleaved round by round; per-call statistics.

    The number of rounds is ``plan.rounds``, reduced (never below ``plan.min_rounds``)
    so that all rounds of all contenders fit ``plan.budget_s``.

    ``resets[name]``, when given, restores a contender's initial state (in-place kernels
    overwrite their own input).  It runs before the warm-up, before calibration and before
    every timed batch, always outside the clock, so that every batch starts from the
    same values (after the batch's ``plan.warm_each`` untimed calls); within a batch of ``inner`` calls the state still evolves (the suites
    choose values that stay normal numbers over many calls).

    A contender that raises is dropped from the remaining rounds; with ``failed`` given
    its exception is recorded there (and the others are still timed), without it the
    exception propagates as :class:`ContenderFailed`.
    """
    names = list(fns)
    if not names:
        return {}
    resets = resets or {}
    no_reset = lambda: None  # noqa: E731

    def guarded(name, action):
        try:
            return action()
        except Exception as exc:  # noqa: BLE001 - reported per contender by the caller
            if failed is None:
                raise ContenderFailed(name, exc) from exc
            failed[name] = exc
            return None

    inner: dict[str, int] = {}
    cost = 0.0
    for name in names:
        fn, reset = fns[name], resets.get(name, no_reset)

        def prepare(fn=fn, reset=reset):
            reset()
            for _ in range(plan.warmup):
                fn()
            reset()
            return calibrate(fn, plan.min_batch_s, clock)

        got = guarded(name, prepare)
        if got is not None:
            inner[name], one = got
            cost += one * (inner[name] + plan.warm_each)
    live = [name for name in names if name in inner]
    rounds = plan.rounds
    if cost > 0:
        rounds = max(plan.min_rounds, min(plan.rounds, int(plan.budget_s / cost)))
    samples: dict[str, list[float]] = {name: [] for name in live}
    for r in range(rounds):
        for name in round_order(live, r):
            fn, n, reset = fns[name], inner[name], resets.get(name, no_reset)

            def batch(fn=fn, n=n, reset=reset):
                if plan.warm_each:
                    reset()
                    for _ in range(plan.warm_each):
                        fn()
                reset()
                start = clock()
                for _ in range(n):
                    fn()
                return (clock() - start) / n

            value = guarded(name, batch)
            if value is not None:
                samples[name].append(value)
        live = [name for name in live if failed is None or name not in failed]
        if on_round is not None:
            on_round(r + 1, rounds)
    return {name: summarize(samples[name], inner[name]) for name in samples
            if samples[name] and (failed is None or name not in failed)}


@dataclass(frozen=True)
class Paired:
    """Two contenders timed by themselves, batch beside batch: ``ratio`` is the median
    over rounds of b's batch time over a's in the same round (a paired statistic: load
    that drifts over seconds spoils both batches of a round alike), ``q1``/``q3`` its
    quartiles; ``cpu_*`` the same of the process's CPU time (what a busy machine's
    waits for a CPU leave out); ``a``/``b`` each one's own per-call statistics."""

    ratio: float
    q1: float
    q3: float
    a: Stats
    b: Stats
    cpu_ratio: float
    cpu_q1: float
    cpu_q3: float

    def as_dict(self) -> dict:
        return {"ratio": self.ratio, "q1": self.q1, "q3": self.q3, "a_median_s": self.a.median,
                "b_median_s": self.b.median, "cpu_ratio": self.cpu_ratio, "cpu_q1": self.cpu_q1,
                "cpu_q3": self.cpu_q3, "rounds": self.a.samples, "calls_per_sample": self.a.inner}


def _median_quartiles(values: list[float]) -> tuple[float, float, float]:
    data = sorted(values)
    if len(data) < 2:
        return data[0], data[0], data[0]
    q1, _, q3 = statistics.quantiles(data, n=4, method="inclusive")
    return statistics.median(data), q1, q3


def time_paired(fa: Callable[[], object], fb: Callable[[], object], plan: Plan = Plan(),
                clock=time.perf_counter, cpu_clock=time.process_time) -> Paired:
    """Time ``fa`` and ``fb`` in rounds of one batch each, the same number of calls in
    both batches (enough for the faster one's batch to last ``plan.min_batch_s``), in the
    order a b, then b a: the second batch of a round no longer profits from the first's
    warm caches more often for one of them.  Rounds: ``plan.rounds``, fewer (never below
    ``plan.min_rounds``) to fit ``plan.budget_s``."""
    for _ in range(plan.warmup):
        fa()
        fb()
    inner = max(calibrate(fa, plan.min_batch_s, clock)[0], calibrate(fb, plan.min_batch_s, clock)[0])
    start = clock()
    for _ in range(inner):
        fa()
        fb()
    cost = clock() - start
    rounds = max(plan.min_rounds, min(plan.rounds, int(plan.budget_s / cost))) if cost > 0 else plan.rounds
    wall: dict[str, list[float]] = {"a": [], "b": []}
    cpu: dict[str, list[float]] = {"a": [], "b": []}
    for r in range(rounds):
        for name, fn in (("a", fa), ("b", fb)) if r % 2 == 0 else (("b", fb), ("a", fa)):
            start, start_cpu = clock(), cpu_clock()
            for _ in range(inner):
                fn()
            wall[name].append((clock() - start) / inner)
            cpu[name].append((cpu_clock() - start_cpu) / inner)
    ratio = _median_quartiles([b / a for a, b in zip(wall["a"], wall["b"])])
    cpu_ratio = _median_quartiles([b / a for a, b in zip(cpu["a"], cpu["b"]) if a > 0])
    return Paired(*ratio, summarize(wall["a"], inner), summarize(wall["b"], inner), *cpu_ratio)
