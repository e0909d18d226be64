"""The schedule and the loop IR as printable stages (``--emit schedule``, ``--emit loops``).

The schedule says, per statement, BLAS or loops and why, and plans the buffers (slots,
the scratch slot, the pooled temporaries and their bytes); the loop IR shows the loop
steps' nests with their parallel and simd marks.  Both are computed, not run, so they
print for every back end; the C printer only spells them (no threshold lives there).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import cli
from corpus import ROOT


EXAMPLE = ROOT / "examples" / "interpolation_grouped.tl"

# the interpolation kernel at n = 64: one plain mode product, one batched mode product too
# fine-grained for BLAS (a loop nest), one GEMM
INTERPOLATION_64 = """
in var A : [64 64]
in var B : [64 64]
in var C : [64 64]
in var u : [64 64 64]
out var v : [64 64 64]
v = A # B # C # u . [[2 9] [4 8] [6 7]]
"""

# the middle contraction of the spectral-element kernels: an interchanged, parallel nest
MIDDLE = """
in var B : [8 8]
in var t1 : [512 8 8 8]
out var t2 : [512 8 8 8]
t2[e,l,j,k] = sum(m) B[j,m] * t1[e,l,m,k]
"""


def emit(capsys, *args) -> str:
    assert cli.main(["compile", *map(str, args)]) == 0
    return capsys.readouterr().out


def test_emit_schedule_of_the_interpolation_example(capsys, monkeypatch):
    monkeypatch.setenv("TENSORLANG_FUSE", "0")  # the statement-by-statement schedule (fusion: test_fusion.py)
    text = emit(capsys, EXAMPLE, "--emit", "schedule")
    # three pairwise contractions of 5^4 multiply-adds: loop nests, with the reason
    assert text.count("-- loops: 625 multiply-adds < BLAS_WORK 65536") == 3
    # 002 Fig. 20 literally: tmp1 lives in the result v's buffer until v is written
    assert "loops over v0 v1 v2 v3 v4 v5" in text
    assert re.search(r"v5\s+tmp2\s+\[5 5 5\]\s+temp\s+pooled", text)
    assert re.search(r"v4\s+tmp1\s+lives in result v's buffer from statement 1, before v is written \(Fig. 20", text)
    assert "pool: 1 buffer, 1000 bytes per call (float64)" in text
    # --dtype counts: the pool holds float32 elements
    assert "pool: 1 buffer, 500 bytes per call (float32)" in emit(capsys, EXAMPLE, "--emit", "schedule",
                                                                     "--dtype", "float32")


def test_emit_schedule_names_mode_products_gemms_and_why_loops(monkeypatch):
    monkeypatch.setenv("TENSORLANG_FUSE", "0")  # the statement-by-statement schedule (fusion: test_fusion.py)
    text = tl.compile(INTERPOLATION_64, backend="interp").ir("schedule")
    assert "mode product (one GEMM): 16777216 multiply-adds >= BLAS_WORK 65536" in text
    assert "P=4096 M=64 J=64 Q=1" in text
    assert "loops: batched mode product: J*M*Q = 262144 < MODE_BATCH_WORK 524288" in text
    assert "GEMM: 16777216 multiply-adds >= BLAS_WORK 65536" in text
    assert "pool: 1 buffer, 2097152 bytes per call (float64)" in text  # tmp1 in v's buffer (Fig. 20)


def test_a_batched_mode_product_that_pays_says_why():
    program = "in var B : [128 128]\nin var u : [3 128 128]\nout var t : [3 128 128]\nt[e,j,k] = sum(m) B[j,m] * u[e,m,k]\n"
    text = tl.compile(program, backend="interp").ir("schedule")
    assert ("mode product: J*M*Q = 2097152 >= MODE_BATCH_WORK 524288 and min(J,M) = 128 >= MODE_BATCH_MIN 16"
            in text)


def test_the_schedule_says_where_each_blas_step_runs():
    """A BLAS step's ``runs`` is decided by the schedule from the target's caps and printed:
    BLAS from the generated C where the C target found a BLAS (``blas_int_max``), else
    numpy.matmul, on the padded buffers' views under ``pad``; the C source follows it."""
    from tensorlang.machine import blas

    matmul = "in var A : [256 256]\nin var B : [256 256]\nout var C : [256 256]\nC = A # B . [2 3]\n"
    kernel = tl.compile(matmul, backend="interp")
    (step,) = kernel._compiled_for("schedule").schedule.steps
    assert step.runs == ("c" if blas.find("float64") is not None else "matmul")
    assert f"       runs: {step.runs}\n" in kernel.ir("schedule")
    assert (" in C): " in kernel.code("c")) == (step.runs == "c")
    padded = tl.compile(matmul, backend="interp", pad=8)
    assert "runs: matmul-views" in padded.ir("schedule") and " in C): " not in padded.code("c")


def test_emit_loops_shows_marks_and_the_interchanged_row(capsys, tmp_path):
    path = tmp_path / "middle.tl"
    path.write_text(MIDDLE)
    fused = emit(capsys, path, "--emit", "loops")  # fused multiply-adds: the default
    assert "t2[e,l,j,k] = fma(B[j,m], t1[e,l,m,k], t2[e,l,j,k])" in fused
    text = emit(capsys, path, "--emit", "loops", "--no-fma")
    assert "(interchanged: summed loops outside the row)" in text
    assert "parallel for e in range(512):" in text
    assert "simd for k in range(8):" in text
    assert "t2[e,l,j,k] = (0 + (B[j,0] * t1[e,l,0,k]))" in text  # the peeled first step
    assert "for m in range(1, 8):" in text
    assert "t2[e,l,j,k] += (B[j,m] * t1[e,l,m,k])" in text  # the row AXPY


def test_emit_loops_shows_accumulators_and_blas_steps_in_order(monkeypatch):
    monkeypatch.setenv("TENSORLANG_FUSE", "0")  # the statement-by-statement schedule (fusion: test_fusion.py)
    text = tl.compile(INTERPOLATION_64, backend="interp").ir("loops")
    steps = re.findall(r"^step (\d): (\w+)", text, flags=re.M)
    assert steps == [("0", "mode"), ("1", "loops"), ("2", "GEMM")]
    small = tl.compile(EXAMPLE, backend="interp").ir("loops")
    # a sum of 5 terms is not marked simd (loops/parallel.short_reduction): gcc unrolls it
    assert "acc1 = 0" in small and "    for k in range(5) reduce(+: acc1):" in small and "simd for k" not in small


@pytest.mark.parametrize("source, lang, expect_schedule, expect_loops", [
    # a scratch copy: x reads itself at other points (ev-stmt)
    ("inout var x : [4 4]\nx = x ^ [1 2]\n", None,
     ["<scratch>  [16]", "pool: 1 buffer, 128 bytes", "x read at (j, i) in tc-trans: needs a temporary [tc-var-xx fails]"],
     ["<scratch>[i,j] = x[j,i]", "copy <scratch> -> x (16 elements)"]),
    # CFDlang's stacking
    ("var input a : [2]\nvar output b : [2 2]\nb = [a a]\n", "cfd",
     ["b[i,j] = [a[j], a[j]][i]", "loops: not a product of tensors under a sum"],
     ["b[i,j] = select(i: a[j], a[j])"]),
    # a scalar target: a big sum shares its loop out as an OpenMP reduction
    ("in var x : [200000]\nout var s : []\ns[] = sum(i) (x[i] + x[i])\n", None,
     ["v1   s  []", "pool: 0 buffers, 0 bytes"],
     ["parallel for i in range(200000) reduce(+: acc1):", "s[] = acc1"]),
])
@pytest.mark.parametrize("backend", ["interp", "numpy"])
def test_schedule_and_loops_print_for_scratch_stack_and_scalar_programs(source, lang, expect_schedule,
                                                                         expect_loops, backend):
    kernel = tl.compile(source, backend=backend, lang=lang)
    schedule, loops = kernel.ir("schedule"), kernel.ir("loops")
    for text in expect_schedule:
        assert text in schedule, schedule
    for text in expect_loops:
        assert text in loops, loops


def test_the_schedule_is_the_one_the_c_back_end_runs():
    from tensorlang.targets import available

    if "c" not in available():
        pytest.skip("no working C compiler on this machine")
    c = tl.compile(INTERPOLATION_64, backend="c")
    assert c.ir("schedule") == tl.compile(INTERPOLATION_64, backend="interp").ir("schedule")
    assert c.schedule.steps == c.target.steps


def test_the_c_printer_holds_no_thresholds_or_decisions():
    source = (ROOT / "src" / "tensorlang" / "targets" / "c" / "codegen.py").read_text()
    for name in ("BLAS_WORK", "MODE_BATCH_WORK", "MODE_BATCH_MIN", "INTERCHANGE_WORK", "PARALLEL_WORK",
                 "pays(", "why_not(", "contraction(", "compatible(", "in_place", "blas_shape"):
        assert name not in source, name


# ------------------------------------------------------------------ the NumPy target runs it
@pytest.mark.parametrize("statement, shapes, kind", [
    ("C = A # B . [2 3]", {"A": (40, 50), "B": (50, 60), "C": (40, 60)}, "ModeStep"),  # P empty: one GEMM
    ("C = (A # B . [2 3]) ^ [1 2]", {"A": (40, 50), "B": (50, 60), "C": (60, 40)}, "GemmStep"),
    ("C[b,i,j] = sum(k) A[b,i,k] * B[b,k,j]", {"A": (3, 30, 40), "B": (3, 40, 20), "C": (3, 30, 20)}, "GemmStep"),
    ("C[i,j] = -2 * sum(k) A[i,k] * B[j,k]", {"A": (40, 50), "B": (60, 50), "C": (40, 60)}, "ModeStep"),
    ("C[i,j] = -2 * sum(k,l) A[i,k,l] * B[k,l,j]", {"A": (20, 30, 10), "B": (30, 10, 25), "C": (20, 25)}, "GemmStep"),
    ("C[e,l,k] = sum(q) A[e,l,q] * B[k,q]", {"A": (64, 32, 16), "B": (16, 16), "C": (64, 32, 16)}, "ModeStep"),
    ("C[e,j,k] = sum(m) B[j,m] * A[e,m,k]", {"A": (3, 128, 128), "B": (128, 128), "C": (3, 128, 128)}, "ModeStep"),
    ("C[i,j] = sum(k) A[i,k] * B[k,j] * D[k]", {"A": (40, 50), "B": (50, 60), "D": (50,), "C": (40, 60)},
     "EinsumStep"),
])
def test_the_numpy_target_runs_the_schedules_blas_steps(statement, shapes, kind):
    decls = "".join(f"{'out' if n == 'C' else 'in'} var {n} : [{' '.join(map(str, s))}]\n" for n, s in shapes.items())
    source = decls + statement + "\n"
    k = tl.compile(source, backend="numpy", opt=False)  # the statement as written: one step
    (step,) = k.schedule.steps
    assert type(step).__name__ == kind
    code = k.code("numpy")
    assert f"# {step.reason}" in code
    rng = np.random.default_rng(0)
    inputs = {n: rng.uniform(-1, 1, s) for n, s in shapes.items() if n != "C"}
    inputs["A"].reshape(-1)[7] = np.nan
    got = k(**inputs)["C"]
    want = tl.compile(source, backend="interp")(**inputs)["C"]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_the_numpy_target_runs_small_contractions_as_einsum_code():
    k = tl.compile(EXAMPLE, backend="numpy")
    assert all(type(step).__name__ == "LoopStep" for step in k.schedule.steps)
    code = k.code("numpy")
    assert "matmul" not in code.lower() and "path" in code
    assert code.count("# loops: 625 multiply-adds < BLAS_WORK 65536") == 3


@pytest.mark.parametrize("statement, shapes, copies", [
    ("C[b,i,j] = sum(k) A[b,i,k] * B[b,k,j]", {"A": (3, 30, 40), "B": (3, 40, 20), "C": (3, 30, 20)}, False),
    ("C[b,i,j] = sum(k) A[b,i,k] * B[b,j,k]", {"A": (6, 40, 50), "B": (6, 60, 50), "C": (6, 40, 60)}, True),  # A Bᵀ
    ("C = (A # B . [2 3]) ^ [1 2]", {"A": (40, 50), "B": (50, 60), "C": (60, 40)}, True),
])
def test_the_numpy_target_runs_a_copying_gemm_as_einsum(statement, shapes, copies):
    """A GEMM that would transpose an operand or its result is an einsum step in the NumPy
    target's schedule (``Caps.gemm_copies``: opt_einsum's own BLAS path, without the copy),
    which its printer renders as einsum code; the C target's schedule keeps the GEMM step."""
    decls = "".join(f"{'in' if n in 'AB' else 'out'} var {n} : [{' '.join(map(str, s))}]\n" for n, s in shapes.items())
    source = decls + statement + "\n"
    k = tl.compile(source, backend="numpy", opt=False)
    (step,) = k.schedule.steps  # the C target's
    assert type(step).__name__ == "GemmStep" and step.copies == copies
    (own,) = k.compiled.schedule.steps  # the NumPy target's
    assert type(own).__name__ == ("EinsumStep" if copies else "GemmStep")
    assert ("numpy: einsum, the GEMM would copy an operand" in own.reason) == copies
    code = k.code("numpy")
    assert f"# {own.reason}" in code
    assert ("->" in code) == copies  # einsum subscripts, only in einsum code
    rng = np.random.default_rng(1)
    inputs = {n: rng.uniform(-1, 1, s) for n, s in shapes.items() if n in "AB"}
    out = next(n for n in shapes if n not in "AB")
    np.testing.assert_allclose(k(**inputs)[out], tl.compile(source, backend="interp")(**inputs)[out],
                               rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("statement, shapes", [
    ("s[] = sum(i,k) A[i,k] * B[k,i]", {"A": (256, 256), "B": (256, 256), "s": ()}),  # tr(A B)
    ("y[i] = sum(k,l) A[k,i,l] * x[k,l]", {"A": (30, 400, 20), "x": (30, 20), "y": (400,)}),  # A read across i
])
@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_a_dot_or_matvec_of_a_transposed_operand_is_no_gemm(statement, shapes, backend):
    """Each element of the transposed operand is used once: a GEMM step would copy it,
    moving as many bytes as the product reads, so the loop nest runs it in place."""
    names = list(shapes)
    decls = "".join(f"{'out' if n == names[-1] else 'in'} var {n} : [{' '.join(map(str, s))}]\n" for n, s in shapes.items())
    source = decls + statement + "\n"
    k = tl.compile(source, backend=backend, opt=False)
    (step,) = k.schedule.steps
    assert type(step).__name__ == "LoopStep"
    assert "a dot or matrix-vector product of a transposed operand" in step.reasons[0]
    rng = np.random.default_rng(2)
    inputs = {n: rng.uniform(-1, 1, s) for n, s in shapes.items() if n != names[-1]}
    np.testing.assert_allclose(k(**inputs)[names[-1]], tl.compile(source, backend="interp")(**inputs)[names[-1]],
                               rtol=1e-12, atol=1e-10)
