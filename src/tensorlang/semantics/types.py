"""Types and the program rule every front end shares (000 §3, 001 §3; docs/architecture.md, "The
packages"): a type is a tuple of positive extents (``()`` the scalar), Γ maps each variable to its
type and qualifier, and :func:`check_statements` is 000's ok-prog and 001's OK-Prog's common part,
each statement by the front end's rule, giving a :class:`CheckedProgram`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from ..errors import Diagnostic, TensorLangError
from .interface import Interface, interface, show
from .sizes import Sym, derived_of, symbols_of

#: A type: its extents, numbers or symbols (:mod:`.sizes`) before a binding.
Shape = tuple[int, ...]

#: Extents and element counts must stay below this (they become int64 loop bounds).
MAX_ELEMENTS = 2**62

#: The most dimensions a variable may have: numpy's limit (numpy.ndarray has at most 64),
#: which every target relies on.
MAX_RANK = 64


@dataclass(frozen=True)
class Context:
    """The static context Γ (000 Definition 3) with each variable's qualifier."""

    shapes: Mapping[str, Shape]
    quals: Mapping[str, str | None]
    decls: Mapping[str, Any]  # the front end's declarations, for spans
    qualified: bool

    def __contains__(self, name: str) -> bool:
        return name in self.shapes

    def __getitem__(self, name: str) -> Shape:
        return self.shapes[name]


@dataclass(frozen=True)
class CheckedProgram:
    """A well-formed program together with its context and its interface to the caller.

    ``inputs`` the caller must supply, ``optional_inputs`` the caller may supply (they
    start as ⊥ otherwise), ``results`` the variables returned after the run.
    """

    program: Any  # the front end's AST (its Language knows it)
    context: Context
    interface: Interface
    #: symbols without a value that the program uses outside its extents (STUR's
    #: ``(j = J)``): sizes to bind like the others, though no input's shape gives them
    unbound: tuple[str, ...] = ()

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.interface.inputs

    @property
    def optional_inputs(self) -> tuple[str, ...]:
        return self.interface.optional_inputs

    @property
    def results(self) -> tuple[str, ...]:
        return self.interface.results

    @property
    def accepted_inputs(self) -> tuple[str, ...]:
        return self.interface.accepted_inputs

    @property
    def symbols(self) -> tuple[str, ...]:
        """The free symbolic sizes still unbound in the declarations (:mod:`.sizes`), the
        names to bind (``params=``, ``--param``); a program with none can be lowered and
        run, one with some must be specialised.  Those of :attr:`unbound` come last."""
        return self._symbols[0] + self._symbols[1]

    @property
    def position_symbols(self) -> tuple[str, ...]:
        """The symbols of :attr:`unbound` that size no tensor (STUR's ``(j = J)``)."""
        return self._symbols[1]

    @cached_property
    def _symbols(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found = symbols_of(self.context.shapes.values())
        return found, tuple(s for s in self.unbound if s not in found)

    @property
    def derived_symbols(self) -> tuple[str, ...]:
        """The size expressions still unbound (``p+p*p``): no names to bind, they follow
        from :attr:`symbols`."""
        return derived_of(self.context.shapes.values())


# ------------------------------------------------------------------ Figure 7
def build_context(program, diagnostics: list[Diagnostic]) -> Context:
    """s-empty / s-var: each declaration adds one fresh identifier to Γ."""
    shapes: dict[str, Shape] = {}
    quals: dict[str, str | None] = {}
    decls: dict[str, Any] = {}
    for decl in program.decls:
        if decl.name in shapes:
            first = decls[decl.name].name_span
            where = f" (first declared at line {first.line})" if first else ""
            diagnostics.append(Diagnostic("redeclared", f"variable {decl.name!r} is declared twice{where}",
                                          decl.name_span, "s-var"))
            continue
        bad = [d for d in decl.shape if not isinstance(d, Sym) and d < 1]
        problem: tuple[str, str] | None = None
        if bad:
            problem = ("shape", f"extents must be positive; {decl.name!r} has extent {bad[0]}")
        elif len(decl.shape) > MAX_RANK:
            problem = ("too-large", f"{decl.name!r} has {len(decl.shape)} dimensions; at most {MAX_RANK} "
                       "(numpy's limit) are supported")
        elif count(decl.shape) >= MAX_ELEMENTS:
            problem = ("too-large", f"{decl.name!r} : {show(decl.shape)} has more elements than any machine can "
                       "index (2^62)")
        if problem is not None:
            diagnostics.append(Diagnostic(*problem, decl.span, "s-var"))
        shapes[decl.name] = decl.shape
        quals[decl.name] = decl.qual
        decls[decl.name] = decl
    return Context(MappingProxyType(shapes), MappingProxyType(quals), MappingProxyType(decls),
                   any(d.qual is not None for d in program.decls))


def count(shape: Shape) -> int:
    """The number of elements of a type (1 for a scalar); symbols are left out (counted
    as 1), so that a symbolic type is too large exactly when its numbers already are."""
    n = 1
    for d in shape:
        if not isinstance(d, Sym):
            n *= d
    return n


# ------------------------------------------------------------------ ok-prog
def check_statements(program, diagnostics: list[Diagnostic], ok_stmt: Callable[[Any, Context], None],
                     variables_read: Callable[[Any], Iterable[Any]],
                     declaration_rule: str | None = None) -> CheckedProgram:
    """What every front end's program rule shares (000's ok-prog, 001's OK-Prog): Γ from
    the declarations (s-var, or ``declaration_rule`` in its diagnostics), each statement by
    the front end's ``ok_stmt``, at most one diagnostic per statement, then, for a
    qualified program, the uninit analysis over ``variables_read``; all raised together."""
    gamma = build_context(program, diagnostics)
    if declaration_rule is not None:
        for d in diagnostics:
            d.rule = declaration_rule
    for stmt in program.stmts:
        try:
            ok_stmt(stmt, gamma)
        except TensorLangError as exc:
            diagnostics.extend(exc.diagnostics)
    if not diagnostics and gamma.qualified:
        diagnostics.extend(_uninit(program, gamma, variables_read))
    if diagnostics:
        raise TensorLangError(diagnostics[0].code, diagnostics[0].message, diagnostics=diagnostics)
    return CheckedProgram(program, gamma, interface(program.decls))


def _uninit(program, gamma: Context, variables_read: Callable[[Any], Iterable[Any]]) -> list[Diagnostic]:
    """Reads of variables not yet assigned, and ``out`` variables never assigned (000 §5).

    ``in`` and ``inout`` variables are initialised by the caller; everything else is
    initialised by its first assignment.  Without control flow, one pass in program
    order decides it.
    """
    found: list[Diagnostic] = []
    assigned = {name for name, q in gamma.quals.items() if q in ("in", "inout")}
    for stmt in program.stmts:
        for var in variables_read(stmt.expr):
            if var.name not in assigned:
                found.append(Diagnostic("uninit", f"{var.name!r} is read before it is assigned", var.span,
                                        "uninit (000 §5)"))
                break
        assigned.add(stmt.target)
    for decl in program.decls:
        if decl.qual == "out" and decl.name not in assigned:
            found.append(Diagnostic("uninit", f"'out' variable {decl.name!r} is never assigned", decl.name_span,
                                    "uninit (000 §5)"))
    return found
