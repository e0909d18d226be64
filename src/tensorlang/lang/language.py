"""What a front end is: one :class:`Language` value, the only thing that knows it; outside
``lang/`` a program is handled through its Language alone (docs/architecture.md, "The packages")."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..ein import ir
from ..semantics.types import CheckedProgram

def folder_of(filename: str) -> str | None:
    """The folder of program file ``filename`` (None for a text without a file: ``<stdin>``,
    ``<string>``), where the files its program names are looked for first, as checked and as run."""
    return None if filename.startswith("<") else os.path.dirname(os.path.abspath(filename))


def file_path(path: str, folder: str | None) -> str:
    """A program's file ``path``: in the program's ``folder`` where it is there (or nowhere), else as given."""
    if folder and path and not os.path.isabs(path):  # ("" stays "": no file, not the folder)
        candidate = os.path.join(folder, path)
        if os.path.exists(candidate) or not os.path.exists(path):
            return candidate
    return path


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
    check_in: Callable[[Any, str | None], CheckedProgram] | None = field(default=None)

    def check_from(self, program, folder: str | None) -> CheckedProgram:
        """``program`` type-checked: by ``check_in(program, folder)`` where the front end reads files
        its program names (Diderot's ``image("f.nrrd")``), looked for in ``folder`` first (the
        program file's, :func:`folder_of`; None: a text without a file); else by ``check``."""
        return self.check(program) if self.check_in is None else self.check_in(program, folder)
