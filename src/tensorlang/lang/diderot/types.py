"""Diderot's types as the checker and the interpreter see them."""

from __future__ import annotations

from dataclasses import dataclass

from . import ast as A


@dataclass(frozen=True)
class Ty:
    """``kind``: int bool string tensor (real is tensor with shape ()) field image kernel
    seq strand set (a set of strands: ``S.all``, ``sphere(r)``) void."""

    kind: str
    shape: tuple[int, ...] = ()
    dim: int | None = None
    k: int | None = None
    elem: "Ty | None" = None
    n: int | None = None  # a sequence's length (None: dynamic)
    name: str | None = None  # a strand's name

    def __str__(self) -> str:
        if self.kind == "seq":
            return f"{self.elem}" + ("{}" if self.n is None else "{" + str(self.n) + "}")
        if self.kind in ("strand", "set"):
            return f"strand {self.name}" if self.kind == "strand" else f"set of strand {self.name}"
        return A.spell(self.kind, self.shape, self.dim, self.k)


INT, BOOL, STRING, REAL, VOID = Ty("int"), Ty("bool"), Ty("string"), Ty("tensor"), Ty("void")


def tensor(*shape: int) -> Ty:
    return Ty("tensor", tuple(shape))


def elem(t: Ty) -> Ty:
    """The element type of a sequence type (every sequence type has one)."""
    assert t.elem is not None, t
    return t.elem


def is_real(t: Ty) -> bool:
    return t.kind == "tensor" and t.shape == ()


def is_num(t: Ty) -> bool:
    return t.kind == "int" or is_real(t)


def from_syntax(s: A.TypeSyn) -> Ty:
    """The type written (each kind has only its parts: a field's shape, dim and continuity, a strand's name)."""
    base = Ty("tensor" if s.kind == "real" else s.kind, tuple(s.shape), s.dim, s.k, name=s.name)
    for n in s.seq:  # real[3][2]: two real[3]s (diderotc's grammar folds the dimensions from the left)
        base = Ty("seq", elem=base, n=n)
    return base


def assignable(target: Ty, value: Ty) -> bool:
    """Whether a ``value`` may be stored in a ``target`` (int -> real; a field of higher continuity than
    declared; a fixed-length sequence where a dynamic one is declared)."""
    if target == value or is_real(target) and value.kind == "int":
        return True
    if target.kind == "image" and value.kind == "image" and value.dim is None:
        return True  # image("file.nrrd"): the file says its dimension at run time
    if target.kind == "seq" and value.kind == "seq" and value.elem == Ty("void"):
        return True  # load("file.nrrd") and {}
    if target.kind == "field" and value.kind == "field":
        if value.dim is None:  # a field over image("file.nrrd"): the file decides
            return target.k is None or (value.k or 0) >= target.k
        return (target.dim, target.shape) == (value.dim, value.shape) and (target.k is None or (value.k or 0) >= target.k)
    if target.kind == "seq" and value.kind == "seq":
        return (target.n is None or target.n == value.n) and value.elem is not None and target.elem is not None \
            and (assignable(target.elem, value.elem) or value.n == 0)
    return False
EMPTY_BOUND: dict[str, dict[str, float]] = {"real": {"max": -float("inf"), "min": float("inf")}, "int": {"max": -2 ** 31, "min": 2 ** 31 - 1}}  # max, min of none (ints: Diderot's 32-bit bounds)
