"""What a front end is: one :class:`Language` value, the only thing that knows it.

Everything outside ``lang/`` handles programs through a Language and never asks which
front end a program came from: the registry (:mod:`tensorlang.lang`) finds the Language
for a suffix or a name, and the Language parses, checks, lowers to EIN, interprets by
its own paper's rules and prints.
"""

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
    """A front end.

    * ``parse(text, params)``: the program's AST (spans into ``text``), or error[syntax];
    * ``check(ast)``: the paper's typing rules, by name: a :class:`CheckedProgram`;
    * ``lower(checked)``: the EIN program every pass and target runs;
    * ``interpret(checked, supplied, dtype)``: the reference semantics (the oracle),
      returning the final store;
    * ``print(ast)``: the program as parsed (``--emit ast``);
    * ``core_check(ast)``: an extra check the language offers (``--core``), or None.
    """

    name: str
    suffixes: tuple[str, ...]
    parse: Callable[[str, Params], Any]
    check: Callable[[Any], CheckedProgram]
    lower: Callable[[CheckedProgram], ir.Program]
    interpret: Callable[[CheckedProgram, Mapping[str, np.ndarray], Any], dict[str, np.ndarray]]
    print: Callable[[Any], str]
    core_check: Callable[[Any], None] | None = field(default=None)
    description: str = ""
    #: the front end binds ``params`` itself in ``parse`` (its sizes are expressions
    #: over symbols, such as STUR's ``M + N - 1``), instead of the registry's
    #: :func:`~tensorlang.semantics.sizes.bind` on its declarations
    binds_params: bool = False
    #: ``check_structure(checked, supplied)``: error[structure] at the first input entry
    #: that breaks the structure the program promises for it (``--check-structure``)
    check_structure: Callable[[CheckedProgram, Mapping[str, np.ndarray]], None] | None = field(default=None)
    #: ``keep_structure(checked, name, value)``: ``value`` made to keep the structure the
    #: program promises for input ``name`` (zero outside its unique set, copies where its
    #: redundancy says; ``--random-inputs``), ``value`` itself where it promises nothing
    keep_structure: Callable[[CheckedProgram, str, np.ndarray], np.ndarray] | None = field(default=None)
    #: ``strands(checked, base_dir)``: the front end's programs are strand programs
    #: (Diderot): they run as a :class:`~tensorlang.lang.diderot.program.StrandProgram`
    #: instead of being lowered to one kernel (``lower`` says so with an error)
    strands: Callable[..., Any] | None = field(default=None)
