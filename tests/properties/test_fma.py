"""``fma=True``: fused multiply-adds in the C back end (docs/optimizer.md, "Fused
multiply-add"), and the register blocks of fused loops (loops/microkernel.py).

* ``fma=True`` is the default (issue 44: as BLAS, XLA and numba contract to FMA);
* ``fma=False`` stays bit for bit what it was: the outer-vectorized
  register block gives the row-AXPY form's results exactly (⊥, ±inf and the sign of
  zeros included), and the source has no ``fma`` in it.
* ``fma=True`` on generated programs: within the harness's rounding bound of the EIN
  oracle for finite inputs, and with ⊥, ±inf and ±0 among ordinary inputs the same ⊥
  and infinities as the interpreter (the documented rule: they move only where a
  product of finite numbers overflows, which these inputs do not reach).
* The documented differences happen exactly as documented (an overflowing product
  added to the opposite infinity: ⊥ becomes that infinity; added to a finite number
  that brings it back in range: inf becomes finite).
* The option reaches the loop IR, the C source and the cache key; the API, the CLI,
  symbolic kernels and chunked-run specs carry it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, note, settings, strategies as st

import tensorlang as tl
from tensorlang.loops import microkernel
from tensorlang.targets.c import build as c_build

from properties.harness import assert_close_to_oracle, assert_meets_ein_oracle, cases, special_inputs

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="needs a C compiler")

#: mode products on each axis of a batched [E n n n] tensor (either matrix orientation:
#: some need the hoisted transpose), a pointwise product and a sum
KINDS = {
    "axis1": "{t}[e,i,j,l] = sum(k) A[i,k] * {p}[e,k,j,l]",
    "axis1T": "{t}[e,i,j,l] = sum(k) A[k,i] * {p}[e,k,j,l]",
    "axis2": "{t}[e,i,j,l] = sum(k) B[j,k] * {p}[e,i,k,l]",
    "axis3": "{t}[e,i,j,l] = sum(k) {p}[e,i,j,k] * C[l,k]",
    "axis3T": "{t}[e,i,j,l] = sum(k) {p}[e,i,j,k] * C[k,l]",
    "scale": "{t}[e,i,j,l] = D[e,i,j,l] * {p}[e,i,j,l]",
    "add": "{t}[e,i,j,l] = {p}[e,i,j,l] + u[e,i,j,l]",
}


@st.composite
def cfd_programs(draw):
    """A chain of CFD-like statements over [E n n n], big enough (≥ 1024 multiply-adds
    per contraction) that fused loops use their register blocks."""
    n = draw(st.integers(2, 7))
    E = draw(st.integers(1, 3)) * math.ceil(1100 / n**4)
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=4))
    shape = f"[{E} {n} {n} {n}]"
    lines = [f"in var A : [{n} {n}]", f"in var B : [{n} {n}]", f"in var C : [{n} {n}]",
             f"in var D : {shape}", f"in var u : {shape}", f"out var v : {shape}"]
    body, previous = [], "u"
    for number, kind in enumerate(kinds):
        target = "v" if number == len(kinds) - 1 else f"t{number}"
        if target != "v":
            lines.append(f"var {target} : {shape}")
        body.append(KINDS[kind].format(t=target, p=previous))
        previous = target
    return "\n".join(lines + body) + "\n"


def _same_bits(got, ref) -> bool:
    got, ref = np.asarray(got, dtype=float), np.asarray(ref, dtype=float)
    nan = np.isnan(ref)
    return (np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan], ref[~nan])
            and np.array_equal(np.signbit(got[~nan]), np.signbit(ref[~nan])))


def _row_axpy_kernel(text: str, fma: bool = False):
    """The kernel as it was compiled before the register blocks: row AXPYs in fused loops."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(microkernel, "ENABLED", False)
        m.setattr(microkernel, "ENABLED_WITH_FMA", False)
        return tl.compile(text, backend="c", fma=fma)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(text=cfd_programs(), seed=st.integers(0, 2**32 - 1), special=st.sampled_from([0.0, 0.1, 0.4]))
def test_fma_false_stays_bit_for_bit(text, seed, special):
    note(text)
    kernel = tl.compile(text, backend="c", fma=False)
    assert "fma(" not in kernel.code("c") and "fma(" not in kernel.ir("loops")
    inputs = special_inputs(text, seed, special)
    assert _same_bits(kernel(**inputs)["v"], _row_axpy_kernel(text)(**inputs)["v"])


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(text=cfd_programs(), seed=st.integers(0, 2**32 - 1), special=st.sampled_from([0.0, 0.1, 0.4]))
def test_fma_keeps_bot_and_infinities_and_the_rounding_bound(text, seed, special):
    note(text)
    kernel = tl.compile(text, backend="c", fma=True)
    assert "fma(" in kernel.ir("loops") or "sum" not in text
    inputs = special_inputs(text, seed, special)
    got = kernel(**inputs)["v"]
    assert_meets_ein_oracle(got, kernel.executed, inputs)
    # both forms fuse the same steps in the same order: the register block and the row
    # AXPYs agree bit for bit under fma=True as well
    assert _same_bits(got, _row_axpy_kernel(text, fma=True)(**inputs)["v"])


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_fma_on_generated_programs_meets_the_oracle(case):
    """The differential harness's programs (both statement forms, every EIN node) with
    fma=True: within the oracle's rounding bound, ⊥ where it is ⊥."""
    note(case.text)
    assert_close_to_oracle(case, tl.compile(case.text, backend="c", fma=True)(**case.inputs), "float64", "c fma")


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(case=cases(max_extent=4))
def test_fma_on_generated_programs_meets_the_oracle_float32(case):
    note(case.text)
    inputs = {k: v.astype(np.float32) for k, v in case.inputs.items()}
    results = tl.compile(case.text, backend="c", fma=True, dtype="float32")(**inputs)
    assert_close_to_oracle(case, results, "float32", "c fma")


# ------------------------------------------------------------- the documented differences
#: one statement that runs as row updates (loops/interchange.py): each component of v
#: is summed over k in order, one step per k, whatever the vector width
MODE = "in var A : [8 8]\nin var u : [64 8 8]\nout var v : [64 8 8]\nv[e,i,j] = sum(k) A[i,k] * u[e,k,j]\n"


@pytest.mark.parametrize("a, u, reference, fused", [
    # an overflowing product added to the opposite infinity: ⊥ becomes that infinity
    ([1.0, 1e200], [-np.inf, 1e200], np.nan, -np.inf),
    # an overflowing product (2e308) added to -1e308: inf becomes finite (about 1e308)
    ([1e308, 2e154], [-1.0, 1e154], np.inf, float(Fraction(2e154) * Fraction(1e154) - Fraction(1e308))),
    # a nonzero product that underflows to -0, added to +0: +0 becomes -0
    ([1e-200, 0.0], [-1e-200, -1.0], 0.0, -0.0),
])
def test_the_documented_differences(a, u, reference, fused):
    """docs/optimizer.md's examples, each as the first two terms of every component
    (the other terms are 0 · -1 = -0, which change nothing)."""
    A = np.zeros((8, 8))
    A[:, :2] = a
    U = np.full((64, 8, 8), -1.0)
    U[:, 0, :], U[:, 1, :] = u
    inputs = {"A": A, "u": U}
    kernel = tl.compile(MODE, backend="c", fma=False)
    assert "row" in kernel.ir("loops") or "+=" in kernel.ir("loops")
    for backend in ("interp", "c"):
        got = tl.compile(MODE, backend=backend, fma=False)(**inputs)["v"]
        assert _same_bits(got, np.full(got.shape, reference)), backend
    for fma in (True, None):  # None: the default, which fuses
        got = tl.compile(MODE, backend="c", **({} if fma is None else {"fma": fma}))(**inputs)["v"]
        assert _same_bits(got, np.full(got.shape, fused))
    # (the numpy target accepts fma and ignores it; its matmul steps round as the BLAS
    # library does, which uses fused multiply-adds itself: docs/optimizer.md)
    assert tl.compile(MODE, backend="numpy", fma=True)(**inputs)["v"].shape == got.shape


def test_inf_and_nan_operands_propagate_as_without_fma():
    """fma(a, b, x) with an infinite or NaN operand is what x + a*b is: only products of
    finite numbers that overflow or underflow can differ."""
    values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.5, 3.0])
    pairs = np.array([(p, q) for p in values for q in values]).T
    text = f"in var a : [2 {pairs.shape[1]}]\nin var b : [2 {pairs.shape[1]}]\nout var s : [{pairs.shape[1]}]\n" \
           "s[x] = sum(k) a[k,x] * b[k,x]\n"
    rng = np.random.default_rng(3)
    for _ in range(4):
        a = np.stack([pairs[0], rng.permutation(pairs[0])])
        b = np.stack([pairs[1], rng.permutation(pairs[1])])
        ref = tl.compile(text, backend="interp")(a=a, b=b)["s"]
        assert _same_bits(tl.compile(text, backend="c", fma=True)(a=a, b=b)["s"], ref)
        assert _same_bits(tl.compile(text, backend="c")(a=a, b=b)["s"], ref)  # the default: the same


def test_the_default_fuses_multiply_adds():
    """Issue 44: fused multiply-adds are the default (``fma=False`` turns them off)."""
    kernel = tl.compile(INTERP, backend="c")
    assert kernel.fma is True and "fma(" in kernel.ir("loops")
    assert tl.compile(INTERP, backend="c", fma=False).fma is False


# ------------------------------------------------------------- the option's path
INTERP = ("in var A : [8 8]\nin var u : [64 8 8]\nout var v : [64 8 8]\nvar t : [64 8 8]\n"
          "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nv[e,i,j] = sum(k) t[e,i,k] * A[j,k]\n")


@pytest.mark.slow
def test_the_option_reaches_the_loop_ir_the_source_and_the_cache_key():
    plain, fused = tl.compile(INTERP, backend="c", fma=False), tl.compile(INTERP, backend="c", fma=True)
    assert plain.fma is False and fused.fma is True and "fma=True" in repr(fused)
    assert all(nest.fma for nest in fused.loop_program.nests) and not any(n.fma for n in plain.loop_program.nests)
    assert "fma(" in fused.ir("loops") and "fma(" not in plain.ir("loops")
    assert "unroll(8) for" in fused.ir("loops") and "unroll(8) for" in plain.ir("loops")  # register blocks
    source, plain_source = fused.target.source, plain.target.source
    assert "fma(" in source and "fma=True" in source and "fma" not in plain_source
    compiler = c_build.require_compiler()
    assert c_build.cache_key(source, compiler) != c_build.cache_key(plain_source, compiler)
    assert "-std=c99" in compiler.flags  # no contraction anywhere else: -ffp-contract=off
    rng = np.random.default_rng(0)
    inputs = {"A": rng.uniform(-1, 1, (8, 8)), "u": rng.uniform(-1, 1, (64, 8, 8))}
    np.testing.assert_allclose(fused(**inputs)["v"], plain(**inputs)["v"], rtol=1e-13, atol=1e-14)
    assert "fmaf(" in tl.compile(INTERP, backend="c", fma=True, dtype="float32").target.source


def test_the_option_is_checked_and_carried():
    with pytest.raises(tl.TensorLangError) as caught:
        tl.compile(INTERP, backend="c", fma="yes")
    assert caught.value.code == "input" and "fma" in caught.value.message
    symbolic = tl.compile("in var A : [n n]\nin var x : [n]\nout var y : [n]\ny[i] = sum(k) A[i,k] * x[k]\n",
                          backend="c", fma=True)
    assert symbolic.fma and symbolic.specialize(n=40).fma
    from tensorlang.kernel import Options
    from tensorlang.specialize import KernelSpec
    spec = KernelSpec("in var x : [n]\nout var y : [n]\ny = 2 * x\n", "<t>", "tl",
                      Options("c", np.dtype("float64"), threads=1, fma=True), (("n", 3),))
    assert spec.load().fma
    for backend in ("numpy", "interp"):  # accepted and ignored
        assert tl.compile(INTERP, backend=backend, fma=True).fma


def test_the_cli_takes_fma(tmp_path, capsys):
    from tensorlang.cli import main
    path = tmp_path / "interp.tl"
    path.write_text(INTERP)
    assert main(["compile", str(path), "--emit", "c", "--fma"]) == 0
    assert "fma(" in capsys.readouterr().out
    assert main(["compile", str(path), "--emit", "c"]) == 0  # the default fuses too
    assert "fma(" in capsys.readouterr().out
    assert main(["compile", str(path), "--emit", "c", "--no-fma"]) == 0
    assert "fma(" not in capsys.readouterr().out
    assert main(["run", str(path), "--random-inputs", "--fma", "--backend", "c", "-q"]) == 0
