"""Every input the fuzzers once found failing (tests/fuzz/corpus/, named
``<lang>-<sha1>.<suffix>``) is replayed: a result or a clean TensorLangError now."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.coverage import CORPUS, SUFFIX, check_invariant

LANGS = {suffix: lang for lang, suffix in SUFFIX.items()}
FILES = sorted(p for p in CORPUS.glob("*") if p.suffix in LANGS) if CORPUS.exists() else []


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_found_input_is_handled_cleanly(path: Path, monkeypatch_budget):
    text = path.read_text(encoding="utf-8", errors="surrogatepass")
    assert check_invariant(LANGS[path.suffix], text) is None


def test_the_corpus_is_not_empty():
    assert FILES, "tests/fuzz/corpus/ holds the inputs the fuzzers found"
