"""Hypothesis strategies for random well-typed TeIL programs (paper 001).

Top-down and type-directed, like generators.py: asked for an expression of a type, the
generator picks an operator whose rule in 001 Figure 8 can produce that type and asks
for operands of the types the rule needs (T-Red+ inserts a dimension, T-Diag a copy of
an extent after position i0, T-Proj a dimension of extent >= m, T-Expa removes one, ...).
Every operator is drawn, in full TeIL's form and, where its arguments allow it, in
Core-TeIL's form too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from tensorlang.lang.teil import ast
from tensorlang.lang.teil.printer import to_teil_source

MAX_RANK = 6


@dataclass
class Draft:
    qualified: bool
    max_extent: int = 3
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)

    def fresh(self, shape) -> str:
        name = f"t{len(self.shapes)}"
        self.shapes[name] = tuple(shape)
        self.inputs.append(name)
        return name

    def readable(self, shape) -> list[str]:
        names = [n for n, s in self.shapes.items() if s == tuple(shape)]
        if self.qualified:
            names = [n for n in names if n in self.inputs or n in self.assigned]
        return names


def _op(draw, word: str, full: tuple[int, ...], core: tuple[int, ...] | None, *args) -> ast.Op:
    """An operator in full form, or in Core form when ``core`` is given (sometimes)."""
    params = core if core is not None and draw(st.booleans()) else full
    wrapped = tuple(ast.Paren(a) if isinstance(a, ast.Op) and draw(st.integers(0, 3)) else a for a in args)
    return ast.Op(word, params, wrapped)


def _leaf(draw, shape, draft: Draft) -> ast.Expr:
    existing = draft.readable(shape)
    if existing and draw(st.integers(0, 2)) > 0:
        return ast.Var(draw(st.sampled_from(existing)))
    return ast.Var(draft.fresh(shape))


def teil_expr(draw, shape: tuple[int, ...], depth: int, draft: Draft) -> ast.Expr:
    """A random TeIL expression of type ``shape``."""
    if depth <= 0:
        return _leaf(draw, shape, draft)
    rank = len(shape)
    kinds = ["leaf", "add", "mul", "smul", "prod", "prod"]
    if rank:
        kinds += ["transp", "expa"]
    if rank >= 3:  # transpositions of distant dimensions exercise the Core rewriter most
        kinds += ["transp", "transp"]
    if rank + 1 <= MAX_RANK:
        kinds += ["red", "red", "diag", "proj"]
    if rank + 2 <= MAX_RANK:
        kinds += ["contr", "contr"]
    kind = draw(st.sampled_from(kinds))
    sub = lambda s: teil_expr(draw, tuple(s), depth - 1, draft)  # noqa: E731
    n_new = lambda: draw(st.integers(1, draft.max_extent))  # noqa: E731
    if kind == "leaf":
        return _leaf(draw, shape, draft)
    if kind == "add":
        return _op(draw, "add", (), None, sub(shape), sub(shape))
    if kind == "mul":
        return _op(draw, "mul", (), None, sub(shape), sub(shape))
    if kind == "smul":  # T-SMul: a scalar first
        return _op(draw, "mul", (), None, sub(()), sub(shape))
    if kind == "prod":
        k = draw(st.integers(0, rank))
        return _op(draw, "prod", (), None, sub(shape[:k]), sub(shape[k:]))
    if kind == "transp":
        i0, i1 = draw(st.integers(1, rank)), draw(st.integers(1, rank))
        inner = list(shape)
        inner[i0 - 1], inner[i1 - 1] = inner[i1 - 1], inner[i0 - 1]
        core = (i0,) if i1 == i0 + 1 else None
        return _op(draw, "transp", (i0, i1), core, sub(inner))
    if kind == "expa":  # the result's dimension i is the new one
        i = draw(st.integers(1, rank))
        return _op(draw, "expa", (i, shape[i - 1]), (shape[i - 1],) if i == 1 else None, sub(shape[: i - 1] + shape[i:]))
    if kind == "red":
        word = draw(st.sampled_from(sorted(ast.REDUCTIONS)))
        i = draw(st.integers(1, rank + 1))
        inner = shape[: i - 1] + (n_new(),) + shape[i - 1:]
        return _op(draw, word, (i,), () if i == 1 else None, sub(inner))
    if kind == "proj":
        i = draw(st.integers(1, rank + 1))
        n = n_new()
        m = draw(st.integers(1, n))
        inner = shape[: i - 1] + (n,) + shape[i - 1:]
        return _op(draw, "proj", (i, m), (m,) if i == 1 else None, sub(inner))
    if kind == "diag":  # the result keeps i0; the operand has a copy of its extent at i1 > i0
        if rank == 0:
            return _leaf(draw, shape, draft)
        i0 = draw(st.integers(1, rank))
        i1 = draw(st.integers(i0 + 1, rank + 1))
        inner = shape[: i1 - 1] + (shape[i0 - 1],) + shape[i1 - 1:]
        return _op(draw, "diag", (i0, i1), () if (i0, i1) == (1, 2) else None, sub(inner))
    if kind == "contr":
        slots: list[object] = list(shape)
        for _ in range(2):
            slots.insert(draw(st.integers(0, len(slots))), "pair")
        n = n_new()
        i0, i1 = [p + 1 for p, s in enumerate(slots) if s == "pair"]
        inner = tuple(n if s == "pair" else s for s in slots)
        return _op(draw, "contr", (i0, i1), None, sub(inner))
    raise AssertionError(kind)


@st.composite
def teil_programs(draw, max_depth: int = 4, max_stmts: int = 3, max_extent: int = 3):
    """A random well-typed TeIL program (a teil.ast.Program)."""
    qualified = draw(st.booleans())
    draft = Draft(qualified, max_extent)
    stmts = []
    for _ in range(draw(st.integers(1, max_stmts))):
        shape = tuple(draw(st.lists(st.integers(1, max_extent), min_size=0, max_size=3)))
        same = [n for n, s in draft.shapes.items() if s == shape and not (qualified and n in draft.inputs)]
        if same and draw(st.booleans()):
            target = draw(st.sampled_from(same))
        else:
            target = f"t{len(draft.shapes)}"
            draft.shapes[target] = shape
        stmts.append(ast.Assign(target, teil_expr(draw, shape, draw(st.integers(1, max_depth)), draft)))
        if target not in draft.assigned:
            draft.assigned.append(target)
    quals = {}
    if qualified:
        quals = {n: ("in" if n in draft.inputs else draw(st.sampled_from(["out", "out", None]))) for n in draft.shapes}
        if "out" not in quals.values():
            quals[stmts[-1].target] = "out"
    allocs = tuple(ast.Alloc(n, s, quals.get(n)) for n, s in draft.shapes.items())
    return ast.Program(allocs, tuple(stmts))


def teil_inputs(program: ast.Program, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {d.name: rng.uniform(-1, 1, size=d.shape) for d in program.decls
            if not program.qualified or d.qual in ("in", "inout")}


__all__ = ["teil_programs", "teil_inputs", "to_teil_source"]
