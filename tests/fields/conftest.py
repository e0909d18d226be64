"""The field tests run the numpy reference probes (no C compile per kernel and order);
test_cprobe.py compares the generated C with them, and switches C on where it tests it."""

import pytest

from tensorlang.fields import run


@pytest.fixture(autouse=True)
def numpy_probes(monkeypatch):
    monkeypatch.setattr(run, "USE_C", False)
