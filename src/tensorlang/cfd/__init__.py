"""The CFDlang dialect (``.cfd`` files): the public CFDlang compiler's way of writing the
model language, read into the model language's AST (see docs/cfdlang.md)."""

from .parser import KEYWORDS, parse_cfd  # noqa: F401
from .printer import to_cfd_source  # noqa: F401
