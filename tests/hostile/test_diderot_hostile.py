"""The Diderot surface under hostile input (issue 41): ``tensorlang run PROG.diderot ...``
over the corpus of :mod:`hostile.diderot_corpus`, class by class.  No case may end in an
internal error, a traceback, a hang (CPU time past the corpus' limit) or a crash; the
cases with an ``expect`` must give that outcome.

The quick tier runs the first cases of each class (those refused before the C compiler
runs, mostly); the slow tier runs them all."""

from __future__ import annotations

import pytest

from hostile import diderot_corpus as dc

ALL = dc.corpus()
CLASSES = sorted({c.cls for c in ALL})
#: a few cases of every class, cheap enough for the quick tier
QUICK = [
    "deep:ifs-10000", "deep:power-10000", "deep:fn-doubling-40", "deep:field-doubling-30",
    "text:binary", "sizes:tensor-1e8x1e8", "sizes:comprehension-1e9", "strands:grid-1e100",
    "arith:int-literal-2^64", "functions:mutual-recursion", "images:fifo", "images:line-skip-1e18",
    "argv:l-neg", "argv:s-0", "argv:d-fifo", "argv:program-fifo", "argv:k-neg-huge", "text:prime-names-all",
]


@pytest.fixture(scope="module", autouse=True)
def _cache():
    dc.fresh_cache()


def _judge(case: dc.Case) -> None:
    outcome = dc.run_case(case)
    assert outcome.verdict not in dc.BAD, outcome.line() + "\n" + outcome.stderr


def test_the_corpus_covers_every_class():
    assert {"deep", "long-names", "c-names", "text", "sizes", "strands", "arith", "functions", "structure",
            "images", "argv", "env"} <= set(CLASSES)
    assert len(ALL) >= 500
    assert set(QUICK) <= {c.id for c in ALL}


@pytest.mark.parametrize("cid", QUICK)
def test_a_hostile_case_is_refused_cleanly_or_runs(cid):
    _judge(next(c for c in ALL if c.id == cid))


@pytest.mark.slow
@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_every_hostile_case_is_refused_cleanly_or_runs(case):
    _judge(case)
