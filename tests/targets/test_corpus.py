"""Every program of the shared corpus (tests/corpus.py) on every back end, optimized and
as lowered, against its numpy reference; and ⊥ (NaN) inputs give ⊥ exactly where the
reference interpreter gives ⊥."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl

from corpus import CORPUS

BACKENDS = tl.available_backends()
RTOL = ATOL = 1e-11


def test_the_corpus_has_every_family():
    tags = set().union(*(case.tags for case in CORPUS.values()))
    assert {"paper", "cfd", "inplace", "chain"} <= tags
    assert len(CORPUS) >= 30


#: Each back end optimized and as lowered; the interpreter never optimizes, so once.
RUNS = [(b, opt) for b in BACKENDS for opt in (True, False) if b != "interp" or opt]


#: C as lowered (a second C build of every program) runs in the full run only
RUN_PARAMS = [pytest.param(b, o, id=f"{b}-{'opt' if o else 'lowered'}", marks=[pytest.mark.slow] if (b, o) == ("c", False) else [])
              for b, o in RUNS]


@pytest.mark.parametrize("backend,opt", RUN_PARAMS)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_program_matches_its_reference(name, backend, opt):
    case = CORPUS[name]
    inputs = case.draw(seed=sorted(CORPUS).index(name))
    snapshot = {k: np.copy(v) for k, v in inputs.items()}
    got = case.compile(backend=backend, opt=opt)(**inputs)
    for result, want in case.expected(snapshot).items():
        np.testing.assert_allclose(got[result], np.asarray(want), rtol=RTOL, atol=ATOL, err_msg=f"{name}: {result}")
    for k, v in inputs.items():  # the caller's arrays are never written
        np.testing.assert_array_equal(np.asarray(v), snapshot[k], err_msg=k)


def _with_nans(inputs: dict, rng: np.random.Generator) -> dict:
    """The inputs with about one value in eight (at least one per array) made ⊥."""
    out = {}
    for name, value in inputs.items():
        a = np.array(value, dtype=np.float64)
        if a.ndim:
            mask = rng.random(a.shape) < 0.125
            mask.flat[rng.integers(a.size)] = True
            a[mask] = np.nan
        out[name] = a
    return out


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "interp"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bottom_propagates_as_in_the_reference_interpreter(name, backend):
    case = CORPUS[name]
    rng = np.random.default_rng(sorted(CORPUS).index(name) + 1000)
    inputs = _with_nans(case.draw(seed=3), rng)
    want = case.compile(backend="interp")(**inputs)
    got = case.compile(backend=backend)(**inputs)
    for result, value in want.items():
        np.testing.assert_array_equal(np.isnan(got[result]), np.isnan(value), err_msg=f"{name}: {result}")
        finite = ~np.isnan(value)
        np.testing.assert_allclose(got[result][finite], value[finite], rtol=RTOL, atol=ATOL)
