"""Diderot's public examples through tensorlang, against the real compiler's outputs.

Skipped unless TENSORLANG_DIDEROT_REF names a reference directory made with the real
compiler (/work/diderot-ref on the development machine: one folder per example with a
runs.json; benchmarks/diderot/examples.py documents it).  TENSORLANG_DIDEROT_EXAMPLES may
name a checkout of Diderot-Language/examples, whose programs are then run unchanged.
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REF = os.environ.get("TENSORLANG_DIDEROT_REF")
EXAMPLES = os.environ.get("TENSORLANG_DIDEROT_EXAMPLES")
SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "diderot" / "examples.py"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not REF or not Path(REF).is_dir(),
                                 reason="TENSORLANG_DIDEROT_REF does not name a Diderot reference directory")]


def _script():
    if "diderot_examples" in sys.modules:
        return sys.modules["diderot_examples"]
    spec = importlib.util.spec_from_file_location("diderot_examples", SCRIPT)
    module = sys.modules["diderot_examples"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases():
    if not REF or not Path(REF).is_dir():
        return []
    ex = _script()
    return [pytest.param(name, run, id=f"{name}/{run['name']}")
            for name in ex.examples_in(Path(REF)) for run in ex.load_runs(Path(REF), name)
            if (run.get("outputs") or run.get("snapshots")) and run["name"] not in ex.NOT_COMPARED]


@pytest.mark.parametrize("example,run", _cases())
def test_example_matches_diderot(example, run):
    ex = _script()
    outcome = ex.run_one(Path(REF), Path(EXAMPLES) if EXAMPLES else None, example, run, timeout=900)
    if outcome.status == "not run":
        pytest.skip(outcome.detail)
    assert outcome.status == "same", f"{example}/{run['name']}: {outcome.status}: {outcome.detail}"
