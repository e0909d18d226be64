"""The hoist pass (passes/hoist.py): a contraction written inside a nonlinear expression
gets a statement of its own, so the product kernels (BLAS from C) compute it, with the
interpreter's results (±0, ±inf and ⊥ among the inputs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang import passes
from tensorlang.ein.printer import statement_to_text
from tensorlang.ein.verify import verify

from properties.harness import assert_meets_ein_oracle, special_inputs

SOFTMAX = ("in var x : [{B} {n}]\nin var w : [{n} {m}]\nout var y : [{B} {m}]\n"
           "y[b,j] = exp(sum(k) x[b,k] * w[k,j]) / sum(l) exp(sum(k) x[b,k] * w[k,l])\n")


def hoisted(src: str) -> list[str]:
    program = tl.compile(src, backend="interp").ein
    return [statement_to_text(s) for s in verify(passes.hoist(verify(program, "lowering")), "hoist").statements]


def test_one_statement_softmax_calls_gemm_once():
    kernel = tl.compile(SOFTMAX.format(B=512, n=256, m=512), backend="c")
    opt = kernel.ir("opt")
    assert "tmp1[b,j] = sum(k) x[b,k] * w[k,j]" in opt and opt.count("sum(k)") == 1, opt  # cse: one product
    gemms = [line.strip() for line in kernel.code("c").splitlines() if line.strip().startswith("if (tl_gemm(")]
    assert len(gemms) == 1 and gemms[0].startswith("if (tl_gemm(0, 0, 512LL, 512LL, 256LL, v0, 256LL, v1, 512LL,"), gemms
    skipped = tl.compile(SOFTMAX.format(B=512, n=256, m=512), backend="c", skip_passes=["hoist"])
    assert "if (tl_gemm(" not in skipped.code("c")  # as written: a dot product per entry


@pytest.mark.parametrize("body, lifted", [
    ("exp(sum(k) x[b,k] * w[k,j])", "exp(tmp1[b,j])"),
    ("1 / sum(k) x[b,k] * w[k,j]", "1 / tmp1[b,j]"),
    ("(sum(k) x[b,k] * w[k,j]) / 2", "tmp1[b,j] / 2"),
    ("abs(2 * sum(k) x[b,k] * w[k,j])", "abs(2 * tmp1[b,j])"),
    ("(sum(k) x[b,k] * w[k,j]) + w[1,j]", "tmp1[b,j] + w[1,j]"),
    ("max(k) x[b,k] * sum(l) x[b,l] * w[l,j]", "max(k) x[b,k] * tmp1[b,j]"),
])
def test_a_contraction_under_anything_but_products_negations_and_sums_is_hoisted(body, lifted):
    src = f"in var x : [4 3]\nin var w : [3 5]\nout var y : [4 5]\ny[b,j] = {body}\n"
    got = hoisted(src)
    assert len(got) == 2 and got[0].startswith("tmp1[b,j] = sum(") and got[1] == f"y[b,j] = {lifted}", got


def test_an_enclosing_sum_index_becomes_an_index_of_the_temporary():
    src = "in var x : [4 3]\nin var w : [3 5]\nout var y : [4]\ny[b] = log(sum(j) exp(sum(k) x[b,k] * w[k,j]))\n"
    assert hoisted(src) == ["tmp1[b,j] = sum(k) x[b,k] * w[k,j]", "y[b] = log(sum(j) exp(tmp1[b,j]))"]


@pytest.mark.parametrize("body", [
    "y[b,j] = 2 * sum(k) x[b,k] * w[k,j]",             # already a contraction: nothing to hoist
    "y[b,j] = -(sum(k) x[b,k] * w[k,j]) * x[b,1]",
    "y[b,j] = exp(sum(k) x[b,k]) * w[1,j]",           # a sum of one tensor: no product kernel
    "y[b,j] = exp(sum(k) x[1,k] * w[k,1]) * w[1,j]",  # a dot product to one value
    "y[b,j] = exp(sum(k) x[b,k] * w[k,1]) * w[1,1]",  # ... unless it has several (below)
])
def test_what_is_not_hoisted(body):
    src = f"in var x : [4 3]\nin var w : [3 5]\nout var y : [4 5]\n{body}\n"
    got = hoisted(src)
    if "x[b,k] * w[k,1]" in body:
        assert got == ["tmp1[b] = sum(k) x[b,k] * w[k,1]", "y[b,j] = exp(tmp1[b]) * w[1,1]"]
    else:
        assert len(got) == 1 and "tmp" not in got[0], got


def test_a_dot_product_of_vectors_under_exp_stays_as_written():
    src = "in var a : [100]\nin var c : [100]\nout var s : []\ns[] = exp(sum(k) a[k] * c[k])\n"
    assert len(tl.compile(src, backend="c").optimized.program.statements) == 1


def test_a_temporary_past_the_memory_budget_is_not_made(monkeypatch):
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(8 * 19))  # 19 entries: not the 20 of tmp1
    src = "in var x : [4 3]\nin var w : [3 5]\nout var y : [4 5]\ny[b,j] = exp(sum(k) x[b,k] * w[k,j])\n"
    assert hoisted(src) == ["y[b,j] = exp(sum(k) x[b,k] * w[k,j])"]


def test_hoist_is_a_pass_the_log_names_and_skip_leaves_out():
    kernel = tl.compile(SOFTMAX.format(B=4, n=3, m=5), backend="numpy")
    assert "hoist" in passes.PASS_NAMES and "hoist" in [r.name for r in kernel.optimized.log]
    skipped = tl.compile(SOFTMAX.format(B=4, n=3, m=5), backend="numpy", skip_passes=["hoist"]).ir("opt")
    assert "exp(sum(k) x[b,k] * w[k,j])" in skipped  # (split still lifts the denominator, a sum over j)


WRAPPERS = ["exp({c})", "log(abs({c}))", "sqrt({c})", "tanh({c}) / {c}", "1 / ({c})", "x[b,1] / ({c})",
            "({c}) + x[b,1]", "-(abs({c}))", "sin(2 * {c})", "({c}) - ({c})"]


@settings(max_examples=30, deadline=None)
@given(wrapper=st.sampled_from(WRAPPERS), outer=st.sampled_from(["none", "sum", "max", "prod"]),
       transposed=st.booleans(), n=st.integers(1, 4), seed=st.integers(0, 2**31), special=st.sampled_from([0.0, 0.2, 0.5]))
def test_hoisting_keeps_the_interpreters_results_on_special_values(wrapper, outer, transposed, n, seed, special):
    """Random contractions under functions, quotients and additions, with ±0, ±inf and ⊥
    among the inputs: both compiled targets agree with the interpreter (⊥ and the
    infinities in the same places, finite values within the rounding bound)."""
    w = "w[j,k]" if transposed else "w[k,j]"
    contraction = f"sum(k) x[b,k] * {w}"
    body = wrapper.format(c=contraction)
    if outer == "none":
        src = f"in var x : [3 {n}]\nin var w : [{'4 ' + str(n) if transposed else str(n) + ' 4'}]\nout var v : [3 4]\nv[b,j] = {body}\n"
    else:
        src = (f"in var x : [3 {n}]\nin var w : [{'4 ' + str(n) if transposed else str(n) + ' 4'}]\nout var v : [3]\n"
               f"v[b] = {outer}(j) ({body})\n")
    inputs = special_inputs(src, seed, special)
    program = tl.compile(src, backend="interp").ein
    for backend in ("numpy", "c"):
        kernel = tl.compile(src, backend=backend)
        assert len(kernel.optimized.program.statements) >= 2  # the contraction has its own statement
        with np.errstate(all="ignore"):
            got = np.asarray(kernel(**inputs)["v"])
        assert_meets_ein_oracle(got, program, inputs)


def test_a_batch_of_dot_products_stays_as_written():
    """Every free index in every factor (the norm of each row): no operand is reused
    across entries, so there is no matrix product for a temporary to call."""
    src = "in var g : [6 3]\nout var y : [6]\ny[p] = sqrt(sum(i) g[p,i] * g[p,i])\n"
    assert hoisted(src) == ["y[p] = sqrt(sum(i) g[p,i] * g[p,i])"]
    outer = "in var g : [6 3]\nin var h : [3 4]\nout var y : [6]\ny[p] = sqrt(sum(j) abs(sum(i) g[p,i] * h[i,j]))\n"
    assert hoisted(outer)[0] == "tmp1[p,j] = sum(i) g[p,i] * h[i,j]"  # j misses g: a matrix product


def test_a_summand_read_also_outside_its_sum_is_computed_once():
    """The one-line softmax: exp of each entry once (as in four statements), not twice."""
    opt = tl.compile(SOFTMAX.format(B=4, n=3, m=5), backend="numpy").ir("opt")
    assert "tmp2[b,j] = exp(tmp1[b,j])" in opt and opt.count("exp(") == 1, opt
    given = "in var t : [4 5]\nin var c : [4]\nout var y : [4 5]\ny[b,j] = exp(t[b,j] - c[b]) / sum(k) exp(t[b,k] - c[b])\n"
    assert tl.compile(given, backend="numpy").ir("opt").count("exp(") == 2  # no contraction: the pass leaves it


@pytest.mark.parametrize("body, functions", [
    ("exp(sum(k) x[b,k] * w[k,j]) / sum(l) exp(x[b,1] * w[1,l])", 2),     # another value under the sum
    ("(sum(k) x[b,k] * w[k,j]) / sum(l) sum(k) x[b,k] * w[k,l]", 0),     # no function: nothing to save
])
def test_a_summand_is_shared_only_where_it_is_the_same_value(body, functions):
    src = f"in var x : [4 3]\nin var w : [3 5]\nout var y : [4 5]\ny[b,j] = {body}\n"
    got = hoisted(src)
    assert got[0] == "tmp1[b,j] = sum(k) x[b,k] * w[k,j]" and all("sum(" in line for line in got[:-1]), got
    assert got[-1].count("exp(") == functions, got


@settings(max_examples=20, deadline=None)
@given(fn=st.sampled_from(["exp", "abs", "sqrt", "tanh"]), n=st.integers(1, 4), seed=st.integers(0, 2**31),
       special=st.sampled_from([0.0, 0.2, 0.5]))
def test_sharing_a_summand_keeps_the_interpreters_results_on_special_values(fn, n, seed, special):
    src = (f"in var x : [3 {n}]\nin var w : [{n} 4]\nout var v : [3 4]\n"
           f"v[b,j] = {fn}(sum(k) x[b,k] * w[k,j]) / sum(l) {fn}(sum(k) x[b,k] * w[k,l])\n")
    inputs = special_inputs(src, seed, special)
    program = tl.compile(src, backend="interp").ein
    for backend in ("numpy", "c"):
        kernel = tl.compile(src, backend=backend)
        assert kernel.ir("opt").count(f"{fn}(") == 1
        with np.errstate(all="ignore"):
            got = np.asarray(kernel(**inputs)["v"])
        assert_meets_ein_oracle(got, program, inputs)
