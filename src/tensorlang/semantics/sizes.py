"""Symbolic extents: a kernel written once for every size (``in var u : [E n n n]``).

An extent in a declaration is a positive integer or a *symbol*, a name that gets its value
later: from ``params=`` / ``--param`` at compile time, or from the shapes of the arrays a
kernel is called with.  The type checkers compare extents as they are written: a symbol
equals itself and nothing else, so ``n`` and ``m`` differ (and so do ``n`` and ``3``)
unless both are bound to values before checking.  A program accepted with symbols is
therefore accepted for every binding of them, except where it uses a fixed position or an
affine index inside a symbolic dimension (``A[i, 3]`` with ``A : [n n]``): such a range
condition (n >= 3) can only be decided for a value, and is checked when a binding is made
(a binding that violates it is error[input]).

This module states the rule once, for every front end: :class:`Sym`, the symbols of a
program's declarations, and :func:`bind`, which replaces symbols by their values in the
declarations (the program is then specialised: lowering, optimisation and code
generation see only numbers, so generated loops have constant bounds).  A front end's
program has ``decls`` whose items have a ``shape``, and is a dataclass (``decls`` is a
field), as the three text front ends' ASTs are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Union

from ..errors import TensorLangError, error

#: Extents at or above this cannot be indexed by the targets' 64-bit loops.
MAX_EXTENT = 2**62


@dataclass(frozen=True)
class Sym:
    """A symbolic extent, printed as its name.  It compares equal only to itself (by
    name), and takes part in no arithmetic or ordering: code that would compute with an
    unbound extent fails loudly instead of computing with a name."""

    name: str

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


#: One extent of a declared type: a number or a symbol.
Extent = Union[int, Sym]


def is_symbolic(shape: Iterable[Any]) -> bool:
    return any(isinstance(d, Sym) for d in shape)


def is_derived(name: str) -> bool:
    """Whether a symbol's name is an expression of other symbols rather than a size of its
    own: a front end names an extent it can only write as an expression (STUR's D fact
    ``(s < N*(N+1)/2)``) by that text.  It takes no value of its own; it follows from the
    symbols it is written in when they are bound."""
    return not name.isidentifier()


def symbols_of(shapes: Iterable[Iterable[Any]]) -> tuple[str, ...]:
    """The symbols in these shapes, in order of first appearance."""
    seen: dict[str, None] = {}
    for shape in shapes:
        for d in shape:
            if isinstance(d, Sym):
                seen.setdefault(d.name)
    return tuple(seen)


def program_symbols(program) -> tuple[str, ...]:
    """The symbols a program's declarations use, in order of first appearance (none for
    a front end without declarations, such as einsum strings)."""
    return symbols_of(decl.shape for decl in getattr(program, "decls", ()))


def bind(program, params: Mapping[str, int], what: str = "--param") -> Any:
    """``program`` with each symbol in ``params`` replaced by its value in every
    declaration; symbols without a value stay.  A name in ``params`` that the program
    does not use is error[input] (a misspelt size must not be silently ignored)."""
    names = program_symbols(program)
    unused = [name for name in params if name not in names]
    if unused:
        have = f"its symbolic sizes are {', '.join(names)}" if names else "it has no symbolic sizes"
        raise TensorLangError("input", f"{what} {unused[0]}: the program has no size named {unused[0]!r} ({have})")
    for name, value in params.items():
        if value >= MAX_EXTENT:
            where = next(decl.span for decl in program.decls if Sym(name) in decl.shape)
            raise error("too-large", f"size {name!r} is 2^62 or more ({int(value).bit_length()} bits)", where)
    if not params or not hasattr(program, "decls"):
        return program

    def value_of(d):
        return params.get(d.name, d) if isinstance(d, Sym) else d

    decls = tuple(dataclasses.replace(decl, shape=tuple(value_of(d) for d in decl.shape))
                  if is_symbolic(decl.shape) else decl for decl in program.decls)
    return dataclasses.replace(program, decls=decls)


def binding_diagnostic(name: str, value: int, first: tuple[str, int, int], second: tuple[str, int, int]) -> str:
    """The message for a symbol that two arrays bind to different values."""
    (a, da, va), (b, db, vb) = first, second
    return (f"size {name!r} is {va} in {a!r} (dimension {da}) but {vb} in {b!r} (dimension {db}); "
            f"every use of {name!r} must have one value")


__all__ = ["Extent", "MAX_EXTENT", "Sym", "bind", "binding_diagnostic", "is_derived", "is_symbolic",
           "program_symbols", "symbols_of"]
