"""StructTensor's own example programs (github.com/edin-dal/structtensor, examples/*.stur)
are accepted unchanged: each parses and checks with and without values for its symbols,
runs on the reference interpreter, and, where the compiled targets can lower it, the
NumPy target agrees with the reference.

The examples are not part of this repository (StructTensor's repository states no
licence, so its files are not redistributed here).  Point ``STRUCTTENSOR_EXAMPLES`` at a
checkout's ``examples/`` folder to run these tests; without it they are skipped (no test
needs the network).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import lang
from tensorlang.errors import TensorLangError

_FOLDER = os.environ.get("STRUCTTENSOR_EXAMPLES", "")
_FILES = sorted(Path(_FOLDER).glob("*.stur")) if _FOLDER and Path(_FOLDER).is_dir() else []

pytestmark = pytest.mark.skipif(not _FILES, reason="set STRUCTTENSOR_EXAMPLES to StructTensor's examples/ folder")


def _params(checked):
    """Small sizes; a fixed-slice symbol (I, J: a position) gets a value inside them."""
    return {s: (2 if s in ("I", "J") else 4 + n) for n, s in enumerate(checked.program.ast.symbols)}


def test_all_61_examples_are_there():
    assert len(_FILES) == 61


@pytest.mark.parametrize("path", _FILES, ids=[p.name for p in _FILES])
def test_example_runs_and_compiled_agrees(path):
    checked = tl.check(path)
    params = _params(checked)
    checked = tl.check(path, params=params)
    rng = np.random.default_rng(len(path.name))
    inputs = {n: rng.standard_normal(checked.context.shapes[n]) for n in checked.inputs}
    reference = lang.get("stur").interpret(checked, inputs, np.float64)
    for backend in [b for b in ("numpy", "c") if b in tl.available_backends()]:
        try:
            kernel = tl.compile(path, params=params, backend=backend)
        except TensorLangError as exc:
            assert exc.code == "backend", str(exc)
            kernel = tl.compile(path, params=params, backend="interp")
        got = kernel(**_keeping(kernel, inputs))
        assert set(got) == set(checked.results)
        expected = lang.get("stur").interpret(checked, _keeping(kernel, inputs), np.float64)
        for name, value in got.items():
            if backend == "c":  # promised zeros annihilate there: 0 · (1/0) is 0, not ⊥ (docs/structure.md)
                finite = np.isfinite(expected[name])
                assert np.allclose(value[finite], expected[name][finite]), (backend, name)
            else:
                assert np.allclose(value, expected[name], equal_nan=True), (backend, name)
    del reference


def _keeping(kernel, inputs):
    """The inputs made to keep the structure the program promises for them (the C
    target computes on unique sets)."""
    kept = dict(inputs)
    ein = getattr(kernel, "_ein", None)
    for decl in (ein.decls if ein is not None else ()):
        if decl.structure is not None and decl.name in kept:
            value = kept[decl.name]
            if decl.structure.symmetric:
                value = value.copy()
                for index in np.ndindex(value.shape):
                    value[index] = kept[decl.name][tuple(sorted(index))]
            else:
                value = np.where(decl.structure.unique_mask(value.shape), value, 0.0)
            kept[decl.name] = value
    return kept


def test_all_61_compile_to_the_numpy_target():
    """Every example lowers (the three ``_DataLayout`` ones with a packed triangular
    index by unrolling over its row, docs/structure.md step 6)."""
    refused = []
    for path in _FILES:
        checked = tl.check(path)
        try:
            tl.compile(path, params=_params(checked), backend="numpy")
        except TensorLangError as exc:
            assert exc.code == "backend", str(exc)
            refused.append(path.name)
    assert refused == []
