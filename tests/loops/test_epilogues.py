"""An elementwise statement computed in the store of the contraction before it
(loops/fusion.py ``epilogue``): in a fused loop, where a contraction's
per-iteration result t is read only by the next statement, once, at that statement's own
index, and that statement is elementwise, its value is computed from the block's
finished sum and stored directly; t is never written.  The values are the same bits as
the two statements apart (t a result of the program, so not folded), ⊥, ±inf and -0 included, with and without fma, with register
tiles and plain blocks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import fusion, microkernel
from tensorlang.loops.ir import Acc, Load, Loop, Store, plain, walk

from corpus import helmholtz_source


def _c(source, **options):
    try:
        return tl.compile(source, backend="c", threads=1, **options)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


HEAD = ("in var A : [{n} {n}]\nin var D : [{E} {n} {n}]\nin var w : [{E} {n} {n}]\nin var u : [{E} {n} {n}]\n"
        "out var v : [{E} {n} {n}]\nvar t : [{E} {n} {n}]\nvar r : [{E} {n} {n}]\n"
        "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\n")
TAIL = "v[e,i,j] = sum(k) A[i,k] * r[e,k,j]\n"


def _fused(k):
    (nest,) = [nest for nest in k.loop_program.nests if nest.fused]
    return nest


def _folds_in(nest) -> int:
    """How many of a fused loop's statements were computed in another's store: the
    statements less the nests (one per statement left) of the loop's body."""
    (loop,) = [node for node in nest.body if isinstance(node, Loop) and node.var == nest.fused[0].index[0][0]]
    return len(nest.fused) - len([node for node in loop.body if isinstance(plain(node), Loop)])  # a tile's loop too


def _folds(k) -> int:
    return _folds_in(_fused(k))


def _epilogue_stores(k) -> list[Store]:
    """The stores that compute a value from a block's sum (an accumulator inside an expression)."""
    return [node for node in walk(_fused(k).body) if isinstance(node, Store) and not isinstance(node.value, Acc)
            and any(isinstance(e, Acc) for e in walk((node.value,)))]


@pytest.mark.slow
@pytest.mark.parametrize("middle, folds", [
    # the forms the optimizer leaves as a statement of their own after the contraction
    # (it moves a sum into most elementwise expressions itself: exp(t) * D, t / D, t + w)
    ("r[e,i,j] = D[e,i,j] * t[e,i,j]", True),
    ("r[e,i,j] = t[e,i,j] * D[e,i,j]", True),
    ("r[e,i,j] = -(D[e,i,j] * t[e,i,j])", True),
    ("r[e,i,j] = D[e,i,j] * w[e,i,j] * t[e,i,j]", True),
    ("r[e,i,j] = t[e,i,j] * t[e,i,j] * D[e,i,j]", False),  # t read twice
    ("r[e,i,j] = D[e,i,j] * t[e,j,i]", False),  # at another index
])
def test_which_elementwise_statements_fold(middle, folds):
    n, E = 8, 3
    source = HEAD.format(n=n, E=E) + middle + "\n" + TAIL
    k = _c(source)
    assert _folds(k) == int(folds) and len(_epilogue_stores(k)) == int(folds)
    apart = _c(_apart(source))
    assert _folds(apart) == 0 and not _epilogue_stores(apart)


def _apart(source: str) -> str:
    """``source`` with t a result of the program: no per-iteration temporary, so never
    folded into a store, and computed by the same block."""
    assert source.count("\nvar t :") == 1
    return source.replace("\nvar t :", "\nout var t :")


def test_a_result_read_later_is_not_folded():
    n, E = 8, 3
    k = _c(HEAD.format(n=n, E=E) + "r[e,i,j] = D[e,i,j] * t[e,i,j]\n"
           "v[e,i,j] = sum(k) A[i,k] * r[e,k,j] * t[e,k,j]\n")
    nest = _fused(k)
    assert "t" in [s.target for s in nest.fused] and _folds(k) == 0
    t = k.loop_program.names.index("t")
    assert any(isinstance(node, Store) and node.slot == t for node in walk(nest.body))


def test_the_rule_on_statements():
    from tensorlang.ein import ir as ein

    index = (("e", 3), ("i", 8), ("j", 8))
    t = ein.Statement("t", index, ein.Sum((("k", 8),), ein.BinOp("*", ein.Tensor("A", ("i", "k")),
                                                                  ein.Tensor("u", ("e", "k", "j")))))

    def after(target, body):
        return ein.Statement(target, index, body)

    scaled = ein.BinOp("*", ein.Tensor("D", ("e", "i", "j")), ein.Tensor("t", ("e", "i", "j")))
    assert fusion.epilogue(t, after("r", scaled), [], {"t", "r"})
    assert not fusion.epilogue(t, after("r", scaled), [], {"r"})  # t is not a per-iteration temporary
    assert not fusion.epilogue(t, after("u", scaled), [], {"t"})  # u is read by the sum: written in place
    assert not fusion.epilogue(t, after("r", scaled), [after("q", ein.Tensor("t", ("e", "i", "j")))], {"t"})
    assert not fusion.epilogue(t, after("D", scaled), [], {"t"})  # reads its own target
    twice = ein.BinOp("*", scaled, ein.Tensor("t", ("e", "i", "j")))
    assert not fusion.epilogue(t, after("r", twice), [], {"t"})
    swapped = ein.BinOp("*", ein.Tensor("D", ("e", "i", "j")), ein.Tensor("t", ("e", "j", "i")))
    assert not fusion.epilogue(t, after("r", swapped), [], {"t"})
    summed = ein.Sum((("m", 8),), ein.BinOp("*", ein.Tensor("D", ("e", "i", "m")), ein.Tensor("t", ("e", "i", "j"))))
    assert not fusion.epilogue(t, after("r", summed), [], {"t"})
    other = ein.Statement("r", (("e", 3), ("i", 8), ("j", 4)), scaled)
    assert not fusion.epilogue(t, other, [], {"t"})  # other extents


def test_helmholtz_computes_d_in_the_third_products_store():
    k = _c(helmholtz_source(16, 3))
    names = k.loop_program.names
    assert len(_fused(k).fused) == 7 and _folds(k) == 1
    (store,) = _epilogue_stores(k)
    assert [names[e.slot] for e in walk((store.value,)) if isinstance(e, Load)] == ["D"]


_middles = st.sampled_from([
    "r[e,i,j] = D[e,i,j] * t[e,i,j]",
    "r[e,i,j] = t[e,i,j] * D[e,i,j]",
    "r[e,i,j] = -(D[e,i,j] * t[e,i,j])",
    "r[e,i,j] = D[e,i,j] * w[e,i,j] * t[e,i,j]",
    "r[e,i,j] = t[e,i,j] * t[e,i,j] * D[e,i,j]",
])
_specials = st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e300])


@pytest.mark.slow
@pytest.mark.parametrize("fma", [False, True])
@pytest.mark.parametrize("tiles", [False, True])
def test_folded_statements_give_the_same_bits(monkeypatch, fma, tiles):
    monkeypatch.setattr(microkernel, "TILES", tiles)
    built: dict = {}

    def kernels(source):
        if source not in built:
            built[source] = (_c(source + "\n\n\n\n", fma=fma), _c(_apart(source), fma=fma))
        return built[source]

    @settings(max_examples=15, deadline=None)
    @given(middle=_middles, n=st.sampled_from([8, 16, 12]), E=st.integers(2, 3), seed=st.integers(0, 2**32 - 1),
           special=_specials, where=st.integers(0, 10**6))
    def check(middle, n, E, seed, special, where):
        source = HEAD.format(n=n, E=E) + middle + "\n" + TAIL
        folded, apart = kernels(source)
        rng = np.random.default_rng(seed)
        args = {"A": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(-2, 2, (E, n, n)),
                "w": rng.uniform(-1, 1, (E, n, n)), "u": rng.uniform(-1, 1, (E, n, n))}
        args["u"].flat[where % args["u"].size] = special
        args["D"].flat[(where // 3) % args["D"].size] = -0.0
        with np.errstate(all="ignore"):
            got, want = folded(**args)["v"], apart(**args)["v"]
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))

    check()
    # the property was checked on folded kernels
    assert sum(_folds(k) == 1 for k, _ in built.values()) >= 2
    assert all(_folds(apart) == 0 for _, apart in built.values())
