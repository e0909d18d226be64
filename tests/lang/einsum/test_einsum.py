"""tl.einsum against numpy.einsum: a wide table of subscripts, random subscripts and
shapes (hypothesis), errors, the dtypes that go to numpy, the cache, symmetry,
contract_expression and the front end's text form.

Most tests run the numpy target (every new shape would otherwise wait for a C compiler);
the ``C`` table runs the default back end on a selection.  Inputs carry NaN, ±inf and ±0.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang import einsum_api
from tensorlang.schedule.steps import GramStep

RNG = np.random.default_rng(20)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])


def _data(shape, special: bool = True, dtype=np.float64, rng=None):
    """Uniform numbers in [-1, 1), two of them (where ``special``) NaN, ±inf or ±0; from
    ``rng`` (default: this file's; test_peer_suites.py gives one per case)."""
    rng = RNG if rng is None else rng
    x = rng.uniform(-1, 1, size=shape)
    if special and x.size >= 4:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=min(2, flat.size // 4), replace=False)
        flat[picks] = rng.choice(SPECIAL, size=picks.size)
    return x.astype(dtype)


def _same(got, expected):
    """Equal up to rounding, non-finite where numpy's is, and numpy's type (array or
    scalar).  Where numpy has NaN, tensorlang may have ±inf and the other way round:
    its optimizer factors sums of products (Σ_j s·x_j = s·Σ_j x_j) and orders
    contractions, which moves where inf meets 0 or -inf (numpy's optimize=True does too);
    every finite entry agrees."""
    assert type(got) is type(expected) or (isinstance(got, np.ndarray) and isinstance(expected, np.ndarray))
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected))
    finite = np.isfinite(expected)
    got, expected = np.where(finite, got, 0), np.where(finite, expected, 0)
    np.testing.assert_allclose(got, expected, rtol=1e-9 if got.dtype == np.float64 else 1e-4,
                               atol=1e-12 if got.dtype == np.float64 else 1e-5, equal_nan=True)


#: (subscripts, shapes): products, batched products, traces, diagonals, outer products,
#: transposes, ellipsis, size-1 broadcasting, scalars, networks of 5+ operands.
TABLE = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ik", [(4, 3), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]),
    ("ii,i->i", [(4, 4), (4,)]),
    ("ii,jj->", [(3, 3), (2, 2)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ab,cd,de->abce", [(2, 3), (2, 2), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...i,...i", [(2, 1, 3), (4, 3)]),
    ("i...,i...->...", [(2, 1, 3), (2, 4, 1)]),
    ("...,...", [(2, 1), (3,)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 2, 4)]),
    ("ij,ij->ij", [(3, 1), (3, 4)]),
    ("ijp,ipq,ikq->ijk", [(3, 1, 1), (3, 1, 3), (1, 3, 3)]),
    (",i->i", [(), (3,)]),
    ("i,->i", [(3,), ()]),
    (",->", [(), ()]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("ea,fb,abcd,gc,hd->efgh", [(3, 2), (3, 2), (2, 2, 2, 2), (3, 2), (3, 2)]),
    ("ab,bc,cd,de,ef,fa->", [(2, 3), (3, 2), (2, 4), (4, 2), (2, 3), (3, 2)]),
    ("ia,ib,ic->abc", [(6, 2), (6, 3), (6, 4)]),
    ("ijk,ja,kb->iab", [(3, 4, 5), (4, 2), (5, 3)]),
    ("Ba,aB", [(2, 3), (3, 2)]),
    ("bA,Ab->", [(2, 3), (3, 2)]),
    ("i j , j k -> i k", [(2, 3), (3, 2)]),
    ("ab,ab,ab->ab", [(2, 3), (2, 3), (2, 3)]),
    ("i,j,k,l,m->mlkji", [(2,), (1,), (3,), (2,), (2,)]),
]


@pytest.mark.parametrize("subscripts, shapes", TABLE, ids=[s for s, _ in TABLE])
def test_the_table_matches_numpy(subscripts, shapes):
    ops = [_data(s) for s in shapes]
    _same(tl.einsum(subscripts, *ops, backend="numpy"), np.einsum(subscripts, *ops))


C_TABLE = [TABLE[n] for n in (0, 2, 5, 6, 12, 14, 20, 25, 28, 30, 32, 35)]


@pytest.mark.parametrize("subscripts, shapes", C_TABLE, ids=[s for s, _ in C_TABLE])
def test_the_default_back_end_matches_numpy(subscripts, shapes):
    ops = [_data(s) for s in shapes]
    _same(tl.einsum(subscripts, *ops), np.einsum(subscripts, *ops))
    _same(tl.einsum(subscripts, *ops), np.einsum(subscripts, *ops))  # the cached runner too


def test_float32_gives_float32_and_mixed_gives_float64():
    a, b = _data((3, 4), dtype=np.float32), _data((4, 2), dtype=np.float32)
    _same(tl.einsum("ij,jk->ik", a, b, backend="numpy"), np.einsum("ij,jk->ik", a, b))
    c = _data((4, 2))
    _same(tl.einsum("ij,jk->ik", a, c, backend="numpy"), np.einsum("ij,jk->ik", a, c))


def test_the_sublist_form():
    a, b = _data((2, 3)), _data((3, 4))
    _same(tl.einsum(a, [0, 1], b, [1, 2], [0, 2], backend="numpy"), np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    _same(tl.einsum(a, [0, 1], b, [1, 2], backend="numpy"), np.einsum(a, [0, 1], b, [1, 2]))
    c = _data((3, 2))
    _same(tl.einsum(a, [Ellipsis, 1], c, [1, Ellipsis], backend="numpy"),
          np.einsum(a, [Ellipsis, 1], c, [1, Ellipsis]))


def test_lists_scalars_and_transposed_operands():
    a = _data((3, 4))
    _same(tl.einsum("ij,j->i", a.tolist(), [1.0, 2.0, 3.0, 4.0], backend="numpy"),
          np.einsum("ij,j->i", a, [1.0, 2.0, 3.0, 4.0]))
    _same(tl.einsum(",ij->ij", 2.5, a, backend="numpy"), np.einsum(",ij->ij", 2.5, a))
    _same(tl.einsum("ij,jk->ik", a.T, a, backend="numpy"), np.einsum("ij,jk->ik", a.T, a))
    _same(tl.einsum("ij,jk->ik", a.T, a, order="C", backend="numpy"), np.einsum("ij,jk->ik", a.T, a))
    _same(tl.einsum("i,i->", a[:, 1], a[:, 2], backend="numpy"), np.einsum("i,i->", a[:, 1], a[:, 2]))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.complex128, np.bool_, np.float16, object])
def test_other_dtypes_are_numpys(dtype):
    a = (RNG.uniform(-3, 3, size=(3, 4)) * 3).astype(dtype)
    b = (RNG.uniform(-3, 3, size=(4, 2)) * 3).astype(dtype)
    got, expected = tl.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", ["auto", *tl.available_backends()])
def test_a_0d_result_is_a_numpy_scalar_on_every_target_whatever_optimize(backend):
    """numpy.einsum(optimize=True) returns a 0-d array where optimize=False returns a scalar;
    tl.einsum's 0-d result is a scalar either way, compiled or computed by numpy (an int,
    mixed or empty call), and ``out=`` is returned as given."""
    x = np.arange(1.0, 4.0)
    for operands in ((x, x), (x.astype(np.float32),) * 2, (x.astype(np.int64),) * 2, (x, x.astype(np.int64)),
                     (np.ones(0), np.ones(0)), (x, x, x)):
        subscripts = ",".join("i" * len(operands))
        expected = np.einsum(subscripts, *operands)
        for optimize in (False, True, "greedy", "optimal"):
            got = tl.einsum(subscripts, *operands, optimize=optimize, backend=backend)
            assert isinstance(got, np.generic) and got.dtype == expected.dtype and got == expected, (operands, optimize)
    out = np.zeros(())
    assert tl.einsum("i,i", x, x.astype(np.int64), out=out, optimize=True, backend=backend) is out and out == 14


def test_empty_dimensions_and_single_operands_are_numpys():
    _same(tl.einsum("ij,jk->ik", np.ones((0, 3)), np.ones((3, 2))), np.einsum("ij,jk->ik", np.ones((0, 3)),
                                                                              np.ones((3, 2))))
    _same(tl.einsum("i,i", np.ones(0), np.ones(0)), np.einsum("i,i", np.ones(0), np.ones(0)))
    a = _data((3, 3))
    view = tl.einsum("ii->i", a)
    assert view.base is not None  # numpy's view, as numpy.einsum returns it
    _same(tl.einsum("ij->", a), np.einsum("ij->", a))


def test_out_and_dtype():
    a, b = _data((3, 4)), _data((4, 2))
    out = np.empty((3, 2))
    assert tl.einsum("ij,jk->ik", a, b, out=out, backend="numpy") is out
    _same(out, np.einsum("ij,jk->ik", a, b))
    out32 = np.empty((3, 2), np.float32)
    with pytest.raises(TypeError):  # numpy's casting rule: float64 into float32 is not 'safe'
        tl.einsum("ij,jk->ik", a, b, out=out32)
    _same(tl.einsum("ij,jk->ik", a, b, dtype=np.float64, backend="numpy"), np.einsum("ij,jk->ik", a, b))
    got = tl.einsum("ij,jk->ik", a, b, dtype=np.float32, casting="unsafe")
    assert got.dtype == np.float32


#: invalid calls: numpy raises ValueError, tl.einsum raises EinsumError (a ValueError and a
#: TensorLangError) with its own message.
ERRORS = [
    ("ij,jk", [(2, 3), (2, 3)], "'j' has size 3"),
    ("i->j", [(2,)] * 1 + [], None),
    ("ij,jk->ii", [(2, 3), (3, 2)], "names 'i' twice"),
    ("ij,jk->q", [(2, 3), (3, 2)], "no operand's term has"),
    ("i,i", [(2,)], None),
    ("i,i,i", [(2,), (2,)], "name 3 operand(s) but 2"),
    ("ij,j", [(2, 3, 4), (3,)], "has 3 dimension(s)"),
    ("i.,i", [(2,), (2,)], "'.'"),
    ("ij->i->j", [(2, 3), (3,)], "at most one '->'"),
    ("i1,i", [(2,), (2,)], "the character '1'"),
    ("...i,...i->i", [(2, 3), (2, 3)], "no '...'"),
    ("ii,i", [(2, 3), (2,)], "different sizes"),
    ("i-j,j", [(2,), (2,)], "'-'"),
]


@pytest.mark.parametrize("subscripts, shapes, words", ERRORS, ids=[e[0] for e in ERRORS])
def test_invalid_subscripts_raise_value_errors(subscripts, shapes, words):
    ops = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *ops)
    with pytest.raises(ValueError) as caught:
        tl.einsum(subscripts, *ops)
    if len(ops) >= 2:
        assert isinstance(caught.value, tl.TensorLangError) and caught.value.code == "input"
        if words:
            assert words in str(caught.value)


def test_numpys_type_errors_stay_type_errors():
    with pytest.raises(TypeError):
        tl.einsum("ij,jk", np.ones((2, 2)), np.ones((2, 2)), nonsense=1)
    with pytest.raises(TypeError):
        tl.einsum(0, 0)
    with pytest.raises(ValueError):
        tl.einsum(np.ones(2), [0], np.ones(2), [99])


# ------------------------------------------------------------------ hypothesis
@st.composite
def einsum_calls(draw):
    letters = "abcdeA"
    sizes = {c: draw(st.integers(1, 3)) for c in letters}
    n = draw(st.integers(2, 4))
    ellipsis = draw(st.integers(0, 2)) if draw(st.booleans()) else 0
    broadcast = [draw(st.integers(1, 2)) for _ in range(ellipsis)]
    terms, shapes = [], []
    for _ in range(n):
        labels = draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3))
        shape = [1 if draw(st.integers(0, 5)) == 0 else sizes[c] for c in labels]
        for c, s in zip(labels, shape):  # a diagonal's dimensions agree
            if s == 1 and sizes[c] != 1 and labels.count(c) > 1:
                shape = [sizes[x] for x in labels]
                break
        term = "".join(labels)
        if ellipsis and draw(st.booleans()):
            at = draw(st.integers(0, len(labels)))
            width = draw(st.integers(0, ellipsis))
            extra = broadcast[ellipsis - width:]
            extra = [1 if draw(st.integers(0, 4)) == 0 else e for e in extra]
            term = term[:at] + "..." + term[at:]
            shape = shape[:at] + extra + shape[at:]
        terms.append(term)
        shapes.append(tuple(shape))
    text = ",".join(terms)
    if draw(st.booleans()):
        used = sorted(set("".join(terms).replace(".", "")))
        out = draw(st.permutations(used))
        out = out[: draw(st.integers(0, len(out)))]
        dots = "..." if "..." in text else ""
        text += "->" + dots + "".join(out)
    return text, shapes


@settings(max_examples=60, deadline=None)
@given(einsum_calls(), st.integers(0, 2**31))
def test_random_subscripts_match_numpy(call, seed):
    text, shapes = call
    rng = np.random.default_rng(seed)
    ops = []
    for s in shapes:
        x = rng.uniform(-1, 1, size=s)
        if x.size and rng.integers(0, 3) == 0:
            x.reshape(-1)[rng.integers(0, x.size)] = rng.choice(SPECIAL)
        ops.append(x)
    try:
        expected = np.einsum(text, *ops)
    except ValueError:
        with pytest.raises(ValueError):
            tl.einsum(text, *ops, backend="numpy")
        return
    _same(tl.einsum(text, *ops, backend="numpy"), expected)


@settings(max_examples=10, deadline=None)
@given(einsum_calls(), st.integers(0, 2**31))
def test_random_subscripts_on_the_default_back_end(call, seed):
    """The same on the default back end (C where a compiler works), fewer examples: each
    new shape compiles."""
    text, shapes = call
    rng = np.random.default_rng(seed)
    ops = [rng.uniform(-1, 1, size=s) for s in shapes]
    try:
        expected = np.einsum(text, *ops)
    except ValueError:
        return
    _same(tl.einsum(text, *ops), expected)
    _same(tl.einsum(text, *ops), expected)  # the cache's hit


# ------------------------------------------------------------------ cache and symmetry
def test_a_repeated_call_is_not_compiled_again(monkeypatch):
    a, b = _data((3, 5)), _data((5, 3))
    first = tl.einsum("ij,jk->ik", a, b)
    monkeypatch.setattr(einsum_api, "compile_spec", lambda *args: pytest.fail("compiled again"))
    _same(tl.einsum("ij,jk->ik", a, b), first)
    _same(tl.einsum("ij,jk->ik", b.T.copy(), a.T.copy()), np.einsum("ij,jk->ik", b.T, a.T))  # same shapes


def test_a_c_call_with_a_transposed_operand_after_a_hit_is_still_right():
    a = _data((4, 4))
    b = _data((4, 4))
    tl.einsum("ij,jk->ik", a, b)
    _same(tl.einsum("ij,jk->ik", a.T, b), np.einsum("ij,jk->ik", a.T, b))
    _same(tl.einsum("ij,jk->ik", a[:, ::-1], b), np.einsum("ij,jk->ik", a[:, ::-1], b))


def _c_target() -> bool:
    return "c" in tl.targets.available()


def _has_gram_step(key) -> bool:
    """Whether the kernel of the cached runner ``key`` has a Gram step (a C target's)."""
    compiled = getattr(getattr(einsum_api._CACHE[key], "kernel", None), "compiled", None)
    return compiled is not None and any(isinstance(step, GramStep) for step in compiled.schedule.steps)


@pytest.fixture
def gram_everywhere(monkeypatch):
    """The Gram step at every size its kernel takes, as where the compiler targets
    AVX-512 (elsewhere it takes only sizes measured to win: test_gram.py)."""
    real = GramStep.why_not
    monkeypatch.setattr(GramStep, "why_not", lambda self, vector_bytes: real(self, 64))
    tl.clear_caches()
    yield
    tl.clear_caches()


@pytest.mark.slow
@pytest.mark.parametrize("subscripts, shape", [("ni,nj->ij", (50, 7)), ("in,jn->ji", (6, 40)),
                                                ("nmi,nmj->ij", (5, 4, 3)), ("inm,jnm->ij", (3, 4, 5))])
def test_one_array_twice_computes_a_symmetric_result_once(subscripts, shape, gram_everywhere):
    x = _data(shape, special=False)
    got = tl.einsum(subscripts, x, x)
    _same(got, np.einsum(subscripts, x, x))
    np.testing.assert_array_equal(got, got.T)  # the mirrored triangle is exactly the computed one
    key = einsum_api._key(subscripts, (x, x), "auto") + (False,)
    assert _has_gram_step(key) or not _c_target()
    y = x.copy()  # same shapes, another object: the general route
    _same(tl.einsum(subscripts, x, y), np.einsum(subscripts, x, y))


@pytest.mark.slow
@pytest.mark.parametrize("subscripts, shape", [("ni,nj,nk->ijk", (30, 5)), ("ni,nj,nk->kij", (30, 4)),
                                                ("in,jn,kn", (3, 20)), ("bni,bnj,bnk->jki", (2, 6, 4))])
def test_one_array_three_times_computes_the_sorted_entries_once(subscripts, shape, gram_everywhere):
    x = _data(shape, special=False)
    got = tl.einsum(subscripts, x, x, x)
    _same(got, np.einsum(subscripts, x, x, x))
    for axes in [(1, 0, 2), (2, 1, 0), (0, 2, 1)]:
        np.testing.assert_array_equal(got, got.transpose(axes))
    key = einsum_api._key(subscripts, (x, x, x), "auto") + (False,)
    assert _has_gram_step(key) or not _c_target()


def test_three_different_arrays_after_one_array_three_times_are_not_symmetric(gram_everywhere):
    x = _data((10, 3), special=False)
    tl.einsum("ni,nj,nk->ijk", x, x, x)
    y, z = _data((10, 3), special=False), _data((10, 3), special=False)
    _same(tl.einsum("ni,nj,nk->ijk", x, y, z), np.einsum("ni,nj,nk->ijk", x, y, z))
    _same(tl.einsum("ni,nj,nk->ijk", x, x, z), np.einsum("ni,nj,nk->ijk", x, x, z))


def test_a_small_third_moment_takes_the_gram_step_or_the_compiled_route(gram_everywhere, monkeypatch):
    """The Gram step (targets/c/gram.py) at any size; where it does not pay, the moment
    runs as the optimizer left it (a pair product and a contraction)."""
    x = _data((20, 3), special=False)
    _same(tl.einsum("ni,nj,nk->ijk", x, x, x), np.einsum("ni,nj,nk->ijk", x, x, x))
    key = einsum_api._key("ni,nj,nk->ijk", (x, x, x), "auto") + (False,)
    assert _has_gram_step(key) or not _c_target()
    monkeypatch.setattr(GramStep, "why_not", lambda self, vector_bytes: "not here")  # no Gram step
    y = _data((20, 4), special=False)
    _same(tl.einsum("ni,nj,nk->ijk", y, y, y), np.einsum("ni,nj,nk->ijk", y, y, y))
    key = einsum_api._key("ni,nj,nk->ijk", (y, y, y), "auto") + (False,)
    assert not _has_gram_step(key)


def test_an_unknown_back_end_is_an_error():
    with pytest.raises(tl.TensorLangError) as caught:
        tl.einsum("ij,jk->ik", np.ones((2, 2)), np.ones((2, 2)), backend="bogus")
    assert caught.value.code == "backend"


def test_two_different_arrays_do_not_take_the_symmetric_route():
    x = _data((20, 4), special=False)
    y = x.copy()
    _same(tl.einsum("ni,nj->ij", x, y), np.einsum("ni,nj->ij", x, y))
    key = einsum_api._key("ni,nj->ij", (x, y), "auto") + (False,)
    assert not _has_gram_step(key)


def test_the_symmetric_route_keeps_nan_and_inf():
    x = _data((30, 5))
    _same(tl.einsum("ni,nj->ij", x, x), np.einsum("ni,nj->ij", x, x))


# ------------------------------------------------------------------ opt_einsum's interface
def test_contract_expression_matches_numpy():
    expr = tl.contract_expression("ij,jk,kl->il", (2, 3), (3, 4), (4, 5))
    a, b, c = _data((2, 3)), _data((3, 4)), _data((4, 5))
    _same(expr(a, b, c), np.einsum("ij,jk,kl->il", a, b, c))
    _same(expr(a, b, c), np.einsum("ij,jk,kl->il", a, b, c))
    _same(expr(a.tolist(), b, c), np.einsum("ij,jk,kl->il", a, b, c))
    with pytest.raises(ValueError):
        expr(a, b)
    with pytest.raises(ValueError):
        expr(a, b, np.ones((4, 6)))


def test_contract_expression_with_constants():
    b = _data((3, 4))
    expr = tl.contract_expression("ij,jk->ik", (2, 3), b, constants=[1])
    a = _data((2, 3))
    _same(expr(a), np.einsum("ij,jk->ik", a, b))
    assert expr.num_args == 1


def test_einsum_path_reports_our_order_in_numpys_format():
    a, b, c = _data((20, 3)), _data((3, 40)), _data((40, 2))
    path, report = tl.einsum_path("ij,jk,kl->il", a, b, c)
    assert path[0] == "einsum_path" and len(path) == 3
    # the optimizer contracts the cheap pair (j,k,l: 3*40*2) first, as numpy's optimal does
    assert path == np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")[0]
    assert "Optimized FLOP count" in report
    program = einsum_api.einsum_program("ij,jk,kl->il", a, b, c)
    assert "tmp" in program  # one intermediate: a pairwise order


def test_einsum_path_with_optimize_is_numpys():
    a, b, c = _data((2, 3)), _data((3, 4)), _data((4, 5))
    for optimize in ("greedy", "optimal", True):
        assert tl.einsum_path("ij,jk,kl->il", a, b, c, optimize=optimize) == \
            np.einsum_path("ij,jk,kl->il", a, b, c, optimize=optimize)
    assert tl.einsum_path("ii->i", a[:, :2].copy()) == np.einsum_path("ii->i", a[:, :2].copy())


# ------------------------------------------------------------------ the front end
def test_the_front_end_text_compiles_and_prints(tmp_path):
    path = tmp_path / "mm.einsum"
    path.write_text("ij,jk->ik : [2 3] [3 4]\n")
    k = tl.compile(path, backend="numpy")
    a, b = _data((2, 3)), _data((3, 4))
    _same(k(T0=a, T1=b)["Res"], a @ b)
    assert "Res[i,k] = sum(j) T0[i,j] * T1[j,k]" in k.ir("ast")
    assert "Res[i,k] = sum(j) T0[i,j] * T1[j,k]" in k.ir("ein")
    interp = tl.compile(path, backend="interp")
    _same(interp(T0=a, T1=b)["Res"], a @ b)


def test_the_front_end_text_reports_errors():
    with pytest.raises(tl.TensorLangError) as caught:
        tl.compile("ij,jk->ik : [2 3] [4 4]", lang="einsum")
    assert caught.value.code == "input"
    with pytest.raises(tl.TensorLangError) as caught:
        tl.compile("ij,jk->ik", lang="einsum")
    assert caught.value.code == "syntax"


def test_numpy_einsum_replaced_by_tl_einsum_still_falls_back_to_numpys(monkeypatch):
    """Running numpy's code with numpy.einsum patched to tl.einsum must not make the
    fallback call itself (int operands go to numpy)."""
    monkeypatch.setattr(np, "einsum", tl.einsum)
    a = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.einsum("ij,jk->ik", a, a.T), a @ a.T)
