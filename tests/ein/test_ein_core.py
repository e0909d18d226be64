"""The EIN core (src/tensorlang/ein/): generic traversal, names, the one matcher of
"a scaled sum of a product", the rewrite-rule registry, the verifier and the evaluator.

Each property is tested on small hand-built expressions; the passes and back ends that
use the core are tested on generated programs elsewhere (tests/properties/)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.ein import forms, interp, ir, names, rewrite
from tensorlang.ein.printer import to_text
from tensorlang.ein.verify import CHECKS, InvalidIR, verify

from properties.harness import index_programs
from corpus import ROOT

EXAMPLES = ROOT / "examples"

A = ir.Tensor("A", ("i", "k"))
B = ir.Tensor("B", ("k", "j"))
x = ir.Tensor("x", ("k",))


def S(index, body):
    return ir.Sum(tuple(index), body)


def mul(*factors):
    return forms.product(factors)


# ------------------------------------------------------------------ traversal
ONE_OF_EACH = (
    A, ir.Const(2.0), ir.Delta("i", 2), ir.Epsilon(("i", "j", "k")), ir.Neg(A), ir.Apply("exp", A),
    ir.BinOp("+", A, B), S([("k", 3)], A), ir.Reduce("max", (("k", 3),), A), ir.Stack("i", (A, B)),
    ir.Concat("p", (("a", 2), ("b", 3)), (ir.Tensor("u", ("a",)), ir.Tensor("w", ("b",)))),
)


def test_every_node_kind_is_covered_by_the_examples():
    assert {type(e) for e in ONE_OF_EACH} == set(ir.KINDS)


@pytest.mark.parametrize("e", ONE_OF_EACH, ids=lambda e: type(e).__name__)
def test_replace_children_with_the_same_children_is_the_same_node(e):
    assert ir.replace_children(e, ir.children(e)) == e
    assert ir.map_children(e, lambda c: c) is e
    assert ir.with_binders(e, ir.binders(e)) == e
    assert ir.with_index_uses(e, ir.index_uses(e)) == e


def test_bottom_up_sees_rewritten_children():
    e = ir.BinOp("+", ir.Neg(ir.Const(1.0)), ir.Const(2.0))
    seen = []

    def f(node):
        seen.append(node)
        return ir.Const(-1.0) if isinstance(node, ir.Neg) else node

    assert ir.bottom_up(e, f) == ir.BinOp("+", ir.Const(-1.0), ir.Const(2.0))
    assert seen[-1] == ir.BinOp("+", ir.Const(-1.0), ir.Const(2.0))


def test_a_stack_selected_at_a_position_is_that_item():
    assert ir.with_index_uses(ir.Stack("s", (A, B)), (2,)) == B


def test_not_an_expression_is_a_type_error():
    with pytest.raises(TypeError):
        ir.children("A")


def test_rename_tensors_and_the_lambda_form():
    stmt = ir.Statement("y", (("i", 2), ("j", 2)), S([("k", 3)], mul(A, B, A)))
    body, args = stmt.operator()
    assert args == ("A", "B") and {t.name for t in ir.tensors(body)} == {"T0", "T1"}


# ------------------------------------------------------------------ names
def test_free_and_all_names():
    e = ir.BinOp("*", ir.Stack("s", (x, A)), S([("k", 3)], ir.Reduce("*", (("m", 2),), ir.Delta("k", "m"))))
    assert names.free_indices(e) == {"s", "k", "i"}
    assert names.all_names(e) == {"s", "k", "i", "m"}


def test_substitution_renames_a_binder_that_would_capture():
    e = S([("k", 3)], mul(ir.Tensor("A", ("i", "k")), ir.Tensor("x", ("k",))))
    got = names.substitute(e, {"i": "k"})
    (k, _), = got.index
    assert k != "k" and names.free_indices(got) == {"k"}
    assert ir.tensors(got)[0].indices == ("k", k)


def test_substitution_of_a_position_and_of_a_bound_name():
    e = ir.BinOp("+", ir.Stack("s", (A, B)), S([("i", 3)], ir.Tensor("A", ("i", "i"))))
    got = names.substitute(e, {"s": 2, "i": 1})
    assert got == ir.BinOp("+", ir.Tensor("B", ("k", "j")), S([("i", 3)], ir.Tensor("A", ("i", "i"))))


def test_distinct_binders_renames_siblings_and_shadowing_binders_apart():
    e = ir.BinOp("+", S([("k", 3)], x), S([("k", 3)], ir.BinOp("*", x, S([("i", 2)], A))))
    got = names.distinct_binders(e, taken={"i"})
    binders = [name for node in ir.nodes(got) for name, _ in ir.binders(node)]
    assert len(set(binders)) == 3 and "i" not in binders
    assert names.free_indices(got) == names.free_indices(e)


def test_fresh_names_avoid_what_is_taken():
    fresh = names.Fresh({"k1"})
    assert [fresh("k"), fresh("k7"), fresh("")] == ["k2", "k3", "k4"]
    lowering = names.IndexNames()
    assert [lowering.output() for _ in range(11)][-2:] == ["t", "i1"]
    temps = names.TempNames(ir.Program((ir.Decl("tmp2", ()),), ()))
    assert [temps(), temps(), temps()] == ["tmp1", "tmp3", "tmp4"]


# ------------------------------------------------------------------ forms
def test_monomial_keeps_the_scale_as_written():
    e = ir.Neg(ir.BinOp("*", S([("k", 3)], mul(A, ir.Const(2.0), ir.Neg(x))), ir.Const(math.inf)))
    m = forms.monomial(e)
    assert m.scale == ir.Neg(ir.BinOp("*", forms.HOLE, ir.Const(math.inf)))
    assert m.sums == (("k", 3),) and m.factors == (A, ir.Const(2.0), x) and m.negations == 1
    assert m.summand == mul(A, ir.Const(2.0), ir.Neg(x)) and not m.nested and not m.lone
    point = ir.Tensor("y", ("i",))
    assert m.fill(point) == ir.Neg(ir.BinOp("*", point, ir.Const(math.inf)))
    assert m.flat() == (1, (ir.Const(math.inf), A, ir.Const(2.0), x))
    assert m.coefficient() == math.inf


def test_monomial_of_a_product_with_a_sum_inside_and_of_a_lone_factor():
    m = forms.monomial(mul(ir.Const(2.0), A, S([("j", 2)], B)))
    assert m.scale is None and m.nested and m.sums == (("j", 2),)
    assert m.factors == (ir.Const(2.0), A, B)
    assert forms.monomial(ir.Neg(A)).lone and not forms.monomial(S([], A)).lone
    assert forms.monomial(ir.BinOp("+", A, B)).factors == (ir.BinOp("+", A, B),)


def test_is_constant():
    assert forms.is_constant(ir.Neg(ir.BinOp("*", ir.Const(2.0), ir.Const(3.0))))
    assert not forms.is_constant(ir.BinOp("+", ir.Const(2.0), ir.Const(3.0)))


# ------------------------------------------------------------------ the evaluator
def _program(decls, *statements):
    return ir.Program(tuple(ir.Decl(n, s, q) for n, s, q in decls), tuple(statements))


def test_the_evaluator_uses_the_shared_semantics():
    y = ir.Tensor("y", ("i",))
    program = _program(
        [("a", (3,), "in"), ("y", (3,), "out")],
        # controlled division: 0 / 0 is 0; a Σ over an index the body ignores counts n times
        ir.Statement("y", (("i", 3),), ir.BinOp("/", ir.Tensor("a", ("i",)), ir.Tensor("a", ("i",)))),
        ir.Statement("y", (("i", 3),), ir.BinOp("+", y, S([("k", 4)], ir.Const(1.0)))),
    )
    got = interp.run(program, {"a": np.array([0.0, 2.0, -1.0])})
    np.testing.assert_array_equal(got["y"], [4.0, 5.0, 5.0])


def test_the_evaluator_on_delta_epsilon_stack_and_reductions():
    e = ir.BinOp("+", ir.Epsilon(("i", "j")), ir.Stack("i", (ir.Delta("j", 2), ir.Reduce("max", (("k", 3),), ir.Tensor("v", ("k",))))))
    program = _program([("v", (3,), "in"), ("y", (2, 2), "out")], ir.Statement("y", (("i", 2), ("j", 2)), e))
    got = interp.run(program, {"v": np.array([1.0, 7.0, 3.0])})["y"]
    np.testing.assert_array_equal(got, [[0.0, 2.0], [6.0, 7.0]])
    unset = interp.run(_program([("v", (2,), None)]), {})["v"]
    assert np.isnan(unset).all()  # a variable nothing gives is ⊥


@settings(max_examples=60)
@given(program=index_programs(), seed=st.integers(0, 2**32 - 1))
def test_the_evaluator_agrees_with_the_reference_interpreter(program, seed):
    """EIN evaluated directly = the index-form program run by the .tl interpreter."""
    rng = np.random.default_rng(seed)
    qualified = any(d.qual for d in program.decls)
    inputs = {d.name: rng.uniform(-1, 1, size=d.shape) for d in program.decls
              if not qualified or d.qual in ("in", "inout")}
    expected = tl.compile(to_text(program), backend="interp")(**inputs)
    got = interp.run(program, inputs)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, err_msg=name)


#: Examples that exist to be rejected (the paper shows them as ill-typed).
REJECTED = {"tvm_fig3a_incorrect.tl"}


@pytest.mark.parametrize("path", sorted(str(p) for p in EXAMPLES.glob("**/*.tl") if p.name not in REJECTED),
                         ids=lambda p: Path(p).name)
def test_the_evaluator_runs_the_examples_as_lowered_and_as_optimized(path):
    sizes = {name: 3 for name in tl.check(path).symbols}  # examples/sizes: one binding (a size expression follows from it)
    kernel = tl.compile(path, backend="interp", params=sizes)
    rng = np.random.default_rng(3)
    inputs = {name: rng.uniform(-1, 1, size=kernel.shapes[name]) for name in kernel.required_inputs}
    expected = kernel(**inputs)
    for program in (kernel.ein, kernel.optimized.program):
        got = interp.run(program, inputs)
        for name, value in expected.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, err_msg=name)


# ------------------------------------------------------------------ the verifier
GOOD = _program(
    [("A", (2, 3), "in"), ("x", (3,), "in"), ("t", (2,), ir.TEMP), ("y", (2,), "out")],
    ir.Statement("t", (("i", 2),), S([("k", 3)], mul(ir.Tensor("A", ("i", "k")), ir.Tensor("x", ("k",))))),
    ir.Statement("y", (("i", 2),), ir.BinOp("+", ir.Tensor("t", ("i",)), ir.Stack("i", (ir.Const(1.0), ir.Delta("i", 7))))),
)


def _with_body(n: int, body: ir.Expr, program: ir.Program = GOOD) -> ir.Program:
    statements = list(program.statements)
    statements[n] = ir.Statement(statements[n].target, statements[n].index, body)
    return ir.Program(program.decls, tuple(statements))


def test_the_verifier_accepts_a_good_program():
    assert verify(GOOD) is GOOD


i2, k3 = ("i", 2), ("k", 3)
BAD = {
    "undeclared read": ("declared", _with_body(1, ir.Tensor("z", ("i",)))),
    "declared twice": ("declared", ir.Program(GOOD.decls + (ir.Decl("x", (3,)),), GOOD.statements)),
    "access rank": ("rank", _with_body(1, ir.Tensor("A", ("i",)))),
    "σ rank": ("rank", ir.Program(GOOD.decls, (ir.Statement("y", (i2, ("j", 3)), ir.Const(1.0)),))),
    "ε rank": ("rank", _with_body(1, ir.Epsilon(("i",)))),
    "σ extent": ("extent", ir.Program(GOOD.decls, (ir.Statement("y", (("i", 3),), ir.Const(1.0)),))),
    "index extent": ("extent", _with_body(0, S([k3], ir.Tensor("A", ("k", "k"))))),
    "position": ("extent", _with_body(1, ir.Tensor("A", ("i", 4)))),
    "position zero in δ": ("extent", _with_body(1, ir.Delta("i", 0))),
    "stack extent": ("extent", _with_body(1, ir.Stack("i", (ir.Const(1.0),) * 3))),
    "unbound": ("bound", _with_body(1, ir.Tensor("A", ("i", "k")))),
    "shadowing": ("shadowing", _with_body(0, S([k3], S([k3], mul(ir.Tensor("A", ("i", "k")), x))))),
    "binder shadows σ": ("shadowing", _with_body(1, ir.Reduce("max", (("i", 2),), ir.Tensor("t", ("i",))))),
    "repeated binder": ("shadowing", _with_body(0, S([k3, k3], ir.Tensor("A", ("i", "k"))))),
    "operator": ("operator", _with_body(1, ir.Apply("erf", ir.Tensor("t", ("i",))))),
    "temporary read before assigned": ("temporary", ir.Program(GOOD.decls, GOOD.statements[::-1])),
    "temporary assigned twice": ("temporary", ir.Program(GOOD.decls, GOOD.statements[:1] * 2 + GOOD.statements[1:])),
}


@pytest.mark.parametrize("case", list(BAD))
def test_the_verifier_rejects_a_broken_program_naming_the_statement(case):
    check, program = BAD[case]
    with pytest.raises(InvalidIR) as info:
        verify(program, "a test")
    assert info.value.check == check
    assert "after a test" in str(info.value)
    assert info.value.statement is None or f"statement {info.value.statement} `" in str(info.value)


def test_every_check_has_a_negative_test():
    assert {check for check, _ in BAD.values()} == set(CHECKS)


def test_optimize_with_verify_names_the_pass_that_broke_the_program(monkeypatch):
    from tensorlang import passes

    def breaks(program):  # drops the statement of the temporary, leaving its read
        return ir.Program(program.decls, program.statements[1:])

    monkeypatch.setattr(passes, "PIPELINE", (("dead", passes.eliminate_dead_code), ("broken", breaks)))
    with pytest.raises(InvalidIR, match="after the broken pass: statement 1 `y\\[i\\] = t\\[i\\]"):
        passes.optimize(GOOD, verify=True)
    monkeypatch.setenv("TENSORLANG_VERIFY", "0")
    passes.optimize(GOOD)  # not verified: no error


# ------------------------------------------------------------------ rewrite rules
def _fold_negation(e, ctx):
    return ir.Const(-e.arg.value) if isinstance(e.arg, ir.Const) else None


def _record_scope(e, ctx):
    ctx.env.append(dict(ctx.scope))
    return None


FOLD = rewrite.Rule("fold-negation", "test", "-(c) is a number", (ir.Neg,), _fold_negation)
SEE = rewrite.Rule("see-scope", "test", "records the scope at each access", (ir.Tensor,), _record_scope)


def test_the_driver_rewrites_bottom_up_and_counts_each_rule():
    e = ir.BinOp("+", ir.Neg(ir.Neg(ir.Const(2.0))), S([("k", 3)], ir.Tensor("x", ("k",))))
    seen: list = []
    tally = rewrite.Tally()
    context = rewrite.Context(names.Fresh(), {"i": 4}, tally, seen)
    got = rewrite.rewrite(e, [FOLD, SEE], context)
    assert got == ir.BinOp("+", ir.Const(2.0), S([("k", 3)], ir.Tensor("x", ("k",))))
    assert tally.counts == {"fold-negation": 2}  # the inner negation first, then the outer
    assert seen == [{"i": 4, "k": 3}]  # a rule sees the binders around its node


def test_a_rule_switched_off_is_not_applied_and_the_active_tally_is_scoped():
    e = ir.Neg(ir.Const(2.0))
    tally = rewrite.Tally(off={"fold-negation"})
    assert rewrite.rewrite(e, [FOLD], rewrite.Context(names.Fresh(), {}, tally)) == e
    assert not tally.counts
    with rewrite.counting(tally):
        assert rewrite.active() is tally
    assert rewrite.active() is not tally and not rewrite.active().off


def test_a_trial_tally_counts_only_when_merged():
    tally = rewrite.Tally(off={"x"})
    trial = tally.trial()
    trial.fire(FOLD, 3)
    assert trial.off == tally.off and not tally.counts
    tally.merge(trial)
    assert tally.counts["fold-negation"] == 3


def test_rules_print_with_their_citations():
    assert str(FOLD) == "fold-negation (test)"
