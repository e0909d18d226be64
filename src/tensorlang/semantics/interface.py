"""The caller's interface of a program: which variables are inputs, results, temporaries.

000 §5 fixes it from the qualifiers (docs/language.md, "Qualifiers and results"), and
this module is the one place that says how; a variable a pass introduced is declared
with the qualifier :data:`TEMP`: never an input, never a result, whatever the program's
other qualifiers say.  Front ends, passes, the kernel and every target ask
:func:`interface` (or :func:`roles`) instead of reading qualifiers themselves.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Mapping, Protocol

import numpy as np

from ..errors import error

#: The qualifiers a program may write (000 §5).
QUALIFIERS = ("in", "out", "inout")

#: The qualifier of a variable a pass introduced (a compiler temporary).
TEMP = "temp"


class Role(str, enum.Enum):
    """A variable's part in a call (a ``str``, so ``role == "in"`` reads naturally)."""

    IN = "in"  # supplied by the caller, read-only, not returned
    INOUT = "inout"  # supplied by the caller and returned
    OPTIONAL = "optional"  # unqualified programs: may be supplied (⊥ otherwise), returned
    OUT = "out"  # returned only
    TEMP = "temp"  # neither: the compiler may remove or reuse it

    def __str__(self) -> str:
        return self.value


class Declared(Protocol):
    """Anything with a name and a qualifier: a front end's declaration, an EIN Decl."""

    @property
    def name(self) -> str: ...

    @property
    def qual(self) -> str | None: ...


def is_qualified(decls: Iterable[Declared]) -> bool:
    """True when any declaration carries one of the program's own qualifiers."""
    return any(d.qual in QUALIFIERS for d in decls)


def role_of(qual: str | None, qualified: bool) -> Role:
    """The role of a variable declared with ``qual`` in a program that is ``qualified``
    (or not): the rule of 000 §5, stated once."""
    if qual == TEMP:
        return Role.TEMP
    if not qualified:
        return Role.OPTIONAL
    return {"in": Role.IN, "inout": Role.INOUT, "out": Role.OUT}.get(qual or "", Role.TEMP)


@dataclass(frozen=True)
class Interface:
    """Every variable's role, and the variables of each kind in declaration order
    (computed on first use, then kept: the interface never changes)."""

    roles: Mapping[str, Role]

    def _named(self, *kinds: Role) -> tuple[str, ...]:
        return tuple(name for name, role in self.roles.items() if role in kinds)

    @functools.cached_property
    def inputs(self) -> tuple[str, ...]:
        """Variables the caller must supply."""
        return self._named(Role.IN, Role.INOUT)

    @functools.cached_property
    def optional_inputs(self) -> tuple[str, ...]:
        """Variables the caller may supply (⊥ otherwise)."""
        return self._named(Role.OPTIONAL)

    @functools.cached_property
    def accepted_inputs(self) -> tuple[str, ...]:
        return self.inputs + self.optional_inputs

    @functools.cached_property
    def results(self) -> tuple[str, ...]:
        """Variables whose final value the caller receives."""
        return self._named(Role.INOUT, Role.OUT, Role.OPTIONAL)

    @functools.cached_property
    def temporaries(self) -> tuple[str, ...]:
        """Variables a pass may remove, fuse away, merge or reuse."""
        return self._named(Role.TEMP)


def interface(decls: Iterable[Declared]) -> Interface:
    """The interface of a program with these declarations (the first of a repeated name
    counts: a redeclaration is an error the type checker reports)."""
    decls = list(decls)
    qualified = is_qualified(decls)
    roles: dict[str, Role] = {}
    for d in decls:
        roles.setdefault(d.name, role_of(d.qual, qualified))
    return Interface(MappingProxyType(roles))


def roles(decls: Iterable[Declared]) -> Mapping[str, Role]:
    return interface(decls).roles


def initial_store(shapes: Mapping[str, tuple[int, ...]], roles: Mapping[str, Role],
                  supplied: Mapping[str, np.ndarray], dtype) -> dict[str, np.ndarray]:
    """d-var / d-in-var (000 Figures 10 and 15): every declared variable has memory; what
    the caller did not supply is ⊥.  Supplied arrays that may become results are copied,
    so a result never aliases a caller's array; no evaluator writes into a store array."""
    dtype = np.dtype(dtype)
    store: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        if name in supplied and roles.get(name) is Role.IN:
            # read-only and never a result: nothing writes it, so no copy is needed
            store[name] = np.asarray(supplied[name], dtype=dtype, order="C")
        elif name in supplied:
            store[name] = np.array(supplied[name], dtype=dtype, order="C", copy=True)
        else:
            store[name] = np.full(shape, np.nan, dtype=dtype)
    return store


def check_out(target, label: str, shape: tuple[int, ...], dtype: np.dtype, contiguous: bool = False, span=None):
    """A caller's array for a result (``out=``), checked before anything is written:
    a writeable numpy array of ``shape`` and ``dtype`` (C-contiguous and aligned where
    ``contiguous``: C reads misaligned numbers with undefined behaviour), with no masked
    entry; else an ``error[input]`` naming it as ``label`` (at ``span``, the declaration).
    Overlap with other arrays is the caller's to check: only it knows what the call reads."""
    if not isinstance(target, np.ndarray):
        raise error("input", f"{label} must be a numpy array, got {type(target).__name__}")
    layout, flat = "C-contiguous, aligned " if contiguous else "", target.flags.c_contiguous and target.flags.aligned
    if target.shape != tuple(shape) or target.dtype != dtype or (contiguous and not flat):
        scattered = "" if not layout or flat else ", not C-contiguous" if not target.flags.c_contiguous else ", not aligned"
        raise error("input", f"{label} must be a {layout}{np.dtype(dtype).name} array of shape {show(shape)}, got "
                    f"{target.dtype} of shape {show(target.shape)}{scattered}", span)
    if not target.flags.writeable:
        raise error("input", f"{label} is read-only", span)
    if shares_elements(target):  # a writeable broadcast view: its results would overwrite each other
        raise error("input", f"{label} has elements that overlap in memory (a zero stride, as in a broadcast view, or a "
                    "stride shorter than an element): "
                    "it cannot hold a result; pass an array of its own (np.empty)", span)
    if isinstance(target, np.ma.MaskedArray) and np.ma.is_masked(target):  # (np.asarray drops the mask)
        raise error("input", f"{label} is a masked array with masked entries, which would hide the results written "
                    "there: pass a plain array (a.data) or unmask it (a.mask = False)", span)
    return target


def shares_elements(a: np.ndarray) -> bool:
    """Whether two of ``a``'s elements overlap in memory: no, where each dimension's stride,
    smallest first, steps past all the earlier dimensions reach; else their byte offsets
    compared (an array of more than 2^20 elements laid out otherwise counts as overlapping)."""
    reach = a.itemsize
    for step, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n > 1):
        if step < reach:
            if a.size > 1 << 20:
                return True
            offsets = sum(np.arange(m).reshape([m if j == k else 1 for j in range(a.ndim)]) * s
                          for k, (s, m) in enumerate(zip(a.strides, a.shape)))
            return bool(np.any(np.diff(np.sort(offsets, axis=None)) < a.itemsize))
        reach = step * (n - 1) + reach
    return False


def show(shape) -> str:
    """A type as the language writes it: ``[300 400]``, ``[]`` for a scalar (:mod:`.types` shows it so too)."""
    return "[" + " ".join(str(d) for d in shape) + "]"
