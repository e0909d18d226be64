"""The one thread policy for loop nests, Gram steps and probes, and the loops' parallel and SIMD
marks (:func:`mark`): docs/c-backend.md, "Threads" and "SIMD"."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Union

from ..machine import PARALLEL_WORK, SIMD_REDUCTION_MIN  # PARALLEL_WORK: where no threshold was measured
from ..sampling.kernels import KERNELS
from ..schedule.steps import GramStep, ProbeStep
from .ir import Loop, Nest, Node, footprint, work
from .structure import chain


#: Scalar operations per element touched (:func:`intensity`) from which a nest is arithmetic
#: work (a contraction, a fused loop), else streaming work, which threads speed up far less.
INTENSE = 4


@dataclass(frozen=True)
class Threshold:
    """The work from which a loop runs on threads, per kind of work (measured by
    targets/c/threshold.py): ``compute`` from :data:`INTENSE`, else ``stream``."""

    compute: int
    stream: int


#: What :func:`mark` and the fused loops take: one figure for every nest, or a Threshold.
ParallelWork = Union[int, Threshold]


def intensity(nodes) -> float:
    """Scalar operations per element of data ``nodes`` touch."""
    return work(nodes) / max(footprint(nodes), 1)


def threshold_for(parallel_work: ParallelWork, nodes) -> int:
    """The threshold that applies to the nest ``nodes``: its kind's (:class:`Threshold`)."""
    if isinstance(parallel_work, int):
        return parallel_work
    return parallel_work.compute if intensity(nodes) >= INTENSE else parallel_work.stream


def team_size(total: int, parallel_work: int, extent: int) -> int:
    """The most threads a loop of ``total`` operations and ``extent`` iterations pays for
    (``k`` threads from ``k / 2`` thresholds); 0 (no limit) where threads are forced."""
    return 0 if parallel_work <= 1 else max(2, min(extent, 2 * total // parallel_work))


#: How OpenMP deals out a parallel loop's iterations (docs/c-backend.md, "Threads", item 5)
SCHEDULE = "guided"


def share(loop: Loop, team: int) -> Loop:
    """``loop`` parallel on at most ``team`` threads: ``static`` with reductions (their rounding), else SCHEDULE."""
    return replace(loop, parallel=True, team=team, omp_schedule="static" if loop.reductions else SCHEDULE)


def team(work: int, threshold: int, extent: int) -> int | None:
    """None (one thread) for ``work`` below ``threshold``, else the most threads it pays for."""
    return None if extent <= 1 or work < threshold else team_size(work, threshold, extent)


def gram_team(step: GramStep, parallel_work: ParallelWork) -> int:
    """A Gram step's ``TEAM`` (targets/c/gram.py): -1 one thread, 0 no limit, else the most threads."""
    work = step.n * step.m * (step.m + 1) // 2 if step.order == 2 else step.n * step.m ** 3 // 6  # sorted entries
    threads = team(work, _compute(parallel_work), step.m)
    return -1 if threads is None else threads


def probe_threads_from(dim: int, support: int, ncomp: int, parallel_work: ParallelWork) -> int:
    """The points from which a probe runs on threads: the fewest whose taps (``support**dim``
    of ``ncomp`` components a point) reach the compute threshold."""
    return max(1, -(-_compute(parallel_work) // max(support ** dim * ncomp, 1)))


def _compute(parallel_work: ParallelWork) -> int:
    return parallel_work.compute if isinstance(parallel_work, Threshold) else parallel_work


def probe_points(step: ProbeStep, parallel_work: ParallelWork) -> int:
    """:func:`probe_threads_from` for a probe step (targets/c/probe.py)."""
    return probe_threads_from(step.dim, KERNELS[step.kernel].support, step.ncomp, parallel_work)


def short_reduction(loop: Loop, outer: int = 1) -> bool:
    """A sum of fewer constant terms than SIMD_REDUCTION_MIN, ``outer`` of them per term of
    the loop: the enclosing loops summing into the same accumulators (docs/c-backend.md, "SIMD")."""
    return bool(loop.reductions) and isinstance(loop.start, int) and outer * (loop.extent - loop.start) < SIMD_REDUCTION_MIN


def simd_marks(node: Node, outer: int = 1) -> Node:
    """``node`` with each innermost loop marked simd but a :func:`short_reduction` (``outer``:
    terms per iteration from enclosing loops of the sum); a simd loop stays as it is."""
    if not isinstance(node, Loop) or node.simd:
        return node
    terms = outer * (node.extent - node.start) if isinstance(node.start, int) else SIMD_REDUCTION_MIN
    body = tuple(simd_marks(c, terms if isinstance(c, Loop) and set(c.reductions) & set(node.reductions) else 1)
                 for c in node.body)
    return replace(node, body=body, simd=not any(isinstance(c, Loop) for c in body) and not short_reduction(node, outer))


def mark(nest: Nest, parallel_work: ParallelWork = PARALLEL_WORK) -> Nest:
    """``nest`` with its simd and parallel loops marked: the outermost output loop on
    threads where the nest's work reaches ``parallel_work`` (:func:`threshold_for`); max/min
    sums keep one thread (docs/c-backend.md, "Threads")."""
    body = tuple(simd_marks(node) for node in nest.body)
    parallel_work = threshold_for(parallel_work, body)
    index = nest.statement.index
    if not index:  # a scalar target: a big + or * reduction may share its outer loop out
        total = work(body)
        return replace(nest, body=tuple(share(node, threads) if isinstance(node, Loop) and node.reductions and all(
            op in ("+", "*") for op, _ in node.reductions) and (threads := team(total, parallel_work, node.extent)) is not None
            else node for node in body))
    # the loops over the output variables (a scratch statement's nest is its loops, then a Copy)
    loops = chain(body, [name for name, _ in (index[:-1] if nest.interchanged else index)])
    if not loops:
        return replace(nest, body=body)
    outer = loops[0]
    total = math.prod(loop.extent for loop in loops) * work(loops[-1].body)
    threads = team(total, parallel_work, outer.extent)
    if threads is not None:
        body = (share(outer, threads), *body[1:])
    return replace(nest, body=body)
