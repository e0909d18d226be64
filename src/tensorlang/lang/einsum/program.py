"""The einsum front end's own text (``.einsum`` files): the subscripts and the operands'
shapes, ``ij,jk->ik : [2 3] [3 4]``, read into a Spec and written from one.  (The
program a Spec computes is built by :mod:`.lower`.)
"""

from __future__ import annotations

import re

from ...errors import error
from .subscripts import Spec, parse

_TEXT = re.compile(r"^\s*(?P<subscripts>[^:]*?)\s*:\s*(?P<shapes>(\[[\s\d]*\]\s*)*)$")


def parse_text(text: str) -> Spec:
    """``ij,jk->ik : [2 3] [3 4]``: the einsum front end's text form."""
    match = _TEXT.match(text.strip())
    if match is None:
        raise error("syntax", "an einsum program is its subscripts, ':' and the operands' shapes, "
                    "e.g. 'ij,jk->ik : [2 3] [3 4]'")
    shapes = tuple(tuple(int(n) for n in s.split()) for s in re.findall(r"\[([\s\d]*)\]", match["shapes"]))
    for shape in shapes:
        if 0 in shape:
            raise error("shape", "an einsum program's operands need positive extents (an empty operand "
                        "is numpy's business: tl.einsum hands it to numpy.einsum)")
    return parse(match["subscripts"], shapes)


def to_text(spec: Spec) -> str:
    """The einsum front end's text for ``spec`` (explicit subscripts)."""
    return f"{spec.subscripts()} : {' '.join(_shape(s) for s in spec.shapes)}\n"


def _shape(shape) -> str:
    return "[" + " ".join(str(n) for n in shape) + "]"
