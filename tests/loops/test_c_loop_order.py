"""Loop interchange for contractions in the C back end (``loops.interchange.contraction``).

A statement ``T[σ] = Σ_k product`` that writes its target in place is lowered with its
summed loops outside the innermost output loop, which then updates one contiguous row
of T (``T[..., x] += product``); everything else keeps the accumulator form.  Checked
here: which statements take which form (in the loop program and in the C), that both
agree with the reference interpreter (shapes of the spectral-element benchmarks, several
summed indices, scale factors and negations, fixed positions, NaN and inf, float32,
threads), random contractions against the interpreter, and the new nests under
AddressSanitizer/UndefinedBehaviorSanitizer.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.loops import interchange, ir as loops
from tensorlang.schedule import steps
from c_source import c_kernel, generate
from tensorlang.targets.c import build as c_build
from tensorlang.ein import ir

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

# the three contractions of the spectral-element benchmarks: last, middle, first index
LAST = "t1[e,l,m,k] = sum(q) u[e,l,m,q] * C[k,q]"
MIDDLE = "t2[e,l,j,k] = sum(m) B[j,m] * t1[e,l,m,k]"
FIRST = "v[e,i,j,k] = sum(l) A[i,l] * t2[e,l,j,k]"


def sem(statement: str, n: int = 4, E: int = 8) -> str:
    """A program with one of the benchmark statements (its matrix and its 4-D tensors)."""
    matrix, source, target = {LAST: ("C", "u", "t1"), MIDDLE: ("B", "t1", "t2"), FIRST: ("A", "t2", "v")}[statement]
    return (f"in var {matrix} : [{n} {n}]\nin var {source} : [{E} {n} {n} {n}]\n"
            f"out var {target} : [{E} {n} {n} {n}]\n{statement}\n")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


@contextlib.contextmanager
def loops_everywhere(interchange_work: int | None = None):
    """Every contraction on generated loops (no BLAS step); optionally another
    interchange threshold (0: small test shapes take the interchanged form too)."""
    old = steps.BLAS_WORK, steps.C_BLAS_WORK, interchange.INTERCHANGE_WORK
    steps.BLAS_WORK = steps.C_BLAS_WORK = 1 << 62
    if interchange_work is not None:
        interchange.INTERCHANGE_WORK = interchange_work
    try:
        yield
    finally:
        steps.BLAS_WORK, steps.C_BLAS_WORK, interchange.INTERCHANGE_WORK = old


class Compiled:
    """A C kernel under test: its loop program, its C source, and a call."""

    def __init__(self, text: str, dtype="float64", threads: int = 0, end_to_end: bool = False):
        """``end_to_end``: through ``tl.compile`` (the optimizer's passes run first);
        otherwise the C back end gets the program as written (a ``CKernel`` of the
        interpreter kernel's EIN), so what is tested is the lowering alone."""
        with loops_everywhere():
            if end_to_end:
                kernel = tl.compile(text, backend="c", dtype=dtype, threads=threads or None)
                compiled = kernel.compiled
                self.call = lambda inputs: kernel(**inputs)
            else:
                kernel = tl.compile(text, backend="interp", dtype=dtype)
                compiled = c_kernel(kernel.ein, np.dtype(dtype), kernel.roles(), blas=False)
                c = compiled.build
                self.call = lambda inputs: c.run(
                    {n: np.ascontiguousarray(v, dtype) for n, v in inputs.items()}, {}, threads)
        self.kernel = kernel
        self.loop_program = compiled.loops
        self.source = compiled.code.source

    def __call__(self, **inputs):
        return self.call(inputs)


def compile_c(text: str, **kw) -> Compiled:
    return Compiled(text, **kw)


def nest_of(kernel: Compiled, target: str) -> loops.Nest:
    (nest,) = [n for n in kernel.loop_program.nests if n.statement.target == target]
    return nest


def walk(nodes):
    for node in nodes:
        yield node
        if isinstance(node, loops.Loop):
            yield from walk(node.body)


def interchanged(nest: loops.Nest) -> bool:
    """The nest is the interchanged form: no accumulator, a peeled sum loop (start 1) or
    a row store, the rows being simd loops over the target's last index."""
    nodes = list(walk(nest.body))
    if any(isinstance(n, (loops.Init, loops.Update)) for n in nodes) or not nest.statement.index:
        return False
    last = nest.statement.index[-1][0]
    rows = [n for n in nodes if isinstance(n, loops.Loop) and any(isinstance(c, loops.Store) for c in n.body)]
    peeled = [n for n in nodes if isinstance(n, loops.Store) and isinstance(n.value, loops.BinOp)
              and n.value.op == "+" and n.value.left == loops.Const(0.0)]
    return len(peeled) == 1 and all(r.var == last and r.simd and len(r.body) == 1 for r in rows)


def inputs_for(kernel, seed=0) -> dict[str, np.ndarray]:
    return {name: rand(*kernel.shapes[name], seed=seed + n) for n, name in enumerate(kernel.inputs)}


def assert_matches_interpreter(text: str, inputs=None, dtype="float64", rtol=1e-12, **kw):
    c = compile_c(text, dtype=dtype, **kw)
    inputs = inputs_for(c.kernel) if inputs is None else inputs
    got = c(**inputs)
    want = tl.compile(text, backend="interp", dtype=dtype)(**inputs)
    assert set(got) == set(want)
    for name in want:
        g, w = np.asarray(got[name]), np.asarray(want[name])
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=name)
        np.testing.assert_array_equal(np.isposinf(g), np.isposinf(w), err_msg=name)
        np.testing.assert_array_equal(np.isneginf(g), np.isneginf(w), err_msg=name)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol / 10, equal_nan=True, err_msg=name)
    return c


# ------------------------------------------------------------------- the choice of form
@pytest.mark.slow
@pytest.mark.parametrize("statement", [MIDDLE, FIRST])
def test_benchmark_contractions_are_interchanged(statement):
    k = compile_c(sem(statement))
    target = statement.split("[")[0]
    nest = nest_of(k, target)
    assert interchanged(nest)
    # the summed loop sits inside every output loop but the last one, and is peeled
    chain, body = [], nest.body
    while len(body) == 1 and isinstance(body[0], loops.Loop):
        chain.append(body[0].var)
        body = body[0].body
    assert chain == [name for name, _ in nest.statement.index[:-1]]
    summed = [n for n in body if isinstance(n, loops.Loop) and n.start == 1]
    assert [n.var for n in summed] == [{MIDDLE: "m", FIRST: "l"}[statement]]
    code = k.source
    assert "for (int64_t x_m = 1LL;" in code or "for (int64_t x_l = 1LL;" in code
    assert "reduction(" not in code and ("+= (" in code or "= fma(" in code)  # fma: the default
    assert "#pragma omp simd\n" in code


def test_the_last_index_contraction_keeps_the_dot_product():
    # k is C[k,q]'s first index: the interchanged row would read C with stride n, while
    # the accumulator loop over q reads both u and C contiguously
    k = compile_c(sem(LAST, n=16, E=2))  # 16 terms: a simd sum (parallel.short_reduction), 4 rows at once
    assert interchange.contraction(nest_of(k, "t1").statement, dict(zip(k.loop_program.names, k.loop_program.shapes))) is None
    assert not interchanged(nest_of(k, "t1"))
    assert "#pragma omp simd reduction(+:acc1r0)" in k.source
    short = compile_c(sem(LAST))  # 4 terms: the same dot product, unrolled by the compiler
    assert not interchanged(nest_of(short, "t1")) and "reduction(+:acc1)" not in short.source


@pytest.mark.parametrize("statement, decls, form", [
    # interchanged: the last output index is last in every access that has it
    ("C[i,j] = sum(k) A[i,k] * B[k,j]", "A:40 50|B:50 60|C:40 60", True),
    ("C[i,j] = -2 * sum(k) A[i,k] * B[k,j]", "A:40 50|B:50 60|C:40 60", True),
    ("C[i,j] = sum(k) sum(l) A[i,k,l] * B[k,l,j]", "A:20 10 6|B:10 6 25|C:20 25", True),
    ("y[j] = sum(k) x[k] * A[k,j]", "x:64 |A:64 64|y:64", True),  # rank 1, below the thread size
    ("C[i,j] = sum(k) A[i,k] * B[k,2,j]", "A:40 50|B:50 3 60|C:40 60", True),  # a fixed position
    ("C[i,j] = sum(k) A[i,k] * B[k,j] * D[k]", "A:40 50|B:50 60|D:50|C:40 60", True),
    # the old form: j not last in B, j in no access, a diagonal in j, a small statement,
    # a reduction that is not a sum, a sum under a function, the target read, a scalar target
    ("C[i,j] = sum(k) A[i,k] * B[j,k]", "A:40 50|B:60 50|C:40 60", False),
    ("C[i,j] = sum(k) A[i,k]", "A:40 50|C:40 60", False),
    ("C[i,j] = sum(k) A[i,k] * B[k,j,j]", "A:40 50|B:50 60 60|C:40 60", False),
    ("C[i,j] = sum(k) A[i,k] * B[k,j]", "A:3 4|B:4 5|C:3 5", False),
    ("C[i,j] = max(k) A[i,k] * B[k,j]", "A:40 50|B:50 60|C:40 60", False),
    ("C[i,j] = exp(sum(k) A[i,k] * B[k,j])", "A:40 50|B:50 60|C:40 60", False),
    ("C[i,j] = sum(k) A[i,k] * B[k,j] + D[i,j]", "A:40 50|B:50 60|D:40 60|C:40 60", False),
    ("C[i,j] = sum(k) A[i,k] * B[k,j] * C[i,j]", "A:40 50|B:50 60|C:40 60", False),  # its own point
    ("C[i,j] = sum(k) A[i,k] * C[k,j]", "A:40 40|C:40 40", False),  # other points: scratch copy
    ("s[] = sum(i,j) A[i,j] * B[i,j]", "A:40 50|B:40 50|s:", False),
])
def test_which_statements_are_interchanged(statement, decls, form):
    target = statement.split("[")[0]
    lines = []
    for decl in decls.split("|"):
        name, _, shape = decl.partition(":")
        role = "inout" if name == target and f"{target}[" in statement.split("=", 1)[1] else (
            "out" if name == target else "in")
        lines.append(f"{role} var {name} : [{shape.strip()}]")
    text = "\n".join(lines) + "\n" + statement + "\n"
    k = assert_matches_interpreter(text)
    assert interchanged(nest_of(k, target)) == form, k.source


def _stmt(target_index, body):
    return ir.Statement("T", tuple(target_index), body)


def _t(name, *indices):
    return ir.Tensor(name, tuple(indices))


SHAPES = {"A": (40, 50), "B": (50, 60), "Bt": (60, 50), "D": (50, 60, 60), "T": (40, 60), "x": (50,)}
MATMUL_SUM = ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("B", "k", "j")))


@pytest.mark.parametrize("body, matches", [
    (MATMUL_SUM, True),
    (ir.Neg(ir.BinOp("*", MATMUL_SUM, ir.Const(2.0))), True),
    (ir.BinOp("*", ir.Neg(ir.Const(2.0)), MATMUL_SUM), True),  # -2 * sum(k) ...
    (ir.Sum((), MATMUL_SUM), True),  # directly nested sums are one sum
    (ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("Bt", "j", "k"))), False),  # j not last
    (ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("x", "k"))), False),  # j in no access
    (ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("D", "k", "j", "j"))), False),  # a diagonal in j
    (ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), ir.Delta("k", "j"))), False),  # δ is no factor
    (ir.Sum((("k", 50),), ir.BinOp("+", _t("A", "i", "k"), _t("B", "k", "j"))), False),  # + is no product
    (ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("T", "i", "j"))), False),  # reads T
    (ir.Sum((("k", 0),), ir.BinOp("*", _t("A", "i", "k"), _t("B", "k", "j"))), False),  # an empty sum
    (ir.Sum((("i", 40),), ir.BinOp("*", _t("A", "i", "k"), _t("B", "k", "j"))), False),  # shadows i
    (ir.Reduce("max", (("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("B", "k", "j"))), False),
    (ir.BinOp("/", MATMUL_SUM, ir.Const(2.0)), False),
    (ir.BinOp("*", MATMUL_SUM, _t("T", "i", "j")), False),
    (ir.BinOp("*", MATMUL_SUM, MATMUL_SUM), False),
])
def test_the_rule(body, matches):
    assert (interchange.contraction(_stmt((("i", 40), ("j", 60)), body), SHAPES) is not None) == matches


def test_the_rule_on_sizes():
    # a scalar target, a last extent of 1, a small statement, a big rank-1 statement
    s = ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("A", "i", "k")))
    assert interchange.contraction(ir.Statement("s", (), ir.Sum((("i", 40),), s)), SHAPES) is None
    one = ir.Sum((("k", 50),), ir.BinOp("*", _t("A", "i", "k"), _t("E", "k", "j")))
    assert interchange.contraction(_stmt((("i", 40), ("j", 1)), one), SHAPES | {"E": (50, 1)}) is None
    small = ir.Sum((("k", 4),), ir.BinOp("*", _t("A", "i", "k"), _t("B", "k", "j")))
    assert interchange.contraction(_stmt((("i", 3), ("j", 5)), small), {"A": (3, 4), "B": (4, 5)}) is None
    vector = ir.Sum((("k", 2048),), ir.BinOp("*", _t("x", "k"), _t("A", "k", "j")))
    shapes = {"x": (2048,), "A": (2048, 2048)}
    assert interchange.contraction(_stmt((("j", 2048),), vector), shapes) is None  # threads over j instead
    vector = ir.Sum((("k", 64),), ir.BinOp("*", _t("x", "k"), _t("A", "k", "j")))
    assert interchange.contraction(_stmt((("j", 64),), vector), {"x": (64,), "A": (64, 64)}) is not None


def test_summed_loops_are_ordered_by_stride():
    body = ir.Sum((("a", 5), ("b", 6), ("c", 3)), ir.BinOp(
        "*", _t("P", "i", "b", "c", "a"), _t("Q", "e", "a", "c", "b", "k")))
    shapes = {"P": (4, 6, 3, 5), "Q": (7, 5, 3, 6, 8)}
    found = interchange.contraction(_stmt((("e", 7), ("i", 4), ("k", 8)), body), shapes)
    # smallest strides: a 1 (in P), c 5 (P), b 15 (P; 24 in Q)
    assert [name for name, _ in found.summed] == ["b", "c", "a"]


# -------------------------------------------------------- results against the interpreter
@pytest.mark.parametrize("n", [4, 5, 8])
@pytest.mark.parametrize("statement", [LAST, MIDDLE, FIRST])
def test_benchmark_contractions_match_the_interpreter(statement, n):
    assert_matches_interpreter(sem(statement, n=n, E=max(2, 2048 // n**4 + 1)))


@pytest.mark.parametrize("body", [
    "sum(a,b) A[i,a,b] * U[e,a,b,k]",
    "sum(a) sum(b) A[i,a,b] * U[e,a,b,k]",
    "sum(b,a) U[e,a,b,k] * A[i,a,b]",  # the summed loops are reordered by stride
    "-(0.5 * sum(a,b) A[i,a,b] * U[e,a,b,k]) * 3",
    "sum(a,b) -A[i,a,b] * 0.25 * U[e,a,b,k] * w[b]",
    "sum(a,b) A[i,a,b] * U[e,a,b,k] * U[e,b,a,k]",
])
def test_several_summed_indices_and_scales(body):
    text = ("in var A : [4 5 5]\nin var U : [6 5 5 7]\nin var w : [5]\nout var T : [6 4 7]\n"
            f"T[e,i,k] = {body}\n")
    k = assert_matches_interpreter(text)
    assert interchanged(nest_of(k, "T"))


def test_summed_extents_of_one_and_fixed_positions():
    text = ("in var A : [1 1 3 40]\nin var B : [40 1 2]\nout var T : [40 40]\n"
            "T[i,j] = sum(a,b) A[a,b,2,j] * B[i,a,2]\n")
    k = assert_matches_interpreter(text)
    assert interchanged(nest_of(k, "T"))


def test_nan_and_inf_come_out_as_in_the_interpreter():
    text = sem(MIDDLE, n=6, E=4)
    k = compile_c(text)
    assert interchanged(nest_of(k, "t2"))
    b, t1 = rand(6, 6), rand(4, 6, 6, 6, seed=1)
    b[2, 3] = np.inf           # inf * 0 below is NaN; inf * x is ±inf
    b[4, 0] = -np.inf
    t1[1, 2, 3, 4] = 0.0
    t1[0, 0, 3, :] = 1e300     # -inf + inf
    t1[2, 1, 0, 1] = np.nan
    t1[3, 5, 5, 5] = -0.0
    b[5, :] = 0.0              # rows of -0 * x: 0 + (-0) is +0 in both forms
    inputs = {"B": b, "t1": t1}
    assert_matches_interpreter(text, inputs)
    got = k(**inputs)["t2"]
    assert np.isnan(got).any() and np.isinf(got).any()
    assert not np.signbit(got[:, :, 5, :]).any()
    # a non-finite scale multiplies the finished sum, as in the accumulator form
    # (inf * (1 - 2) is -inf, where inf * 1 + inf * -2 would be NaN)
    for scale in ("1e999", "-1e999", "0", "1e300", "-0.0"):
        scaled = text.replace("= sum(m)", f"= {scale} * sum(m)")
        k = assert_matches_interpreter(scaled, inputs)
        assert interchanged(nest_of(k, "t2"))
    finite = {"B": rand(6, 6), "t1": rand(4, 6, 6, 6, seed=1)}
    got = assert_matches_interpreter(text.replace("= sum(m)", "= 1e999 * sum(m)"), finite)(**finite)["t2"]
    assert np.isinf(got).all() and (got > 0).any() and (got < 0).any()


def test_float32():
    assert_matches_interpreter(sem(FIRST, n=5, E=4), dtype="float32", rtol=1e-5)


def test_big_statements_share_the_outer_loop_out_and_keep_restrict():
    text = sem(MIDDLE, n=8, E=64)  # 2^21 multiply-adds: above PARALLEL_WORK
    for threads in (1, 2):
        k = assert_matches_interpreter(text, threads=threads)
    code = k.source
    assert code.count("#pragma omp parallel for") == 1
    assert interchanged(nest_of(k, "t2"))
    # the parallel loop's body is a function of its own with restrict parameters
    assert "tl_step0_body1(v0, v1, v2, x_e);" in code
    head = "static inline void tl_step0_body1(real *restrict v0, real *restrict v1, real *restrict v2, int64_t x_e)"
    assert head + ";" in code and head + " {" in code


def test_statements_that_read_their_target_keep_the_old_form():
    text = ("inout var x : [40 40]\nin var y : [40 40]\n"
            "x[i,j] = sum(k) x[i,k] * y[k,j]\n"   # other points of x: a scratch copy
            "x[i,j] = sum(k) y[i,k] * y[k,j] * x[i,j]\n")  # its own point, in place
    k = assert_matches_interpreter(text)
    assert not any(interchanged(n) for n in k.loop_program.nests)
    assert "memcpy" in k.source


def test_a_program_of_the_three_contractions(monkeypatch):
    monkeypatch.setenv("TENSORLANG_FUSE", "0")  # the statement-by-statement schedule (fusion: test_fusion.py)
    n, E = 6, 5
    text = (f"in var A : [{n} {n}]\nin var B : [{n} {n}]\nin var C : [{n} {n}]\nin var u : [{E} {n} {n} {n}]\n"
            f"var t1 : [{E} {n} {n} {n}]\nvar t2 : [{E} {n} {n} {n}]\nout var v : [{E} {n} {n} {n}]\n"
            f"{LAST}\n{MIDDLE}\n{FIRST}\n")
    k = assert_matches_interpreter(text, end_to_end=True)
    # (the optimizer may reorder the chain: one statement contracts the 4-D tensor's
    # last index, which keeps the dot product, and the two others are interchanged)
    assert sorted(interchanged(nest) for nest in k.loop_program.nests) == [False, True, True]


# ------------------------------------------------------------------ random contractions
@st.composite
def contractions(draw):
    """A random ``T[o..] = scale * sum(s..) factor * ...`` with its decls: accesses are
    random selections and orders of the indices, with diagonals, fixed positions,
    constants and negations; the target's last index is often, not always, last."""
    outs = [(f"o{n}", draw(st.integers(1, 4))) for n in range(draw(st.integers(1, 3)))]
    outs[-1] = (outs[-1][0], draw(st.integers(2, 6)))
    sums = [(f"s{n}", draw(st.integers(1, 4))) for n in range(draw(st.integers(1, 3)))]
    extent = dict(outs + sums)
    last = outs[-1][0]
    decls, factors = {}, []
    for f in range(draw(st.integers(1, 3))):
        names = draw(st.lists(st.sampled_from(sorted(extent)), min_size=1, max_size=4, unique=True))
        if last in names and draw(st.integers(0, 3)) > 0:
            names.remove(last)
            names.append(last)
        if draw(st.integers(0, 5)) == 0:  # a diagonal
            names.insert(draw(st.integers(0, len(names))), draw(st.sampled_from(names)))
        indices = list(names)
        shape = [extent[i] for i in names]
        if draw(st.integers(0, 4)) == 0:  # a fixed position
            size = draw(st.integers(1, 3))
            at = draw(st.integers(0, len(indices)))
            indices.insert(at, str(draw(st.integers(1, size))))
            shape.insert(at, size)
        decls[f"F{f}"] = shape
        access = f"F{f}[{','.join(indices)}]"
        if draw(st.integers(0, 5)) == 0:
            access = f"-{access}"
        factors.append(access)
    for name, _ in sums:  # every summed index must index something
        if not any(name in f.split("[")[1] for f in factors):
            decls[f"G{name}"] = [extent[name]]
            factors.append(f"G{name}[{name}]")
    if draw(st.integers(0, 4)) == 0:
        factors.insert(draw(st.integers(0, len(factors))), draw(st.sampled_from(["0.5", "3", "-1.25"])))
    scale = draw(st.sampled_from(["", "", "", "2 * ", "-", "-(0.5 * "]))
    body = f"sum({','.join(n for n, _ in sums)}) {' * '.join(factors)}"
    body = f"{scale}{body})" if scale.endswith("(0.5 * ") else f"{scale}{body}"
    text = "".join(f"in var {name} : [{' '.join(map(str, shape))}]\n" for name, shape in decls.items())
    text += f"out var T : [{' '.join(str(n) for _, n in outs)}]\n"
    text += f"T[{','.join(n for n, _ in outs)}] = {body}\n"
    specials = draw(st.integers(0, 3)) == 0
    return text, specials


def special_inputs(kernel, seed):
    """Inputs with some NaN, ±inf and -0 among them."""
    inputs = inputs_for(kernel, seed)
    rng = np.random.default_rng(seed)
    for value in inputs.values():
        flat = value.reshape(-1)
        for special in (np.nan, np.inf, -np.inf, -0.0, 0.0):
            if rng.integers(0, 3) == 0:
                flat[rng.integers(0, flat.size)] = special
    return inputs


@pytest.mark.slow
@settings(max_examples=40)
@given(case=contractions(), seed=st.integers(0, 1000))
def test_random_contractions_match_the_interpreter(case, seed):
    text, specials = case
    note(text)
    with loops_everywhere(interchange_work=0):
        k = compile_c(text)
        program = k.loop_program
        shapes = dict(zip(program.names, program.shapes))
        (nest,) = program.nests
        assert interchanged(nest) == (interchange.contraction(nest.statement, shapes) is not None)
        inputs = special_inputs(k.kernel, seed) if specials else inputs_for(k.kernel, seed)
        got = k(**inputs)["T"]
    want = tl.compile(text, backend="interp")(**inputs)["T"]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, equal_nan=True)


@pytest.mark.slow
def test_the_random_contractions_reach_both_forms():
    """The strategy above is not vacuous: it draws interchanged statements with several
    summed indices and with fixed positions, and statements that keep the old form."""
    from hypothesis import find

    def form(case):
        stmt = tl.compile(case[0], backend="interp").ein.statements[0]
        shapes = {d.name: d.shape for d in tl.compile(case[0], backend="interp").ein.decls}
        with loops_everywhere(interchange_work=0):
            return interchange.contraction(stmt, shapes), stmt

    quick = settings(max_examples=2000, database=None)
    find(contractions(), lambda c: (f := form(c)[0]) is not None and len(f.summed) >= 2, settings=quick)
    find(contractions(), lambda c: form(c)[0] is not None and any(
        isinstance(i, int) for t in ir.tensors(form(c)[1].body) for i in t.indices),
        settings=quick)
    find(contractions(), lambda c: form(c)[0] is None, settings=quick)


# ------------------------------------------------------------------------ sanitizers
def _sanitized(text: str, inputs: dict, dtype: str = "float64") -> dict:
    from properties.test_c_sanitizers import run_sanitized

    with tempfile.TemporaryDirectory() as tmp:
        return run_sanitized(text, inputs, dtype, Path(tmp))


def _sanitizers_available() -> bool:
    from properties.test_c_sanitizers import _sanitizers_work

    return _sanitizers_work()


sanitizers = pytest.mark.skipif(not _sanitizers_available(), reason="the C compiler here cannot build with ASan/UBSan")


@pytest.mark.slow
@sanitizers
@pytest.mark.parametrize("text", [
    sem(LAST, n=4, E=3), sem(MIDDLE, n=5, E=3), sem(FIRST, n=3, E=40),
    "in var A : [4 5 5]\nin var U : [6 5 5 7]\nout var T : [6 4 7]\nT[e,i,k] = -2 * sum(a,b) A[i,a,b] * U[e,a,b,k]\n",
    "in var A : [1 1 3 40]\nin var B : [40 1 2]\nout var T : [40 40]\nT[i,j] = sum(a,b) A[a,b,2,j] * B[i,a,2]\n",
    "in var x : [64]\nin var A : [64 64]\nout var y : [64]\ny[j] = sum(k) x[k] * A[k,j]\n",
])
def test_interchanged_nests_are_clean_under_sanitizers(text):
    with loops_everywhere():
        kernel = tl.compile(text, backend="interp")
        inputs = inputs_for(kernel)
        program = generate(kernel.ein, "float64", blas=False).loop_program
        shapes = dict(zip(program.names, program.shapes))
        assert any(interchange.contraction(n.statement, shapes) for n in program.nests) or text == sem(LAST, n=4, E=3)
        got = _sanitized(text, inputs)
    want = tl.compile(text, backend="interp")(**inputs)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-13)


@pytest.mark.slow
@sanitizers
@settings(max_examples=25)
@given(case=contractions(), seed=st.integers(0, 1000))
def test_random_contractions_are_clean_under_sanitizers(case, seed):
    text, specials = case
    note(text)
    with loops_everywhere(interchange_work=0):
        kernel = tl.compile(text, backend="interp")
        inputs = special_inputs(kernel, seed) if specials else inputs_for(kernel, seed)
        got = _sanitized(text, inputs)["T"]
    want = tl.compile(text, backend="interp")(**inputs)["T"]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, equal_nan=True)


@pytest.mark.slow
@sanitizers
@settings(max_examples=25)
@given(case=__import__("properties.harness", fromlist=["cases"]).cases(max_extent=5))
def test_random_programs_with_every_contraction_interchanged_are_clean(case):
    """The differential harness's random programs, with the interchange threshold at 0,
    under the sanitizers and against the oracle's bound."""
    from properties.harness import assert_close_to_oracle

    note(case.text)
    with loops_everywhere(interchange_work=0):
        results = _sanitized(case.text, case.inputs)
    assert_close_to_oracle(case, results, "float64", "c interchanged (sanitized)")
