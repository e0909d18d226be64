"""The thread policy, and the parallel and SIMD marks of the loop nests (docs/c-backend.md,
"Threads" and "SIMD"): one policy (:func:`team`, :func:`least_items`) for the loop nests,
the Gram steps and the field probes, work against the machine's measured threshold;
simd on innermost straight-line loops but short reductions (:func:`simd_marks`), parallel on a statement's
outermost output loop or a scalar target's big ``+``/``*`` sum (:func:`mark`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Union

from ..machine import PARALLEL_WORK, SIMD_REDUCTION_MIN  # PARALLEL_WORK: where no threshold was measured
from ..sampling.kernels import KERNELS
from ..schedule.steps import GramStep, ProbeStep
from .ir import Loop, Nest, Node, footprint, work


#: A nest doing at least this many scalar operations per element of data it touches
#: (:func:`intensity`) is arithmetic work over data in cache: a contraction, a fused batch
#: loop.  Fewer is streaming work (elementwise statements, a matrix-vector product), bound
#: by memory, which a second thread speeds up far less.
INTENSE = 4


@dataclass(frozen=True)
class Threshold:
    """The work from which a loop runs on threads, one figure per kind of work (both
    measured per machine by the C target, targets/c/threshold.py): ``compute`` for
    nests of at least :data:`INTENSE` operations per element touched, ``stream`` for the
    others.  Where wake-ups are slow (OpenMP's passive wait policy on a virtual machine:
    about 100 µs) streaming work may never pay while a fused batch loop of milliseconds
    still runs twice as fast on two threads."""

    compute: int
    stream: int


#: What :func:`mark` and the fused loops take: one figure for every nest, or a Threshold.
ParallelWork = Union[int, Threshold]


def intensity(nodes) -> float:
    """Scalar operations per element of data ``nodes`` touch (:func:`.ir.work` over
    :func:`.ir.footprint`)."""
    return work(nodes) / max(footprint(nodes), 1)


def threshold_for(parallel_work: ParallelWork, nodes) -> int:
    """The threshold that applies to the nest ``nodes``: its kind's (:class:`Threshold`)."""
    if isinstance(parallel_work, int):
        return parallel_work
    return parallel_work.compute if intensity(nodes) >= INTENSE else parallel_work.stream


def team_size(total: int, parallel_work: int, extent: int) -> int:
    """The most threads a parallel loop of ``total`` scalar operations and ``extent``
    iterations pays for: at the threshold two threads win (002 §7, measured by the C
    target), so ``k`` threads need about ``k / 2`` thresholds of work; never more threads
    than iterations.  0 (no limit, and no look at how busy the machine is) where threads
    are forced (``parallel_work`` 1: ``$TENSORLANG_PARALLEL_WORK=1``)."""
    if parallel_work <= 1:
        return 0
    return max(2, min(extent, 2 * total // parallel_work))


#: How OpenMP deals out a parallel loop's iterations (docs/c-backend.md, "Threads", item 5)
SCHEDULE = "guided"


def share(loop: Loop, team: int) -> Loop:
    """``loop`` parallel on at most ``team`` threads: ``static`` with reductions (their rounding), else SCHEDULE."""
    return replace(loop, parallel=True, team=team, omp_schedule="static" if loop.reductions else SCHEDULE)


def team(work: int, threshold: int, extent: int) -> int | None:
    """None (one thread) for ``work`` below ``threshold``, else the most threads it pays for."""
    if extent <= 1 or work < threshold:
        return None
    return team_size(work, threshold, extent)


def gram_team(step: GramStep, parallel_work: ParallelWork) -> int:
    """A Gram step's ``TEAM`` (targets/c/gram.py): -1 one thread, 0 no limit, else the most threads."""
    work = step.n * step.m * (step.m + 1) // 2 if step.order == 2 else step.n * step.m ** 3 // 6  # sorted entries
    threads = team(work, parallel_work.compute if isinstance(parallel_work, Threshold) else parallel_work, step.m)
    return -1 if threads is None else threads


def least_items(per_item: int, threshold: int) -> int:
    """The fewest items of ``per_item`` operations whose work reaches ``threshold``."""
    return max(1, -(-threshold // max(per_item, 1)))


def probe_threads_from(dim: int, support: int, ncomp: int, parallel_work: ParallelWork) -> int:
    """The points from which a probe runs on threads: the fewest whose taps (``support**dim``
    of ``ncomp`` components a point) reach the compute threshold."""
    work = parallel_work.compute if isinstance(parallel_work, Threshold) else parallel_work
    return least_items(support ** dim * ncomp, work)


def probe_points(step: ProbeStep, parallel_work: ParallelWork) -> int:
    """:func:`probe_threads_from` for a probe step (targets/c/probe.py)."""
    return probe_threads_from(step.dim, KERNELS[step.kernel].support, step.ncomp, parallel_work)


def short_reduction(loop: Loop, outer: int = 1) -> bool:
    """A sum of fewer constant terms than SIMD_REDUCTION_MIN, ``outer`` of them per term of
    the loop: the enclosing loops summing into the same accumulators (docs/c-backend.md, "SIMD")."""
    return bool(loop.reductions) and isinstance(loop.start, int) and outer * (loop.extent - loop.start) < SIMD_REDUCTION_MIN


def simd_marks(node: Node, outer: int = 1) -> Node:
    """``node`` with each innermost loop (no loop in its body) marked simd, except a
    :func:`short_reduction` (``outer``: terms per iteration from enclosing loops of the same
    sum).  A loop already simd (an outer-vectorized register block, :mod:`.microkernel`)
    stays as it is: no simd construct may nest in another."""
    if not isinstance(node, Loop) or node.simd:
        return node
    terms = outer * (node.extent - node.start) if isinstance(node.start, int) else SIMD_REDUCTION_MIN
    body = tuple(simd_marks(c, terms if isinstance(c, Loop) and set(c.reductions) & set(node.reductions) else 1)
                 for c in node.body)
    return replace(node, body=body, simd=not any(isinstance(c, Loop) for c in body) and not short_reduction(node, outer))


def _output_loops(nodes: tuple[Node, ...], variables: list[str]) -> list[Loop]:
    """The chain of loops over ``variables``, outermost first, each the first node of the
    one outside it (a scratch statement's nest is its loops, then a Copy)."""
    chain: list[Loop] = []
    for var in variables:
        if not nodes or not isinstance(nodes[0], Loop) or nodes[0].var != var:
            break
        chain.append(nodes[0])
        nodes = nodes[0].body
    return chain


def mark(nest: Nest, parallel_work: ParallelWork = PARALLEL_WORK) -> Nest:
    """``nest`` with its simd and parallel loops marked; a loop runs on threads when the
    nest's work reaches ``parallel_work`` (the C target passes the thresholds measured on
    the machine, targets/c/threshold.py, or 1 when ``threads=`` forces threads; of a
    :class:`Threshold`, the one for the nest's kind of work, :func:`threshold_for`).  Of an
    interchanged nest only the output loops outside the summed ones (the last is the row);
    max/min sums keep one thread (their NaN rule is ours, not OpenMP's)."""
    body = tuple(simd_marks(node) for node in nest.body)
    parallel_work = threshold_for(parallel_work, body)
    index = nest.statement.index
    if not index:  # a scalar target: a big + or * reduction may share its outer loop out
        total = work(body)
        return replace(nest, body=tuple(_parallel_reduction(node, total, parallel_work) for node in body))
    variables = [name for name, _ in (index[:-1] if nest.interchanged else index)]
    chain = _output_loops(body, variables)
    if len(chain) < len(variables) or not chain:
        return replace(nest, body=body)
    outer = chain[0]
    total = math.prod(loop.extent for loop in chain) * work(chain[-1].body)
    threads = team(total, parallel_work, outer.extent)
    if threads is not None:
        body = (share(outer, threads), *body[1:])
    return replace(nest, body=body)


def _parallel_reduction(node: Node, total: int, parallel_work: int) -> Node:
    """The outermost loop of a big sum or product, marked parallel."""
    if not isinstance(node, Loop):
        return node
    threads = team(total, parallel_work, node.extent)
    if threads is not None and node.reductions and all(op in ("+", "*") for op, _ in node.reductions):
        return share(node, threads)
    return node
