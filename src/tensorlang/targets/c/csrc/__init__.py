"""The fixed C of the C back end and the field probes, kept as C files (package data).
:func:`text` reads one as a generated source takes it: its ``//`` notes dropped, each
``TL_FILL_<NAME>`` filled (docs/c-backend.md, "The C files")."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

PLACEHOLDER = re.compile(r"TL_FILL_([A-Z0-9]+)")


@lru_cache(maxsize=None)
def raw(name: str) -> str:
    """The file ``name`` of this folder without its ``//`` notes, placeholders kept."""
    lines = resources.files(__package__).joinpath(name).read_text(encoding="utf-8").splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("//"):
        start += 1
    return "".join(lines[start:])


def placeholders(name: str) -> set[str]:
    """The placeholders of file ``name`` (lower case, as :func:`text` takes them)."""
    return {m.group(1).lower() for m in PLACEHOLDER.finditer(raw(name))}


def text(name: str, **fill: object) -> str:
    """File ``name`` with its placeholders filled in from ``fill`` (each one given, each
    value used: a mismatch is a bug, raised as KeyError)."""
    wanted = placeholders(name)
    if wanted != set(fill):
        raise KeyError(f"{name}: placeholders {sorted(wanted)}, given {sorted(fill)}")
    return PLACEHOLDER.sub(lambda m: str(fill[m.group(1).lower()]), raw(name))


def names() -> list[str]:
    """Every C file of this folder."""
    return sorted(p.name for p in resources.files(__package__).iterdir() if p.name.endswith((".c", ".h")))
