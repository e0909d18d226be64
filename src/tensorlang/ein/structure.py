"""Declared structure of a tensor, as ``ir.Decl`` carries it (SPEC §4, 003 Fig. 8; docs/language.md,
"Structure annotations")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .index import Index, as_terms, position, to_text


#: A condition's comparison operators (the parsers read ``==`` as ``=``).
COMPARE = {"=": np.equal, "<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater}


@dataclass(frozen=True)
class Condition:
    """``left op right`` over position variables (an affine comparison)."""

    left: Index
    op: str
    right: Index

    def __str__(self) -> str:
        return f"{to_text(self.left)} {self.op} {to_text(self.right)}"

    def holds(self, value) -> np.ndarray:
        """Where the comparison holds, positions given by ``value(name)`` (numbers or
        broadcasting arrays)."""
        return COMPARE[self.op](position(self.left, value), position(self.right, value))


def position_names(rank: int) -> tuple[str, ...]:
    """The names of a rank-k tensor's positions in conditions: i1 .. ik."""
    return tuple(f"i{n + 1}" for n in range(rank))


@dataclass(frozen=True)
class Structure:
    """A tensor's unique set (a union of conjunctions, ``()`` empty), whether the other
    positions are sorted-position copies (``symmetric``) or zero, the annotation's text."""

    rank: int
    unique: tuple[tuple[Condition, ...], ...]
    symmetric: bool = False
    text: str = ""

    def unique_mask(self, shape: tuple[int, ...]) -> np.ndarray:
        """Where, in a tensor of ``shape``, the unique positions are."""
        names = position_names(len(shape))
        wide = any(abs(o) + sum(abs(k) * shape[names.index(v)] for v, k in t) >= 2**62  # may leave int64: Python ints
                   for conjunction in self.unique for c in conjunction for t, o in map(as_terms, (c.left, c.right)))
        grids = {v: np.arange(1, n + 1, dtype=object if wide else None).reshape([1] * a + [n] + [1] * (len(shape) - a - 1))
                 for a, (v, n) in enumerate(zip(names, shape))}
        mask = np.zeros(shape, dtype=bool)
        for conjunction in self.unique:
            held = np.ones(shape, dtype=bool)
            for c in conjunction:
                held &= np.broadcast_to(c.holds(grids.__getitem__), shape)
            mask |= held
        return mask

    def expected(self, value: np.ndarray) -> np.ndarray:
        """What ``value`` must be wherever it is not unique: the copy from the sorted
        position (symmetric), else 0."""
        if not self.symmetric:
            return np.zeros_like(value)
        rank = value.ndim
        grids = np.indices(value.shape)
        ordered = np.sort(grids, axis=0)
        return value[tuple(ordered[a] for a in range(rank))]

    def keep(self, value: np.ndarray) -> np.ndarray:
        """``value`` made to keep the promise: its unique entries, and elsewhere what
        :meth:`expected` says (the sorted position's copy, or 0)."""
        value = np.asarray(value)
        return np.where(self.unique_mask(value.shape), value, self.expected(value))

    def first_violation(self, value: np.ndarray) -> tuple[tuple[int, ...], float] | None:
        """The first position (row-major, 1-based) where ``value`` breaks the structure,
        with the value it should have; None if it keeps it (:func:`agree`)."""
        value = np.asarray(value)
        if value.ndim != self.rank:
            return None
        inside = self.unique_mask(value.shape)
        expected = self.expected(value)
        same = agree(value, expected)
        bad = ~inside & ~same
        if not bad.any():
            return None
        first = tuple(int(p) for p in np.argwhere(bad)[0])
        return tuple(p + 1 for p in first), float(expected[first])


#: How close a copy must be to what it copies (SPEC §1's float64 tolerance after
#: reassociation: data built by a product in another order, f_i·f_j·f_k against
#: f_k·f_i·f_j, keeps its promise).
COPY_RTOL = 1e-12


def agree(value, expected) -> np.ndarray:
    """Where a value keeps its promise: equal to what it should be up to :data:`COPY_RTOL` (±inf
    exactly), ⊥ where it should be ⊥."""
    with np.errstate(all="ignore"):
        return ((value == expected) | (np.isnan(value) & np.isnan(expected))
                | np.isclose(value, expected, rtol=COPY_RTOL, atol=0.0))
