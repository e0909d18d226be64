"""TeIL, the type-safe imperative tensor intermediate language of paper 001.

``parser`` reads ``.teil`` text (SPEC section 2), ``typecheck`` applies 001 Figure 8's
rules by name, ``semantics`` transcribes Figure 6 (the reference interpreter for TeIL),
``lower`` turns a program into the same EIN program every back end runs, ``convert``
translates to and from the model language, and ``core`` checks and produces Core-TeIL
(001 section 4).  See docs/teil.md.
"""

from .parser import parse_teil  # noqa: F401
