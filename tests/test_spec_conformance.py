"""SPEC.md's concrete claims, one by one: the language (section 1), TeIL (2), the index
form (3), structure annotations and STUR (4), the error codes (5), the command line (6)
and the Python API (7).  Where tensorlang decides what SPEC leaves open, or differs on
purpose, docs/spec-notes.md says so and the test below names the entry."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main

RNG = np.random.default_rng(7)


def run(src: str, lang: str = "tl", backend: str = "interp", **inputs):
    return tl.compile(src, lang=lang, backend=backend)(**inputs)


def code_of(src: str, lang: str = "tl") -> str:
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(src, lang=lang)
    return info.value.code


def cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


# --------------------------------------------------------------------------- section 5: the codes
REJECTED = {  # SPEC section 5's table, each row by an input of its own
    "redeclared": "var A : [2]\nvar A : [2]\n",
    "undeclared-assign": "var A : [2]\nB = A\n",
    "assign-shape": "var A : [2]\nvar B : [3]\nB = A\n",
    "undeclared": "var A : [2]\nA = B\n",
    "shape": "in var A : [2 3]\nout var C : []\nC = A . [1 2]\n",
    "dim-range": "in var A : [2 2]\nout var C : []\nC = A . [1 3]\n",
    "syntax": "var A : [2]\nA = = A\n",
    "uninit": "in var A : [2]\nvar t : [2]\nout var B : [2]\nB = t + A\n",
    "index-extent": "in var A : [2 3]\nout var C : [2]\nC[i] = sum(k) A[i,k] * A[k,i]\n",
    "free-index": "in var A : [2 3]\nout var C : [2]\nC[i] = A[i,k]\n",
    "repeated-index": "in var A : [2 2]\nout var C : [2 2]\nC[i,i] = A[i,i]\n",
    "structure": "in var A : [2 3] symmetric\nout var B : [2 3]\nB = A\n",
}


@pytest.mark.parametrize("code", sorted(REJECTED))
def test_each_code_of_the_table(code):
    assert code_of(REJECTED[code]) == code


@pytest.mark.parametrize("src, code", [
    ("in var A : [2 2]\nout var C : []\nC = A . [1 1]\n", "dim-range"),  # m != n
    ("in var A : [2 2 2 2]\nout var C : []\nC = A . [[1 2] [2 3]]\n", "dim-range"),  # a group shares a dim
    ("in var A : [2 2]\nout var C : [2 2]\nC = A ^ [1 3]\n", "dim-range"),
    ("in var A : [2 2]\nin var B : [2 3]\nout var C : [2 2]\nC = A + B\n", "shape"),  # no broadcasting
    ("in var A : [2 2]\nout var C : [2 2]\nC = A + 1\n", "shape"),
    ("in var A : [2 2]\nout var C : [2 2]\nC = 2 / A\n", "shape"),  # '/' takes a scalar on the right only
    ("in var A : [2]\nout var B : [2]\nout var C : [2]\nB = A\n", "uninit"),  # an out never assigned
    ("in var a : [4]\nin var b : [4]\nout var c : [4]\nc[i] = sum(j,k) eps[i,j,k] * a[j] * b[k]\n", "index-extent"),
])
def test_the_rules_of_section_1(src, code):
    assert code_of(src) == code


def test_a_diagnostic_has_file_line_col_code_source_caret_and_rule(tmp_path, capsys):
    prog = tmp_path / "d.tl"
    prog.write_text("in var A : [2 2]\nout var C : [2 2]\nC = 2 / A\n")
    rc, out, err = cli(capsys, "check", prog)
    assert rc == 1
    lines = err.splitlines()
    assert lines[0].startswith(f"{prog}:3:5: error[shape]: ")
    assert lines[1].endswith("| C = 2 / A") and lines[2].strip().startswith("^")
    assert lines[3].strip() == "= rule: t-sdiv"
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(prog)
    assert (info.value.code, info.value.line, info.value.col, info.value.rule) == ("shape", 3, 5, "t-sdiv")


def test_codes_beyond_the_table_are_the_listed_ones():  # spec-notes: "Error codes beyond the table"
    assert code_of("in var A : [2]\nout var B : [2]\nA = A + A\nB = A\n") == "read-only"
    assert code_of("var A : [0]\nA = A\n") == "shape"  # spec-notes: which code
    assert code_of("in var x : [3]\nout var y : [3]\ny = 2. * x\n") == "syntax"  # '2.' is no number


# --------------------------------------------------------------------------- section 1: the language
def test_precedence_and_associativity():
    A, B = RNG.random((3, 2)), RNG.random((2, 3))
    x, w, s = RNG.random(3), RNG.random(3), np.array(2.0)
    assert np.allclose(run("in var A : [3 2]\nin var B : [2 3]\nout var C : [2 3]\nC = B * A ^ [1 2]\n",
                           A=A, B=B)["C"], B * A.T)  # postfix binds tighter than *
    assert np.allclose(run("in var A : [3 2]\nin var B : [2 3]\nout var C : [2 3 2 3]\nC = A # B ^ [1 2]\n",
                           A=A, B=B)["C"], np.einsum("ij,kl->jikl", A, B))  # # binds tighter than ^
    assert np.allclose(run("in var A : [3 2]\nin var B : [2 3]\nout var C : [3 3]\nC = A # B . [2 3]\n",
                           A=A, B=B)["C"], A @ B)
    assert np.allclose(run("in var s : []\nin var x : [3]\nin var w : [3]\nout var y : [3]\n"
                           "y = s * x + w - x / s - w\n", s=s, x=x, w=w)["y"], 2 * x - x / 2)
    assert np.allclose(run("in var x : [3]\nout var y : [3 3]\ny = -x # x // '#' is no comment\n", x=x)["y"],
                       np.outer(-x, x))
    assert np.allclose(run("in var x : [3]\nout var y : [3]\ny = x * 2 + 1e-1 * x + .5 * x\n", x=x)["y"], 2.6 * x)


def test_the_interpolation_kernel_of_002():
    A, B, C, u = RNG.random((3, 3)), RNG.random((3, 3)), RNG.random((3, 3)), RNG.random((3, 3, 3))
    got = run("in var A : [3 3]\nin var B : [3 3]\nin var C : [3 3]\nin var u : [3 3 3]\nout var v : [3 3 3]\n"
              "v = A # B # C # u . [[2 9] [4 8] [6 7]]\n", A=A, B=B, C=C, u=u)["v"]
    assert np.allclose(got, np.einsum("ak,bj,ci,ijk->abc", A, B, C, u))


def test_functions():
    x = RNG.random(3) + 0.5
    got = run("in var x : [3]\nout var y : [3]\ny = sqrt(x) + exp(x) + log(x) + sin(x) + cos(x) + tanh(x) + abs(x)\n",
              x=x)["y"]
    assert np.allclose(got, np.sqrt(x) + np.exp(x) + np.log(x) + np.sin(x) + np.cos(x) + np.tanh(x) + x)


@pytest.mark.parametrize("backend", ["numpy", "interp"])
def test_controlled_division_and_bottom(backend):
    a, b = np.array([0.0, 0.0, 1.0, -1.0, np.nan]), np.array([0.0, 3.0, 0.0, 0.0, 1.0])
    got = run("in var a : [5]\nin var b : [5]\nout var c : [5]\nc = a / b\n", backend=backend, a=a, b=b)["c"]
    assert got[:4].tolist() == [0.0, 0.0, np.inf, -np.inf] and np.isnan(got[4])
    zero_by_bottom = run("in var a : [1]\nin var b : [1]\nout var c : [1]\nc = a / b\n", backend=backend,
                         a=[0.0], b=[np.nan])["c"]
    assert np.isnan(zero_by_bottom).all()  # spec-notes: 0 / ⊥ is ⊥


def test_ev_stmt_reads_the_old_value_everywhere():
    y, x = RNG.random((2, 2)), RNG.random(2)
    assert np.allclose(run("var x : [2]\nvar y : [2 2]\nx = (y # x) . [2 3]\n", x=x, y=y)["x"], y @ x)


def test_the_store_without_qualifiers():
    res = run("var x : [2]\nvar y : [2]\nvar z : [2]\nz = x + x\n", x=np.array([1.0, 2.0]))
    assert set(res) == {"x", "y", "z"} and np.isnan(res["y"]).all() and res["z"].tolist() == [2.0, 4.0]
    src = "var x : [2]\nvar y : [2]\ny = x + x\n"
    with pytest.raises(tl.TensorLangError) as info:  # spec-notes: a deliberate difference
        run(src)
    assert info.value.code == "input" and "'x'" in info.value.message
    assert np.isnan(tl.compile(src, backend="interp", allow_missing=True)()["y"]).all()


def test_qualifiers():
    k = tl.compile("inout var x : [2]\nin var a : [2]\nout var y : [2]\nvar t : [2]\nt = a + a\nx = x + a\ny = a\n",
                   backend="interp")
    assert set(k(x=np.ones(2), a=np.ones(2))) == {"x", "y"}  # the temporary is no result
    for missing in ({"a": np.ones(2)}, {"x": np.ones(2)}):
        with pytest.raises(tl.TensorLangError) as info:
            k(**missing)
        assert info.value.code == "input"


def test_dtype():
    src = "in var a : [2]\nout var c : [2]\nc = a * 2\n"
    assert tl.compile(src, backend="interp")(a=[1, 2])["c"].dtype == np.float64
    assert tl.compile(src, backend="interp", dtype="float32")(a=np.ones(2))["c"].dtype == np.float32
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(src, backend="interp")(a=np.ones(2, complex))
    assert info.value.code == "input"


def test_the_cfdlang_dialect():
    S, x = RNG.random((3, 3)), RNG.random(3)
    head = "type matrix : [3 3]\nvar input S : matrix\nvar input x : [3]\n"
    assert np.allclose(run(head + "var output y : [3]\ny = S # x . [[1 2]]\n", "cfd", S=S, x=x)["y"], S @ x)
    assert np.allclose(run(head + "var output y : [3]\ny = S ^ [[0 1]] # x . [[1 2]]\n", "cfd", S=S, x=x)["y"],
                       S.T @ x)
    assert np.allclose(run(head + "var output y : [2 3]\ny = [x x]\n", "cfd", S=S, x=x)["y"], np.stack([x, x]))


# --------------------------------------------------------------------------- section 2: TeIL
@pytest.mark.parametrize("shape, expr, want", [
    ("[2 3]", "add A A", lambda A, S: 2 * A), ("[2 3]", "mul A A", lambda A, S: A * A),
    ("[2 3 2 3]", "prod A A", lambda A, S: np.einsum("ij,kl->ijkl", A, A)),
    ("[3]", "red+ 1 A", lambda A, S: A.sum(0)), ("[2]", "red* 2 A", lambda A, S: A.prod(1)),
    ("[3]", "redmax 1 A", lambda A, S: A.max(0)), ("[2]", "redmin 2 A", lambda A, S: A.min(1)),
    ("[3 2]", "transp 1 2 A", lambda A, S: A.T), ("[2]", "diag 1 2 S", lambda A, S: np.diag(S)),
    ("[2 4 3]", "expa 2 4 A", lambda A, S: np.broadcast_to(A[:, None, :], (2, 4, 3))),
    ("[3]", "proj 1 2 A", lambda A, S: A[1]), ("[]", "contr 1 2 S", lambda A, S: np.trace(S)),
])
def test_teil_operators(shape, expr, want):
    A, S = RNG.random((2, 3)), RNG.random((2, 2))
    src = f"in alloc A : [2 3]\nin alloc S : [2 2]\nout alloc R : {shape}\nR = {expr}\n"
    assert np.allclose(run(src, "teil", A=A, S=S)["R"], want(A, S))


@pytest.mark.parametrize("expr, code", [("diag 1 2 A", "shape"), ("proj 1 3 A", "dim-range"),
                                        ("expa 4 1 A", "dim-range"), ("red+ 3 A", "dim-range")])
def test_teil_typing(expr, code):
    assert code_of(f"in alloc A : [2 3]\nout alloc R : [2]\nR = {expr}\n", "teil") == code


def test_teil_mul_takes_a_scalar_on_the_left():  # spec-notes: TeIL's mul
    head = "in alloc A : [2 3]\nin alloc s : []\nout alloc R : [2 3]\n"
    tl.check(head + "R = mul s A\n", lang="teil")
    assert code_of(head + "R = mul A s\n", "teil") == "shape"


# --------------------------------------------------------------------------- section 3: index notation
def test_index_notation():
    A, B, D = RNG.random((2, 3)), RNG.random((3, 4)), RNG.random((2, 4))
    head = "in var A : [2 3]\nin var B : [3 4]\nin var D : [2 4]\nout var C : [2 4]\n"
    assert np.allclose(run(head + "C[i,j] = sum(k) A[i,k] * B[k,j] + D[i,j]\n", A=A, B=B, D=D)["C"], A @ B + D)
    assert np.allclose(run(head + "C[i,j] = D[i,j] - sum(k) A[i,k] * B[k,j] * 2\n", A=A, B=B, D=D)["C"],
                       D - 2 * A @ B)
    assert np.allclose(run("in var A : [2 3]\nout var C : [2]\nC[i] = A[i,2]\n", A=A)["C"], A[:, 1])  # 1-based
    a, b = RNG.random(3), RNG.random(3)
    assert np.allclose(run("in var a : [3]\nin var b : [3]\nout var c : [3]\nc[i] = sum(j,k) eps[i,j,k] * a[j] * b[k]\n",
                           a=a, b=b)["c"], np.cross(a, b))
    assert np.allclose(run("in var a : [2]\nout var c : [2]\nc[i] = sum(j) eps[i,j] * a[j]\n", a=a[:2])["c"],
                       [a[1], -a[0]])
    S = RNG.random((3, 3))
    assert np.isclose(run("in var S : [3 3]\nout var c : []\nc[] = sum(i,j) S[i,j] * delta[i,j]\n", S=S)["c"],
                      np.trace(S))


def test_the_tvm_kernel_of_001_is_rejected():
    assert code_of("in var A : [4 5]\nin var B : [4 3]\nout var C : [3 5]\n"
                   "C[y,x] = sum(k) A[k,y] * B[k,x]\n") == "index-extent"


# --------------------------------------------------------------------------- section 4: structure
@pytest.mark.parametrize("annotation", ["symmetric", "diagonal", "upper", "lower", "zero", "row(2)", "col(1)",
                                        "where i1 = i2", "where i2 = 3", "where i1 <= i2"])
def test_structure_annotations(annotation):
    tl.check(f"in var A : [3 3] {annotation}\nout var B : [3 3]\nB = A\n")


def test_where_means_zeros_and_symmetric_means_copies():  # spec-notes: `where i1 <= i2 <= i3`
    import itertools
    u = RNG.random((3, 3, 3))
    sym = sum(np.transpose(u, p) for p in itertools.permutations(range(3)))
    body = "\nin var x : [3]\nout var y : [3]\ny[i] = sum(j,k) B[i,j,k] * x[j] * x[k]\n"
    x = RNG.random(3)
    got = tl.compile("in var B : [3 3 3] symmetric" + body, backend="numpy", check_structure=True)(B=sym, x=x)["y"]
    assert np.allclose(got, np.einsum("ijk,j,k->i", sym, x, x))
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile("in var B : [3 3 3] where i1 <= i2 <= i3" + body, backend="numpy", check_structure=True)(B=sym, x=x)
    assert info.value.code == "structure"


def test_a_broken_promise_names_its_first_position(tmp_path, capsys):
    prog = tmp_path / "s.tl"
    prog.write_text("in var A : [3 3] symmetric\nout var B : [3 3]\nB = A + A\n")
    np.save(tmp_path / "A.npy", np.arange(9.0).reshape(3, 3))
    rc, _, err = cli(capsys, "run", prog, "--input", f"A={tmp_path / 'A.npy'}", "--backend", "interp",
                     "--check-structure")
    assert rc == 1 and "error[structure]" in err and "A[2,1]" in err


def test_stur_with_symbols(tmp_path, capsys):
    prog = tmp_path / "cov.stur"
    prog.write_text("symbols: N, M\noutputs: covar\ncovar(j, k) := X(i, j) * X(i, k)\n"
                    "covar:D(j, k) := (0 <= j < N) * (0 <= k < N)\nX:D(i, j) := (0 <= i < M) * (0 <= j < N)\n")
    X = RNG.random((4, 3))
    assert np.allclose(tl.compile(prog, params={"N": 3, "M": 4}, backend="interp")(X=X)["covar"], X.T @ X)
    rc, out, _ = cli(capsys, "run", prog, "--param", "N=3", "--param", "M=4", "--random-inputs", "--backend", "interp")
    assert rc == 0 and "covar  [3 3]" in out
    promised = prog.read_text() + "X:U(i, j) := (0 <= i < M) * (0 <= j < N) * (i = 0)\n"
    with pytest.raises(tl.TensorLangError) as info:  # spec-notes: STUR counts positions from 0
        tl.compile(promised, lang="stur", params={"N": 3, "M": 4}, backend="interp", check_structure=True)(X=X)
    assert info.value.code == "structure" and "X(1, 0)" in info.value.message


SPEC_COVAR = "symbols: N, M\ncovar(j, k) := X(i, j) * X(i, k)\nX:D(i, j) := (0 <= i < M) * (0 <= j < N)\n"


@pytest.mark.parametrize("params", [{"N": 3, "M": 4}, None])
def test_specs_stur_example_as_written(params):
    """SPEC section 4's example: covar has no D fact of its own; its indices range as X's do."""
    X = RNG.random((4, 3))
    for backend in ("interp", "numpy"):
        assert np.allclose(tl.compile(SPEC_COVAR, lang="stur", params=params, backend=backend)(X=X)["covar"], X.T @ X)
    assert tl.check(SPEC_COVAR, lang="stur", params={"N": 3, "M": 4}).context.shapes["covar"] == (3, 3)


@pytest.mark.parametrize("src", [
    "A(i) := B(i)\n",  # an input needs its D fact
    "A(i) := B(i) * C(i)\nB:D(i) := (0 <= i < 3)\nC:D(i) := (0 <= i < 4)\n",  # i ranges two ways
    "A(i, j) := B(i) * (j = i)\nB:D(i) := (0 <= i < 3)\n",  # j indexes no tensor
])
def test_dimensions_that_no_rule_fixes_are_still_asked_for(src):
    assert code_of(src, "stur") == "undeclared"


# --------------------------------------------------------------------------- section 6: the command line
MATMUL = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n"


def test_run_with_the_options_of_the_spec(tmp_path, capsys):
    prog = tmp_path / "m.tl"
    prog.write_text(MATMUL)
    np.save(tmp_path / "A.npy", np.ones((2, 3)))
    np.savez(tmp_path / "ins.npz", B=np.ones((3, 4)))
    rc, out, _ = cli(capsys, "run", prog, "--input", f"A={tmp_path / 'A.npy'}", "--inputs", tmp_path / "ins.npz",
                     "--output", tmp_path / "out.npz", "--backend", "numpy", "--dtype", "float32", "--pad", "4",
                     "--threads", "1", "--check-structure")
    assert rc == 0 and "C  [2 4]" in out and "checksum=24" in out and "time:" in out
    assert np.load(tmp_path / "out.npz")["C"].tolist() == [[3.0] * 4] * 2
    rc, out, _ = cli(capsys, "run", prog, "--random-inputs=3", "--backend", "interp")
    assert rc == 0 and "seed 3" in out


def test_standard_input_and_the_suffix(tmp_path, capsys, monkeypatch):
    import io
    import sys
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MATMUL.encode())))
    rc, out, _ = cli(capsys, "compile", "-", "--emit", "ein")
    assert rc == 0 and "C[i,j] = sum(k) A[i,k] * B[k,j]" in out
    prog = tmp_path / "m.txt"
    prog.write_text("in alloc A : [2 3]\nout alloc R : [3]\nR = red+ 1 A\n")
    assert cli(capsys, "check", prog)[0] == 1  # an unknown suffix reads as .tl
    assert cli(capsys, "check", "--lang", "teil", prog)[0] == 0


@pytest.mark.parametrize("emit", ["ast", "ein", "opt", "c", "numpy"])
def test_compile_shows_every_stage(tmp_path, capsys, emit):
    prog = tmp_path / "m.tl"
    prog.write_text(MATMUL)
    rc, _, _ = cli(capsys, "compile", prog, "--emit", emit, "-o", tmp_path / "o.txt")
    assert rc == 0 and (tmp_path / "o.txt").read_text().strip()


def test_analyze_and_the_exit_statuses(tmp_path, capsys):
    prog = tmp_path / "ip.tl"
    prog.write_text("in var A : [4 4]\ninout var x : [4]\nx = A # x . [2 3]\n")
    rc, out, _ = cli(capsys, "analyze", prog)
    assert rc == 0 and "flops" in out and "bytes" in out and "x : [4]" in out and "structure" in out
    bad = tmp_path / "bad.tl"
    bad.write_text("var A : [2]\nA = B\n")
    assert cli(capsys, "check", prog, bad)[0] == 1
    with pytest.raises(SystemExit) as info:  # a usage mistake: argparse's 2 (spec-notes)
        main(["run", str(prog), "--backend", "gpu"])
    assert info.value.code == 2
    capsys.readouterr()


# --------------------------------------------------------------------------- section 7: the API
def test_the_api_signatures():
    params = inspect.signature(tl.compile).parameters
    assert [(n, params[n].default) for n in ("backend", "dtype", "pad", "threads")] == [
        ("backend", "auto"), ("dtype", "float64"), ("pad", None), ("threads", None)]
    assert list(params)[0] == "source_or_path"
    k = tl.compile(MATMUL, backend="numpy")
    assert all(isinstance(s, str) and s for s in (k.code("c"), k.code("numpy"), k.ir("ein"), str(k.report())))


def test_calls_out_and_aliasing():
    k = tl.compile(MATMUL, backend="numpy")
    a, b = np.asfortranarray(RNG.random((2, 3))), RNG.random((6, 8))[::2, ::2]
    assert np.allclose(k(A=a, B=b)["C"], a @ b) and np.allclose(k(A=a.tolist(), B=b.tolist())["C"], a @ b)
    c = np.empty((2, 4))
    assert k(A=a, B=b, out={"C": c})["C"] is c and np.allclose(c, a @ b)
    sq = tl.compile("in var A : [3 3]\nin var B : [3 3]\nout var C : [3 3]\nC = (A # B . [2 3]) ^ [1 2]\n",
                    backend="numpy")
    x, y = RNG.random((3, 3)), RNG.random((3, 3))
    want = (x @ y).T
    sq(A=x, B=y, out={"C": x})  # the same array in and out: the ev-stmt result
    assert np.allclose(x, want)


def test_check_and_einsum():
    with pytest.raises(tl.TensorLangError) as info:
        tl.check("var x : [2]\nx = x # x")
    assert info.value.code == "assign-shape"
    ops = [RNG.random((3, 3))] * 3 + [RNG.random((2, 3, 3, 3))]
    assert np.allclose(tl.einsum("ia,jb,kc,eabc->eijk", *ops), np.einsum("ia,jb,kc,eabc->eijk", *ops))


def test_output_naming_an_existing_directory_is_refused(tmp_path, capsys):  # docs/cli.md, "What run reads"
    prog = tmp_path / "m.tl"
    prog.write_text(MATMUL)
    (tmp_path / "res").mkdir()
    rc, out, err = cli(capsys, "run", prog, "--random-inputs", "--backend", "interp", "--output", tmp_path / "res")
    assert rc == 1 and "error[input]" in err and "directory" in err and out == ""  # refused before the run
    assert not (tmp_path / "res.npz").exists()
