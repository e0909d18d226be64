"""An einsum call as a program of the model language's index form (SPEC section 3).

``ij,jk->ik`` over a [2 3] and a [3 4] operand is::

    in var T0 : [2 3]
    in var T1 : [3 4]
    out var Res : [2 4]
    Res[i,k] = sum(j) T0[i,j] * T1[j,k]

so that type checking, lowering to EIN, the optimizer and every target are the model
language's own: an einsum is 004's EIN statement written in numpy's notation.  A
letter is its own index name; a broadcast dimension ``...`` gets ``z0``, ``z1``, ...
(two characters, so it can never meet a letter); a dimension of size 1 that broadcasts
is read at its one position (``T0[i,1]``); a repeated letter is a diagonal
(``T0[i,i]``), which the index form has.

The einsum front end's own text (``--emit ast``, ``.einsum`` files) is the subscripts
and the operands' shapes: ``ij,jk->ik : [2 3] [3 4]``.
"""

from __future__ import annotations

import re

from ...errors import error
from .subscripts import Spec, parse

#: The operands' and the result's variable names (multi-letter: never an index letter).
OPERAND = "T{}"
RESULT = "Res"


def index_name(label: str) -> str:
    """A label's index name in the model language: the letter, or ``zD`` for ``..D``."""
    return f"z{label[2:]}" if label.startswith("..") else label


def _shape(shape) -> str:
    return "[" + " ".join(str(n) for n in shape) + "]"


def to_model_source(spec: Spec) -> str:
    """The model-language program that computes ``spec``'s einsum."""
    lines = [f"in var {OPERAND.format(k)} : {_shape(shape)}" for k, shape in enumerate(spec.shapes)]
    lines.append(f"out var {RESULT} : {_shape(spec.result_shape)}")
    factors = []
    for k, term in enumerate(spec.terms):
        if not term:
            factors.append(OPERAND.format(k))
            continue
        indices = ["1" if spec.broadcast(k, d) else index_name(label) for d, label in enumerate(term)]
        factors.append(f"{OPERAND.format(k)}[{','.join(indices)}]")
    # a summed label that every operand broadcasts (size 1 where another label sizes it
    # larger) cannot occur: a label's extent is the largest size it has somewhere
    summed = [index_name(label) for label in spec.summed]
    right = " * ".join(factors)
    if summed:
        right = f"sum({', '.join(summed)}) {right}"
    left = f"{RESULT}[{','.join(index_name(label) for label in spec.output)}]"
    lines.append(f"{left} = {right}")
    return "\n".join(lines) + "\n"


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
    shapes = tuple(tuple(int(n) for n in s.split()) for s in re.findall(r"\[([\s\d]*)\]", rest))
    for shape in shapes:
        if 0 in shape:
            raise error("shape", "an einsum program's operands need positive extents (an empty operand "
                        "is numpy's business: tl.einsum hands it to numpy.einsum)")
    return parse(subscripts.strip(), shapes)


def to_text(spec: Spec) -> str:
    """The einsum front end's text for ``spec`` (explicit subscripts)."""
    return f"{spec.subscripts()} : {' '.join(_shape(s) for s in spec.shapes)}\n"
