"""A fused loop's body with several large statements prints each as a C function of its
own (the loop rewrite ``functions``: loops/fusion.py ``own_functions``, ``OWN_FUNCTION_WORK``,
``ir.Loop.apart``): small statements stay inline, a
nest that reads an accumulator it does not start stays inline, and the results are the
same bits as with every statement inline."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import ir as loops
from tensorlang.loops.fusion import OWN_FUNCTION_WORK, own_functions

from corpus import helmholtz_reference, helmholtz_source, interpolation_source


def _c(source, threads=1, **options):
    try:
        return tl.compile(source, backend="c", threads=threads, **options)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))


def _fused_body(k):
    (loop,) = [node for nest in k.loop_program.nests if nest.fused for node in nest.body
               if isinstance(node, loops.Loop) and node.var == "e"]
    return loop.body


@pytest.mark.slow
def test_the_helmholtz_products_at_n8_are_functions_of_their_own():
    k = _c(helmholtz_source(8, 5))
    body = _fused_body(k)
    own = [body[k] for k in own_functions(body)]
    nests = [n for n in body if isinstance(n, loops.Loop)]
    # the six products (8^4 = 4096 multiply-adds each) are; D ⊙ t is in the third's
    # store (loops/fusion.py epilogue)
    assert len(own) == 6 and len(nests) == 6
    assert all(loops.work((n,)) >= OWN_FUNCTION_WORK for n in own)
    source = k.target.source
    assert source.count("static TL_NOINLINE void") == 2 * 6  # each declared, then defined
    assert "_s6(" in source and "_s7(" not in source


def test_small_statements_stay_in_the_body():
    k = _c(interpolation_source(4, 5))  # 4^4 = 256 multiply-adds a product
    assert own_functions(_fused_body(k)) == ()
    assert "TL_NOINLINE void" not in k.target.source


def test_a_nest_reading_an_accumulator_it_does_not_start_stays_inline():
    store = loops.Store(0, ("i",), loops.Acc("a"))
    open_nest = loops.Loop("i", 4096, (store,))
    closed = loops.Loop("j", 4096, (loops.Init("b", "+"), loops.Update("b", "+", loops.Const(1.0)),
                                     loops.Store(0, ("j",), loops.Acc("b"))))
    assert own_functions((open_nest, closed)) == (1,)
    assert own_functions((closed,)) == ()  # one nest: nothing to keep apart


@pytest.mark.slow
@pytest.mark.parametrize("fma,threads", [(False, 1), (True, 1), (True, 2)])
def test_functions_of_their_own_change_no_result(fma, threads):
    rng = np.random.default_rng(5)
    n, E = 8, 7
    args = {"S": rng.uniform(-1, 1, (n, n)) / n, "D": rng.uniform(0.5, 1.5, (E, n, n, n)),
            "u": rng.uniform(-1, 1, (E, n, n, n))}
    args["u"][2, 1, 2, 3] = np.nan
    args["u"][E - 1, 0, 0, 0] = -np.inf
    args["D"][4, 7, 7, 7] = np.inf
    args["u"][5] = -0.0
    apart = _c(helmholtz_source(n, E), threads, fma=fma)  # 2 threads: called from the parallel body
    assert "TL_NOINLINE void" in apart.target.source
    inline = _c(helmholtz_source(n, E) + "\n\n", threads, fma=fma, skip_passes=("functions",))
    assert "TL_NOINLINE void" not in inline.target.source and "functions" not in inline.loop_program.rewrites
    got = apart(**args)["v"]
    assert np.array_equal(got, inline(**args)["v"], equal_nan=True)
    # and both agree with the reference where it is finite (NaN and inf spread the same way)
    want = helmholtz_reference(args)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    assert np.allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)
