"""``S = YᵀY`` with ``Y = X W`` written as one expression (issue 43): the optimizer's
contraction order computes ``T = YᵀX; S = T W``; the schedule takes the pair back into
one Gram step over Y (schedule/gram_chain.py).  These tests check the chosen schedule
(never a time) and the results against the reference interpreter, ⊥ included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tensorlang as tl
from tensorlang.ein import ir
from tensorlang.passes import optimize
from tensorlang.schedule.gram_chain import gram_chains, merged_pair
from tensorlang.schedule.plan import plan
from tensorlang.schedule.steps import GramStep, ModeStep

needs_c = pytest.mark.skipif("c" not in tl.available_backends(), reason="the Gram step is the C target's")

ONE_STATEMENT = """in var X : [{m} {p}]
in var W : [{p} {n}]
out var S : [{n} {n}]
S[i,j] = sum(r,k,l) X[r,k] * W[k,i] * X[r,l] * W[l,j]
"""
OPERATOR_FORM = """in var X : [{m} {p}]
in var W : [{p} {n}]
out var S : [{n} {n}]
S = (X # W . [2 3]) # (X # W . [2 3]) . [1 3]
"""


@pytest.fixture
def gram_pays(monkeypatch):
    """The Gram step wherever its kernel takes the size (as on an AVX-512 machine)."""
    real = GramStep.why_not
    monkeypatch.setattr(GramStep, "why_not", lambda self, vector_bytes: real(self, 64))


def _optimized(text: str) -> ir.Program:
    return optimize(tl.compile(text, backend="interp").ein).program


def _schedule(text: str, gram: int | None = 64):
    return plan(_optimized(text), "float64", gram=gram, from_c=True)


@pytest.mark.parametrize("form", [ONE_STATEMENT, OPERATOR_FORM])
def test_the_chain_is_one_gemm_then_one_gram_step(form, gram_pays):
    text = form.format(m=4096, p=64, n=32)
    chain = _schedule(text, gram=None)  # what a target without Gram steps runs: the optimizer's three products
    assert len(chain.steps) == 3 and all(isinstance(s, ModeStep) for s in chain.steps)
    schedule = _schedule(text)
    first, second = schedule.steps
    assert isinstance(first, ModeStep) and not first.batched and (first.p, first.m, first.j, first.q) == (4096, 64, 32, 1)
    assert isinstance(second, GramStep) and (second.n, second.m, second.order) == (4096, 32, 2)
    assert second.operand == first.target  # the Gram product reads the GEMM's result, X is read once
    assert len(schedule.buffers.buffers) == 4  # X, W, S and Y: the pair's temporary is gone


def test_the_pair_is_kept_where_it_does_less_work(gram_pays):
    """n > p: (YᵀX) W costs m·p·n + p·n² against the Gram's m·n²/2: no merge."""
    steps = _schedule(ONE_STATEMENT.format(m=4096, p=8, n=64)).steps
    assert not any(isinstance(s, GramStep) for s in steps)


@pytest.mark.parametrize("body", [
    "S[i,j] = sum(r,k,l) X[r,k] * W[k,i] * X[r,l] * V[l,j]",   # two different products: not symmetric
    "S[i,j] = sum(r,k,l) X[r,k] * W[k,i] * Z[r,l] * W[l,j]",
    "S[i,j] = 2 * sum(r,k,l) X[r,k] * W[k,i] * X[r,l] * W[l,j]",  # a scale: the Gram kernel has none
])
def test_no_merge_unless_the_pair_is_exactly_ytY(body, gram_pays):
    text = ("in var X : [4096 64]\nin var Z : [4096 64]\nin var W : [64 32]\nin var V : [64 32]\n"
            f"out var S : [32 32]\n{body}\n")
    program = _optimized(text)
    assert gram_chains(program, None, 64) is program
    assert not any(isinstance(s, GramStep) for s in _schedule(text).steps)


def test_merged_pair_compares_the_definition_not_just_the_names():
    """``T = YᵀX; S = T W`` with Y = X V (not X W) is no Gram product of Y."""
    y = ir.Statement("Y", (("r", 6), ("i", 3)), ir.Sum((("k", 4),), ir.BinOp("*", ir.Tensor("X", ("r", "k")),
                                                                              ir.Tensor("V", ("k", "i")))))
    t = ir.Statement("T", (("i", 3), ("l", 4)), ir.Sum((("r", 6),), ir.BinOp("*", ir.Tensor("X", ("r", "l")),
                                                                              ir.Tensor("Y", ("r", "i")))))
    s = ir.Statement("S", (("i", 3), ("j", 3)), ir.Sum((("l", 4),), ir.BinOp("*", ir.Tensor("W", ("l", "j")),
                                                                              ir.Tensor("T", ("i", "l")))))
    shapes = {"X": (6, 4), "V": (4, 3), "W": (4, 3), "Y": (6, 3), "T": (3, 4), "S": (3, 3)}
    assert merged_pair(y, t, s, shapes) is None
    w = ir.Statement("Y", y.index, ir.Sum((("q", 4),), ir.BinOp("*", ir.Tensor("W", ("q", "i")),
                                                              ir.Tensor("X", ("r", "q")))))
    merged = merged_pair(w, t, s, shapes)
    assert merged is not None and merged.target == "S" and merged.reads == ("Y",)


@needs_c
@pytest.mark.slow
@pytest.mark.parametrize("form", [ONE_STATEMENT, OPERATOR_FORM])
def test_the_merged_kernel_matches_the_interpreter_with_undefined_entries(form, gram_pays):
    """⊥ (NaN) and ±0 among the inputs: ⊥ exactly where the reference interpreter has it
    (a ⊥ in row r of X reaches every entry, one in column i of W row and column i), the
    finite entries within rounding; finite inputs: equal to (XW)ᵀ(XW)."""
    text = form.format(m=65, p=16, n=6)  # the interpreter runs the product unsplit: small (64 MiB budget)
    kernel = tl.compile(text, backend="c")
    steps = kernel.compiled.schedule.steps  # Y = XW (loops at this size, a GEMM when larger), then Gram
    assert len(steps) == 2 and type(steps[1]) is GramStep, kernel.ir("schedule")
    reference = tl.compile(text, backend="interp")
    rng = np.random.default_rng(44)
    x, w = rng.uniform(-1, 1, (65, 16)), rng.uniform(-1, 1, (16, 6))
    np.testing.assert_allclose(kernel(X=x, W=w)["S"], (x @ w).T @ (x @ w), rtol=1e-12, atol=1e-12)
    for trial in range(4):
        xs, ws = x.copy(), w.copy()
        xs[rng.integers(0, 65, 8), rng.integers(0, 16, 8)] = -0.0
        if trial in (1, 3):
            xs[rng.integers(0, 65), rng.integers(0, 16)] = np.nan
        if trial in (2, 3):
            ws[rng.integers(0, 16), rng.integers(0, 6)] = np.nan
        got, want = kernel(X=xs, W=ws)["S"], reference(X=xs, W=ws)["S"]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        keep = ~np.isnan(want)
        np.testing.assert_allclose(got[keep], want[keep], rtol=1e-11, atol=1e-12)
        tl.testing.assert_matches_reference(text, {"X": xs, "W": ws}, {"S": got})


def test_statements_that_are_no_products_are_passed_over(gram_pays):
    """003's polynomial regression (a concat between the products): nothing to merge, and
    no statement's work is asked of a body that is no sum of products."""
    from corpus import EXAMPLES

    program = _optimized((EXAMPLES / "structure" / "polyreg2.tl").read_text())
    assert gram_chains(program, None, 64) is program


@needs_c
@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(9, 70), p=st.integers(2, 20), n=st.integers(1, 9), x_rows=st.booleans(), w_rows=st.booleans(),
       seed=st.integers(0, 2**16))
def test_any_layout_of_the_chain_agrees_with_the_interpreter(m, p, n, x_rows, w_rows, seed, gram_pays):
    """X stored [m p] or [p m], W [p n] or [n p]: whatever the optimizer's order and
    whether the pair is merged, the C kernel computes what the interpreter does."""
    xs, ws = ("r,k", "r,l") if x_rows else ("k,r", "l,r"), ("k,i", "l,j") if w_rows else ("i,k", "j,l")
    text = (f"in var X : [{m if x_rows else p} {p if x_rows else m}]\nin var W : [{p if w_rows else n} "
            f"{n if w_rows else p}]\nout var S : [{n} {n}]\n")
    text += f"S[i,j] = sum(r,k,l) X[{xs[0]}] * W[{ws[0]}] * X[{xs[1]}] * W[{ws[1]}]\n"
    rng = np.random.default_rng(seed)
    inputs = {"X": rng.uniform(-1, 1, (m, p) if x_rows else (p, m)), "W": rng.uniform(-1, 1, (p, n) if w_rows else (n, p))}
    got = tl.compile(text, backend="c")(**inputs)["S"]
    tl.testing.assert_matches_reference(text, inputs, {"S": got})
    x = inputs["X"] if x_rows else inputs["X"].T
    w = inputs["W"] if w_rows else inputs["W"].T
    np.testing.assert_allclose(got, (x @ w).T @ (x @ w), rtol=1e-10, atol=1e-12)


def _chain(overwrite: bool) -> tuple[ir.Program, dict]:
    """Y = X W; (X = 2 X;) T = YᵀX; S = T W, built directly (m = 4096, p = 64, n = 32)."""
    from tensorlang.semantics.interface import Role

    def product(target, index, summed, a, b):
        return ir.Statement(target, index, ir.Sum(summed, ir.BinOp("*", a, b)))

    y = product("Y", (("r", 4096), ("i", 32)), (("k", 64),), ir.Tensor("X", ("r", "k")), ir.Tensor("W", ("k", "i")))
    twice = ir.Statement("X", (("r", 4096), ("k", 64)), ir.BinOp("*", ir.Const(2.0), ir.Tensor("X", ("r", "k"))))
    t = product("T", (("i", 32), ("l", 64)), (("r", 4096),), ir.Tensor("X", ("r", "l")), ir.Tensor("Y", ("r", "i")))
    s = product("S", (("i", 32), ("j", 32)), (("l", 64),), ir.Tensor("W", ("l", "j")), ir.Tensor("T", ("i", "l")))
    decls = tuple(ir.Decl(name, shape) for name, shape in
                  (("X", (4096, 64)), ("W", (64, 32)), ("Y", (4096, 32)), ("T", (32, 64)), ("S", (32, 32))))
    statements = (y, twice, t, s) if overwrite else (y, t, s)
    return ir.Program(decls, statements), {"X": Role.INOUT if overwrite else Role.IN, "W": Role.IN, "S": Role.OUT}


def test_no_merge_when_y_definition_reads_something_changed_in_between():
    """Y = X W, then X changes: Yᵀ X_new W is no YᵀY, the pair stays; without the change
    the same chain is merged (S reads Y twice, T is gone)."""
    changed, roles = _chain(overwrite=True)
    assert gram_chains(changed, roles, 64) is changed
    plain, roles = _chain(overwrite=False)
    merged = gram_chains(plain, roles, 64)
    assert [s.target for s in merged.statements] == ["Y", "S"] and merged.statements[1].reads == ("Y",)
    assert "T" not in {d.name for d in merged.decls}


def _chains(copies: int, shared: int | None) -> tuple[ir.Program, dict]:
    """``copies`` chains of _chain's, one after the other (Y0, T0, S0, Y1, ...), and, with
    ``shared``, a last statement that also reads T{shared} (a second reader)."""
    from tensorlang.semantics.interface import Role

    one, _ = _chain(overwrite=False)
    shapes = {d.name: d.shape for d in one.decls}
    statements, decls, roles = [], [ir.Decl("X", shapes["X"]), ir.Decl("W", shapes["W"])], {"X": Role.IN, "W": Role.IN}
    for k in range(copies):
        names = {"X": "X", "W": "W", "Y": f"Y{k}", "T": f"T{k}", "S": f"S{k}"}
        statements += [ir.Statement(names[s.target], s.index, ir.rename_tensors(s.body, names)) for s in one.statements]
        decls += [ir.Decl(names[n], shapes[n]) for n in ("Y", "T", "S")]
        roles[f"S{k}"] = Role.OUT
    if shared is not None:
        statements.append(ir.Statement("U", (("i", 32), ("l", 64)), ir.Tensor(f"T{shared}", ("i", "l"))))
        decls.append(ir.Decl("U", (32, 64)))
        roles["U"] = Role.OUT
    return ir.Program(tuple(decls), tuple(statements)), roles


@pytest.mark.parametrize("shared", [None, 0, 1, 2])
def test_every_chain_of_a_program_merges_unless_its_temporary_has_another_reader(shared):
    """Several merges in one program (the readers and writers counted once are kept up to
    date as pairs merge): each chain becomes Y, S, except the one whose T is also read
    by a later statement."""
    program, roles = _chains(3, shared)
    merged = gram_chains(program, roles, 64)
    expected = []
    for k in range(3):
        expected += [f"Y{k}", f"T{k}", f"S{k}"] if k == shared else [f"Y{k}", f"S{k}"]
    assert [s.target for s in merged.statements] == expected + (["U"] if shared is not None else [])
    assert {f"T{k}" for k in range(3) if k != shared}.isdisjoint(d.name for d in merged.decls)
