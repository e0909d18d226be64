"""The einsum front end's own text (``.einsum`` files, docs/einsum.md): ``ij,jk->ik : [2 3] [3 4]``."""

from __future__ import annotations

import re

from ... import limits
from ...errors import error
from ...semantics.interface import show
from .subscripts import Spec, parse

#: The shapes after the ':' (anchored at both ends and unambiguous: linear in the text,
#: where the one pattern for the whole text backtracked quadratically over blanks).
_SHAPES = re.compile(r"(?:\[[\s\d]*\]\s*)*")


def parse_text(text: str) -> Spec:
    """``ij,jk->ik : [2 3] [3 4]``: the einsum front end's text form."""
    subscripts, colon, rest = text.strip().partition(":")
    rest = rest.lstrip()
    if not colon or _SHAPES.fullmatch(rest) is None:
        raise error("syntax", "an einsum program is its subscripts, ':' and the operands' shapes, "
                    "e.g. 'ij,jk->ik : [2 3] [3 4]'")
    # each operand is a declaration of the program: counted before any is read
    limits.check_statements(max(rest.count("["), subscripts.count(",") + 1), what="operands (declarations)")
    if re.search(r"\d{101}", rest):  # as the languages' integers (int() refuses 4 300 digits)
        raise error("too-large", "an einsum program's extents have at most 100 digits")
    shapes = tuple(tuple(int(n) for n in s.split()) for s in re.findall(r"\[([\s\d]*)\]", rest))
    for shape in shapes:
        if 0 in shape:
            raise error("shape", "an einsum program's operands need positive extents (an empty operand "
                        "is numpy's business: tl.einsum hands it to numpy.einsum)")
    return parse(subscripts.strip(), shapes)


def to_text(spec: Spec) -> str:
    """The einsum front end's text for ``spec`` (explicit subscripts)."""
    return f"{spec.subscripts()} : {' '.join(show(s) for s in spec.shapes)}\n"
