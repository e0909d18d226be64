"""The fixed C of the C back end and the field probes, kept as C files (package data).

Each ``.c``/``.h`` file here is a piece of a generated source: the C printer's head and
thread runtime (:mod:`..codegen`), the CPython caller (:mod:`..callext`), the Gram
kernels' packing and drivers (:mod:`..gram`), the threshold probes (:mod:`..threshold`)
and the probe kernels' fixed parts (:mod:`tensorlang.fields.cprobe`).  What varies per
shape stays in Python: the generated prefix defines it as C macros (``#define M 13L``),
or Python prints the function (a tile, a probe's sums).

:func:`text` reads a file as the generated source takes it:

* the lines at its head that start with ``//`` are the file's own notes (what it is,
  who reads it) and are left out;
* each *placeholder* ``TL_FILL_<NAME>`` (NAME: capitals and digits) is replaced by the
  value given for ``name`` (lower case).  A placeholder is for a value the generated C
  must spell out as before (a policy constant, a dtype's intrinsic): the sources stay
  byte for byte what the Python strings printed, so the build cache and the measured
  speed carry over.  Every placeholder must be given a value and every value used.

tests/targets/test_c_csrc.py compiles every file on its own (``cc -fsyntax-only``, with
its placeholders defined as macros).
"""

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
