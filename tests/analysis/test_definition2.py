"""002 Definition 2 by brute force: random small operator-form statements ``x = e`` are
evaluated symbolically with abstract indices (002 Fig. 5's eval_Γ, written here over the
model language's AST, independently of the library), and "compatible by definition"
(every μ'(x_κ̄) in eval_Γ(e_ℓ̄) has κ̄ = ℓ̄) is compared with the type system's verdict
(``tensorlang.analysis.inplace.compatible`` on the lowered EIN statement).

* Soundness (002 Corollary 1): the type system says compatible ⇒ the definition holds.
  Always asserted.
* Completeness (002 Conjecture 1): the definition holds ⇒ the type system says
  compatible.  A counterexample is evidence against the conjecture (for this type
  system over EIN), not a failure: it is recorded as a hypothesis event, and
  ``python tests/analysis/test_definition2.py N`` prints how many of N random statements
  were gaps (docs/compatible.md logs the numbers).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys

from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import pytest
import tensorlang as tl
from tensorlang.analysis.inplace import compatible
from tensorlang.lang.tl import ast
from properties.generators import Draft, expr_of_shape, parenthesize_fully

GAPS: list[str] = []


# ------------------------------------------------------------------ Γ ⊢ e : t
def shape_of(e, shapes) -> tuple[int, ...]:
    if isinstance(e, ast.Var):
        return shapes[e.name]
    if isinstance(e, ast.Number):
        return ()
    if isinstance(e, (ast.Paren, ast.Neg)):
        return shape_of(e.expr, shapes)
    if isinstance(e, ast.Call):
        return shape_of(e.arg, shapes)
    if isinstance(e, ast.Outer):
        return shape_of(e.left, shapes) + shape_of(e.right, shapes)
    if isinstance(e, ast.Transpose):
        t = list(shape_of(e.expr, shapes))
        m, n = e.pair.first - 1, e.pair.second - 1
        t[m], t[n] = t[n], t[m]
        return tuple(t)
    if isinstance(e, ast.Contract):
        t = shape_of(e.expr, shapes)
        if e.grouped:
            gone = {p.first - 1 for p in e.pairs} | {p.second - 1 for p in e.pairs}
            return tuple(d for k, d in enumerate(t) if k not in gone)
        for p in e.pairs:  # one after another, each on the dimensions left by the last
            t = tuple(d for k, d in enumerate(t) if k not in (p.first - 1, p.second - 1))
        return t
    if isinstance(e, ast.Binary):
        left, right = shape_of(e.left, shapes), shape_of(e.right, shapes)
        return right if left == () else left
    if isinstance(e, ast.Stack):
        return (len(e.items),) + shape_of(e.items[0], shapes)
    raise AssertionError(e)


# ------------------------------------------------------------------ 002 Fig. 5: eval_Γ
def reads_of(x: str, e, index: tuple[str, ...], shapes, fresh) -> list[tuple[str, ...]]:
    """The abstract indices κ̄ of every μ'(x_κ̄) in eval_Γ(e_index), in order."""
    if isinstance(e, ast.Var):
        return [index] if e.name == x else []
    if isinstance(e, ast.Number):
        return []
    if isinstance(e, (ast.Paren, ast.Neg)):
        return reads_of(x, e.expr, index, shapes, fresh)
    if isinstance(e, ast.Call):
        return reads_of(x, e.arg, index, shapes, fresh)
    if isinstance(e, ast.Outer):
        k = len(shape_of(e.left, shapes))
        return reads_of(x, e.left, index[:k], shapes, fresh) + reads_of(x, e.right, index[k:], shapes, fresh)
    if isinstance(e, ast.Transpose):
        inner = list(index)
        m, n = e.pair.first - 1, e.pair.second - 1
        inner[m], inner[n] = inner[n], inner[m]
        return reads_of(x, e.expr, tuple(inner), shapes, fresh)
    if isinstance(e, ast.Contract):
        if e.grouped:  # every pair names a dimension of e before any is removed (002 §6.3)
            rank = len(index) + 2 * len(e.pairs)
            slots: list[str | None] = [None] * rank
            for p in e.pairs:
                summed = next(fresh)  # Σ_l: a fresh index for the diagonal
                slots[p.first - 1] = slots[p.second - 1] = summed
            rest = iter(index)
            return reads_of(x, e.expr, tuple(s if s is not None else next(rest) for s in slots), shapes, fresh)
        # one pair after another: the last pair applies to the result of the ones before
        *first, last = e.pairs
        inner_expr = ast.Contract(e.expr, tuple(first), False) if first else e.expr
        rank = len(index) + 2
        summed = next(fresh)
        rest = iter(index)
        inner = tuple(summed if k in (last.first - 1, last.second - 1) else next(rest) for k in range(rank))
        return reads_of(x, inner_expr, inner, shapes, fresh)
    if isinstance(e, ast.Binary):
        left, right = shape_of(e.left, shapes), shape_of(e.right, shapes)
        li = () if (left == () and e.op == "*") else index
        ri = () if right == () else index
        if left == () and right == ():
            li = ri = ()
        return reads_of(x, e.left, li, shapes, fresh) + reads_of(x, e.right, ri, shapes, fresh)
    if isinstance(e, ast.Stack):  # item s at ℓ̄ without its first index, when ℓ1 = s
        return [r for item in e.items for r in reads_of(x, item, index[1:], shapes, fresh)]
    raise AssertionError(e)


def compatible_by_definition(x: str, e, shapes) -> bool:
    """002 Definition 2: every μ'(x_κ̄) resulting from eval_Γ(e_ℓ̄) has κ̄ = ℓ̄."""
    written = tuple(f"ℓ{n + 1}" for n in range(len(shapes[x])))
    fresh = (f"λ{n}" for n in itertools.count(1))
    return all(k == written for k in reads_of(x, e, written, shapes, fresh))


# ------------------------------------------------------------------ random statements
@st.composite
def statements(draw):
    """``x = e`` with e a random well-typed operator-form expression that reads x."""
    draft = Draft(qualified=True, max_extent=3, direct_sums=False)
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))  # a scalar x is always compatible
    draft.shapes["x"] = shape
    draft.inputs.append("x")
    e = expr_of_shape(draw, shape, draw(st.integers(2, 4)), draft)
    e = _plant(draw, e, draft, shape)
    if draw(st.booleans()):
        contracted = _contracted_product(draw, draft, shape)
        if contracted is not None:
            e = ast.Binary(draw(st.sampled_from(["+", "-", "*"])), e, contracted)
    if not _mentions(e, "x"):
        e = ast.Binary(draw(st.sampled_from(["+", "*"])), e, ast.Var("x"))
    decls = "".join(f"in var {n} : [{' '.join(map(str, s))}]\n" for n, s in draft.shapes.items() if n != "x")
    text = decls + f"inout var x : [{' '.join(map(str, shape))}]\nx = {parenthesize_fully(e)}\n"
    return text, e, dict(draft.shapes)


def _plant(draw, e, draft: Draft, xshape):
    """Replace some leaves by expressions that read x inside products, contractions and
    transpositions: a leaf whose type starts or ends with x's becomes ``x # w`` or
    ``w # x``, one that is a permutation of it becomes ``x ^ [m n]``."""
    if isinstance(e, ast.Var) and e.name != "x":
        t = draft.shapes[e.name]
        r = len(xshape)
        if draw(st.integers(0, 3)) == 0:
            return e
        if len(t) > r and t[:r] == xshape and draw(st.booleans()):
            return ast.Outer(ast.Var("x"), ast.Var(draft.fresh(t[r:])))
        if len(t) > r and (r == 0 or t[-r:] == xshape):
            return ast.Outer(ast.Var(draft.fresh(t[:len(t) - r])), ast.Var("x"))
        if t == xshape:
            return ast.Var("x")
        if len(t) == r and r >= 2:
            for m, n in itertools.combinations(range(r), 2):
                swapped = list(xshape)
                swapped[m], swapped[n] = swapped[n], swapped[m]
                if tuple(swapped) == t:
                    return ast.Transpose(ast.Var("x"), ast.Pair(m + 1, n + 1))
        return e
    kids = {attr: _plant(draw, getattr(e, attr), draft, xshape)
            for attr in ("expr", "arg", "left", "right") if hasattr(e, attr)}
    if isinstance(e, ast.Stack):
        kids["items"] = tuple(_plant(draw, item, draft, xshape) for item in e.items)
    return dataclasses.replace(e, **kids) if kids else e


def _contracted_product(draw, draft: Draft, xshape):
    """``(x # w) . [m n]`` or ``(w # x) . [m n]`` of x's type, w a fresh matrix: the pair
    may take both of w's dimensions (a trace: x stays at ℓ̄), one of x's and one of w's
    (x read at the summation index), or two of x's; None when the extents cannot fit."""
    r = len(xshape)
    x_first = draw(st.booleans())
    x_at = list(range(r)) if x_first else list(range(2, r + 2))
    m, n = sorted(draw(st.lists(st.integers(0, r + 1), min_size=2, max_size=2, unique=True)))
    extent: dict[int, int] = {p: xshape[x_at.index(p)] for p in x_at}
    kept = [p for p in range(r + 2) if p not in (m, n)]
    for p, want in zip(kept, xshape):  # the result must have x's type
        if extent.setdefault(p, want) != want:
            return None
    d = extent.get(m, extent.get(n, draw(st.integers(1, 3))))
    if extent.setdefault(m, d) != d or extent.setdefault(n, d) != d:
        return None
    w = ast.Var(draft.fresh(tuple(extent[p] for p in range(r + 2) if p not in x_at)))
    product = ast.Outer(ast.Var("x"), w) if x_first else ast.Outer(w, ast.Var("x"))
    return ast.Contract(product, (ast.Pair(m + 1, n + 1),))


def _mentions(e, name) -> bool:
    if isinstance(e, ast.Var):
        return e.name == name
    return any(_mentions(c, name) for c in _children(e))


def _children(e):
    for attr in ("expr", "arg", "left", "right"):
        if hasattr(e, attr):
            yield getattr(e, attr)
    if isinstance(e, ast.Stack):
        yield from e.items


def check(case) -> tuple[bool, bool]:
    """Soundness asserted; returns (compatible by definition, by the type system)."""
    text, e, shapes = case
    by_definition = compatible_by_definition("x", e, shapes)
    verdict = compatible(tl.compile(text, backend="interp", opt=False).ein.statements[-1])
    note(f"{text}definition: {by_definition}; type system: {verdict.line()}")
    assert not (verdict.compatible and not by_definition), f"unsound:\n{text}{verdict.line()}"
    gap = by_definition and not verdict.compatible
    event("compatible" if verdict.compatible else "gap (Conjecture 1)" if gap else "incompatible")
    if gap:
        GAPS.append(f"{text.splitlines()[-1]}    -- {verdict.line()}")
    return by_definition, verdict.compatible


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=statements())
def test_the_type_system_is_sound_for_definition_2(case):
    check(case)


def test_eval_gamma_on_the_paper_examples():
    shapes = {"x": (3,), "y": (3, 3)}
    xy = ast.Contract(ast.Outer(ast.Var("x"), ast.Var("y")), (ast.Pair(2, 3),))
    yx = ast.Contract(ast.Outer(ast.Var("y"), ast.Var("x")), (ast.Pair(2, 3),))
    assert compatible_by_definition("x", xy, shapes)
    assert not compatible_by_definition("x", yx, shapes)
    assert reads_of("x", yx, ("ℓ1",), shapes, iter(["λ1"])) == [("λ1",)]


if __name__ == "__main__":  # python tests/analysis/test_definition2.py N: gap statistics
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    counts = {"cases": 0, "compatible": 0, "incompatible": 0}

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=statements())
    def sweep(case):
        counts["cases"] += 1
        _, typed = check(case)
        counts["compatible" if typed else "incompatible"] += 1

    sweep()
    print(f"{counts['cases']} statements ({counts['compatible']} compatible, {counts['incompatible']} not), "
          f"{len(GAPS)} completeness gaps")
    for line in dict.fromkeys(GAPS):
        print("  ", line)
