"""Indices and domains of EIN: an ``Index`` is a ``str``, an ``int`` or an :class:`Affine`, a
:class:`Domain` is σ (docs/ein.md, "Indices and domains").  This module imports nothing from the
package but numpy, so every layer above may use it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Union

import numpy as np


@dataclass(frozen=True)
class Affine:
    """Σ coeff·var + offset over index variables: canonical (terms merged, zero
    coefficients dropped, sorted by name) and never without a variable (use
    :func:`affine`, which gives an ``int`` when none is left)."""

    terms: tuple[tuple[str, int], ...]
    offset: int = 0

    def __post_init__(self) -> None:
        terms = _merged(self.terms)
        if not terms:
            raise ValueError("an affine index needs a variable; affine() gives an int position instead")
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "offset", int(self.offset))

    def __str__(self) -> str:
        return to_text(self)


Index = Union[str, int, Affine]


def _merged(terms: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """One term per variable, coefficients added, zeros dropped, sorted by name."""
    merged: dict[str, int] = {}
    for name, coeff in terms:
        merged[name] = merged.get(name, 0) + int(coeff)
    return tuple(sorted((name, c) for name, c in merged.items() if c != 0))


def affine(terms: Iterable[tuple[str, int]], offset: int = 0) -> Index:
    """Σ coeff·var + offset as an index: an ``int`` position when no variable is left,
    else an :class:`Affine` (a lone variable too: see the module's note on windows)."""
    kept = _merged(terms)
    return Affine(kept, offset) if kept else int(offset)


def as_terms(i: Index) -> tuple[tuple[tuple[str, int], ...], int]:
    """(terms, offset) of any index: a variable is 1·var + 0, a position has no term."""
    if isinstance(i, str):
        return ((i, 1),), 0
    if isinstance(i, Affine):
        return i.terms, i.offset
    return (), int(i)


def has_affine(indices: Iterable[Index]) -> bool:
    """Whether any of ``indices`` is an affine index (recognisers of plain shapes, BLAS
    contractions and loop interchange among them, decline such accesses)."""
    return any(isinstance(i, Affine) for i in indices)


def index_variables(i: Index) -> tuple[str, ...]:
    """The index variables ``i`` depends on, in canonical order."""
    if isinstance(i, str):
        return (i,)
    if isinstance(i, Affine):
        return tuple(name for name, _ in i.terms)
    return ()


def variables_of(indices: Iterable[Index]) -> tuple[str, ...]:
    """The variables of several indices, each once, in order of first occurrence."""
    return tuple(dict.fromkeys(v for i in indices for v in index_variables(i)))


def substitute_index(i: Index, mapping) -> Index:
    """``i`` with each variable v replaced by ``mapping[v]`` (a variable, a position or
    an affine index), composed: ``(2*i+1)[i := k-1]`` is ``2*k-1``.  A substituted
    Affine stays an Affine while a variable is left (it may be a window) and becomes a
    position when none is."""
    if isinstance(i, str):
        return mapping.get(i, i)
    if not isinstance(i, Affine) or not any(name in mapping for name, _ in i.terms):
        return i
    terms: list[tuple[str, int]] = []
    offset = i.offset
    for name, coeff in i.terms:
        inner, constant = as_terms(mapping.get(name, name))
        terms.extend((v, coeff * c) for v, c in inner)
        offset += coeff * constant
    return affine(terms, offset)


def position(i: Index, value: Callable[[str], Any]) -> Any:
    """The 1-based position ``i`` denotes when each variable v has the 1-based value
    ``value(v)`` (a number or a numpy array; arrays broadcast)."""
    if isinstance(i, str):
        return value(i)
    if isinstance(i, Affine):
        total = i.offset
        for name, coeff in i.terms:
            total = total + coeff * value(name)
        return total
    return i


def index_range(i: Index, extents) -> tuple[int, int]:
    """(lowest, highest) position ``i`` reaches while each variable v ranges over
    1..extents[v] (exact: an affine function is extreme at the box's corners)."""
    terms, lo = as_terms(i)
    hi = lo
    for name, coeff in terms:
        a, b = coeff, coeff * extents[name]
        lo, hi = lo + min(a, b), hi + max(a, b)
    return lo, hi


def to_text(i: Index) -> str:
    """The index as the model language writes it: ``i``, ``3``, ``2*i+a-1``; a lone
    variable that is an Affine prints as ``i+0``, so that it parses back to an Affine."""
    if not isinstance(i, Affine):
        return str(i)
    parts = []
    for n, (name, coeff) in enumerate(i.terms):
        sign = "-" if coeff < 0 else ("+" if n else "")
        magnitude = abs(coeff)
        parts.append(f"{sign}{name}" if magnitude == 1 else f"{sign}{magnitude}*{name}")
    if i.offset or (len(i.terms) == 1 and i.terms[0][1] == 1):
        parts.append(f"{'-' if i.offset < 0 else '+'}{abs(i.offset)}")
    return "".join(parts)


def zero_based_text(i: Affine, name: Callable[[str], str], literal: Callable[[int], str] = str) -> str:
    """The 0-based position of ``i`` over 0-based loop counters ``name(v)`` = v - 1, as
    a parenthesized sum for generated code: Σ c·(x_v + 1) + offset - 1 is
    Σ c·x_v + (Σ c + offset - 1), e.g. ``(2*x_i + x_a + 1)``."""
    pieces = [(coeff < 0, name(var) if abs(coeff) == 1 else f"{literal(abs(coeff))}*{name(var)}")
              for var, coeff in i.terms]
    constant = sum(c for _, c in i.terms) + i.offset - 1
    if constant:
        pieces.append((constant < 0, literal(abs(constant))))
    text = ""
    for n, (negative, term) in enumerate(pieces):
        text += ("-" if negative else "") + term if n == 0 else (" - " if negative else " + ") + term
    return f"({text})"


# ------------------------------------------------------------------ numpy evaluation
def grids(labels: tuple[str, ...], extents) -> dict[str, np.ndarray]:
    """For each label, its 1-based values laid along its own axis of len(labels) axes."""
    rank = len(labels)
    return {v: np.arange(1, extents[v] + 1).reshape([1] * a + [extents[v]] + [1] * (rank - a - 1))
            for a, v in enumerate(labels)}


def positions(indices, labels: tuple[str, ...], extents) -> tuple:
    """The 1-based positions of ``indices`` at every point of the labels' box (arrays
    that broadcast to it; a fixed position is a number)."""
    grid = grids(labels, extents)
    return tuple(position(i, grid.__getitem__) for i in indices)


def gather(array, indices, labels: tuple[str, ...], extents) -> np.ndarray:
    """``array[indices]`` at every point of the box of ``labels`` (the variables of the
    indices, each once): an array with one axis per label, in that order.  A fresh
    array (numpy advanced indexing copies)."""
    picks = tuple(np.asarray(p) - 1 for p in positions(indices, labels, extents))
    value = np.asarray(array)[picks]
    return np.broadcast_to(value, tuple(extents[v] for v in labels))


# ------------------------------------------------------------------ domains
@dataclass(frozen=True)
class Domain:
    """σ: the box ``((var, extent), ...)`` a statement or a reduction ranges over, each
    variable over 1..extent, plus ``conditions``: room for integer-set constraints such as
    ``i <= j`` (paper 003's unique sets; empty today, an islpy set later).

    It behaves like the tuple of pairs it replaced: iterating yields the pairs, ``len``,
    indexing, slicing (a Domain), ``dict(domain)``, ``+`` with a tuple or a Domain, and
    it equals (and hashes like) its box when it has no conditions."""

    box: tuple[tuple[str, int], ...]
    conditions: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "box", tuple((name, extent) for name, extent in self.box))
        object.__setattr__(self, "conditions", tuple(self.conditions))

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self.box)

    def __len__(self) -> int:
        return len(self.box)

    def __bool__(self) -> bool:
        return bool(self.box)

    def __getitem__(self, key):
        if isinstance(key, slice):
            if self.conditions:
                raise ValueError("a slice of a domain with conditions is not defined (they may span the rest)")
            return Domain(self.box[key])
        return self.box[key]

    def __add__(self, other):
        if isinstance(other, Domain):
            return Domain(self.box + other.box, self.conditions + other.conditions)
        if isinstance(other, tuple):
            return Domain(self.box + other, self.conditions)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, tuple):
            return Domain(other + self.box, self.conditions)
        return NotImplemented

    def __eq__(self, other):
        if isinstance(other, Domain):
            return self.box == other.box and self.conditions == other.conditions
        if isinstance(other, tuple):
            return not self.conditions and self.box == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.box) if not self.conditions else hash((self.box, self.conditions))

    def __repr__(self) -> str:
        return f"Domain({self.box!r})" if not self.conditions else f"Domain({self.box!r}, {self.conditions!r})"

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.box)

    @property
    def extents(self) -> dict[str, int]:
        return dict(self.box)


def as_domain(index) -> Domain:
    """A Domain from a Domain or any iterable of (variable, extent) pairs."""
    return index if isinstance(index, Domain) else Domain(tuple(index))
