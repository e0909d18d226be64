"""What a front end is: one :class:`Language` value, the only thing that knows it; outside
``lang/`` a program is handled through its Language alone (docs/architecture.md, "The packages")."""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from ..ein import ir
from ..semantics.types import CheckedProgram

#: The folder of the program file being checked (None: a text without a file), where a front
#: end that reads the files its program names when it checks it (Diderot's image("file.nrrd")
#: headers) looks for them first, as the run does.  Set by :func:`checking`.
PROGRAM_FOLDER: ContextVar[str | None] = ContextVar("PROGRAM_FOLDER", default=None)


@contextmanager
def checking(filename: str) -> Iterator[None]:
    """:data:`PROGRAM_FOLDER` the folder of file ``filename`` (None for ``<stdin>``, ``<string>``)."""
    token = PROGRAM_FOLDER.set(None if filename.startswith("<") else os.path.dirname(os.path.abspath(filename)))
    try:
        yield
    finally:
        PROGRAM_FOLDER.reset(token)


#: ``params``: symbolic sizes (name -> positive int, ``--param n=5``) for the front ends
#: that have them; the others ignore them.
Params = Mapping[str, int]


@dataclass(frozen=True)
class Language:
    """A front end; docs/architecture.md, "The packages" (``lang/``), says what each field does."""

    name: str
    suffixes: tuple[str, ...]
    parse: Callable[[str, Params], Any]
    check: Callable[[Any], CheckedProgram]
    lower: Callable[[CheckedProgram], ir.Program]
    interpret: Callable[[CheckedProgram, Mapping[str, np.ndarray], Any], dict[str, np.ndarray]]
    print: Callable[[Any], str]
    core_check: Callable[[Any], None] | None = field(default=None)
    description: str = ""
    binds_params: bool = False
    check_structure: Callable[[CheckedProgram, Mapping[str, np.ndarray]], None] | None = field(default=None)
    keep_structure: Callable[[CheckedProgram, str, np.ndarray], np.ndarray] | None = field(default=None)
    strands: Callable[..., Any] | None = field(default=None)
