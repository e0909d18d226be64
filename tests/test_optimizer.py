"""The optimizer's passes one by one, on the programs the papers use to explain them,
plus ``--emit opt``, ``analyze``, ``--no-opt`` and ``--skip``."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main
from tensorlang.ein import ir
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


def test_fusion_merges_contractions_for_contraction_ordering():
    src = ("in var A : [6 6]\nin var B : [6 6]\nin var x : [6]\nvar t : [6 6]\nout var y : [6]\n"
           "t[i,j] = sum(k) A[i,k] * B[k,j]\ny[i] = sum(j) t[i,j] * x[j]\n")
    program = lowered(src)
    optimized = optimize(program).program
    assert program_cost(optimized).flops < program_cost(program).flops / 2  # A (B x): O(n^2), not O(n^3)
    same_results(src, A=rng.uniform(-1, 1, (6, 6)), B=rng.uniform(-1, 1, (6, 6)), x=rng.uniform(-1, 1, 6))


# ------------------------------------------------------------------ normalization
@pytest.mark.parametrize("source, expected", [
    ("y[i] = sum(j) delta[i,j] * T[j]", "y[i] = T[i]"),                      # δ elimination
    ("y[i] = sum(j) T[j] * delta[j,2]", "y[i] = T[2]"),                      # a fixed position
    ("y[i] = sum(j) T[j] * delta[j,5]", "y[i] = 0"),                         # beyond the range: selected away
    ("y[i] = 2 * 3 * T[i] + 0", "y[i] = 6 * T[i]"),                          # constant folding
    ("y[i] = T[i] * 0", "y[i] = T[i] * 0"),                                  # ⊥ * 0 is ⊥: not folded
    ("y[i] = sum(j) (M[i,j] + T[i])", "y[i] = sum(j) M[i,j] + 4 * T[i]"),  # Σ over +, binding
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
    assert got == ["s[] = 6", "t[] = 2 * (a[1] * b[2])"]


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
    assert len(kernel.optimized.program.statements) == 30


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
    no_opt = capsys.readouterr().out.splitlines()[0]
    assert main(["run", str(path), "--random-inputs", "--backend", "numpy"]) == 0
    with_opt = capsys.readouterr().out.splitlines()[0]
    assert float(no_opt.split("sum=")[1]) == pytest.approx(float(with_opt.split("sum=")[1]), rel=1e-12)
    assert main(["compile", str(path), "--emit", "opt", "--no-opt"]) == 1
    with pytest.raises(SystemExit):
        main(["compile", str(path), "--skip", "nonsense"])
