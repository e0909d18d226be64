"""The coverage-guided fuzzer (fuzz/coverage.py) for a bounded time: every input is a
result or a clean TensorLangError.  ``TENSORLANG_FUZZ_SECONDS`` sets the budget (60 s
by default; slow tier).  An input that fails is saved under tests/fuzz/corpus/, which
test_fuzz_corpus.py replays in the quick tier: commit it with the fix."""

from __future__ import annotations

import os

import pytest

from fuzz.coverage import Fuzzer

SECONDS = float(os.environ.get("TENSORLANG_FUZZ_SECONDS", "60"))


@pytest.mark.slow
def test_the_front_ends_survive_a_minute_of_coverage_guided_fuzzing(monkeypatch_budget):
    fuzzer = Fuzzer(seed=int(os.environ.get("TENSORLANG_FUZZ_SEED", "0")))
    fuzzer.fuzz(SECONDS)
    assert fuzzer.runs > 50, f"only {fuzzer.runs} inputs in {SECONDS} s"
    assert len(fuzzer.seen) > 1000  # lines of tensorlang reached: the tracer works
    saved = fuzzer.save_findings()
    assert not fuzzer.findings, "\n".join(f"{p.name}: {f.problem}" for p, f in zip(saved, fuzzer.findings))
