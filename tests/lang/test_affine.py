"""Affine indices (``u[i+1]``, ``img[2*i+a]``) and Domains, end to end.

(a) ``ein.index``: Affine is canonical, ``affine()`` gives a position when no variable is
    left, substitution composes, ranges are exact; ``Domain`` behaves like the tuple of
    (variable, extent) pairs it replaced.
(b) The grammar: what an index may be, and that both printers read back.
(c) Typing: no access can leave its tensor (``dim-range``, rule t-access-affine), an
    index used only inside affine indices has no extent (``index-extent``) unless it is
    written (``sum(a:3)``), affine indices stay off the left side (``syntax``).
(d) Meaning: finite differences, convolutions, strides, shifted diagonals against numpy
    written by hand, on every back end with and without the optimizer, with ⊥ (NaN) and
    ±inf among the inputs.
(e) The optimizer and the targets: passes keep the meaning and print well-typed
    programs, recognisers of plain shapes (BLAS, loop interchange) decline, a read of the
    target at a shifted point copies, and the generated C reads nothing out of bounds
    (AddressSanitizer).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.loops import interchange
from tensorlang.schedule import steps
from tensorlang.ein import ir
from tensorlang.ein.index import (Affine, Domain, affine, as_domain, gather, index_range, index_variables,
                                  position, substitute_index, to_text, zero_based_text)
from tensorlang.lang.tl.parser import parse_model
from tensorlang.lang.tl.printer import to_source

BACKENDS = ("interp", "numpy", "c")


def rejected(src) -> tl.TensorLangError:
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(src)
    return info.value


# =========================================================================== (a) ein.index
def test_affine_is_canonical_and_hashable():
    a = Affine((("i", 2), ("a", 1), ("i", 1)), -1)
    assert a == Affine((("a", 1), ("i", 3)), -1)
    assert a.terms == (("a", 1), ("i", 3))
    assert hash(a) == hash(Affine((("i", 3), ("a", 1)), -1))
    assert Affine((("i", 1), ("j", 0)), 2).terms == (("i", 1),)
    with pytest.raises(ValueError):
        Affine((("i", 1), ("i", -1)), 3)


def test_affine_constructor_gives_positions_and_windows():
    assert affine([("i", 1), ("i", -1)], 3) == 3
    assert isinstance(affine([("i", 1)], 0), Affine)  # a window i+0 stays affine
    assert affine([("i", 2)], 1) == Affine((("i", 2),), 1)


def test_substitution_composes():
    a = Affine((("i", 2),), 1)
    assert substitute_index(a, {"i": Affine((("k", 1),), -1)}) == Affine((("k", 2),), -1)
    assert substitute_index(a, {"i": 3}) == 7
    assert substitute_index(a, {"i": "j"}) == Affine((("j", 2),), 1)
    assert substitute_index(a, {"x": "j"}) is a
    # a variable left alone after composing stays an Affine (it may be a window)
    assert substitute_index(Affine((("i", 1), ("a", 1)), -1), {"a": 1}) == Affine((("i", 1),), 0)
    assert substitute_index("i", {"i": a}) == a
    assert substitute_index(4, {"i": "j"}) == 4


def test_ranges_variables_and_text():
    a = Affine((("i", 2), ("a", 1)), -2)
    assert index_range(a, {"i": 3, "a": 2}) == (1, 6)
    assert index_range(Affine((("i", -1),), 5), {"i": 4}) == (1, 4)
    assert index_range("i", {"i": 4}) == (1, 4) and index_range(3, {}) == (3, 3)
    assert index_variables(a) == ("a", "i") and index_variables(2) == () and index_variables("k") == ("k",)
    assert [to_text(x) for x in (a, Affine((("i", -1),), 5), Affine((("i", 1),), 0), "i", 4)] == [
        "a+2*i-2", "-i+5", "i+0", "i", "4"]
    assert str(a) == "a+2*i-2"


def test_zero_based_text_for_generated_code():
    name = "x_{}".format
    # 1-based Σ c·v + offset over 0-based counters x_v = v - 1
    assert zero_based_text(Affine((("i", 2), ("a", 1)), 0), name, "{}LL".format) == "(x_a + 2LL*x_i + 2LL)"
    assert zero_based_text(Affine((("i", -1),), 5), name) == "(-x_i + 3)"
    assert zero_based_text(Affine((("i", 1),), 0), name) == "(x_i)"
    assert zero_based_text(Affine((("i", 1),), -1), name) == "(x_i - 1)"


def test_position_and_gather_evaluate_on_grids():
    a = Affine((("i", 1), ("j", 1)), -1)
    assert position(a, {"i": 2, "j": 3}.__getitem__) == 4
    x = np.arange(10.0)
    got = gather(x, (a,), ("i", "j"), {"i": 3, "j": 4})
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, [[x[i + j] for j in range(4)] for i in range(3)])


def test_domain_behaves_like_the_tuple_it_replaced():
    pairs = (("i", 3), ("j", 4))
    d = Domain(pairs)
    assert list(d) == list(pairs) and len(d) == 2 and d[0] == ("i", 3) and d[-1] == ("j", 4)
    assert d[:1] == (("i", 3),) and isinstance(d[:1], Domain)
    assert dict(d) == {"i": 3, "j": 4} and list(reversed(d)) == list(reversed(pairs))
    assert d == pairs and d == Domain(pairs) and d != Domain(pairs[:1])
    assert hash(d) == hash(pairs) and {d: 1}[Domain(pairs)] == 1
    assert d + (("k", 2),) == pairs + (("k", 2),) and (("k", 2),) + d == (("k", 2),) + pairs
    assert bool(Domain(())) is False and d.variables == ("i", "j") and d.extents == {"i": 3, "j": 4}
    assert [name for name, _ in d] == ["i", "j"] and tuple(d) == pairs
    with_condition = Domain(pairs, ("i <= j",))
    assert with_condition != pairs and with_condition != d
    with pytest.raises(ValueError):
        with_condition[:1]


def test_statements_and_reductions_store_a_domain():
    body = ir.Tensor("x", ("k",))
    s = ir.Statement("y", (("i", 3),), ir.Sum((("k", 2),), body))
    r = ir.Reduce("max", [("k", 2)], body)
    assert isinstance(s.index, Domain) and isinstance(s.body.index, Domain) and isinstance(r.index, Domain)
    assert s == ir.Statement("y", Domain((("i", 3),)), ir.Sum(Domain((("k", 2),)), body))
    assert as_domain(s.index) is s.index


# =========================================================================== (b) grammar and printers
DECLS = "var u : [9]\nvar w : [3]\nvar A : [9 9]\nvar d : [4]\n"


@pytest.mark.parametrize("written, value", [
    ("i", "i"),
    ("2", 2),
    ("i+1", Affine((("i", 1),), 1)),
    ("i-1", Affine((("i", 1),), -1)),
    ("2*i+a", Affine((("i", 2), ("a", 1)), 0)),
    ("i*2 + a - 1", Affine((("i", 2), ("a", 1)), -1)),
    ("-i+5", Affine((("i", -1),), 5)),
    ("i+0", Affine((("i", 1),), 0)),  # a window: a lone variable written as an expression
    ("1*i", Affine((("i", 1),), 0)),
    ("3-1", 2),  # no variable left: a fixed position
    ("i-i+2", 2),
])
def test_index_forms(written, value):
    program = parse_model(DECLS + f"d[i] = sum(a) w[a] * u[{written}]\n")
    access = program.stmts[0].expr.body.right
    assert access.indices[0].value == value


def test_printers_read_back():
    src = DECLS + ("d[i] = u[i+1] - u[i+0] + u[2*i+1] + u[-i+5]\n"
                   "d[i] = sum(a) w[a] * A[i+a-1, 2*a] + delta[i+1, 3] + [u[i+0], u[i+1]][i-i+2]\n"
                   "d[i] = sum(a:3) u[i+a]\n")
    parsed = parse_model(src)
    assert parse_model(to_source(parsed)) == parsed
    kernel = tl.compile(src, backend="interp")
    printed = kernel.ir("ein")
    assert "u[i+1] - u[i+0] + u[2*i+1] + u[-i+5]" in printed
    assert "sum(a:3) u[a+i]" in printed  # a is used only inside an affine index
    assert "sum(a) w[a] * A[a+i-1,2*a]" in printed
    again = tl.compile(printed, backend="interp")
    assert again.ein == kernel.ein and again.ir("ein") == printed


@pytest.mark.parametrize("bad, col", [
    ("u[i+]", 12), ("u[2*3]", 12), ("u[i*j]", 12), ("u[(i+1)]", 10), ("u[i+1.5]", 13),
])
def test_malformed_indices_are_syntax_errors(bad, col):
    err = rejected(DECLS + f"d[i] = {bad}\n")
    assert (err.code, err.line, err.col) == ("syntax", 5, col), str(err)


# =========================================================================== (c) typing
TYPING_DECLS = """\
var u : [6]
var d : [5]
var x : [8]
var s : [3]
var w : [3]
var y : [6]
var Q : [3 3]
var e : [2]
"""  # 8 lines: the statement under test is on line 9

# (statement, code, col, rule)
AFFINE_REJECTIONS = [
    # no access may leave its tensor: at the upper end and at the lower end
    ("d[i] = u[i+2]", "dim-range", 10, "t-access-affine"),  # reaches 7 > 6
    ("d[i] = u[i-1]", "dim-range", 10, "t-access-affine"),  # reaches 0
    ("s[i] = x[2*i+3]", "dim-range", 10, "t-access-affine"),  # reaches 9 > 8
    ("d[i] = u[-i+5]", "dim-range", 10, "t-access-affine"),  # reaches 0 at i = 5
    ("y[i] = sum(a) w[a] * x[i+a]", "dim-range", 24, "t-access-affine"),  # reaches 9 > 8
    ("y[i] = sum(a) x[i+a] * w[a]", "dim-range", 17, "t-access-affine"),  # a's extent comes later
    ("s[i] = sum(j) Q[i+j-1, j]", "dim-range", 17, "t-access-affine"),
    ("s[i] = delta[i-1, 2]", "dim-range", 14, "t-access-affine"),  # delta's positions start at 1
    ("s[i] = sum(j,k) eps[i+1,j,k] * Q[j,k]", "dim-range", 21, "t-access-affine"),
    ("e[i] = [u[1], u[2]][i+1]", "dim-range", 21, "t-access-affine"),
    # an index used only inside affine indices has no extent
    ("y[i] = sum(a) x[i+a]", "index-extent", 12, "index-extent"),
    ("y[i] = sum(a) x[i+a] + w[1]", "index-extent", 12, "index-extent"),
    ("d[i] = u[i+1] - u[i]", "index-extent", 19, "index-extent"),  # plain u[i]: i is 5, u is 6
    ("y[i] = sum(a:4) w[a] * x[i]", "index-extent", 19, "index-extent"),  # a written 4, w has 3
    ("y[i] = sum(a:0) x[i]", "shape", 12, "t-sum-extent"),
    ("y[i] = sum(a:4611686018427387904) x[i]", "too-large", 12, "t-sum-extent"),
    # numbers beyond the targets' int64 arithmetic, even where they cancel
    ("d[i] = delta[4611686018427387904*i, 1]", "too-large", 14, "t-access-affine"),
    ("s[i] = sum(j:1,k:1) x[9000000000000000000*j - 9000000000000000000*k + i]", "too-large", 23,
     "t-access-affine"),
    # affine indices are variables' expressions on the right only
    ("d[i+1] = u[i]", "syntax", 3, None),
    ("d[i] = u[i+j]", "free-index", 10, "free-index"),
    ("d[i] = delta[i, j+1]", "free-index", 17, "free-index"),
]


@pytest.mark.parametrize("stmt, code, col, rule", AFFINE_REJECTIONS, ids=[r[0] for r in AFFINE_REJECTIONS])
def test_affine_rejected(stmt, code, col, rule):
    err = rejected(TYPING_DECLS + stmt + "\n")
    assert (err.code, err.line, err.col) == (code, 9, col), str(err)
    if rule is not None:
        assert err.rule == rule


def test_out_of_range_message_names_the_access_the_dimension_and_the_reach():
    err = rejected(TYPING_DECLS + "y[i] = sum(a) w[a] * x[i+a]\n")
    message = str(err)
    assert "a+i" in message and "2..9" in message and "dimension 1 of 'x'" in message and "extent 8" in message
    assert "i in 1..6" in message and "a in 1..3" in message


def test_only_affine_message_suggests_the_written_extent():
    message = str(rejected(TYPING_DECLS + "y[i] = sum(a) x[i+a]\n"))
    assert "affine" in message and "sum(a:N)" in message


@pytest.mark.parametrize("stmt", [
    "d[i] = u[i+1] - u[i+0]",  # a window
    "y[i] = sum(a) w[a] * x[i+a-1]",
    "y[i] = sum(a) x[i+a-1] * w[a]",
    "s[i] = x[2*i+2] + x[-i+4]",
    "s[i] = sum(j) Q[j, -j+4] * w[j] + Q[-i+4, i]",
    "y[i] = sum(a:3) x[i+a-1]",
    "y[i] = sum(a:3) w[a] * x[i+a-1]",
    "s[i] = delta[i+1, 3] + delta[2*i, i+1]",
    "s[i] = sum(j,k) eps[-i+4,j,k] * Q[j,k]",
    "e[i] = [u[1], u[2], u[3]][i+1]",
])
def test_affine_accepted(stmt):
    tl.check(TYPING_DECLS + stmt + "\n")


# =========================================================================== (d) meaning
KERNELS = """\
in var u : [7]
in var w : [3]
in var x : [9]
in var A : [6 4]
in var K : [2 2]
in var img : [7 7]
out var dif : [6]
out var conv : [7]
out var stride : [4]
out var shifted : [3 4]
out var down : [3 3]
out var moving : [7]
out var rev : [7]
out var pick : [2]
dif[i] = u[i+1] - u[i+0]
conv[i] = sum(a) w[a] * x[i+a-1]
stride[i] = x[2*i]
shifted[i,j] = A[i+j-1, j]
down[i,j] = sum(a,b) K[a,b] * img[2*i+a-1, 2*j+b-1]
moving[i] = sum(a:3) x[i+a-1] / 3
rev[i] = u[-i+8] * delta[i+1, 4] + [u[i+0], x[i+2]][i-i+2]
pick[i] = sum(j,k) eps[i+1,j,k] * A[j+0,k+1]
"""


def by_hand(u, w, x, A, K, img):
    with np.errstate(all="ignore"):
        return {
            "dif": u[1:] - u[:-1],
            "conv": np.array([sum(w[a] * x[i + a] for a in range(3)) for i in range(7)]),
            "stride": x[1::2][:4],
            "shifted": np.array([[A[i + j, j] for j in range(4)] for i in range(3)]),
            "down": np.array([[sum(K[a, b] * img[2 * i + a + 1, 2 * j + b + 1] for a in range(2) for b in range(2))
                               for j in range(3)] for i in range(3)]),
            "moving": np.array([(x[i] + x[i + 1] + x[i + 2]) / 3 for i in range(7)]),
            "rev": np.array([u[6 - i] * (1.0 if i == 2 else 0.0) + x[i + 2] for i in range(7)]),
            # ε_(i+1)jk with i+1 in 2..3: the 3-d symbol's slices, summed against A[j,k+1]
            "pick": np.array([sum(_eps(i + 1, j, k) * A[j, k + 1] for j in range(3) for k in range(3))
                              for i in range(2)]),
        }


def _eps(*p):
    return float(np.sign(np.prod([p[b] - p[a] for a in range(3) for b in range(a + 1, 3)])))


def kernel_inputs(seed: int, special: bool):
    rng = np.random.default_rng(seed)
    inputs = {"u": rng.normal(size=7), "w": rng.normal(size=3), "x": rng.normal(size=9),
              "A": rng.normal(size=(6, 4)), "K": rng.normal(size=(2, 2)), "img": rng.normal(size=(7, 7))}
    if special:  # ⊥ and infinities must travel exactly to the points that read them
        inputs["u"][[2, 5]] = [np.nan, np.inf]
        inputs["x"][[0, 4, 7]] = [-np.inf, np.nan, np.inf]
        inputs["A"][2, 1] = np.nan
        inputs["img"][3, 4] = np.inf
    return inputs


@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan-inf"])
@pytest.mark.parametrize("opt", [True, False], ids=["opt", "no-opt"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_kernels_match_numpy_by_hand(backend, opt, special):
    inputs = kernel_inputs(7, special)
    got = tl.compile(KERNELS, backend=backend, opt=opt)(**inputs)
    expected = by_hand(**inputs)
    assert set(got) == set(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32(backend):
    inputs = {k: v.astype(np.float32) for k, v in kernel_inputs(3, False).items()}
    got = tl.compile(KERNELS, backend=backend, dtype="float32")(**inputs)
    expected = by_hand(**{k: v.astype(np.float64) for k, v in inputs.items()})
    for name, value in expected.items():
        assert got[name].dtype == np.float32
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reading_the_target_at_another_point_copies_first(backend):
    """ev-stmt: x[i] = x[-i+n+1] reverses x; done in place it would read overwritten values."""
    src = "var x : [5]\nvar y : [5]\nx[i] = x[-i+6] + y[i+0] * 0\n"
    x = np.arange(5.0)
    got = tl.compile(src, backend=backend)(x=x, y=np.ones(5))
    np.testing.assert_array_equal(got["x"], x[::-1])
    stmt = tl.compile(src, backend="interp").ein.statements[0]
    from tensorlang.analysis.inplace import compatible
    verdict = compatible(stmt)
    assert not verdict.in_place and verdict.line() == "x read at (-i+6) at a shifted index: needs a temporary [tc-elem > tc-var-xx fails]"


# =========================================================================== (e) optimizer and targets
FUSABLE = """\
in var u : [8]
in var w : [3]
out var y : [3]
out var z : [5]
var t : [6]
var c : [3]
t[i] = 2 * u[i+1] + u[i+2]
y[i] = 3 * t[2*i-1]
c[a] = 2
z[i] = sum(a) c[a] * u[i+a] + w[1]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_optimizer_fuses_through_affine_uses(backend):
    kernel = tl.compile(FUSABLE, backend=backend)
    program = kernel.optimized.program
    assert [s.target for s in program.statements] == ["y", "z"]  # t and c fused away
    printed = kernel.ir("opt")
    assert "sum(a:3)" in printed  # a no longer indexes any tensor plainly
    tl.check(printed)  # the optimized program is a well-typed .tl program
    rng = np.random.default_rng(1)
    u, w = rng.normal(size=8), rng.normal(size=3)
    got = kernel(u=u, w=w)
    t = 2 * u[1:7] + u[2:8]
    np.testing.assert_allclose(got["y"], [3 * t[2 * i] for i in range(3)], rtol=1e-12)
    np.testing.assert_allclose(got["z"], [2 * (u[i + 1] + u[i + 2] + u[i + 3]) + w[0] for i in range(5)], rtol=1e-12)


def test_value_numbering_tells_shifts_along_different_axes_apart():
    src = ("in var u : [4]\nout var a : [3 3]\nout var b : [3 3]\n"
           "a[i,j] = u[i+1]\nb[j,i] = u[i+1]\n")
    rng = np.random.default_rng(2)
    u = rng.normal(size=4)
    for backend in BACKENDS:
        got = tl.compile(src, backend=backend)(u=u)
        np.testing.assert_array_equal(got["a"], np.repeat(u[1:, None], 3, axis=1))
        np.testing.assert_array_equal(got["b"], np.repeat(u[None, 1:], 3, axis=0))


def test_plain_shape_recognisers_decline_affine_accesses():
    src = ("in var A : [80 64]\nin var B : [64 64]\nout var C : [64 64]\n"
           "C[i,j] = sum(k) A[i+16,k] * B[k,j]\n")
    kernel = tl.compile(src, backend="interp")
    stmt = kernel.ein.statements[0]
    assert steps.blas_shape(stmt) == "an affine index in an access"
    assert interchange.contraction(stmt, kernel.ein.shapes) is None
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(80, 64)), rng.normal(size=(64, 64))
    for backend in BACKENDS:
        got = tl.compile(src, backend=backend)(A=A, B=B)["C"]
        np.testing.assert_allclose(got, A[16:] @ B, rtol=1e-12, atol=1e-12)


def test_normalize_keeps_eps_pairs_whose_index_occurs_inside_an_affine_index():
    """Σ_k ε_k(4-k)j ε_kjl is not a sum of δδ - δδ: that identity needs k nowhere but
    in the two places it is summed (fusing t puts it inside an affine index too)."""
    src = ("in var Q : [3 3]\nout var r : [1]\nvar t : [3 3 3]\n"
           "t[a,b,c] = eps[a,b,c]\n"
           "r[i] = sum(k,j,l) t[k,-k+4,j] * eps[k,j,l] * Q[j,l]\n")
    Q = np.random.default_rng(4).normal(size=(3, 3))
    expected = sum(_eps(k, 4 - k, j) * _eps(k, j, l) * Q[j - 1, l - 1]
                   for k in range(1, 4) for j in range(1, 4) for l in range(1, 4))
    for backend in BACKENDS:
        for opt in (True, False):
            got = tl.compile(src, backend=backend, opt=opt)(Q=Q)["r"]
            np.testing.assert_allclose(got, [expected], rtol=1e-12, atol=1e-12, err_msg=f"{backend} {opt}")


def test_generated_c_reads_nothing_out_of_bounds(tmp_path):
    sanitizers = pytest.importorskip("properties.test_c_sanitizers")
    if not sanitizers._sanitizers_work():
        pytest.skip("the C compiler here cannot build with ASan/UBSan")
    inputs = kernel_inputs(11, True)
    got = sanitizers.run_sanitized(KERNELS, inputs, "float64", tmp_path)
    for name, value in by_hand(**inputs).items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=name)
