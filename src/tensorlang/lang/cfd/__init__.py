"""The CFDlang dialect (``.cfd`` files): the public CFDlang compiler's way of writing the
model language, read into the model language's AST (see docs/cfdlang.md).  Everything
after parsing is the model language's, with dimensions numbered from 0 in messages."""

from __future__ import annotations

import functools

from ..language import Language
from ..tl import LANGUAGE as MODEL_LANGUAGE
from ..tl.typecheck import check_program
from .parser import KEYWORDS, parse_cfd  # noqa: F401
from .printer import to_cfd_source  # noqa: F401


LANGUAGE = Language(
    name="cfd",
    suffixes=(".cfd",),
    parse=parse_cfd,  # symbolic sizes stay symbols; the registry binds params
    check=functools.partial(check_program, first_dimension=0),
    lower=MODEL_LANGUAGE.lower,
    interpret=MODEL_LANGUAGE.interpret,
    print=MODEL_LANGUAGE.print,
    description="the CFDlang dialect of the model language",
)
