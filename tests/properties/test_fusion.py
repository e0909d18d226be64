"""Fusion over a shared batch loop (schedule/fusion.py, loops/fusion.py) keeps meaning.

Random batched programs — chains of small mode products (either side, either matrix
orientation: some need the hoisted transpose), elementwise products, quotients and sums
with another batched input — interleaved with statements that must break a fused group:
a read of the previous temporary at another batch point (a sum over the batch, a fixed
batch position) and a reduction over the batch.  Inputs mix ±0, ±inf and NaN (⊥) with
ordinary numbers.  For each program the C target's fused kernel must

* give what the same C target gives with fusion and BLAS off: ⊥ (NaN) and the
  infinities in the same places, the rest within rounding (a row AXPY adds the same
  products in the same order either way, but a dot product's ``omp simd reduction``
  may combine partial sums in another order with the fused loop's wider vectors), and
* agree with the EIN oracle on the executed program (NaN where it is ⊥, the same
  infinities, finite values within the rounding bound),

and every fused group the schedule made must be legal by an independent check.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, note, settings, strategies as st

import tensorlang as tl
from tensorlang.ein import ir
from tensorlang.schedule import plan as plan_module
from tensorlang.schedule.steps import LoopStep
from tensorlang import pipeline

from properties.harness import assert_meets_ein_oracle, special_inputs

#: statement kinds: (template, breaks fusion); {p} the previous variable, {t} the target
KINDS = {
    "left": ("{t}[e,i,j] = sum(k) A[i,k] * {p}[e,k,j]", False),
    "leftT": ("{t}[e,i,j] = sum(k) A[k,i] * {p}[e,k,j]", False),
    "right": ("{t}[e,i,j] = sum(k) {p}[e,i,k] * B[j,k]", False),
    "rightT": ("{t}[e,i,j] = sum(k) {p}[e,i,k] * B[k,j]", False),
    "scale": ("{t}[e,i,j] = D[e,i,j] * {p}[e,i,j]", False),
    "divide": ("{t}[e,i,j] = {p}[e,i,j] / D[e,i,j]", False),
    "add": ("{t}[e,i,j] = {p}[e,i,j] + u[e,i,j]", False),
    "batchsum": ("{t}[e,i,j] = sum(f) {p}[f,i,j] * D[e,i,j]", True),
    "first": ("{t}[e,i,j] = {p}[1,i,j] * D[e,i,j]", True),
    "reduce": ("s{n}[i,j] = sum(f) {p}[f,i,j]\n{t}[e,i,j] = s{n}[i,j] * D[e,i,j]", True),
}


@st.composite
def batched_programs(draw):
    E = draw(st.integers(2, 4))
    n = draw(st.integers(1, 4))
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=2, max_size=5))
    lines = [f"in var A : [{n} {n}]", f"in var B : [{n} {n}]", f"in var D : [{E} {n} {n}]",
             f"in var u : [{E} {n} {n}]", f"out var v : [{E} {n} {n}]"]
    body, previous = [], "u"
    for number, kind in enumerate(kinds):
        target = "v" if number == len(kinds) - 1 else f"t{number}"
        if target != "v":
            lines.append(f"var {target} : [{E} {n} {n}]")
        if kind == "reduce":
            lines.append(f"var s{number} : [{n} {n}]")
        body.append(KINDS[kind][0].format(t=target, p=previous, n=number))
        previous = target
    return "\n".join(lines + body) + "\n", kinds


def _unfused(text: str):
    """The C kernel with fusion and BLAS steps off (every statement its own loop nest)."""
    original = plan_module.plan

    def plain(program, dtype, roles=None, blas=True, reuse=True, pad=1, fuse=True, from_c=False, **facts):
        return original(program, dtype, roles, False, reuse, pad, False)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(pipeline, "plan", plain)
        return tl.compile(text, backend="c")


def _same_bits(got, ref) -> bool:
    got, ref = np.asarray(got, dtype=float), np.asarray(ref, dtype=float)
    nan = np.isnan(ref)
    return (np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan], ref[~nan])
            and np.array_equal(np.signbit(got[~nan]), np.signbit(ref[~nan])))


def assert_legal(kernel) -> None:
    """Every fused group: targets written at the batch index, every variable written in
    the group read only at the reading statement's batch index, its locals read nowhere
    outside it (checked here from the definitions, not by the schedule's own code)."""
    program = kernel.executed
    for step in kernel.schedule.steps:
        if not isinstance(step, LoopStep) or step.fusion is None:
            continue
        fusion = step.fusion
        written = {s.target for s in step.statements}
        for stmt in step.statements:
            assert stmt.index[0] == (fusion.var, fusion.extent), stmt
            assert stmt.target not in stmt.reads
            for t in ir.tensors(stmt.body):
                if t.name in written:
                    assert t.indices and t.indices[0] == fusion.var, (stmt, t)
        group = set(range(fusion.start, fusion.stop))
        for local in fusion.locals:
            if local.per_iteration:
                assert not any(local.name in s.reads for n, s in enumerate(program.statements) if n not in group)


@pytest.mark.slow
@settings(max_examples=100)
@given(case=batched_programs(), seed=st.integers(0, 2**32 - 1), special=st.sampled_from([0.0, 0.1, 0.4]))
def test_fused_kernel_matches_unfused_and_the_oracle(case, seed, special):
    text, kinds = case
    note(text)
    fused = tl.compile(text, backend="c")
    assert_legal(fused)
    event(f"fused groups: {sum(1 for s in fused.schedule.steps if isinstance(s, LoopStep) and s.fusion)}")
    inputs = special_inputs(text, seed, special)
    got = fused(**inputs)["v"]
    plain = _unfused(text)
    assert not any(isinstance(s, LoopStep) and s.fusion for s in plain.schedule.steps)
    unfused = plain(**inputs)["v"]
    assert np.array_equal(np.isnan(got), np.isnan(unfused))
    assert np.array_equal(got[np.isinf(unfused)], unfused[np.isinf(unfused)])
    np.testing.assert_allclose(got, unfused, rtol=1e-12, atol=1e-12)
    # the EIN evaluator's own arithmetic (controlled division, ⊥) decides NaN and inf, and
    # the finite values agree within the harness's first-order rounding bound
    assert_meets_ein_oracle(got, fused.executed, inputs)


def _fused_steps(text: str):
    kernel = tl.compile(text, backend="c")
    return kernel, [s for s in kernel.schedule.steps if isinstance(s, LoopStep) and s.fusion is not None]


HEAD = "in var A : [3 3]\nin var D : [4 3 3]\nin var u : [4 3 3]\nout var v : [4 3 3]\nvar t : [4 3 3]\n"


def test_a_chain_of_mode_products_fuses_with_per_iteration_temporaries():
    kernel, fused = _fused_steps("in var A : [6 6]\nin var u : [8 6 6]\nout var v : [8 6 6]\nvar t : [8 6 6]\n"
                                 "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nv[e,i,j] = sum(k) t[e,i,k] * A[j,k]\n")
    assert len(fused) == 1
    locals_ = {l.name: l for l in fused[0].fusion.locals}
    temps = [l for l in locals_.values() if l.per_iteration]
    assert temps and all(l.storage == (6, 6) for l in temps)  # the optimizer names the temporary
    assert "Aᵀ" in locals_ and not locals_["Aᵀ"].per_iteration  # v reads A[j,k]: a hoisted transpose
    assert not set(kernel.schedule.buffers.names) & {l.name for l in temps}  # no slot ...
    assert kernel.schedule.buffers.pool_bytes == 0  # ... and nothing pooled


@pytest.mark.parametrize("second", [
    "v[e,i,j] = sum(f) t[f,i,j]",  # reads the temporary at another batch point
    "v[e,i,j] = t[1,i,j] * D[e,i,j]",  # a fixed batch position
    "v[e,i,j] = t[e,j,i] + t[4,i,j]",
])
def test_no_fusion_when_a_statement_reads_a_temporary_at_another_batch_point(second):
    _, fused = _fused_steps(HEAD + "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\n" + second + "\n")
    assert fused == []


def test_no_fusion_across_a_reduction_over_the_batch():
    text = (HEAD + "var s : [3 3]\nt[e,i,j] = sum(k) A[i,k] * u[e,k,j]\ns[i,j] = sum(f) t[f,i,j]\n"
            "v[e,i,j] = s[i,j] * D[e,i,j]\n")
    kernel, fused = _fused_steps(text)
    assert fused == []
    expected = tl.compile(text, backend="interp")
    rng = np.random.default_rng(1)
    inputs = {"A": rng.standard_normal((3, 3)), "D": rng.standard_normal((4, 3, 3)), "u": rng.standard_normal((4, 3, 3))}
    np.testing.assert_allclose(kernel(**inputs)["v"], expected(**inputs)["v"], rtol=1e-12)


def test_a_temporary_read_after_the_group_keeps_its_full_buffer():
    text = ("in var A : [3 3]\nin var u : [4 3 3]\nout var v : [4 3 3]\nout var w : [3 3]\nvar t : [4 3 3]\n"
            "var r : [4 3 3]\nt[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nr[e,i,j] = sum(k) A[i,k] * t[e,k,j]\n"
            "v[e,i,j] = sum(k) A[i,k] * r[e,k,j]\nw[i,j] = sum(f) t[f,i,j]\n")
    kernel, fused = _fused_steps(text)
    for step in fused:
        names = {l.name for l in step.fusion.locals}
        assert "t" not in names  # w reads t after the loop: it keeps a slot of [4 3 3]
    assert "t" in kernel.schedule.buffers.names


def test_the_working_set_must_fit_the_level_2_cache(monkeypatch):
    from tensorlang import machine as cache
    text = HEAD + "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nv[e,i,j] = sum(k) t[e,i,k] * A[j,k]\n"
    assert _fused_steps(text)[1]  # fused with the machine's caches ...
    monkeypatch.setattr(plan_module, "fusion_groups", lambda program, roles, itemsize, **kw: __import__(
        "tensorlang.schedule.fusion", fromlist=["x"]).fusion_groups(program, roles, itemsize, cache.CacheSizes(16, 32, "test"), **kw))
    _, fused = _fused_steps(text)
    assert fused == []  # ... but not with 32 bytes of L2 (the working set is past FUSION_PAST_L2 times it)


@pytest.mark.slow
def test_temporaries_that_share_a_buffer_count_once_in_the_working_set(monkeypatch):
    """The inverse Helmholtz operator at n = 16: six 32 KiB per-iteration temporaries whose
    lives overlap at most two at a time (the loops share their buffers, share_locals), so
    the working set is u, D, v's slices, two temporaries, S and Sᵀ: 164 KiB, within
    FUSION_PAST_L2 = 4 times a 64 KiB L2 (six would be 292 KiB, past it; no statement is a GEMM
    split into matrix-vector products, so 4 times the L2 is the budget past the whole L2)."""
    from tensorlang import machine as cache
    from tensorlang.schedule import fusion

    text = ("in var S : [16 16]\nin var D : [8 16 16 16]\nin var u : [8 16 16 16]\nout var v : [8 16 16 16]\n"
            "var t : [8 16 16 16]\nvar r : [8 16 16 16]\n"
            "t = u # S # S # S . [[2 5] [3 7] [4 9]]\nr = D * t\nv = r # S # S # S . [[2 6] [3 8] [4 10]]\n")
    assert fusion.FUSION_PAST_L2 == 4  # the sizes below are chosen for it
    sizes = cache.CacheSizes(32 * 1024, 64 * 1024, "test")
    monkeypatch.setattr(plan_module, "fusion_groups", lambda program, roles, itemsize, **kw: fusion.fusion_groups(
        program, roles, itemsize, sizes, **kw))
    _, fused = _fused_steps(text)
    assert len(fused) == 1 and fused[0].fusion.working_set == 5 * 32 * 1024 + 2 * 16 * 16 * 8  # + S, Sᵀ
    monkeypatch.setattr(fusion, "SHARE_LOCALS", False)
    _, fused = _fused_steps(text)
    assert fused == []  # each temporary its own buffer: 292 KiB > 4 × 64 KiB


def test_the_whole_level_2_cache_is_the_budget_unless_a_gemm_would_be_split_into_matrix_vector_products():
    """Past half the L2 a group fuses only where no statement alone a BLAS step would run as
    one matrix times a vector per iteration (plan.gemm_splits): the inverse Helmholtz
    operator and the interpolation at the bench size n = 25 (E = 67: 620 KiB, 502 KiB), whose
    mode products keep a GEMM of n^2 rows per element, fuse with a 1 MiB L2 (half of it: not
    the Helmholtz operator); the softmax over a 512 x 256 x 512 product (1038 KiB with a 2 MiB
    L2) does not: its product stays one BLAS GEMM."""
    from corpus import helmholtz_source, interpolation_source
    from tensorlang import machine as cache
    from tensorlang.schedule import fusion

    def groups(text, l2):
        kernel = tl.compile(text, backend="c")
        found = fusion.fusion_groups(kernel.executed, kernel.roles(), 8, cache.CacheSizes(32 * 1024, l2, "test"),
                                     plan_module.gemm_splits(kernel.executed.shapes, kernel.blas_from_c))
        return [(g.start, g.stop, g.working_set) for g in found], found

    helmholtz, found = groups(helmholtz_source(25, 67), 1 << 20)
    assert [(start, stop) for start, stop, _ in helmholtz] == [(0, 7)] and 512 << 10 < helmholtz[0][2] <= 1 << 20
    assert "<= L2 (no GEMM split) 1 MiB" in found[0].describe()
    assert groups(helmholtz_source(25, 67), 1 << 19)[0]  # 620 KiB > 512 KiB: past the L2, within 4 times it
    assert not groups(helmholtz_source(25, 67), 1 << 17)[0]  # 620 KiB > 4 × 128 KiB
    assert [(s, e) for s, e, _ in groups(interpolation_source(25, 67), 1 << 20)[0]] == [(0, 3)]
    softmax = ("in var x : [512 256]\nin var w : [256 512]\nout var y : [512 512]\n"
               "y[b,j] = exp(sum(k) x[b,k] * w[k,j]) / sum(l) exp(sum(k) x[b,k] * w[k,l])\n")
    assert groups(softmax, 2 << 20)[0] == []  # 1038 KiB of 2 MiB, but its product would be 512 matrix-vector products
    assert groups(softmax, 4 << 20)[0]  # within half the L2: fused, as always


def test_a_groups_budget_is_one_rule_that_asks_about_gemms_only_between_half_and_a_few_times_the_l2():
    """fusion.group_budget, which both decides a group and is what its description reports:
    half the L2 up to half of it; past half, the whole L2 unless the fused loop would split a
    GEMM (asked only there); past the whole L2, FUSION_PAST_L2 times it where the fused loop moves
    PAST_L2_SAVING times fewer bytes, unless it would split a GEMM; past that, half of it (no group
    is made, nothing asked)."""
    from tensorlang import machine as cache
    from tensorlang.schedule import fusion

    sizes, asked = cache.CacheSizes(32 * 1024, 1 << 20, "test"), []

    def splits(answer):
        return lambda: asked.append(answer) or answer

    half, past = 1 << 19, fusion.FUSION_PAST_L2 << 20
    assert fusion.group_budget(sizes, half, splits(True)) == half and asked == []
    assert fusion.group_budget(sizes, half + 1, splits(False)) == 1 << 20
    assert fusion.group_budget(sizes, 1 << 20, splits(True)) == half
    assert fusion.group_budget(sizes, (1 << 20) + 1, splits(False), 5.0) == past
    assert fusion.group_budget(sizes, past, splits(True), 5.0) == half and asked == [False, True, False, True]
    assert fusion.group_budget(sizes, past + 1, splits(False), 5.0) == half and asked == [False, True, False, True]
    # past the whole L2 only where the fused loop moves PAST_L2_SAVING times fewer bytes (the CFD kernels 2.99-5
    # times, the spectral-element Laplacian of examples/users/ax_operator.tl 2 times: it ran 0.84-0.94x fused there)
    assert fusion.group_budget(sizes, (1 << 20) + 1, splits(False), fusion.PAST_L2_SAVING) == past
    assert fusion.group_budget(sizes, (1 << 20) + 1, splits(False), 2.0) == half
    assert fusion.group_budget(sizes, 1 << 20, splits(False), 1.0) == 1 << 20  # within the L2: as before


def test_the_cfd_kernels_past_the_l2_fuse_with_a_budget_of_a_few_times_it():
    """The inverse Helmholtz operator at n = 31 (E = 35: 1.15 MiB a iteration) on a 1 MiB L2 fuses
    (its mode products split no GEMM), and so does n = 40 (2.5 MiB) on a 2 MiB L2; n = 64 (E = 4:
    10 MiB) on a 1 MiB L2 is past FUSION_PAST_L2 times it and does not."""
    from corpus import helmholtz_source
    from tensorlang import machine as cache
    from tensorlang.schedule import fusion

    def groups(n, l2):
        kernel = tl.compile(helmholtz_source(n, max(1, 2**20 // n**3)), backend="c")
        return fusion.fusion_groups(kernel.executed, kernel.roles(), 8, cache.CacheSizes(32 * 1024, l2, "test"),
                                    plan_module.gemm_splits(kernel.executed.shapes, kernel.blas_from_c))

    found = groups(31, 1 << 20)
    assert [(g.start, g.stop) for g in found] == [(0, 7)] and 1 << 20 < found[0].working_set <= 2 << 20
    k = fusion.FUSION_PAST_L2
    assert f"<= {k}×L2 (no GEMM split) {k} MiB" in found[0].describe()
    assert [(g.start, g.stop) for g in groups(40, 2 << 20)] == [(0, 7)]
    assert groups(64, 1 << 20) == ()


def test_cache_sizes_come_from_the_os_or_a_fallback(monkeypatch):
    from tensorlang import machine as cache
    found = cache.cache_sizes()
    assert found.l1 > 0 and found.l2 >= found.l1 and found.source in ("sys", "sysconf", "fallback", "env")
    monkeypatch.setenv("TENSORLANG_CACHE_SIZES", "l1=32K,l2=1M")
    cache.cache_sizes.cache_clear()
    try:
        assert cache.cache_sizes() == cache.CacheSizes(32 * 1024, 1024 * 1024, "env", cache.hint_min_slab())
    finally:
        cache.cache_sizes.cache_clear()


def test_the_schedule_prints_the_fusion_and_its_cost():
    kernel = tl.compile(HEAD + "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nv[e,i,j] = sum(k) t[e,i,k] * A[j,k]\n",
                        backend="c")
    from tensorlang.schedule.printer import to_text
    text = to_text(kernel.schedule)
    assert "fused loop over e" in text and "local" in text and "bytes moved" in text and "working set" in text


@pytest.mark.parametrize("fma", [False, True])
def test_micro_kernels_keep_meaning(monkeypatch, fma):
    """The register-blocked micro-kernels (loops/microkernel.py: the outer-vectorized
    block, on by default) give the row-AXPY form's results bit for bit, ⊥ and infinities included; with ``fma=True`` too (both fuse the same
    multiply-adds in the same order)."""
    from tensorlang.loops import microkernel
    text = ("in var A : [4 4]\nin var B : [4 4]\nin var u : [6 4 4 4]\nout var v : [6 4 4 4]\n"
            "var t1 : [6 4 4 4]\nvar t2 : [6 4 4 4]\n"
            "t1[e,i,j,l] = sum(k) A[i,k] * u[e,k,j,l]\nt2[e,i,j,l] = sum(k) B[j,k] * t1[e,i,k,l]\n"
            "v[e,i,j,l] = sum(k) t2[e,i,j,k] * A[l,k]\n")
    inputs = special_inputs(text, 7, 0.1)
    monkeypatch.setattr(microkernel, "ENABLED", False)
    monkeypatch.setattr(microkernel, "ENABLED_WITH_FMA", False)
    plain = tl.compile(text, backend="c", fma=fma)
    from tensorlang.loops.printer import to_text as loops_text
    assert "unroll(" not in loops_text(plain.loop_program, plain.schedule)
    monkeypatch.setattr(microkernel, "ENABLED", True)
    monkeypatch.setattr(microkernel, "ENABLED_WITH_FMA", True)
    kernel = tl.compile(text, backend="c", fma=fma)
    printed = loops_text(kernel.loop_program, kernel.schedule)
    assert "unroll(4) for u" in printed and "simd for" in printed
    assert ("fma(" in printed) == fma
    assert _same_bits(kernel(**inputs)["v"], plain(**inputs)["v"])


def test_analyze_reports_the_fused_groups(tmp_path, capsys):
    from tensorlang.cli import main
    path = tmp_path / "interp.tl"
    path.write_text("in var A : [6 6]\nin var u : [8 6 6]\nout var v : [8 6 6]\nvar t : [8 6 6]\n"
                    "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nv[e,i,j] = sum(k) t[e,i,k] * A[j,k]\n")
    main(["analyze", str(path)])
    out = capsys.readouterr().out
    assert "fusion over shared batch loops" in out and "working set" in out and "bytes moved" in out
