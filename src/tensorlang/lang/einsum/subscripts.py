"""numpy.einsum's subscripts, read against the operands' shapes into a :class:`Spec` by numpy's rules
(docs/einsum.md, "What is compiled"); a violation is :class:`EinsumError`, a ValueError and error[input]."""

from __future__ import annotations

import math
import os
import string
from dataclasses import dataclass
from functools import partialmethod
from pathlib import Path

import numpy as np

from ...errors import TensorLangError
from ...semantics.types import MAX_ELEMENTS, MAX_RANK

LETTERS = frozenset(string.ascii_letters)


class EinsumError(TensorLangError, ValueError):
    """Invalid subscripts or operands for einsum: a ValueError as numpy raises, with
    tensorlang's code (``input``) and a message that says where."""

    __init__ = partialmethod(TensorLangError.__init__, "input")  # (message)


class EinsumTypeError(TensorLangError, TypeError):
    """A subscript of the wrong type (a float, a bool, a string in a sublist): a
    TypeError as numpy raises, with tensorlang's code (``input``)."""

    __init__ = partialmethod(TensorLangError.__init__, "input")  # (message)


class EinsumKeyError(TensorLangError, KeyError):
    """numpy's KeyError (an ``optimize=`` name it does not know), with tensorlang's code."""

    __init__ = partialmethod(TensorLangError.__init__, "input")  # (message)
    __str__ = TensorLangError.__str__  # (KeyError's would quote the message)


class EinsumIndexError(TensorLangError, IndexError):
    """numpy's IndexError (a path naming an operand that is not there), with tensorlang's code."""

    __init__ = partialmethod(TensorLangError.__init__, "input")  # (message)


class EinsumRuntimeError(TensorLangError, RuntimeError):
    """numpy's RuntimeError (a path that leaves operands uncontracted), with tensorlang's code."""

    __init__ = partialmethod(TensorLangError.__init__, "input")  # (message)


#: where numpy's and tensorlang's Python code lies: an exception raised in other Python code is the user's
_LIBRARIES = (os.path.dirname(np.__file__), str(Path(__file__).parents[2]))


class EinsumTooLargeError(TensorLangError, ValueError):
    """error[too-large]: a call whose shapes no machine can index; a ValueError, as numpy's
    "iterator is too large"."""

    __init__ = partialmethod(TensorLangError.__init__, "too-large")  # (message)


def numpy_refusal(exc: Exception, operands: tuple = ()) -> Exception:
    """numpy.einsum's (or einsum_path's) refusal of a call as tensorlang's error of the same
    type, numpy's message kept; ``exc`` itself where numpy did not raise it or it is no
    refusal: a class of the user's, an object array's element's, or raised in Python code
    outside numpy (a user's ``__array__``)."""
    module = type(exc).__module__
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    where = frame.tb_frame.f_code.co_filename if frame is not None else ""
    if isinstance(exc, TensorLangError) or not (module == "builtins" or module.startswith("numpy")) \
            or any(getattr(getattr(op, "dtype", None), "kind", "") == "O" for op in operands) \
            or (where != "" and not where.startswith(_LIBRARIES)):
        return exc
    text = str(exc)
    if isinstance(exc, KeyError):  # (str would quote the message)
        args = exc.args
        text = args[0] % args[1:] if len(args) > 1 and isinstance(args[0], str) and args[0].count("%s") == len(args) - 1 \
            else " ".join(map(str, args)) if args else type(exc).__name__
    if isinstance(exc, UnicodeEncodeError) and isinstance(exc.object, str):  # numpy's ascii codec read the subscripts
        return EinsumError(f"einsum: the subscripts have the character {exc.object[exc.start]!r}; subscripts are "
                           "letters a-z and A-Z, with ',' between operands, '->' before the output and '...'")
    if isinstance(exc, ValueError) and ("too large" in text or "too big" in text):
        return EinsumTooLargeError(f"einsum: {text} (numpy.einsum's check)")
    for base, ours in ((ValueError, EinsumError), (TypeError, EinsumTypeError), (KeyError, EinsumKeyError),
                       (IndexError, EinsumIndexError), (RuntimeError, EinsumRuntimeError)):
        if isinstance(exc, base):
            return ours(f"einsum: {text or type(exc).__name__} (numpy.einsum's check)")
    return exc


@dataclass(frozen=True)
class Spec:
    """One einsum call, resolved against its operands' shapes.

    ``terms[k]`` are operand k's labels, one per dimension, in order: a letter, or
    ``"..0"``, ``"..1"``, ... for a broadcast dimension (numbered from the left of the
    broadcast shape, so that right-aligned dimensions share a label).  ``output`` is the
    result's labels, ``sizes`` each label's extent, ``shapes`` the operands' shapes.  A
    dimension of size 1 whose label is larger elsewhere broadcasts (``broadcast(k, d)``).
    """

    terms: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]
    sizes: tuple[tuple[str, int], ...]
    shapes: tuple[tuple[int, ...], ...]

    @property
    def extent(self) -> dict[str, int]:
        return dict(self.sizes)

    @property
    def summed(self) -> tuple[str, ...]:
        """The labels that are summed over (in no output), in order of first use."""
        seen: list[str] = []
        for term in self.terms:
            for label in term:
                if label not in self.output and label not in seen:
                    seen.append(label)
        return tuple(seen)

    @property
    def result_shape(self) -> tuple[int, ...]:
        extent = self.extent
        return tuple(extent[label] for label in self.output)

    def broadcast(self, k: int, d: int) -> bool:
        """Whether operand k's dimension d has size 1 and broadcasts to a larger extent."""
        return self.shapes[k][d] == 1 and self.extent[self.terms[k][d]] != 1

    def subscripts(self) -> str:
        """The normalized subscripts, explicit form (broadcast labels as ``...``)."""
        def show(term):
            out, dots = [], False
            for label in term:
                if label.startswith(".."):
                    if not dots:
                        out.append("...")
                        dots = True
                else:
                    out.append(label)
            return "".join(out)
        return ",".join(show(t) for t in self.terms) + "->" + show(self.output)


def _split_term(term: str, where: str) -> tuple[list[str], bool, int]:
    """A term's letters, whether it has an ellipsis, and where the ellipsis stands."""
    labels: list[str] = []
    dots = term.count(".")
    if dots:
        if dots != 3 or "..." not in term:
            raise EinsumError(f"einsum: {where} {term!r} has a '.' that is not part of one ellipsis '...'")
        at = term.index("...")
        before, after = term[:at], term[at + 3:]
    else:
        at, before, after = -1, term, ""
    for part in (before, after):
        for ch in part:
            if ch not in LETTERS:
                raise EinsumError(f"einsum: {where} {term!r} has the character {ch!r}; subscripts are letters "
                                  "a-z and A-Z, with ',' between operands, '->' before the output and '...'")
    labels = list(before) + list(after)
    return labels, dots > 0, len(before)


def parse(subscripts: str, shapes: tuple[tuple[int, ...], ...]) -> Spec:
    """The :class:`Spec` of ``einsum(subscripts, *operands)`` for operands of ``shapes``."""
    if not isinstance(subscripts, str):
        raise EinsumError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    text = subscripts.replace(" ", "")
    if text.count("->") > 1 or text.replace("->", "").count("-") or text.replace("->", "").count(">"):
        raise EinsumError(f"einsum: subscripts {subscripts!r} must have at most one '->' and no other '-' or '>'")
    explicit = "->" in text
    inputs, _, output_text = text.partition("->")
    terms_text = inputs.split(",")
    if len(terms_text) != len(shapes):
        raise EinsumError(f"einsum: subscripts {subscripts!r} name {len(terms_text)} operand(s) "
                          f"but {len(shapes)} were given")
    # each term's letters and its ellipsis' dimensions
    parsed = []
    width = 0  # the broadcast dimensions: the most any ellipsis covers
    for k, (term, shape) in enumerate(zip(terms_text, shapes)):
        labels, dots, at = _split_term(term, f"operand {k}'s term")
        if (len(labels) > len(shape)) or (not dots and len(labels) != len(shape)):
            raise EinsumError(
                f"einsum: operand {k} has {len(shape)} dimension(s) (shape {tuple(shape)}) but its term {term!r} "
                f"names {len(labels)}" + ("" if dots else "; write '...' to cover the others"))
        parsed.append((labels, dots, at))
        if dots:
            width = max(width, len(shape) - len(labels))
    # per operand, its labels per dimension
    terms: list[tuple[str, ...]] = []
    for (labels, dots, at), shape in zip(parsed, shapes):
        if dots:
            covered = len(shape) - len(labels)
            middle = [f"..{width - covered + d}" for d in range(covered)]
            terms.append(tuple(labels[:at] + middle + labels[at:]))
        else:
            terms.append(tuple(labels))
    sizes: dict[str, int] = {}
    for k, (labels_k, shape) in enumerate(zip(terms, shapes)):
        own: dict[str, int] = {}
        for label, size in zip(labels_k, shape):
            if label in own and own[label] != size:
                raise EinsumError(f"einsum: operand {k} repeats {label!r} (a diagonal) over dimensions of "
                                  f"different sizes {own[label]} and {size}")
            own[label] = size
        for label, size in own.items():
            known = sizes.get(label)
            if known is None or known == 1:
                sizes[label] = size
            elif size != 1 and size != known:
                name = "a broadcast dimension ('...')" if label.startswith("..") else f"{label!r}"
                raise EinsumError(f"einsum: {name} has size {known} in an earlier operand but {size} in operand {k} "
                                  f"(shapes {[tuple(s) for s in shapes]}); sizes must agree or be 1")
    broadcast = tuple(f"..{d}" for d in range(width))
    if explicit:
        out_labels, dots, at = _split_term(output_text, "the output")
        seen = set()
        for label in out_labels:
            if label in seen:
                raise EinsumError(f"einsum: the output {output_text!r} names {label!r} twice")
            seen.add(label)
            if label not in sizes:
                raise EinsumError(f"einsum: the output names {label!r}, which no operand's term has")
        if width and not dots:
            raise EinsumError(f"einsum: the operands have {width} broadcast dimension(s) ('...') but the output "
                              f"{output_text!r} has no '...' to put them")
        output = tuple(out_labels[:at]) + broadcast + tuple(out_labels[at:]) if dots else tuple(out_labels)
    else:
        counts: dict[str, int] = {}
        for labels_k in terms:
            for label in labels_k:
                if not label.startswith(".."):
                    counts[label] = counts.get(label, 0) + 1
        output = broadcast + tuple(sorted(label for label, n in counts.items() if n == 1))
    for shape in (*shapes, tuple(sizes[label] for label in output)):  # as the checker's declarations
        if len(shape) > MAX_RANK:
            raise EinsumTooLargeError(f"einsum: a shape of {len(shape)} dimensions; at most {MAX_RANK} (numpy's limit)")
        if math.prod(int(n) for n in shape) >= MAX_ELEMENTS:
            raise EinsumTooLargeError(f"einsum: shape {tuple(shape)} has more elements than any machine can index (2^62)")
    return Spec(tuple(terms), output, tuple(sorted(sizes.items())), tuple(tuple(s) for s in shapes))


def from_sublists(args: tuple) -> tuple[str, tuple]:
    """``(op0, sub0, op1, sub1, ..., [out])`` as ``(subscripts, operands)``."""
    operands = args[0::2]
    sublists = list(args[1::2])
    output = None
    if len(args) % 2 == 1 and len(args) > 1:
        # odd: the last is the output sublist, the operands are every other one before it
        operands = args[0:-1:2]
        sublists = list(args[1:-1:2])
        output = args[-1]
    terms = [_sublist(s, f"operand {k}'s sublist") for k, s in enumerate(sublists)]
    text = ",".join(terms)
    if output is not None:
        text += "->" + _sublist(output, "the output sublist")
    return text, tuple(operands)


def _sublist(sublist, where: str) -> str:
    out = []
    try:
        items = list(sublist)
    except TypeError:
        raise EinsumError(f"einsum: {where} must be a list of integers and Ellipsis, got {sublist!r}") from None
    for item in items:
        if item is Ellipsis:
            out.append("...")
            continue
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
            # numpy: "each subscript must be either an integer or an ellipsis" (a TypeError)
            raise EinsumTypeError(f"einsum: {where} has {item!r}; each subscript must be either an integer "
                                  "(0..51) or an ellipsis")
        s = int(item)
        if not 0 <= s < 52:
            raise EinsumError(f"einsum: {where} has {item!r}; subscripts must be integers in [0, 52)")
        out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
    return "".join(out)
