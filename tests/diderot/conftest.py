"""The two-thread runs of these tests take two threads whatever the machine's load (the
strand driver otherwise takes only the idle cores, and one thread where that measured faster)."""

import pytest

from tensorlang.targets.c import strands as CS


@pytest.fixture(autouse=True)
def _fixed_team(monkeypatch):
    monkeypatch.setattr(CS, "FIXED_TEAM", True)
