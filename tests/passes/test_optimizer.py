"""The optimizer's passes one by one, on the programs the papers use to explain them,
plus ``--emit opt``, ``analyze``, ``--no-opt`` and ``--skip``."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main
from tensorlang.ein import interp, ir
from tensorlang.ein.printer import statement_to_text
from tensorlang import passes
from tensorlang.analysis.cost import program_cost
from tensorlang.ein.verify import verify


def _verified(run):
    """The pass, with the IR verifier run on what it is given and what it returns."""
    def checked(program):
        return verify(run(verify(program, "lowering")), run.__name__)
    return checked


# every pass these tests call is checked by the IR verifier before and after it runs
eliminate_dead_code, fuse, normalize, order_contractions, split, value_number = map(_verified, (
    passes.eliminate_dead_code, passes.fuse, passes.normalize, passes.order_contractions, passes.split,
    passes.value_number))


def optimize(program, skip=()):
    return passes.optimize(program, skip, verify=True)


def lowered(src: str) -> ir.Program:
    return tl.compile(src, backend="interp").ein


def bodies(program: ir.Program) -> list[str]:
    return [statement_to_text(s) for s in program.statements]


def same_results(src: str, **inputs):
    """Every back end, optimized or not, agrees with the interpreter."""
    expected = tl.compile(src, backend="interp")(**inputs)
    for backend in ("numpy", "c"):
        for opt in (True, False):
            got = tl.compile(src, backend=backend, opt=opt)(**inputs)
            for name, value in expected.items():
                np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-14, err_msg=f"{backend} opt={opt}")


rng = np.random.default_rng(7)


# ------------------------------------------------------------------ dead code
def test_dead_code_drops_what_no_out_depends_on():
    src = ("in var a : [3]\nvar t : [3]\nvar u : [3]\nout var y : [3]\n"
           "t[i] = 2 * a[i]\nu[i] = 3 * a[i]\ny[i] = t[i] + 1\n")
    assert bodies(eliminate_dead_code(lowered(src))) == ["t[i] = 2 * a[i]", "y[i] = t[i] + 1"]
    assert "u" not in eliminate_dead_code(lowered(src)).shapes


def test_dead_code_drops_an_overwritten_assignment_but_keeps_every_variable_of_an_unqualified_program():
    src = "var a : [2]\nvar y : [2]\ny[i] = 2 * a[i]\ny[i] = 3 * a[i]\na[i] = y[i]\n"
    assert bodies(eliminate_dead_code(lowered(src))) == ["y[i] = 3 * a[i]", "a[i] = y[i]"]


# ------------------------------------------------------------------ fusion
def test_fusion_substitutes_a_single_use_temporary():
    src = "in var a : [3]\nin var D : [3]\nvar t : [3]\nout var y : [3]\nt[i] = exp(a[i])\ny = D * t\n"
    assert bodies(fuse(lowered(src))) == ["y[i] = D[i] * exp(a[i])"]


def test_fusion_renames_a_fused_binder_that_the_use_already_binds():
    # found by the property tests: t's sum(j) landed inside the use's sum(i,j), which
    # index notation reads as a repeated index (there is no shadowing)
    # (extents of 1: the use then evaluates t once per point of t, so fusing adds no work)
    src = ("in var a : [1]\nin var b : [1]\nin var c : [1]\nin var d : [1]\nvar t : [1]\nout var y : []\n"
           "t[i] = tanh(sum(j) a[i] * b[j])\ny[] = sum(i,j) c[i] * t[i] * d[j]\n")
    fused = fuse(lowered(src))
    assert len(fused.statements) == 1
    text = "\n".join(bodies(fused))
    assert "sum(j)" not in text.split("tanh", 1)[1], text
    tl.check(src.split("t[i] =")[0] + text + "\n")  # the fused program is well-typed index notation
    same_results(src, a=rng.normal(size=1), b=rng.normal(size=1), c=rng.normal(size=1), d=rng.normal(size=1))


def test_fusion_keeps_a_temporary_read_twice_or_whose_inputs_change_in_between():
    twice = "in var a : [3]\nvar t : [3]\nout var y : [3]\nout var z : [3]\nt[i] = exp(a[i])\ny = t\nz = 2 * t\n"
    assert len(fuse(lowered(twice)).statements) == 3
    changed = ("in var a : [3]\nvar b : [3]\nvar t : [3]\nout var y : [3]\n"
               "b = a\nt[i] = exp(b[i])\nb = 2 * a\ny = t + b\n")
    assert len(fuse(lowered(changed)).statements) == 4
    same_results(changed, a=rng.uniform(-1, 1, 3))


def test_fusion_does_not_recompute_a_costly_temporary_in_a_larger_loop_nest():
    src = ("in var A : [4 4]\nin var B : [4 5]\nvar t : [4]\nout var y : [4 5]\n"
           "t[i] = sum(k) A[i,k]\ny[i,j] = exp(t[i]) * B[i,j]\n")
    assert len(fuse(lowered(src)).statements) == 2


SOFTMAX = ("in var x : [{B} {n}]\nin var w : [{n} {m}]\nvar t : [{B} {m}]\nvar e : [{B} {m}]\nvar s : [{B}]\n"
           "out var y : [{B} {m}]\nt[b,j] = sum(k) x[b,k] * w[k,j]\ne[b,j] = {use}\ns[b] = sum(j) e[b,j]\n"
           "y[b,j] = e[b,j] / s[b]\n")


@pytest.mark.parametrize("use", ["exp(t[b,j])", "t[b,j] / x[b,1]", "t[b,j] + w[1,j]", "abs(t[b,j])"])
def test_fusion_keeps_a_contraction_whose_use_is_not_a_product(use):
    """Fused under exp, /, + or abs, the matrix product would be computed inside an
    elementwise loop, a dot product per entry: it stays a statement of its own, so the C
    target calls BLAS for it where that pays (and otherwise runs its product loops)."""
    src = SOFTMAX.format(B=40, n=32, m=48, use=use)
    fused = fuse(lowered(src))
    assert bodies(fused)[0] == "t[b,j] = sum(k) x[b,k] * w[k,j]" and len(fused.statements) == 4
    large = tl.compile(SOFTMAX.format(B=512, n=256, m=512, use=use), backend="numpy")
    assert "tl_gemm(0, 0, 512LL, 512LL, 256LL, v0, 256LL, v1, 512LL," in large.code("c")


def test_fusion_still_substitutes_reductions_elementwise_chains_and_contractions_under_products():
    reduction = "in var a : [3 4]\nvar s : [3]\nout var y : [3]\ns[i] = sum(j) a[i,j]\ny[i] = sqrt(s[i])\n"
    assert bodies(fuse(lowered(reduction))) == ["y[i] = sqrt(sum(j) a[i,j])"]
    chain = "in var a : [3]\nvar t : [3]\nvar u : [3]\nout var y : [3]\nt = exp(a)\nu[i] = t[i] + 1\ny = sqrt(u)\n"
    assert bodies(fuse(lowered(chain))) == ["y[i] = sqrt(exp(a[i]) + 1)"]
    scaled = SOFTMAX.format(B=4, n=3, m=5, use="2 * t[b,j]")
    assert bodies(fuse(lowered(scaled)))[0] == "e[b,j] = 2 * sum(k) x[b,k] * w[k,j]"
    same_results(SOFTMAX.format(B=40, n=32, m=48, use="exp(t[b,j])"), x=rng.uniform(-1, 1, (40, 32)),
                 w=rng.uniform(-1, 1, (32, 48)))


def test_fusion_merges_contractions_for_contraction_ordering():
    src = ("in var A : [6 6]\nin var B : [6 6]\nin var x : [6]\nvar t : [6 6]\nout var y : [6]\n"
           "t[i,j] = sum(k) A[i,k] * B[k,j]\ny[i] = sum(j) t[i,j] * x[j]\n")
    program = lowered(src)
    optimized = optimize(program).program
    assert program_cost(optimized).flops < program_cost(program).flops / 2  # A (B x): O(n^2), not O(n^3)
    same_results(src, A=rng.uniform(-1, 1, (6, 6)), B=rng.uniform(-1, 1, (6, 6)), x=rng.uniform(-1, 1, 6))


# ------------------------------------------------------------------ normalization
@pytest.mark.parametrize("source, expected", [
    ("y[i] = sum(j) delta[i,j] * T[j]", "y[i] = T[i] + 0"),                  # δ elimination (+0: a Σ is never -0)
    ("y[i] = sum(j) T[j] * delta[j,2]", "y[i] = T[2] + 0"),                     # a fixed position
    ("y[i] = sum(j) T[j] * delta[j,5]", "y[i] = 0"),                         # beyond the range: selected away
    ("y[i] = 2 * 3 * T[i] - 0", "y[i] = 6 * T[i]"),                          # constant folding; x - 0 is x
    ("y[i] = T[i] * 0", "y[i] = T[i] * 0"),                                  # ⊥ * 0 is ⊥: not folded
    ("y[i] = sum(j) (M[i,j] + T[i])", "y[i] = sum(j) (M[i,j] + T[i])"),    # Σ over + only where δ/ε select
    ("y[i] = sum(j) (delta[i,j] * M[i,j] + T[i])", "y[i] = M[i,i] + 4 * T[i] + 0"),  # Σ over +, δ, binding
    ("y[i] = sum(j) (M[i,j] + N[i,j])", "y[i] = sum(j) (M[i,j] + N[i,j])"),  # no gain: kept
    ("y[i] = sum(j) T[i] * M[i,j]", "y[i] = T[i] * sum(j) M[i,j]"),          # summation binding
    ("y[i] = sum(j,k) M[i,j] * N[i,k]", "y[i] = (sum(j) M[i,j]) * sum(k) N[i,k]"),  # splitting
    ("y[i] = sum(j,k) M[j,k]", "y[i] = sum(j,k) M[j,k]"),
])
def test_normalization_rules(source, expected):
    src = "in var T : [4]\nin var M : [4 4]\nin var N : [4 4]\nout var y : [4]\n" + source + "\n"
    assert bodies(normalize(lowered(src))) == [expected]
    same_results(src, T=rng.uniform(-1, 1, 4), M=rng.uniform(-1, 1, (4, 4)), N=rng.uniform(-1, 1, (4, 4)))


def test_delta_between_different_extents_stays():
    src = "in var x : [4]\nout var y : [3]\ny[i] = sum(k) delta[i,k] * x[k]\n"
    assert bodies(normalize(lowered(src))) == ["y[i] = sum(k) delta[i,k] * x[k]"]


def test_two_levi_civita_symbols_become_deltas():
    src = ("in var a : [3]\nin var b : [3]\nout var s : []\nout var t : []\n"
           "s[] = sum(i,j,k) eps[i,j,k] * eps[i,j,k]\n"             # Σ ε_ijk ε_ijk = 6
           "t[] = sum(i,j) eps[i,j] * eps[i,j] * a[1] * b[2]\n")    # rank 2: Σ ε_ij ε_ij = 2
    got = bodies(normalize(lowered(src)))
    assert got == ["s[] = 6", "t[] = 2 * (a[1] * b[2]) + 0"]  # + 0: a Σ is never -0


def test_trace_of_an_outer_product_is_a_dot_product():
    src = "in var a : [5]\nin var b : [5]\nvar M : [5 5]\nout var s : []\nM[i,j] = a[i] * b[j]\ns[] = sum(i) M[i,i]\n"
    assert bodies(optimize(lowered(src)).program) == ["s[] = sum(i) a[i] * b[i]"]


def test_dot_of_cross_products_is_the_binet_cauchy_identity():
    src = ("in var a : [3]\nin var b : [3]\nin var c : [3]\nin var d : [3]\nvar x : [3]\nvar y : [3]\nout var s : []\n"
           "x[i] = sum(j,k) eps[i,j,k] * a[j] * b[k]\ny[i] = sum(j,k) eps[i,j,k] * c[j] * d[k]\ns[] = sum(i) x[i] * y[i]\n")
    assert bodies(optimize(lowered(src)).program) == [
        "s[] = (sum(j) a[j] * c[j]) * sum(k) b[k] * d[k] - (sum(j) a[j] * d[j]) * sum(k) b[k] * c[k]"]
    vectors = {n: rng.uniform(-1, 1, 3) for n in "abcd"}
    same_results(src, **vectors)
    expected = np.dot(np.cross(vectors["a"], vectors["b"]), np.cross(vectors["c"], vectors["d"]))
    np.testing.assert_allclose(tl.compile(src)(**vectors)["s"], expected, rtol=1e-12)


def test_teil_equational_rules_hold_in_the_optimized_program(tmp_path):
    path = tmp_path / "rules.teil"
    path.write_text("in alloc A : [4, 5]\nin alloc S : [4, 4]\nout alloc C : [4, 5]\nout alloc D : [4, 5]\n"
                    "out alloc E : [4]\n"
                    "C = proj 1 2 (expa 1 3 A)\n"        # proj ∘ expa = id
                    "D = red+ 1 (expa 1 3 A)\n"          # red+ over an expanded dimension = n · e
                    "E = diag 1 2 (transp 1 2 S)\n")     # diag ∘ transp = diag
    assert bodies(tl.compile(str(path)).optimized.program) == ["C[i,j] = A[i,j]", "D[i,j] = 3 * A[i,j]", "E[i] = S[i,i]"]


# ------------------------------------------------------------------ split, order, cse
def test_split_lifts_a_recomputed_function_out_of_the_loop_nest():
    src = "in var a : [4]\nin var B : [4 6]\nout var y : [4 6]\ny[i,j] = exp(a[i]) * B[i,j]\n"
    assert bodies(split(lowered(src))) == ["tmp1[i] = exp(a[i])", "y[i,j] = tmp1[i] * B[i,j]"]
    same_results(src, a=rng.uniform(-1, 1, 4), B=rng.uniform(-1, 1, (4, 6)))


INTERPOLATION = ("in var A : [4 4]\nin var B : [4 4]\nin var C : [4 4]\nin var u : [3 4 4 4]\nout var v : [3 4 4 4]\n"
                 "v = u # A # B # C . [[2 6] [3 8] [4 10]]\n")


def test_contraction_ordering_makes_interpolation_order_n4():
    program = lowered(INTERPOLATION)
    ordered = order_contractions(normalize(program))
    assert len(ordered.statements) == 3
    for stmt in ordered.statements:  # each step contracts one index of one matrix with the tensor
        assert isinstance(stmt.body, ir.Sum) and len(stmt.body.index) == 1
        assert len(ir.tensors(stmt.body)) == 2
    E, n = 3, 4
    assert program_cost(program).flops == E * n**6 * (3 + 1)  # 3 products and the sum's addition
    assert program_cost(ordered).flops == 3 * E * n**4 * 2
    same_results(INTERPOLATION, **{m: rng.uniform(-1, 1, (4, 4)) for m in "ABC"}, u=rng.uniform(-1, 1, (3, 4, 4, 4)))


def _mttkrp(n: int, r: int) -> str:
    return (f"in var X : [{n} {n} {n}]\nin var B : [{n} {r}]\nin var C : [{n} {r}]\nout var M : [{n} {r}]\n"
            "M[i,r] = sum(j,k) X[i,j,k] * B[j,r] * C[k,r]\n")


@pytest.mark.parametrize("n, r, fused", [(64, 16, True), (32, 8, True), (16, 8, False), (8, 4, False)])
def test_an_order_of_three_within_the_slack_fuses_with_its_reader(n, r, fused):
    """MTTKRP: the fewest flops build the Khatri-Rao product B[j,r] C[k,r] first; summing X
    with C over X's last index first costs 1/(2n+1) more, within FUSED_SLACK = 1/64 from
    n = 32 on, and its intermediate leads with i as the result does (docs/optimizer.md)."""
    first = bodies(order_contractions(normalize(lowered(_mttkrp(n, r)))))[0]
    assert (first == "tmp1[i,j,r] = sum(k) X[i,j,k] * C[k,r]") == fused, first
    assert fused or first.startswith("tmp1[j,r,k] = "), first
    if n == 32:
        steps = tl.compile(_mttkrp(n, r), backend="c").schedule.steps
        assert len(steps) == 1 and steps[0].fusion is not None  # one loop over i, the intermediate a slice
        same_results(_mttkrp(n, r), X=rng.uniform(-1, 1, (n, n, n)), B=rng.uniform(-1, 1, (n, r)),
                     C=rng.uniform(-1, 1, (n, r)))


def test_value_numbering_reuses_an_earlier_statement():
    src = ("in var a : [3]\nin var b : [3]\nvar t : [3]\nvar s : [3]\nout var y : [3]\nout var z : [3]\n"
           "t[i] = a[i] * b[i]\ns[j] = a[j] * b[j]\ny = t + s\nz[i] = a[i] * b[i]\n")
    got = bodies(value_number(lowered(src)))
    assert got == ["t[i] = a[i] * b[i]", "y[i] = t[i] + t[i]", "z[i] = t[i]"]
    same_results(src, a=rng.uniform(-1, 1, 3), b=rng.uniform(-1, 1, 3))


def test_value_numbering_sees_a_changed_argument():
    src = ("in var a : [3]\nvar t : [3]\nvar s : [3]\nout var y : [3]\n"
           "t[i] = 2 * a[i]\ns[i] = t[i]\nt[i] = 3 * a[i]\ny[i] = s[i] + t[i]\n")
    same_results(src, a=rng.uniform(-1, 1, 3))


def test_a_chain_of_thirty_statements_keeps_its_ir_small():
    lines = ["in var x0 : [8 8]", "in var x1 : [8 8]"] + [f"var x{k} : [8 8]" for k in range(2, 31)] + ["out var x31 : [8 8]"]
    lines += [f"x{k}[i,j] = sum(m) x{k - 1}[i,m] * x{k - 2}[m,j] + 0.5 * x{k - 1}[i,j]" for k in range(2, 32)]
    kernel = tl.compile("\n".join(lines) + "\n")
    log = kernel.optimized.log
    assert all(record.nodes <= 2 * log[0].nodes for record in log)
    assert len(kernel.optimized.program.statements) == 60  # each product under `+` hoisted (passes/hoist.py)


# ------------------------------------------------------------------ interface
def test_opt_switches_in_the_api():
    k = tl.compile(INTERPOLATION, backend="numpy", opt=False)
    assert k.executed is k.ein
    k = tl.compile(INTERPOLATION, backend="numpy", skip_passes=["order"])
    assert len(k.executed.statements) == 1
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(INTERPOLATION, skip_passes=["nonsense"])
    assert info.value.code == "input" and "nonsense" in str(info.value)


def test_cli_emit_opt_analyze_no_opt_and_skip(tmp_path, capsys):
    path = tmp_path / "interp.tl"
    path.write_text(INTERPOLATION)
    assert main(["compile", str(path), "--emit", "opt"]) == 0
    out = capsys.readouterr().out
    assert out.count("sum(") == 3 and "temp" not in out.split("//")[0] and "a compiler temporary" in out
    tl.check(out)  # the optimized program is a program
    assert main(["compile", str(path), "--emit", "opt", "--skip", "order"]) == 0
    assert capsys.readouterr().out.count("sum(") == 1
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "before the optimizer" in out and "after the optimizer" in out and "fewer" in out
    for name in ("dead", "fuse", "normalize", "split", "order", "cse"):
        assert f"  {name} " in out
    assert main(["run", str(path), "--random-inputs", "--no-opt", "--backend", "numpy"]) == 0
    no_opt = capsys.readouterr().out
    assert main(["run", str(path), "--random-inputs", "--backend", "numpy"]) == 0
    with_opt = capsys.readouterr().out

    def checksum(out: str) -> float:
        return float(out.split("checksum=")[1].split()[0])

    assert checksum(no_opt) == pytest.approx(checksum(with_opt), rel=1e-12)
    assert main(["compile", str(path), "--emit", "opt", "--no-opt"]) == 1
    capsys.readouterr()
    assert main(["compile", str(path), "--skip", "nonsense"]) == 1  # error[input], naming passes and rules
    err = capsys.readouterr().err
    assert "error[input]" in err and "nonsense" in err and "order" in err and "delta-elimination" in err


# ------------------------------------------------------------------ rules
DECLS = ("in var T : [4]\nin var U : [2]\nin var M : [4 4]\nin var N : [4 4]\nin var a : [3]\nin var b : [3]\n"
         "in var D : [4]\nvar t : [4]\nout var y : [4]\nout var z : [2]\nout var s : []\n")

#: A program in which each rule fires (the other results are set to 0).
RULE_EXAMPLES = {
    "fusion": "t[i] = exp(T[i])\ny = D * t",
    "constant-folding": "y[i] = 2 * 3 * T[i]",
    "function-folding": "y[i] = exp(0) * T[i] + T[i]",
    "multiplicative-identity": "y[i] = T[i] * 1",
    "multiply-by-minus-one": "y[i] = T[i] * -1",
    "additive-identity": "y[i] = T[i] - 0",
    "double-negation": "y[i] = -(-T[i])",
    "delta-identical-indices": "y[i] = delta[i,i] + T[i]",
    "delta-of-positions": "y[i] = delta[1,2] + T[i]",
    "epsilon-repeated-index": "z[i] = eps[i,i] + U[i]",
    "epsilon-of-positions": "z[i] = eps[2,1] * U[i]",
    "unused-reduction-index": "y[i] = max(k) T[i] * eps[k,k]",
    "sum-normal-form": "y[i] = sum(j) delta[i,j] * T[j]",
    "distribution": "y[i] = sum(j) (delta[i,j] * M[i,j] + T[i])",  # only where δ or ε select (issue 16)
    "delta-elimination": "y[i] = sum(j) delta[i,j] * T[j]",
    "epsilon-epsilon": "s[] = sum(i,j,k) eps[i,j,k] * eps[i,j,k] * a[i]",
    "unused-summation-index": "y[i] = sum(j) (delta[i,j] * M[i,j] + T[i])",
    "summation-binding": "y[i] = sum(j) T[i] * M[i,j]",
    "split-independent-factors": "y[i] = sum(j,k) M[i,j] * N[i,k]",
    "private-summation-index": "y[i] = sum(j,k) M[i,j] * N[j,k]",
}


def _rule_program(rule: str) -> ir.Program:
    body = RULE_EXAMPLES[rule]
    zeros = [f"{v}[{idx}] = 0" for v, idx in (("y", "i"), ("z", "i"), ("s", "")) if not body.startswith(v)
             and f"\n{v} " not in body]
    return lowered(DECLS + body + "\n" + "\n".join(zeros) + "\n")


def test_every_rule_has_an_example_and_rules_and_passes_have_distinct_names():
    assert set(RULE_EXAMPLES) == set(passes.RULE_NAMES)
    assert not set(passes.RULE_NAMES) & set(passes.PASS_NAMES)
    assert all(rule.citation and rule.summary for rule in passes.RULES)


@pytest.mark.parametrize("rule", list(RULE_EXAMPLES))
def test_a_rule_fires_is_counted_and_can_be_switched_off(rule):
    program = _rule_program(rule)
    fired = dict(optimize(program).rules)
    assert fired.get(rule, 0) >= 1, fired
    off = optimize(program, skip=[rule])
    assert rule not in dict(off.rules)
    rng = np.random.default_rng(1)
    inputs = {d.name: rng.uniform(-1, 1, d.shape) for d in program.decls if d.qual == "in"}
    expected = interp.run(program, inputs)
    for result in (optimize(program).program, off.program):
        got = interp.run(result, inputs)
        for name in ("y", "z", "s"):
            np.testing.assert_allclose(got[name], expected[name], rtol=1e-12, atol=1e-14, err_msg=name)


def test_skipping_a_rule_in_the_api_and_on_the_command_line(tmp_path, capsys):
    src = DECLS + "y[i] = sum(j) delta[i,j] * T[j]\nz[i] = U[i]\ns[] = 0\n"
    assert "delta" not in tl.compile(src).ir("opt")
    kernel = tl.compile(src, skip_passes=["delta-elimination"])
    assert "delta[i,j]" in kernel.ir("opt")
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(src, skip_passes=["delta-elimnation"])
    assert info.value.code == "input" and "passes: dead" in str(info.value) and "rules: fusion" in str(info.value)
    path = tmp_path / "delta.tl"
    path.write_text(src)
    assert main(["compile", str(path), "--emit", "opt", "--skip", "delta-elimination", "--skip", "cse"]) == 0
    assert "delta[i,j]" in capsys.readouterr().out
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    rules = out.split("rules (times fired")[1]
    assert out.index("passes (IR nodes") < out.index("rules (times fired")
    assert "delta-elimination" in rules and "sum-normal-form" in rules and "fusion" not in rules
    assert main(["analyze", str(path), "--skip", "sum-normal-form"]) == 0
    assert "delta-elimination" not in capsys.readouterr().out.split("rules")[-1]


@pytest.mark.parametrize("backend", ["numpy", "c"])
@pytest.mark.parametrize("opt", [True, False])
def test_a_sum_written_before_a_product_meets_an_infinity_as_one_sum(backend, opt):
    """(Σ_a x_aak) · y_k: the trace is summed first on every target, as the source says, so an
    infinite y meets the finite trace (inf), not each term of it (inf − inf = ⊥)."""
    if backend == "c" and "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    text = "var v0 : [1 2 3]\nvar v1 : [2 2 1]\nvar v2 : [1 1 2 3]\nv0 = (v1 . [[0 1]]) # v2 . [[0 1]]\n"
    v1 = np.zeros((2, 2, 1))
    v1[0, 0, 0], v1[1, 1, 0] = 1.0, -0.5
    v2 = np.ones((1, 1, 2, 3))
    v2[0, 0, 1, 2] = np.inf
    want = tl.compile(text, backend="interp", lang="cfd")(v1=v1, v2=v2)["v0"]
    assert want[0, 1, 2] == np.inf
    got = tl.compile(text, backend=backend, lang="cfd", opt=opt)(v1=v1, v2=v2)["v0"]
    np.testing.assert_array_equal(got, want)
    if opt:  # the trace has a statement of its own, read by the product
        assert "= sum(a) v1[a,a,k]\n" in tl.compile(text, backend=backend, lang="cfd").ir("opt")


def test_private_summation_index_leaves_longer_products_to_the_contraction_order():
    """Only a product of two has its private indices summed first: a chain of three is ordered by
    opt_einsum's path as before (the rule had made an [n,k,d] outer product and lost the GEMM
    step), and switching off summation-binding or split-independent-factors still keeps a sum as
    written (the rule did their rewrites)."""
    chain = "in var A : [30 20 10]\nin var B : [10 15]\nin var E : [15 5]\nout var R : [30 5]\n" \
            "R[n,c] = sum(t,k,d) A[n,t,k] * B[k,d] * E[d,c]\n"
    temporaries = [line for line in tl.compile(chain, backend="numpy").ir("opt").splitlines() if line.startswith("var tmp")]
    assert temporaries and all(line.count(" ") == 4 for line in temporaries), temporaries  # rank 2: "var tmp1 : [a b]"
    bound = "in var M : [4 4]\nin var T : [4]\nout var y : [4]\ny[i] = sum(j) T[i] * M[i,j]\n"
    assert tl.compile(bound, skip_passes=["summation-binding"]).ir("opt").endswith("y[i] = sum(j) T[i] * M[i,j]\n")
    split = "in var M : [4 4]\nin var N : [4 4]\nout var y : [4]\ny[i] = sum(j,k) M[i,j] * N[i,k]\n"
    assert tl.compile(split, skip_passes=["split-independent-factors"]).ir("opt").endswith("y[i] = sum(j,k) M[i,j] * N[i,k]\n")
