"""Symbolic extents: a kernel written once for every size (``in var u : [E n n n]``;
docs/language.md, "Symbolic sizes", has the rules: a symbol equals itself and nothing
else, and the range conditions a symbol leaves are checked when it is bound).

This module states the rule once, for every front end: :class:`Sym`, the symbols of a
program's declarations, and :func:`bind`, which replaces symbols by their values in the
declarations (the program is then specialised: lowering, optimisation and code
generation see only numbers, so generated loops have constant bounds).  A front end's
program has ``decls`` whose items have a ``shape``, and is a dataclass (``decls`` is a
field), as the three text front ends' ASTs are.
"""

from __future__ import annotations

import ast as pyast
import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Union

from ..errors import TensorLangError, error

#: Extents at or above this cannot be indexed by the targets' 64-bit loops.
MAX_EXTENT = 2**62

#: The most terms (and the highest degree) a size expression's polynomial may have.
MAX_TERMS = 64


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


# ------------------------------------------------------------------ size expressions
#: A polynomial in the sizes: each monomial (its symbols, sorted, repeated for powers) to
#: its integer coefficient.  A size expression (``[M p+p*p]``) is kept as the Sym named by
#: the normal form's text, so that two expressions equal as polynomials are one symbol.
Poly = dict[tuple[str, ...], int]


def poly_of(extent: Extent) -> Poly | None:
    """An extent as a polynomial; None for a derived name that is no sum of products of
    symbols and integers (STUR's ``N*(N+1)/2``)."""
    if isinstance(extent, int):
        return {(): extent} if extent else {}
    if not is_derived(extent.name):
        return {(extent.name,): 1}
    try:  # read as a Python expression tree, never evaluated
        return _poly(pyast.parse(extent.name, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, TensorLangError):
        return None


_OPS = {pyast.Add: "+", pyast.Sub: "-", pyast.Mult: "*"}


def _poly(node) -> Poly:
    if isinstance(node, pyast.BinOp) and type(node.op) in _OPS:
        return poly_arith(_OPS[type(node.op)], _poly(node.left), _poly(node.right))
    if isinstance(node, pyast.UnaryOp) and isinstance(node.op, pyast.USub):
        return _scale(_poly(node.operand), -1)
    if isinstance(node, pyast.Constant) and type(node.value) is int:
        return {(): node.value} if node.value else {}
    if isinstance(node, pyast.Name):
        return {(node.id,): 1}
    raise ValueError(node)


def _plus(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + c
    return {m: c for m, c in out.items() if c}


def _scale(a: Poly, k: int) -> Poly:
    return {m: c * k for m, c in a.items() if c * k}


def _times(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        out = _plus(out, {tuple(sorted(ma + mb)): ca * cb for mb, cb in b.items()})
    return out


def poly_arith(op: str, a: Poly, b: Poly, span=None) -> Poly:
    """``a op b`` (op in + - *) within the bounds on a size expression (error[too-large])."""
    big = op == "*" and len(a) * len(b) > MAX_TERMS ** 2
    out = {} if big else _times(a, b) if op == "*" else _plus(a, _scale(b, -1 if op == "-" else 1))
    if big or len(out) > MAX_TERMS or any(len(m) > MAX_TERMS or abs(c) >= MAX_EXTENT ** 2 for m, c in out.items()):
        raise error("too-large", f"a size expression of more than {MAX_TERMS} terms, a degree above {MAX_TERMS} "
                    "or a coefficient of 2^124 or more", span)
    return out


def extent_of(poly: Poly) -> Extent:
    """The extent a polynomial is: a number, a symbol, or a derived symbol named by the
    normal form (positive terms first, by degree, constants last: ``p+p*p``, ``n-1``)."""
    if not poly:
        return 0
    if list(poly) == [()]:
        return poly[()]
    if len(poly) == 1 and next(iter(poly.values())) == 1 and len(next(iter(poly))) == 1:
        return Sym(next(iter(poly))[0])
    text = ""
    for m, c in sorted(poly.items(), key=lambda mc: (mc[1] < 0, not mc[0], len(mc[0]), mc[0])):
        term = "*".join(([str(abs(c))] if abs(c) != 1 or not m else []) + list(m))
        text += ("-" if c < 0 else "+" if text else "") + term
    return Sym(text)


def size_arith(op: str, a: Extent, b: Extent) -> Extent | None:
    """``a op b`` for op in + - * (concat's and vec's extents, a declaration's size
    expression); None where an operand is no polynomial."""
    pa, pb = poly_of(a), poly_of(b)
    return None if pa is None or pb is None else extent_of(poly_arith(op, pa, pb))


def free_sizes(extent: Extent) -> tuple[str, ...]:
    """The plain symbols an extent is written in (itself for a plain symbol)."""
    poly = poly_of(extent) or {}
    return tuple(dict.fromkeys(name for m in poly for name in m))


def never_positive(extent: Extent) -> bool:
    """Whether an extent is below 1 at every binding (a number below 1, or a polynomial
    none of whose coefficients is positive)."""
    poly = {(): extent} if isinstance(extent, int) else poly_of(extent)
    return poly is not None and all(c <= 0 for c in poly.values())


def symbols_of(shapes: Iterable[Iterable[Any]]) -> tuple[str, ...]:
    """The free sizes in these shapes, in order of first appearance: the plain names, a
    size expression's own names included (``[M p+p*p]`` gives M, p), never the
    expression itself (:func:`derived_of`)."""
    seen: dict[str, None] = {}
    for shape in shapes:
        for d in shape:
            if isinstance(d, Sym):
                for name in free_sizes(d) if is_derived(d.name) else (d.name,):
                    seen.setdefault(name)
    return tuple(seen)


def derived_of(shapes: Iterable[Iterable[Any]]) -> tuple[str, ...]:
    """The size expressions still unbound in these shapes (``p+p*p``, STUR's
    ``N*(N+1)/2``), in order of first appearance: they take no value of their own and
    follow from the free sizes when those are bound."""
    seen: dict[str, None] = {}
    for shape in shapes:
        for d in shape:
            if isinstance(d, Sym) and is_derived(d.name):
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
            where = next((decl.span for decl in program.decls if Sym(name) in decl.shape), None)
            raise error("too-large", f"size {name!r} is 2^62 or more ({int(value).bit_length()} bits)", where)
    if not params or not hasattr(program, "decls"):
        return program

    def value_of(d, decl):
        if not isinstance(d, Sym) or not is_derived(d.name):
            return params.get(d.name, d) if isinstance(d, Sym) else d
        poly = poly_of(d)
        if poly is None or not any(name in params for name in free_sizes(d)):
            return d
        value: Extent = 0
        for m, c in poly.items():  # each bound symbol's value put in
            term: Extent = c
            for name in m:
                term = size_arith("*", term, params.get(name, Sym(name))) or 0
            value = size_arith("+", value, term) or 0
        if never_positive(value) or (isinstance(value, int) and value >= MAX_EXTENT):
            shown = ", ".join(f"{n} = {params[n]}" for n in free_sizes(d) if n in params)
            raise error("shape" if never_positive(value) else "too-large",
                        f"the size {d} of {decl.name!r} is {value} for {shown}; extents are positive and below 2^62",
                        decl.span, "s-var")
        return value

    decls = tuple(dataclasses.replace(decl, shape=tuple(value_of(d, decl) for d in decl.shape))
                  if is_symbolic(decl.shape) else decl for decl in program.decls)
    return dataclasses.replace(program, decls=decls)


__all__ = ["Extent", "MAX_EXTENT", "Sym", "bind", "derived_of", "extent_of", "free_sizes", "is_derived",
           "is_symbolic", "never_positive", "poly_arith", "poly_of", "program_symbols", "size_arith", "symbols_of"]
