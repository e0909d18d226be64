"""The hostile-input corpus (issue 16): minimal programs from the issue and from the
fuzzers, one file each under ``cases/`` (the first line says why it is there).

Every case goes through check, compile and run on every available target, optimized and
not, as fuzz.oracle.assert_targets_agree does: a TensorLangError that is not
``internal``, or results that agree with the interpreter on inputs with ⊥, ±inf and ±0
(inputs drawn with ±0, ±1, ±inf and NaN among uniform values).  Nothing may hang (fuzz.oracle.no_hang)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tensorlang as tl

from fuzz import oracle
from tensorlang.lang import SUFFIXES

#: The cases refused, with their codes; every other case must check and run.
REFUSED = {
    "cfd_size_5000_digits.cfd": "too-large", "delta_position_2_64.tl": "too-large",
    "extent_5000_digits.tl": "too-large", "position_5000_digits.tl": "too-large",
    "teil_argument_5000_digits.teil": "too-large", "rank_65.tl": "too-large",
    "nul_in_text.tl": "syntax", "parens_201_deep.tl": "syntax", "teil_add_1000_deep.teil": "syntax",
    "unicode_names.tl": "syntax", "zero_extent.tl": "shape",
}

CASES = sorted(p for p in (Path(__file__).parent / "cases").iterdir() if p.suffix in SUFFIXES)


def test_the_corpus_is_there():
    assert len(CASES) >= 30 and set(REFUSED) <= {p.name for p in CASES}
    assert {p.suffix for p in CASES} >= {".tl", ".teil", ".cfd"}


@pytest.mark.slow
@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_a_hostile_program_is_refused_cleanly_or_runs_alike_everywhere(path, monkeypatch_budget):
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    lang = SUFFIXES[path.suffix]
    if path.name in REFUSED:
        with pytest.raises(tl.TensorLangError) as caught:
            tl.check(text, lang=lang)
        assert caught.value.code == REFUSED[path.name], caught.value.render()
    else:
        tl.check(text, lang=lang)
    with oracle.no_hang(path.name):
        oracle.assert_targets_agree(text, lang, seed=0, mode="edges", max_elements=300_000)
