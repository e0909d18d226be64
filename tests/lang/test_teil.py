"""TeIL (paper 001): the paper's programs against numpy, every operator, every typing
error with its code, rule and position, Core-TeIL, the converters, the command line.

Expected values are written directly in numpy (einsum, slicing), never via tensorlang.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tensorlang as tl

from corpus import TEIL_CASES
from tensorlang import TensorLangError
from tensorlang.lang.teil.core import check_core, to_core
from tensorlang.lang.teil.parser import parse_teil
from corpus import ROOT

EXAMPLES = ROOT / "examples" / "teil"
BACKENDS = ["interp", "numpy"]


def rand(rng, *shape):
    return rng.standard_normal(shape)


# ---------------------------------------------------------------- the paper's programs
CASES = TEIL_CASES


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_paper_example_matches_numpy(name, backend):
    make_inputs, expected = CASES[name]
    inputs = make_inputs(np.random.default_rng(7))
    results = tl.compile(EXAMPLES / name, backend=backend)(**inputs)
    want = expected(inputs)
    assert set(results) == set(want)
    for key, value in want.items():
        np.testing.assert_allclose(results[key], value, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("stage", ["tl", "core"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_paper_example_converted_computes_the_same(name, stage):
    make_inputs, expected = CASES[name]
    inputs = make_inputs(np.random.default_rng(3))
    text = tl.compile(EXAMPLES / name, backend="interp").ir(stage)
    if stage == "core":
        tl.check(text, lang="teil", core=True)
    results = tl.compile(text, lang="tl" if stage == "tl" else "teil", backend="numpy")(**inputs)
    for key, value in expected(inputs).items():
        np.testing.assert_allclose(results[key], value, rtol=1e-12, atol=1e-12)


def test_every_example_file_is_tested():
    shipped = {p.name for p in EXAMPLES.glob("*.teil")}
    assert shipped == set(CASES) | {"fig3a_tvm_rejected.teil"}


def test_fig3a_tvm_kernel_is_rejected_by_t_diag():
    with pytest.raises(TensorLangError) as info:
        tl.check(EXAMPLES / "fig3a_tvm_rejected.teil")
    err = info.value
    assert (err.code, err.rule, err.line, err.col) == ("shape", "T-Diag", 9, 5)
    assert "3 and 4" in err.message


def test_fig7_lowers_to_the_matrix_product_in_index_notation():
    kernel = tl.compile(EXAMPLES / "fig7_matrix_product.teil")
    assert kernel.ir("ein").splitlines()[-1] == "C[i,j] = sum(k) A[i,k] * B[k,j]"


# ---------------------------------------------------------------- each operator
def _run(text: str, backend: str, **inputs):
    return tl.compile(text, lang="teil", backend=backend)(**inputs)


OPERATORS = [
    # (statement, result type, expected from x : [2 3 4], s : [])
    ("red+ 2 x", "[2 4]", lambda x, s: x.sum(axis=1)),
    ("red* 3 x", "[2 3]", lambda x, s: x.prod(axis=2)),
    ("redmax 1 x", "[3 4]", lambda x, s: x.max(axis=0)),
    ("redmin 2 x", "[2 4]", lambda x, s: x.min(axis=1)),
    ("red* x", "[3 4]", lambda x, s: x.prod(axis=0)),  # Core form: the first dimension
    ("transp 1 3 x", "[4 3 2]", lambda x, s: np.swapaxes(x, 0, 2)),
    ("transp 2 2 x", "[2 3 4]", lambda x, s: x),
    ("transp 2 x", "[2 4 3]", lambda x, s: np.swapaxes(x, 1, 2)),
    ("expa 2 5 x", "[2 5 3 4]", lambda x, s: np.broadcast_to(x[:, None], (2, 5, 3, 4))),
    ("expa 4 2 x", "[2 3 4 2]", lambda x, s: np.broadcast_to(x[..., None], (2, 3, 4, 2))),
    ("expa 5 x", "[5 2 3 4]", lambda x, s: np.broadcast_to(x, (5, 2, 3, 4))),
    ("proj 3 4 x", "[2 3]", lambda x, s: x[:, :, 3]),
    ("proj 2 x", "[3 4]", lambda x, s: x[1]),
    ("diag 1 4 (prod x x)", "[2 3 4 3 4]", lambda x, s: np.einsum("iabicd->iabcd", np.multiply.outer(x, x))),
    ("diag (transp 2 (transp 3 (prod x x)))", "[2 3 4 3 4]",
     lambda x, s: np.einsum("iabicd->iabcd", np.multiply.outer(x, x))),
    ("diag 2 3 (transp 1 3 (expa 1 3 (proj 1 2 x)))", "[4 3]", lambda x, s: x[1].T),
    ("contr 1 4 (prod x x)", "[3 4 3 4]", lambda x, s: np.einsum("iab,icd->abcd", x, x)),
    ("mul s x", "[2 3 4]", lambda x, s: s * x),
    ("mul x x", "[2 3 4]", lambda x, s: x * x),
    ("add x (mul s x)", "[2 3 4]", lambda x, s: x + s * x),
    ("red+ 1 (expa 1 3 x)", "[2 3 4]", lambda x, s: 3 * x),  # 001 eq. (5)
    ("red* 2 (expa 2 3 x)", "[2 3 4]", lambda x, s: x ** 3),
    ("redmax 4 (expa 4 2 x)", "[2 3 4]", lambda x, s: x),
    ("proj 1 2 (expa 1 3 x)", "[2 3 4]", lambda x, s: x),  # 001 eq. (3)
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stmt, shape, expected", OPERATORS, ids=[o[0] for o in OPERATORS])
def test_operator_matches_numpy(stmt, shape, expected, backend):
    rng = np.random.default_rng(1)
    x, s = rng.standard_normal((2, 3, 4)), rng.standard_normal()
    text = f"in alloc x : [2 3 4]\nin alloc s : []\nout alloc r : {shape}\nr = {stmt}\n"
    got = _run(text, backend, x=x, s=s)["r"]
    np.testing.assert_allclose(got, expected(x, s), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", [*BACKENDS, "c"])
@pytest.mark.parametrize("n", [10**6, 10**30])
def test_product_over_a_huge_expanded_dimension_is_too_large_not_a_crash(n, backend):
    # red* i (expa i n e) is e^n: lowered as n factors, a huge n used to exhaust memory
    # (killed) or nest too deeply; it is error[too-large] at the reduction instead.
    text = f"in alloc x : [2]\nout alloc r : [2]\nr = red* 1 (expa 1 {n} x)\n"
    with pytest.raises(TensorLangError) as info:
        _run(text, backend, x=np.ones(2))
    assert (info.value.code, info.value.line, info.value.col) == ("too-large", 3, 5), info.value.render()
    assert "r = red* 1 (expa" in info.value.render()  # rendered with its source line and caret


def test_product_over_an_expanded_dimension_within_the_bound_matches_numpy():
    x = np.array([1.01, -0.5, 0.0])
    text = "in alloc x : [3]\nout alloc r : [3]\nr = red* 1 (expa 1 40 x)\n"
    for backend in BACKENDS:
        np.testing.assert_allclose(_run(text, backend, x=x)["r"], x ** 40, rtol=1e-12)
    # 3000 factors: a chain of products used to exceed the nesting bound (error[too-large])
    x = np.array([1.0001, -0.9999, 0.0])
    text = "in alloc x : [3]\nout alloc r : [3]\nr = red* 1 (expa 1 3000 x)\n"
    np.testing.assert_allclose(_run(text, "interp", x=x)["r"], x ** 3000, rtol=1e-12)


def test_undefined_values_stay_undefined_through_max_and_min():
    text = "alloc x : [3]\nalloc a : []\nalloc b : []\na = redmax 1 x\nb = redmin 1 x\n"
    for backend in BACKENDS:
        res = _run(text, backend, x=np.array([1.0, np.nan, 2.0]))
        assert np.isnan(res["a"]) and np.isnan(res["b"]), backend


# ---------------------------------------------------------------- typing errors
DECLS = "alloc x : [2 3 4]\nalloc y : [2 3]\nalloc s : []\nalloc z : [2 2]\n"
ERRORS = [
    # (statement on line 5, code, rule, column)
    ("y = add y z", "shape", "T-Add", 5),
    ("y = mul y z", "shape", "T-Mul", 5),
    ("y = mul y s", "shape", "T-Mul", 5),  # the scalar must come first (T-SMul)
    ("y = red+ 4 x", "dim-range", "T-Red+", 10),
    ("s = redmax 1 s", "dim-range", "T-Redmax", 12),
    ("y = red* 0 x", "dim-range", "T-Red*", 10),
    ("x = transp 1 4 x", "dim-range", "T-Transp", 14),
    ("x = transp 3 x", "dim-range", "T-Transp^core", 12),
    ("y = diag 2 3 x", "shape", "T-Diag", 5),
    ("y = diag 3 1 x", "dim-range", "T-Diag", 5),
    ("y = diag 2 2 x", "dim-range", "T-Diag", 5),
    ("s = diag y", "shape", "T-Diag^core", 5),
    ("s = diag s", "dim-range", "T-Diag^core", 5),
    ("x = expa 4 2 y", "dim-range", "T-Expa", 10),
    ("x = expa 3 0 y", "shape", "T-Expa", 12),
    ("y = proj 3 5 x", "dim-range", "T-Proj", 12),
    ("y = proj 3 0 x", "dim-range", "T-Proj", 12),
    ("y = proj 4 1 x", "dim-range", "T-Proj", 10),
    ("y = contr 1 2 (prod z z)", "assign-shape", "OK-Stmt", 1),
    ("s = contr 1 2 y", "shape", "T-Diag", 5),
    ("y = add y w", "undeclared", "T-Var", 11),
    ("w = y", "undeclared-assign", "OK-Stmt", 1),
    ("y = x", "assign-shape", "OK-Stmt", 1),
]


@pytest.mark.parametrize("stmt, code, rule, col", ERRORS, ids=[e[0] for e in ERRORS])
def test_typing_error_names_the_rule(stmt, code, rule, col):
    with pytest.raises(TensorLangError) as info:
        tl.check(DECLS + stmt + "\n", lang="teil")
    err = info.value
    assert (err.code, err.rule, err.line, err.col) == (code, rule, 5, col), err.render()


def test_errors_are_collected_one_per_statement():
    with pytest.raises(TensorLangError) as info:
        tl.check(DECLS + "y = add y z\ny = red+ 9 x\ny = y\n", lang="teil")
    assert [(d.code, d.rule, d.span.line) for d in info.value.diagnostics] == [
        ("shape", "T-Add", 5), ("dim-range", "T-Red+", 6)]


@pytest.mark.parametrize("text, code, line, col", [
    ("alloc x : [2]\nalloc x : [3]\n", "redeclared", 2, 7),
    ("alloc x : [0]\n", "shape", 1, 1),
    ("alloc x : [2]\nx = add x\n", "syntax", 2, 10),
    ("alloc x : [2]\nx = transp 1 2 3 x\n", "syntax", 2, 5),
    ("alloc x : [2]\nx = diag 1 x\n", "syntax", 2, 5),
    ("alloc add : [2]\n", "syntax", 1, 7),
    ("alloc x : [2]\nx = x\nalloc y : [2]\n", "syntax", 3, 1),
    ("alloc x : [2]\nx = x + x\n", "syntax", 2, 7),
    ("alloc x : [2]\nx = (x\n", "syntax", 2, 7),
])
def test_malformed_program_is_rejected_at_its_position(text, code, line, col):
    with pytest.raises(TensorLangError) as info:
        tl.check(text, lang="teil")
    assert (info.value.code, info.value.line, info.value.col) == (code, line, col), info.value.render()


def test_caret_lines_up_under_a_line_with_tabs():
    # the caret line repeats the source line's tabs, so that it lines up in a terminal
    with pytest.raises(TensorLangError) as info:
        tl.check("alloc x : [2]\nx =\tred+\t3 x\n", lang="teil")
    shown, caret = info.value.render().splitlines()[1:3]
    assert (info.value.line, info.value.col) == (2, 10)
    assert shown.expandtabs().index("3") == caret.expandtabs().index("^"), info.value.render()


@pytest.mark.parametrize("text, after_statements", [
    ("alloc x : [2]\nx = x\nalloc y : [2]\n", True),
    ("alloc x : [2]\nx = x\nin alloc y : [2]\n", True),
    ("in in alloc y : [2]\n", False),  # a doubled qualifier, no statement anywhere
    ("out in alloc y : [2]\n", False),
    ("alloc alloc y : [2]\n", False),
])
def test_allocation_order_hint_only_after_a_statement(text, after_statements):
    with pytest.raises(TensorLangError) as info:
        tl.check(text, lang="teil")
    assert info.value.code == "syntax"
    assert ("allocations must come before statements" in info.value.message) == after_statements, \
        info.value.render()
    if text.startswith("alloc alloc"):
        assert (info.value.line, info.value.col) == (1, 7) and "keyword" in info.value.message


def test_qualifiers_work_as_in_the_model_language():
    with pytest.raises(TensorLangError) as info:
        tl.check("in alloc x : [2]\nout alloc y : [2]\nalloc t : [2]\ny = add x t\n", lang="teil")
    assert (info.value.code, info.value.line, info.value.col) == ("uninit", 4, 11)
    with pytest.raises(TensorLangError) as info:
        tl.check("in alloc x : [2]\nout alloc y : [2]\n", lang="teil")
    assert info.value.code == "uninit"
    with pytest.raises(TensorLangError) as info:
        tl.check("in alloc x : [2]\nout alloc y : [2]\nx = y\ny = x\n", lang="teil")
    assert info.value.code == "read-only"
    kernel = tl.compile("in alloc x : [2]\nout alloc y : [2]\nalloc t : [2]\nt = add x x\ny = mul t x\n",
                        lang="teil")
    assert kernel.inputs == ("x",) and kernel.outputs == ("y",)
    with pytest.raises(TensorLangError) as info:
        kernel(x=np.ones(3))
    assert (info.value.code, info.value.line, info.value.col) == ("input", 1, 10)


def test_unqualified_program_returns_the_whole_store_and_starts_undefined():
    res = tl.compile("alloc x : [2]\nalloc y : [2]\ny = add x x\n", lang="teil")(x=[1.0, 2.0])
    np.testing.assert_array_equal(res["y"], [2.0, 4.0])
    assert set(res) == {"x", "y"}
    with pytest.raises(tl.TensorLangError, match="missing input 'x'"):
        tl.compile("alloc x : [2]\nalloc y : [2]\ny = add x x\n", lang="teil")()
    assert np.isnan(tl.compile("alloc x : [2]\nalloc y : [2]\ny = add x x\n", lang="teil",
                               allow_missing=True)()["y"]).all()


def test_statement_reads_the_old_store():  # St-Stmt
    res = tl.compile("alloc x : [2 2]\nx = transp 1 2 x\n", lang="teil")(x=[[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(res["x"], [[1.0, 3.0], [2.0, 4.0]])


# ---------------------------------------------------------------- Core-TeIL
def test_core_check_rejects_index_arguments_and_distant_transpositions():
    with pytest.raises(TensorLangError) as info:
        tl.check(EXAMPLES / "fig7_matrix_product.teil", core=True)
    assert (info.value.code, info.value.rule, info.value.line, info.value.col) == ("syntax", "T-Red+^core", 7, 5)
    cases = {
        "w = transp 1 3 w": "T-Transp^core",
        "z = transp 1 2 z": "T-Transp^core",
        "y = contr 1 2 (prod z y)": "T-Diag^core",
        "x = expa 1 2 (proj 1 1 x)": "T-Expa^core",
        "y = proj 3 1 x": "T-Proj^core",
    }
    for stmt, rule in cases.items():
        with pytest.raises(TensorLangError) as info:
            tl.check(DECLS + "alloc w : [2 3 2]\n" + stmt + "\n", lang="teil", core=True)
        assert (info.value.code, info.value.rule) == ("syntax", rule), stmt


def test_core_programs_pass_the_core_check():
    text = DECLS + "x = transp 1 (expa 3 (red+ (transp 1 (proj 2 (expa 2 x)))))\ny = mul s (redmin (diag (prod z y)))\n"
    tl.check(text, lang="teil")  # well-typed
    tl.check(text, lang="teil", core=True)


def test_core_rewriter_keeps_core_programs_and_rewrites_full_ones():
    core = parse_teil("alloc x : [2 2]\nalloc y : [2 2 2]\ny = transp 1 (diag (prod x x))\n")
    assert to_core(core) == core
    full = parse_teil("alloc x : [2 3 2]\nx = transp 1 3 x\n")
    rewritten = to_core(full)
    check_core(rewritten)
    x = np.random.default_rng(0).standard_normal((2, 3, 2))
    from tensorlang.lang.teil.printer import to_teil_source

    np.testing.assert_array_equal(tl.compile(to_teil_source(rewritten), lang="teil")(x=x)["x"], np.swapaxes(x, 0, 2))


def test_core_check_of_a_model_language_program_is_an_input_error():
    with pytest.raises(TensorLangError) as info:
        tl.check("var x : [2]\nx = x\n", core=True)
    assert info.value.code == "input"


# ---------------------------------------------------------------- converters
def test_teil_to_model_language_uses_operator_form_where_it_can():
    text = ("in alloc A : [3 4]\nin alloc B : [4 3]\nin alloc s : []\nout alloc C : [3 3]\nout alloc D : [3]\n"
            "C = add (mul s (contr 2 3 (prod A B))) (transp 1 2 (contr 2 3 (prod A B)))\n"
            "D = redmax 2 C\n")
    out = tl.compile(text, lang="teil").ir("tl")
    assert "C = s * A # B . [2 3] + A # B . [2 3] ^ [1 2]" in out  # '#' binds tightest
    assert "D[i] = max(k) C[i,k]" in out


def test_model_language_to_teil():
    text = "in var A : [3 4]\nin var B : [4 5]\nin var s : []\nout var C : [3 5]\nC = (A # B . [2 3]) * s\n"
    assert tl.compile(text).ir("teil").splitlines()[-1] == "C = mul s (contr 2 3 (prod A B))"
    grouped = "in var A : [2 2]\nin var u : [2 2]\nout var v : []\nv = A # u . [[2 3] [1 4]]\n"
    assert tl.compile(grouped).ir("teil").splitlines()[-1] == "v = contr 1 2 (contr 2 3 (prod A u))"


@pytest.mark.parametrize("stmt, what, col", [
    ("y = x - x", "'-'", 5),
    ("y = -x", "unary '-'", 5),
    ("y = 2 * x", "number literal", 5),
    ("y = exp(x)", "exp", 5),
    ("y[i] = x[i]", "index-form", 1),
])
def test_model_language_operator_without_teil_form_is_a_backend_error(stmt, what, col):
    kernel = tl.compile(f"var x : [2]\nvar y : [2]\n{stmt}\n")
    with pytest.raises(TensorLangError) as info:
        kernel.ir("teil")
    err = info.value
    assert (err.code, err.line, err.col) == ("backend", 3, col)
    assert what in err.message


def test_converters_rename_reserved_names():
    out = tl.compile("alloc sum : [2]\nalloc exp : [2]\nexp = add sum sum\n", lang="teil").ir("tl")
    assert "renamed: sum -> sum_" in out
    res = tl.compile(out)(sum_=[1.0, 2.0])
    np.testing.assert_array_equal(res["exp_"], [2.0, 4.0])
    teil_text = tl.compile("var add : [2]\nvar y : [2]\ny = add + add\n").ir("teil")
    assert "y = add add_ add_" in teil_text
    tl.check(teil_text, lang="teil")


def test_emitted_ein_of_reserved_names_parses_back_and_computes_the_same():
    # --emit ein prints a .tl program; TeIL may name variables with the model's reserved words
    text = "alloc sum : [2]\nalloc delta : [2 2]\nalloc var : []\ndelta = prod sum sum\nvar = red+ 1 (red+ 1 delta)\n"
    out = tl.compile(text, lang="teil").ir("ein")
    assert "renamed: sum -> sum_" in out
    x = np.array([1.5, -2.0])
    res = tl.compile(out, backend="numpy")(sum_=x)
    np.testing.assert_allclose(res["delta_"], np.outer(x, x), rtol=1e-12)
    np.testing.assert_allclose(res["var_"], np.outer(x, x).sum(), rtol=1e-12)


# ---------------------------------------------------------------- model-language reductions
def test_index_form_reductions_run_on_every_back_end():
    text = ("var A : [3 4]\nvar x : [3]\nvar max : [3]\n"
            "x[i] = prod(k) A[i,k] + max(k) A[i,k] * 2 - min(k,l) A[i,k] * A[i,l]\nmax[i] = x[i]\n")
    a = np.random.default_rng(5).standard_normal((3, 4))
    outer = a[:, :, None] * a[:, None, :]
    want = a.prod(axis=1) + 2 * a.max(axis=1) - outer.min(axis=(1, 2))
    for backend in BACKENDS:
        res = tl.compile(text, backend=backend)(A=a)
        np.testing.assert_allclose(res["x"], want, rtol=1e-12)
        np.testing.assert_allclose(res["max"], want, rtol=1e-12)
    assert "prod(k) A[i,k] + max(k) A[i,k] * 2" in tl.compile(text).ir("ein")


@pytest.mark.parametrize("text, code", [
    ("var A : [3]\nvar s : []\ns[] = foo(k) A[k]\n", "syntax"),
    ("var A : [3]\nvar s : []\ns[] = max(k) 2\n", "index-extent"),
    ("var A : [3 3]\nvar x : [3]\nx[i] = min(i) A[i,i]\n", "repeated-index"),
])
def test_index_form_reduction_errors(text, code):
    with pytest.raises(TensorLangError) as info:
        tl.check(text)
    assert info.value.code == code


# ---------------------------------------------------------------- command line
def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tensorlang.cli", *map(str, args)], capture_output=True, text=True,
                          input=stdin)


@pytest.mark.slow
def test_cli_check_run_and_compile_teil(tmp_path):
    ok = _cli("check", EXAMPLES / "fig7_matrix_product.teil")
    assert ok.returncode == 0 and "ok" in ok.stdout
    bad = _cli("check", EXAMPLES / "fig3a_tvm_rejected.teil")
    assert bad.returncode == 1 and "error[shape]" in bad.stderr and "rule: T-Diag" in bad.stderr
    assert "Traceback" not in bad.stderr
    core = _cli("check", "--core", EXAMPLES / "fig11_proj_expa.teil")
    assert core.returncode == 1 and "T-Proj^core" in core.stderr
    run = _cli("run", EXAMPLES / "fig11_proj_expa.teil", "--random-inputs", "--backend", "numpy",
               "--output", tmp_path / "out.npz")
    assert run.returncode == 0, run.stderr
    with np.load(tmp_path / "out.npz") as saved:
        assert set(saved.files) == {"C", "D"}
    emitted = _cli("compile", EXAMPLES / "fig7_matrix_product.teil", "--emit", "core")
    assert emitted.returncode == 0
    check_core(parse_teil(emitted.stdout))
    tl_text = _cli("compile", EXAMPLES / "fig7_matrix_product.teil", "--emit", "tl").stdout
    assert "C[i,j] = sum(k) A[i,k] * B[k,j]" in tl_text
    model = tmp_path / "m.tl"
    model.write_text("var x : [2]\nvar y : [2]\ny = x / x\n")
    refused = _cli("compile", model, "--emit", "teil")
    assert refused.returncode == 1 and "error[backend]" in refused.stderr and "3:5" in refused.stderr


@pytest.mark.slow
def test_unqualified_teil_program_gets_random_inputs_for_what_it_reads():
    out = _cli("run", "-", "--lang", "teil", "--random-inputs",
               stdin="alloc x : [2]\nalloc y : [2]\ny = add x x\n")
    assert out.returncode == 0, out.stderr
    assert "nan" not in out.stdout.lower()


def test_report_and_ast_of_a_teil_program():
    kernel = tl.compile(EXAMPLES / "fig11_proj_expa.teil")
    assert "D = add (expa 1 3 A) B" in kernel.ir("ast")
    assert "out       D : [3 4 5]" in kernel.report()


@pytest.mark.parametrize("name", sorted(CASES))
def test_paper_example_on_the_c_back_end(name):
    """The C back end works from the kernel's EIN, so it serves TeIL unchanged."""
    make_inputs, expected = CASES[name]
    inputs = make_inputs(np.random.default_rng(11))
    try:
        kernel = tl.compile(EXAMPLES / name, backend="c")
    except TensorLangError as exc:  # no working C compiler on this machine
        if exc.code != "backend":
            raise
        pytest.skip(exc.message)
    results = kernel(**inputs)
    for key, value in expected(inputs).items():
        np.testing.assert_allclose(results[key], value, rtol=1e-12, atol=1e-12)
