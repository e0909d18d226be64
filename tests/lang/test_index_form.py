"""Index-form statements (SPEC section 3, paper 004's EIN) end to end.

(a) The kernels of paper 001 Section 2 (TACO Figure 2, TVM Figure 3, TC Figure 4), as
    shipped in ``examples/index_form/``, on the ``interp`` and ``numpy`` back ends,
    compared with ``numpy.einsum`` / ``@`` (never with tensorlang itself).
(b) Rejected programs: ``index-extent``, ``free-index``, ``repeated-index``, rank
    mismatches (``shape``, rule t-access), fixed positions out of range (``dim-range``)
    and fixed positions on the left (``syntax``), each at its exact line and column.
(c) Semantics: ``delta``, ``eps``, fixed positions, broadcasting of unused left indices,
    sibling sums, the reach of ``sum``, ev-stmt, mixing with operator form, ``uninit``,
    float32.  Every semantic test runs on both back ends.
(d) ``k.ir("ein")`` of operator-form programs, exactly, and its round trip.
(e) ``tensorlang compile PROG --emit ein|numpy``.

Expected values are written with numpy arrays built by hand or ``np.einsum``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main
from corpus import ROOT

EXAMPLES = ROOT / "examples" / "index_form"
BACKENDS = ("interp", "numpy")
RTOL = {"float64": 1e-12, "float32": 1e-5}


def rand(rng: np.random.Generator, *shape: int):
    return rng.standard_normal(shape) if shape else float(rng.standard_normal())


def assert_close(actual, expected, dtype="float64"):
    actual = np.asarray(actual)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == np.dtype(dtype), actual.dtype
    np.testing.assert_allclose(actual, expected, rtol=RTOL[dtype], atol=RTOL[dtype])


def run(src, backend, dtype="float64", **inputs):
    return tl.compile(src, backend=backend, dtype=dtype)(**inputs)


def rejected(src) -> tl.TensorLangError:
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(src)
    return info.value


def levi_civita_3() -> np.ndarray:
    """ε_ijk by hand: +1 on the even permutations of (1,2,3), -1 on the odd ones."""
    e = np.zeros((3, 3, 3))
    for i, j, k in [(0, 1, 2), (1, 2, 0), (2, 0, 1)]:
        e[i, j, k] = 1.0
    for i, j, k in [(0, 2, 1), (2, 1, 0), (1, 0, 2)]:
        e[i, j, k] = -1.0
    return e


LEVI_CIVITA_2 = np.array([[0.0, 1.0], [-1.0, 0.0]])


# =========================================================================== (a) paper 001
def taco_inputs(b_shape, c_len):
    return lambda rng: {"B": rand(rng, *b_shape), "C": rand(rng, c_len)}


# file -> (inputs(rng), expected(inputs) -> {result: value})
KERNELS = {
    "taco_fig2a_tensor_vector.tl": (
        taco_inputs((3, 4, 5), 5),
        lambda i: {"A": np.einsum("ijk,k->ij", i["B"], i["C"])},
    ),
    "taco_fig2b_sum_over_k.tl": (
        taco_inputs((3, 4, 5), 3),
        lambda i: {"A": np.einsum("ijk,i->ij", i["B"], i["C"])},
    ),
    "taco_fig2c_permuted.tl": (
        taco_inputs((5, 4, 3), 3),
        lambda i: {"A": np.einsum("kji,i->ij", i["B"], i["C"])},
    ),
    "tvm_fig3b_correct.tl": (
        lambda rng: {"A": rand(rng, 5, 3), "B": rand(rng, 5, 4)},
        lambda i: {"C": i["A"].T @ i["B"]},
    ),
    "tc_fig4a.tl": (
        lambda rng: {"B": rand(rng, 6), "C": rand(rng, 6)},
        lambda i: {"A": i["B"] + i["C"]},
    ),
    "tc_fig4b.tl": (
        lambda rng: {"B": rand(rng, 6), "C": rand(rng, 6)},
        lambda i: {"A": i["B"] + i["C"]},
    ),
}
REJECTED_KERNELS = {"tvm_fig3a_incorrect.tl": ("index-extent", 14, 21)}


def test_every_example_file_is_covered():
    files = {p.name for p in EXAMPLES.glob("*.tl")}
    assert files == set(KERNELS) | set(REJECTED_KERNELS)
    readme = (EXAMPLES / "README.md").read_text()
    for name in files:
        assert f"`{name}`" in readme


@pytest.mark.parametrize("name", sorted(set(KERNELS) | set(REJECTED_KERNELS)))
def test_example_header_names_paper_and_figure(name):
    head = (EXAMPLES / name).read_text().splitlines()[0]
    assert head.startswith("// Paper 001") and "Figure" in head


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_paper_001_kernel(name, backend):
    make_inputs, expected = KERNELS[name]
    inputs = make_inputs(np.random.default_rng(1))
    kernel = tl.compile(EXAMPLES / name, backend=backend)
    assert kernel.backend == backend
    results = kernel(**inputs)
    want = expected(inputs)
    assert set(results) == set(want)
    for var, value in want.items():
        assert_close(results[var], value)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_paper_001_kernel_auto_backend_and_einsum_agree(name):
    make_inputs, expected = KERNELS[name]
    inputs = make_inputs(np.random.default_rng(7))
    results = tl.compile(str(EXAMPLES / name))(**inputs)
    for var, value in expected(inputs).items():
        assert_close(results[var], value)


def test_tvm_fig3a_is_rejected_with_index_extent():
    code, line, col = REJECTED_KERNELS["tvm_fig3a_incorrect.tl"]
    path = EXAMPLES / "tvm_fig3a_incorrect.tl"
    err = rejected(path)
    assert (err.code, err.line, err.col) == (code, line, col)
    assert err.rule == "index-extent"
    # the reported place is the y of A[k,y]
    source_line = path.read_text().splitlines()[line - 1]
    assert source_line == "C[y,x] = sum(k) A[k,y] * B[k,x]"
    assert source_line[col - 1] == "y" and source_line[col - 3 : col - 1] == "k,"
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(path, backend="interp")
    assert info.value.code == "index-extent"


def test_tvm_fig3_differs_only_in_the_declarations():
    a = (EXAMPLES / "tvm_fig3a_incorrect.tl").read_text().splitlines()
    b = (EXAMPLES / "tvm_fig3b_correct.tl").read_text().splitlines()
    code = lambda lines: [s for s in lines if s and not s.startswith("//")]  # noqa: E731
    ca, cb = code(a), code(b)
    assert ca[-1] == cb[-1] == "C[y,x] = sum(k) A[k,y] * B[k,x]"
    assert ca[:3] == ["in var A : [3 5]", "in var B : [4 5]", "out var C : [3 4]"]
    assert cb[:3] == ["in var A : [5 3]", "in var B : [5 4]", "out var C : [3 4]"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_tc_fig4a_and_fig4b_compute_the_same(backend):
    rng = np.random.default_rng(3)
    b, c = rand(rng, 6), rand(rng, 6)
    ra = tl.compile(EXAMPLES / "tc_fig4a.tl", backend=backend)(B=b, C=c)["A"]
    rb = tl.compile(EXAMPLES / "tc_fig4b.tl", backend=backend)(B=b, C=c)["A"]
    assert_close(ra, b + c)
    assert_close(rb, b + c)


def test_cli_check_of_the_examples(capsys):
    ok = [str(EXAMPLES / n) for n in sorted(KERNELS)]
    assert main(["check", *ok]) == 0
    assert main(["check", str(EXAMPLES / "tvm_fig3a_incorrect.tl")]) == 1
    err = capsys.readouterr().err
    assert "tvm_fig3a_incorrect.tl:14:21: error[index-extent]" in err
    assert "Traceback" not in err


# =========================================================================== (b) rejections
DECLS = """\
var A : [3 4]
var B : [4 5]
var Q : [3 3]
var x : [3]
var y : [4]
var C : [3 5]
var c : [3]
var s : []
var T : [3 4 5]
"""  # 9 lines: the statement under test is on line 10

# (statement, code, col, rule); the statement is on line 10
REJECTIONS = [
    # index-extent: one index, two extents; a sum index with no inferable extent
    ("C[i,j] = A[i,j]", "index-extent", 14, "index-extent"),  # j: 5 on the left, 4 in A
    ("s[] = sum(k) x[k] * y[k]", "index-extent", 23, "index-extent"),  # k: 3 in x, 4 in y
    ("c[i] = sum(k) A[k,i]", "index-extent", 19, "index-extent"),  # i: 3 on the left, 4 in A
    ("s[] = sum(k) A[k,k]", "index-extent", 18, "index-extent"),  # a diagonal of a non-square A
    ("c[i] = sum(k) 2", "index-extent", 12, "index-extent"),  # k indexes nothing
    ("c[i] = sum(k) s", "index-extent", 12, "index-extent"),
    ("c[i] = sum(k) delta[i,k]", "index-extent", 12, "index-extent"),  # delta fixes no extent
    ("s[] = sum(k,l) x[k]", "index-extent", 13, "index-extent"),  # l indexes nothing
    ("c[i] = eps[i,1]", "index-extent", 12, "index-extent"),  # eps[.,.] is 2 x 2, c has 3
    ("s[] = sum(k,l) eps[k,l] * x[k]", "index-extent", 29, "index-extent"),
    # free-index: no implicit summation
    ("c[i] = x[j]", "free-index", 10, "free-index"),
    ("c[i] = sum(k) A[i,k] * y[l]", "free-index", 26, "free-index"),
    ("s[] = (sum(k) x[k]) * x[k]", "free-index", 25, "free-index"),  # k's sum ended at ')'
    ("s[] = sum(k) x[k] + x[k]", "free-index", 23, "free-index"),  # ... and at '+'
    ("c[i] = delta[i,j]", "free-index", 16, "free-index"),
    ("c[i] = sum(j) eps[i,j,m] * Q[i,j]", "free-index", 23, "free-index"),
    ("C[i,j] = sum(k) A[i,k] * B[k,j] + A[i,k]", "free-index", 39, "free-index"),
    # repeated-index: twice on the left, or a sum re-binding a bound index
    ("Q[i,i] = Q[i,i]", "repeated-index", 5, "repeated-index"),
    ("T[i,j,i] = 0", "repeated-index", 7, "repeated-index"),
    ("c[i] = sum(i) x[i]", "repeated-index", 12, "repeated-index"),
    ("s[] = sum(k) x[k] * sum(k) x[k]", "repeated-index", 25, "repeated-index"),
    ("s[] = sum(k,k) Q[k,k]", "repeated-index", 13, "repeated-index"),
    ("s[] = sum(k) sum(j,k) Q[j,k]", "repeated-index", 20, "repeated-index"),
    # shape / t-access: the wrong number of indices
    ("c[i] = A[i]", "shape", 8, "t-access"),
    ("c[i] = sum(k) T[i,k]", "shape", 15, "t-access"),
    ("c[i] = x[i,1]", "shape", 8, "t-access"),
    ("c[i] = s[i]", "shape", 8, "t-access"),
    ("c[i] = x", "shape", 8, "t-access"),  # a plain name is a scalar
    ("C[i] = x[i]", "shape", 1, "t-access"),  # the left side too
    ("s[i] = x[i]", "shape", 1, "t-access"),
    ("c[] = 1", "shape", 1, "t-access"),
    # dim-range: a fixed position outside its dimension
    ("c[i] = A[i,5]", "dim-range", 12, "t-access"),
    ("c[i] = A[i,0]", "dim-range", 12, "t-access"),
    ("s[] = T[4,1,1]", "dim-range", 9, "t-access"),
    ("s[] = x[3] + x[4]", "dim-range", 16, "t-access"),
    ("s[] = eps[3,1]", "dim-range", 11, "t-access"),
    ("c[i] = eps[i,4,1]", "dim-range", 14, "t-access"),
    ("c[i] = delta[0,i]", "dim-range", 14, "t-access"),
    # syntax: a fixed position on the left; eps takes 2 or 3 indices
    ("C[i,2] = x[i]", "syntax", 5, None),
    ("c[1] = 2", "syntax", 3, None),
    ("T[1,j,m] = 0", "syntax", 3, None),
    ("c[i] = eps[i,j,k,l]", "syntax", 17, None),
    # undeclared variables in index form
    ("c[i] = Z[i]", "undeclared", 8, "t-var"),
    ("Z[i] = x[i]", "undeclared-assign", 1, "ok-stmt"),
]


@pytest.mark.parametrize("stmt, code, col, rule", REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_rejected(stmt, code, col, rule):
    err = rejected(DECLS + stmt + "\n")
    assert (err.code, err.line, err.col) == (code, 10, col), str(err)
    if rule is not None:
        assert err.rule == rule


def test_rejections_cover_every_index_code():
    counts = {}
    for _, code, _, _ in REJECTIONS:
        counts[code] = counts.get(code, 0) + 1
    for code in ("index-extent", "free-index", "repeated-index", "shape", "dim-range", "syntax"):
        assert counts[code] >= 3, code


def test_rejection_on_a_later_line_after_operator_form():
    src = DECLS + "C = A # B . [2 3]\nc[i] = sum(k) C[i,k]\nc[i] = sum(k) C[k,i]\n"
    err = rejected(src)
    assert (err.code, err.line, err.col) == ("index-extent", 12, 19)


def test_rejected_program_renders_a_diagnostic():
    err = rejected(DECLS + "c[i] = x[j]\n")
    text = str(err)
    assert ":10:10: error[free-index]" in text
    assert "c[i] = x[j]" in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_compile_rejects_like_check(backend):
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(DECLS + "s[] = sum(k) x[k] * y[k]\n", backend=backend)
    assert (info.value.code, info.value.line, info.value.col) == ("index-extent", 10, 23)


# =========================================================================== (c) semantics
@pytest.fixture
def rng():
    return np.random.default_rng(2024)


@pytest.mark.parametrize("backend", BACKENDS)
def test_delta(backend, rng):
    src = (
        "var C : [3 4]\nvar D : [4 3]\nvar d : [3]\nvar e : [3]\nvar A : [3 4]\nvar t : []\nvar x : [4]\nvar y : [3]\n"
        "C[i,j] = delta[i,j]\n"
        "D[i,j] = delta[j,i]\n"
        "d[i] = delta[i,2]\n"
        "e[i] = delta[i,5]\n"  # any positive position: 0 everywhere here
        "t[] = sum(i,j) delta[i,j] * A[i,j]\n"
        "y[i] = sum(k) delta[i,k] * x[k]\n"
    )
    a, x = rand(rng, 3, 4), rand(rng, 4)
    r = run(src, backend, A=a, x=x)
    eye34 = np.array([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
    assert_close(r["C"], eye34)
    assert_close(r["D"], eye34.T)
    assert_close(r["d"], [0.0, 1.0, 0.0])
    assert_close(r["e"], [0.0, 0.0, 0.0])
    assert_close(r["t"], a[0, 0] + a[1, 1] + a[2, 2])
    assert_close(r["y"], x[:3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_levi_civita_two_dimensions(backend, rng):
    src = (
        "var E : [2 2]\nvar a : [2]\nvar b : [2]\nvar t : []\nvar r : [2]\nvar M : [2 2]\n"
        "E[i,j] = eps[i,j]\n"
        "t[] = sum(i,j) eps[i,j] * a[i] * b[j]\n"  # the 2-d cross product a1 b2 - a2 b1
        "r[i] = sum(j) eps[i,j] * a[j]\n"  # a rotated by -90 degrees
        "M[i,j] = eps[j,i] + eps[1,2] * eps[i,i]\n"
    )
    a, b = rand(rng, 2), rand(rng, 2)
    res = run(src, backend, a=a, b=b)
    assert_close(res["E"], LEVI_CIVITA_2)
    assert_close(res["t"], a[0] * b[1] - a[1] * b[0])
    assert_close(res["r"], [a[1], -a[0]])
    assert_close(res["M"], LEVI_CIVITA_2.T)


@pytest.mark.parametrize("backend", BACKENDS)
def test_levi_civita_three_dimensions(backend, rng):
    src = (
        "var E : [3 3 3]\nvar a : [3]\nvar b : [3]\nvar c : [3]\nvar P : [3 3]\nvar W : [3 3]\nvar t : []\n"
        "var F : [3 3 3 3]\nvar G : [3 3 3 3]\n"
        "E[i,j,k] = eps[i,j,k]\n"
        "c[i] = sum(j,k) eps[i,j,k] * a[j] * b[k]\n"  # the cross product
        "P[i,j] = eps[i,j,2]\n"  # a fixed position
        "W[i,j] = sum(k) eps[i,j,k] * a[k]\n"  # the cross-product matrix [a]_x (transposed)
        "t[] = sum(i,j,k) eps[i,j,k] * eps[i,j,k]\n"  # 6
        "F[i,j,l,m] = sum(k) eps[i,j,k] * eps[l,m,k]\n"
        "G[i,j,l,m] = delta[i,l] * delta[j,m] - delta[i,m] * delta[j,l]\n"
    )
    a, b = rand(rng, 3), rand(rng, 3)
    res = run(src, backend, a=a, b=b)
    e = levi_civita_3()
    assert_close(res["E"], e)
    assert_close(res["c"], [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])
    assert_close(res["c"], np.cross(a, b))
    assert_close(res["P"], e[:, :, 1])
    assert_close(res["P"], [[0, 0, -1], [0, 0, 0], [1, 0, 0]])
    assert_close(res["W"], [[0, a[2], -a[1]], [-a[2], 0, a[0]], [a[1], -a[0], 0]])
    assert_close(res["t"], 6.0)
    assert_close(res["F"], res["G"])  # the epsilon-delta identity
    eye = np.eye(3)
    assert_close(res["F"], np.einsum("il,jm->ijlm", eye, eye) - np.einsum("im,jl->ijlm", eye, eye))


@pytest.mark.parametrize("backend", BACKENDS)
def test_fixed_positions(backend, rng):
    src = (
        "var A : [3 4]\nvar T : [3 4 5]\nvar x : [3]\n"
        "var col : [3]\nvar row : [4]\nvar one : []\nvar D : [3 4]\nvar S : [3 5]\nvar d : [3]\n"
        "col[i] = A[i,2]\n"
        "row[j] = A[3,j]\n"
        "one[] = A[1,4] + x[2]\n"
        "D[i,j] = A[i,j] - A[i,1]\n"
        "S[i,m] = T[i,4,m] * x[i]\n"
        "d[i] = A[i,2] - delta[i,1] * x[i]\n"
    )
    a, t, x = rand(rng, 3, 4), rand(rng, 3, 4, 5), rand(rng, 3)
    r = run(src, backend, A=a, T=t, x=x)
    assert_close(r["col"], a[:, 1])
    assert_close(r["row"], a[2, :])
    assert_close(r["one"], a[0, 3] + x[1])
    assert_close(r["D"], a - a[:, [0]])
    assert_close(r["S"], t[:, 3, :] * x[:, None])
    assert_close(r["d"], a[:, 1] - np.array([x[0], 0, 0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeated_index_on_the_right_is_a_diagonal(backend, rng):
    src = "var Q : [3 3]\nvar T : [3 3 4]\nvar d : [3]\nvar M : [3 4]\nd[i] = Q[i,i]\nM[i,m] = T[i,i,m]\n"
    q, t = rand(rng, 3, 3), rand(rng, 3, 3, 4)
    r = run(src, backend, Q=q, T=t)
    assert_close(r["d"], np.diag(q))
    assert_close(r["M"], np.einsum("iim->im", t))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_left_index_broadcasts(backend, rng):
    src = (
        "var x : [3]\nvar y : [4]\nvar s : []\n"
        "var C : [3 4]\nvar D : [3 4]\nvar E : [3 4]\nvar F : [3 4]\nvar G : [3 4 5]\n"
        "C[i,j] = x[i]\n"
        "D[i,j] = y[j]\n"
        "E[i,j] = s\n"
        "F[i,j] = 2.5\n"
        "G[i,j,m] = sum(k) x[k] * x[i]\n"
    )
    x, y, s = rand(rng, 3), rand(rng, 4), rand(rng)
    r = run(src, backend, x=x, y=y, s=s)
    assert_close(r["C"], np.broadcast_to(x[:, None], (3, 4)))
    assert_close(r["D"], np.broadcast_to(y[None, :], (3, 4)))
    assert_close(r["E"], np.full((3, 4), s))
    assert_close(r["F"], np.full((3, 4), 2.5))
    assert_close(r["G"], np.broadcast_to((x.sum() * x)[:, None, None], (3, 4, 5)))
    # results are real arrays, not read-only broadcast views
    for name in "CDEFG":
        assert r[name].flags.writeable and r[name].flags.c_contiguous


@pytest.mark.parametrize("backend", BACKENDS)
def test_sum_without_its_index_is_rejected_not_multiplied(backend):
    """Σ_k c would be n·c, but n cannot be inferred: index-extent, on both back ends."""
    src = "var c : []\nvar x : [3]\nvar s : []\ns[] = sum(k) c\n"
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(src, backend=backend)
    assert (info.value.code, info.value.line, info.value.col) == ("index-extent", 4, 11)
    # ... and with the extent given by a use of k, it is accepted (and is 3c)
    ok = "var c : []\nvar x : [3]\nvar s : []\ns[] = sum(k) c * (0 * x[k] + 1)\n"
    assert_close(run(ok, backend, c=2.0, x=np.ones(3))["s"], 6.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sibling_sums_reuse_a_name(backend, rng):
    src = (
        "var x : [3]\nvar y : [4]\nvar A : [3 4]\nvar s : []\nvar t : []\nvar c : [3]\nvar d : [3]\n"
        "s[] = (sum(k) x[k]) * (sum(k) y[k])\n"  # k ranges over 3, then over 4
        "t[] = sum(k) x[k] + sum(k) y[k] * y[k]\n"
        "c[i] = sum(k) A[i,k] + sum(k) A[k,1] * x[k]\n"
        "d[i] = (sum(k) A[i,k] * y[k]) * (sum(k) x[k] * x[k]) * x[i]\n"
    )
    x, y, a = rand(rng, 3), rand(rng, 4), rand(rng, 3, 4)
    r = run(src, backend, x=x, y=y, A=a)
    assert_close(r["s"], x.sum() * y.sum())
    assert_close(r["t"], x.sum() + y @ y)
    assert_close(r["c"], a.sum(axis=1) + a[:, 0] @ x)
    assert_close(r["d"], (a @ y) * (x @ x) * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sum_precedence(backend, rng):
    src = (
        "var A : [3 4]\nvar B : [4 5]\nvar D : [3 5]\nvar a : [4]\nvar b : [4]\nvar d : [3]\nvar e : [3]\n"
        "var C : [3 5]\nvar s : []\nvar t : []\nvar u : []\nvar c1 : [3]\nvar c2 : [3]\nvar c3 : [3]\n"
        "var c4 : [3]\nvar C2 : [3 5]\n"
        "C[i,j] = sum(k) A[i,k] * B[k,j] + D[i,j]\n"  # (Σ AB) + D, not Σ (AB + D)
        "s[] = 2 * sum(k) a[k] * b[k]\n"
        "t[] = -sum(k) a[k]\n"
        "u[] = 2 * sum(k) a[k] * b[k] + 1\n"
        "c1[i] = -sum(k) A[i,k] + d[i]\n"
        "c2[i] = d[i] - sum(k) A[i,k] - e[i]\n"  # the sum ends at '-'
        "c3[i] = sum(k) A[i,k] * a[k] * d[i]\n"  # ... and reaches over the whole product
        "c4[i] = d[i] * sum(k) A[i,k] * a[k] / 2 + e[i]\n"
        "C2[i,j] = sum(k) (A[i,k] * B[k,j] + D[i,j])\n"  # parenthesized: D is summed 4 times
    )
    i = {"A": rand(rng, 3, 4), "B": rand(rng, 4, 5), "D": rand(rng, 3, 5), "a": rand(rng, 4), "b": rand(rng, 4)}
    i |= {"d": rand(rng, 3), "e": rand(rng, 3)}
    r = run(src, backend, **i)
    A, B, D, a, b, d, e = (i[n] for n in "ABDabde")
    assert_close(r["C"], A @ B + D)
    assert_close(r["s"], 2 * (a @ b))
    assert_close(r["t"], -a.sum())
    assert_close(r["u"], 2 * (a @ b) + 1)
    assert_close(r["c1"], -A.sum(axis=1) + d)
    assert_close(r["c2"], d - A.sum(axis=1) - e)
    assert_close(r["c3"], (A @ a) * d)
    assert_close(r["c4"], d * (A @ a) / 2 + e)
    assert_close(r["C2"], A @ B + 4 * D)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_sums(backend, rng):
    src = (
        "var A : [3 4]\nvar B : [4 5]\nvar z : [5]\nvar T : [3 4 5]\nvar y : [4]\nvar c : [3]\nvar d : [3]\n"
        "c[i] = sum(k) A[i,k] * (sum(m) B[k,m] * z[m])\n"
        "d[i] = sum(k,m) T[i,k,m] * y[k] * z[m]\n"
    )
    i = {"A": rand(rng, 3, 4), "B": rand(rng, 4, 5), "z": rand(rng, 5), "T": rand(rng, 3, 4, 5), "y": rand(rng, 4)}
    r = run(src, backend, **i)
    assert_close(r["c"], i["A"] @ (i["B"] @ i["z"]))
    assert_close(r["d"], np.einsum("ikm,k,m->i", i["T"], i["y"], i["z"]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_functions_division_and_negation(backend, rng):
    src = (
        "var A : [3 4]\nvar y : [4]\nvar c : [3]\nvar d : [3]\nvar e : [3]\n"
        "c[i] = sum(k) exp(A[i,k]) * -y[k]\n"
        "d[i] = sum(k) A[i,k] / (1 + y[k] * y[k])\n"
        "e[i] = 0 / (A[i,1] - A[i,1]) + sqrt(abs(A[i,2]))\n"  # controlled division 0/0 = 0
    )
    a, y = rand(rng, 3, 4), rand(rng, 4)
    r = run(src, backend, A=a, y=y)
    assert_close(r["c"], np.exp(a) @ -y)
    assert_close(r["d"], a @ (1 / (1 + y * y)))
    assert_close(r["e"], np.sqrt(np.abs(a[:, 1])))


@pytest.mark.parametrize("backend", BACKENDS)
def test_ev_stmt_reads_the_old_value(backend, rng):
    src = (
        "var y : [3 3]\nvar x : [3]\nvar Q : [3 3]\n"
        "x[i] = sum(k) y[i,k] * x[k]\n"
        "Q[i,j] = Q[j,i] + x[i]\n"
    )
    y, x, q = rand(rng, 3, 3), rand(rng, 3), rand(rng, 3, 3)
    r = run(src, backend, y=y, x=x, Q=q)
    new_x = y @ x
    assert_close(r["x"], new_x)
    assert_close(r["Q"], q.T + new_x[:, None])


@pytest.mark.parametrize("backend", BACKENDS)
def test_ev_stmt_in_place_matvec_repeated(backend, rng):
    src = "inout var x : [3]\nin var y : [3 3]\nx[i] = sum(k) y[i,k] * x[k]\nx[i] = sum(k) y[k,i] * x[k]\n"
    y, x = rand(rng, 3, 3), rand(rng, 3)
    r = run(src, backend, y=y, x=x)
    assert_close(r["x"], y.T @ (y @ x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixing_operator_and_index_form(backend, rng):
    src = (
        "in var A : [3 4]\n"
        "in var B : [4 5]\n"
        "var C : [3 5]\n"
        "out var D : [3 5]\n"
        "var E : [5 3]\n"
        "out var t : []\n"
        "out var v : [3]\n"
        "C = A # B . [2 3]\n"  # operator form
        "D[i,j] = 2 * C[i,j] + sum(k) A[i,k] * B[k,j]\n"  # index form reads it
        "E = D ^ [1 2]\n"  # operator form reads the index-form result
        "t[] = sum(i,j) E[j,i] * D[i,j]\n"
        "v[i] = sum(j) D[i,j]\n"
        "v = v * t - v\n"
    )
    a, b = rand(rng, 3, 4), rand(rng, 4, 5)
    r = run(src, backend, A=a, B=b)
    d = 3 * (a @ b)
    t = np.sum(d * d)
    assert set(r) == {"D", "t", "v"}
    assert_close(r["D"], d)
    assert_close(r["t"], t)
    assert_close(r["v"], d.sum(axis=1) * t - d.sum(axis=1))


@pytest.mark.parametrize(
    "src, line, col",
    [
        # a temporary read in index form before it is assigned
        ("in var x : [3]\nvar t : [3]\nout var y : [3]\ny[i] = t[i] + x[i]\n", 4, 8),
        # an out variable read on its own right side before any assignment
        ("in var x : [3]\nout var y : [3]\ny[i] = y[i] + x[i]\n", 3, 8),
        # inside a sum, after an operator-form statement
        ("in var x : [3]\nvar t : [3]\nout var y : [3]\ny = x * 2\ny[i] = sum(k) t[k] * x[i]\n", 5, 15),
        # a scalar temporary, plain name
        ("in var x : [3]\nvar s : []\nout var y : [3]\ny[i] = s * x[i]\n", 4, 8),
        # an out variable assigned nowhere (the other is assigned in index form)
        ("in var x : [3]\nout var y : [3]\nout var z : [3]\ny[i] = x[i]\n", 3, 9),
    ],
)
def test_uninit_applies_to_index_form(src, line, col):
    err = rejected(src)
    assert (err.code, err.line, err.col) == ("uninit", line, col)


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_form_assignment_initializes_for_uninit(backend, rng):
    src = "in var x : [3]\nvar t : [3]\nout var y : [3]\nt[i] = 2 * x[i]\ny = t + x\n"
    x = rand(rng, 3)
    assert_close(run(src, backend, x=x)["y"], 3 * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unqualified_unsupplied_is_undefined(backend, rng):
    src = "var x : [3]\nvar A : [3 3]\nvar y : [3]\ny[i] = sum(k) A[i,k] * x[k]\n"
    with pytest.raises(tl.TensorLangError, match="missing input 'x'"):  # forgotten, unless allowed
        run(src, backend, A=rand(rng, 3, 3))
    r = tl.compile(src, backend=backend, allow_missing=True)(A=rand(rng, 3, 3))
    assert np.isnan(r["y"]).all() and np.isnan(r["x"]).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32(backend, rng):
    src = (
        "in var A : [3 4]\nin var B : [4 5]\nin var a : [3]\nin var b : [3]\n"
        "out var C : [3 5]\nout var c : [3]\nout var E : [3 3]\nout var s : []\n"
        "C[i,j] = sum(k) A[i,k] * B[k,j] + A[i,1]\n"
        "c[i] = sum(j,k) eps[i,j,k] * a[j] * b[k]\n"
        "E[i,j] = delta[i,j] * a[i] - a[j] / 2\n"
        "s[] = -sum(k) a[k] * b[k]\n"
    )
    A, B, a, b = (rand(rng, *s).astype(np.float32) for s in ((3, 4), (4, 5), (3,), (3,)))
    r = run(src, backend, "float32", A=A, B=B, a=a, b=b)
    A, B, a, b = (v.astype(np.float64) for v in (A, B, a, b))
    assert_close(r["C"], A @ B + A[:, [0]], "float32")
    assert_close(r["c"], np.cross(a, b), "float32")
    assert_close(r["E"], np.diag(a) - a[None, :] / 2, "float32")
    assert_close(r["s"], -(a @ b), "float32")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_paper_001_kernels_float32(name, backend):
    make_inputs, expected = KERNELS[name]
    inputs = {k: np.asarray(v, dtype=np.float32) for k, v in make_inputs(np.random.default_rng(5)).items()}
    results = tl.compile(EXAMPLES / name, backend=backend, dtype="float32")(**inputs)
    for var, value in expected({k: v.astype(np.float64) for k, v in inputs.items()}).items():
        assert_close(results[var], value, "float32")


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_form_agrees_with_operator_form(backend, rng):
    """The same computations written both ways."""
    decls = "var A : [3 4]\nvar B : [4 5]\nvar u : [4 4 4]\nvar M : [4 4]\nvar C : [3 5]\nvar v : [4 4 4]\nvar t : []\n"
    op = decls + "C = A # B . [2 3]\nv = M # M # M # u . [[2 7] [4 8] [6 9]]\nt = M . [1 2]\n"
    ix = decls + (
        "C[i,j] = sum(k) A[i,k] * B[k,j]\n"
        "v[i,j,l] = sum(a,b,c) M[i,a] * M[j,b] * M[l,c] * u[a,b,c]\n"
        "t[] = sum(k) M[k,k]\n"
    )
    i = {"A": rand(rng, 3, 4), "B": rand(rng, 4, 5), "u": rand(rng, 4, 4, 4), "M": rand(rng, 4, 4)}
    r1, r2 = run(op, backend, **i), run(ix, backend, **i)
    for name in ("C", "v", "t"):
        assert_close(r1[name], r2[name])
    assert_close(r2["v"], np.einsum("ia,jb,lc,abc->ijl", i["M"], i["M"], i["M"], i["u"]))
    assert_close(r2["t"], np.trace(i["M"]))


# =========================================================================== (d) k.ir("ein")
EIN_CASES = [
    (
        "var A : [3 4]\nvar B : [4 5]\nvar C : [3 5]\nC = A # B . [2 3]\n",
        "var A : [3 4]\nvar B : [4 5]\nvar C : [3 5]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n",
    ),
    (
        "in var A : [3 4]\nin var B : [4 5]\nout var C : [3 5]\nC = (A # B) . [2 3]\n",
        "in var A : [3 4]\nin var B : [4 5]\nout var C : [3 5]\nC[i,j] = sum(k) A[i,k] * B[k,j]\n",
    ),
    (
        "var A : [3 4]\nvar B : [4 3]\nB = A ^ [1 2]\n",
        "var A : [3 4]\nvar B : [4 3]\nB[i,j] = A[j,i]\n",
    ),
    (
        "var Q : [3 3]\nvar t : []\nt = Q . [1 2]\n",
        "var Q : [3 3]\nvar t : []\nt[] = sum(k) Q[k,k]\n",
    ),
    (
        "var a : [3]\nvar b : [4]\nvar C : [3 4]\nC = a # b\n",
        "var a : [3]\nvar b : [4]\nvar C : [3 4]\nC[i,j] = a[i] * b[j]\n",
    ),
    (
        "var s : []\nvar x : [5]\nvar y : [5]\nvar z : [5]\nz = s * x + y\n",
        "var s : []\nvar x : [5]\nvar y : [5]\nvar z : [5]\nz[i] = s * x[i] + y[i]\n",
    ),
    (
        "var A : [3 4]\nvar B : [4 3]\nvar x : [2]\nvar C : [3 3 2]\nC = (A # B . [2 3]) # x\n",
        "var A : [3 4]\nvar B : [4 3]\nvar x : [2]\nvar C : [3 3 2]\nC[i,j,l] = (sum(k) A[i,k] * B[k,j]) * x[l]\n",
    ),
    (
        "var A : [3 4]\nvar B : [4 3]\nvar t : []\nt = (A # B . [2 3]) . [1 2]\n",
        "var A : [3 4]\nvar B : [4 3]\nvar t : []\nt[] = sum(k) sum(a) A[k,a] * B[a,k]\n",
    ),
    (
        "var A : [5 5]\nvar B : [5 5]\nvar C : [5 5]\nvar u : [5 5 5]\nvar v : [5 5 5]\n"
        "v = A # B # C # u . [[2 9] [4 8] [6 7]]\n",
        "var A : [5 5]\nvar B : [5 5]\nvar C : [5 5]\nvar u : [5 5 5]\nvar v : [5 5 5]\n"
        "v[i,j,l] = sum(k,a,b) A[i,k] * B[j,a] * C[l,b] * u[b,a,k]\n",
    ),
    (
        "var A : [3 4]\nvar B : [3 4]\nvar C : [3 4]\nC = -(A - B) / 2 - -A\n",
        "var A : [3 4]\nvar B : [3 4]\nvar C : [3 4]\nC[i,j] = -(A[i,j] - B[i,j]) / 2 - -A[i,j]\n",
    ),
    (
        "var x : [3]\nvar y : [3]\nvar A : [3 3]\nvar B : [3 3]\nB = (x # y . [1 2]) * A + exp(A)\n",
        "var x : [3]\nvar y : [3]\nvar A : [3 3]\nvar B : [3 3]\nB[i,j] = (sum(k) x[k] * y[k]) * A[i,j] + exp(A[i,j])\n",
    ),
]


def _ein_case_ids():
    return [src.strip().splitlines()[-1] for src, _ in EIN_CASES]


@pytest.mark.parametrize("src, expected", EIN_CASES, ids=_ein_case_ids())
def test_ir_ein_exact(src, expected):
    assert tl.compile(src, backend="interp").ir("ein") == expected


def test_ir_ein_of_the_matrix_product_contains_the_line():
    k = tl.compile("var A : [2 3]\nvar B : [3 4]\nvar C : [2 4]\nC = A # B . [2 3]\n")
    assert "C[i,j] = sum(k) A[i,k] * B[k,j]" in k.ir("ein").splitlines()


@pytest.mark.parametrize("src", [s for s, _ in EIN_CASES], ids=_ein_case_ids())
@pytest.mark.parametrize("backend", BACKENDS)
def test_ir_ein_round_trip(src, backend, rng):
    k = tl.compile(src, backend=backend)
    text = k.ir("ein")
    k2 = tl.compile(text, backend=backend)
    assert k2.ir("ein") == text  # a fixed point
    accepted = k.inputs + k.optional_inputs
    inputs = {name: rand(rng, *shape) for name, shape in k.shapes.items() if name in accepted}
    r1, r2 = k(**inputs), k2(**inputs)
    assert set(r1) == set(r2)
    for name in r1:
        np.testing.assert_allclose(r1[name], r2[name], rtol=1e-12, atol=1e-12)


def test_ir_ein_of_index_form_programs_prints_them_back():
    src = (
        "var A : [3 4]\nvar a : [3]\nvar b : [3]\nvar c : [3]\nvar d : [3]\nvar s : []\n"
        "c[i] = sum(j,k) eps[i,j,k] * a[j] * b[k]\n"
        "d[i] = A[i,2] - delta[i,1] * a[i]\n"
        "s[] = (sum(k) a[k]) * sum(k) b[k]\n"
        "c[i] = -sum(k) A[i,k] + d[i]\n"
        "d[i] = 2 * sum(k) A[i,k] * A[i,k] / 2\n"
    )
    text = tl.compile(src, backend="interp").ir("ein")
    assert text == src


def test_ir_ein_mixed_program():
    src = "var A : [3 4]\nvar x : [4]\nvar c : [3]\nvar d : [3]\nc = A # x . [2 3]\nd[i] = sum(k) A[i,k] * A[i,k] + c[i]\n"
    assert tl.compile(src).ir("ein") == (
        "var A : [3 4]\nvar x : [4]\nvar c : [3]\nvar d : [3]\n"
        "c[i] = sum(k) A[i,k] * x[k]\n"
        "d[i] = sum(k) A[i,k] * A[i,k] + c[i]\n"
    )


# =========================================================================== (e) CLI
def cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out and "Traceback" not in err
    return rc, out, err


MATMUL = "in var A : [3 4]\nin var B : [4 5]\nout var C : [3 5]\nC = A # B . [2 3]\n"


def test_cli_emit_ein(tmp_path, capsys):
    prog = tmp_path / "prog.tl"
    prog.write_text(MATMUL)
    rc, out, err = cli(capsys, "compile", prog, "--emit", "ein")
    assert rc == 0 and err == ""
    assert out.rstrip("\n") == (
        "in var A : [3 4]\nin var B : [4 5]\nout var C : [3 5]\nC[i,j] = sum(k) A[i,k] * B[k,j]"
    )
    # the printed program is a valid program that prints the same
    again = tmp_path / "again.tl"
    again.write_text(out)
    rc2, out2, _ = cli(capsys, "compile", again, "--emit", "ein")
    assert rc2 == 0 and out2 == out


def test_cli_emit_numpy(tmp_path, capsys):
    prog = tmp_path / "prog.tl"
    prog.write_text(MATMUL)
    rc, out, err = cli(capsys, "compile", prog, "--emit", "numpy")
    assert rc == 0 and err == ""
    assert out.startswith("def kernel(_s):")
    assert "# C[i,j] = sum(k) A[i,k] * B[k,j]" in out
    assert "_s['C'] = " in out
    assert out.rstrip("\n") == tl.compile(prog, backend="numpy").code("numpy").rstrip("\n")
    # the generated code is Python
    compile(out, "<emitted>", "exec")


def test_cli_emit_of_an_index_form_example(capsys):
    rc, out, _ = cli(capsys, "compile", EXAMPLES / "tvm_fig3b_correct.tl", "--emit", "ein")
    assert rc == 0
    assert out.rstrip("\n").splitlines() == [
        "in var A : [5 3]",
        "in var B : [5 4]",
        "out var C : [3 4]",
        "C[y,x] = sum(k) A[k,y] * B[k,x]",
    ]
    rc, out, _ = cli(capsys, "compile", EXAMPLES / "taco_fig2c_permuted.tl", "--emit", "numpy")
    assert rc == 0 and "# A[i,j] = C[i] * sum(k) B[k,j,i]" in out  # summation binding hoisted C


def test_cli_emit_rejected_program(capsys):
    rc, out, err = cli(capsys, "compile", EXAMPLES / "tvm_fig3a_incorrect.tl", "--emit", "ein")
    assert rc == 1 and out == ""
    assert "14:21: error[index-extent]" in err


def test_cli_run_index_form(tmp_path, capsys):
    rng = np.random.default_rng(9)
    a, b = rand(rng, 5, 3), rand(rng, 5, 4)
    np.savez(tmp_path / "in.npz", A=a, B=b)
    for backend in BACKENDS:
        out_file = tmp_path / f"out_{backend}.npz"
        rc, _, err = cli(
            capsys, "run", EXAMPLES / "tvm_fig3b_correct.tl", "--inputs", tmp_path / "in.npz",
            "--backend", backend, "--output", out_file,
        )
        assert rc == 0, err
        with np.load(out_file) as res:
            assert_close(res["C"], a.T @ b)


# =========================================================================== known bugs
# Each documents a bug in src/ found while writing these tests; strict, so that a fix
# shows up as an unexpected pass and the marker must then be removed.
INF_LITERAL = "var x : [3]\nvar c : [3]\nc[i] = x[i] * 1e400\n"  # 1e400 overflows to inf


def test_inf_literal_on_the_numpy_backend():
    try:
        tl.check(INF_LITERAL)
    except tl.TensorLangError as exc:  # rejecting the literal cleanly would be a fix too
        assert exc.code != "internal"
        return
    x = np.array([1.0, -2.0, 3.0])
    expected = tl.compile(INF_LITERAL, backend="interp")(x=x)["c"]
    np.testing.assert_array_equal(expected, [np.inf, -np.inf, np.inf])
    np.testing.assert_array_equal(tl.compile(INF_LITERAL, backend="numpy")(x=x)["c"], expected)


def test_inf_literal_survives_the_ein_round_trip():
    try:
        tl.check(INF_LITERAL)
    except tl.TensorLangError as exc:
        assert exc.code != "internal"
        return
    for src in (INF_LITERAL, "var x : [3]\nvar c : [3]\nc = x * 1e400\n"):
        text = tl.compile(src, backend="interp").ir("ein")
        again = tl.compile(text, backend="interp")
        x = np.array([1.0, -2.0, 3.0])
        np.testing.assert_array_equal(again(x=x)["c"], [np.inf, -np.inf, np.inf])


def _many_indices(n: int) -> tuple[str, dict]:
    """s = Σ over n indices of a product of n vectors of extent 1 (each 1.5): 1.5**n."""
    decls = "".join(f"var x{m} : [1]\n" for m in range(n)) + "var s : []\n"
    stmt = f"s[] = sum({','.join(f'a{m}' for m in range(n))}) " + " * ".join(f"x{m}[a{m}]" for m in range(n))
    return decls + stmt + "\n", {f"x{m}": np.full(1, 1.5) for m in range(n)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_32_indices_in_one_statement(backend):
    src, inputs = _many_indices(32)
    assert_close(run(src, backend, **inputs)["s"], 1.5**32)


def _correct_or_clean_error(src, backend, inputs, expected):
    try:
        result = run(src, backend, **inputs)["s"]
    except tl.TensorLangError as exc:
        assert exc.code != "internal", str(exc)
        return
    assert_close(result, expected)


def test_interp_more_than_32_indices_is_correct_or_a_clean_error():
    src, inputs = _many_indices(33)
    _correct_or_clean_error(src, "interp", inputs, 1.5**33)


def test_numpy_more_than_52_indices_is_correct_or_a_clean_error():
    src, inputs = _many_indices(53)
    _correct_or_clean_error(src, "numpy", inputs, 1.5**53)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inf_and_nan_arithmetic_agree(backend):
    src = "var x : [3]\nvar c : [3]\nc[i] = x[i] * 0 + exp(x[i])\n"
    x = np.array([np.inf, 1.0, 1000.0])
    with np.errstate(all="ignore"):
        expected = x * 0 + np.exp(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = run(src, backend, x=x)["c"]
    np.testing.assert_array_equal(got, expected)


def test_numpy_backend_raises_no_floating_point_warnings():
    src = "var x : [3]\nvar c : [3]\nc[i] = x[i] * 0 + exp(x[i])\n"
    x = np.array([np.inf, 1.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        interp = run(src, "interp", x=x)["c"]  # silent
        got = run(src, "numpy", x=x)["c"]
    np.testing.assert_array_equal(got, interp)


@pytest.mark.parametrize("backend", ["numpy", "c", "interp"])
def test_products_of_hundreds_of_factors_compile_and_are_right(backend):
    """opt_einsum's path search would take minutes on 600 operands: the numpy back end
    contracts long products in chunks, which must give the same values."""
    n = 600
    x = np.array([1.0005, 0.9995, -1.0])
    k = tl.compile("in var x : [3]\nout var y : [3]\ny[i] = " + " * ".join(["x[i]"] * n) + "\n", backend=backend)
    np.testing.assert_allclose(k(x=x)["y"], x**n, rtol=1e-12)
    if backend == "interp":  # it evaluates at most 32 index variables at once (and materializes 3^40)
        return
    chain = " * ".join(f"A[k{i},k{i + 1}]" for i in range(39)) + " * A[k39,k0]"
    k = tl.compile("in var A : [3 3]\nout var t : []\nt[] = sum(" + ",".join(f"k{i}" for i in range(40)) + ") " + chain + "\n",
                   backend=backend)
    a = np.random.default_rng(0).uniform(0, 0.5, (3, 3))
    np.testing.assert_allclose(k(A=a)["t"], np.trace(np.linalg.matrix_power(a, 40)), rtol=1e-10)
