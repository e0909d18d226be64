"""A temporary read only through a packed copy is written packed by its producer
(loops/structure.py ``pack_in_producer``): for ``X = concat(F, vec(G))`` read only by
``C = Σ_r X[r,p] X[r,q]``, the loop that builds X stores only X's unique columns, at their
packed places, and the covariance reads X itself instead of copying it.

Checked: where it applies and where it must not (X a result, X read twice, a packed
layout larger than X), that the cut loops store exactly the unique positions, results
against the reference interpreter with NaN, ±inf and ±0 among the inputs, the rule that
decides which loops may be cut, and an AddressSanitizer build (buffers exactly as large
as the loop program says)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings, strategies as st

import tensorlang as tl
from tensorlang.ein.index import affine
from tensorlang.errors import TensorLangError
from tensorlang.loops import ir as loops
from tensorlang.loops.structure import _cuttable

from properties.harness import assert_same_values as _same


def _poly(m: int, n: int, degree: int = 2, x_role: str = "var", extra: str = "") -> str:
    k = n + n * n + (n ** 3 if degree == 3 else 0)
    return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\n"
            + (f"var H : [{m} {n} {n} {n}]\n" if degree == 3 else "")
            + f"{x_role} X : [{m} {k}]\nout var C : [{k} {k}]\n" + extra.split("|")[0]
            + "G[r,i,j] = F[r,i] * F[r,j]\n"
            + ("H[r,i,j,l] = G[r,i,j] * F[r,l]\nX = concat(F, vec(G), vec(vec(H)))\n" if degree == 3
               else "X = concat(F, vec(G))\n")
            + "C[p,q] = sum(r) X[r,p] * X[r,q]\n" + (extra.split("|")[1] if extra else ""))


def _compile(text: str, backend: str = "c"):
    try:
        return tl.compile(text, backend=backend)
    except TensorLangError as exc:  # no C compiler here
        if backend == "c":
            pytest.skip(str(exc))
        raise


def _x_shapes(kernel) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """X's shape in the schedule (what a call allocates) and in the loop program."""
    slot = kernel.schedule.buffers.slot_of["X"]
    return kernel.schedule.buffers.buffers[slot].shape, kernel.loop_program.buffers.buffers[slot].shape


@pytest.mark.slow
@pytest.mark.parametrize("m, n, degree, packed", [(64, 4, 2, 16), (256, 8, 2, 48), (1024, 16, 2, 152),
                                                  (32, 4, 3, 40), (16, 3, 3, 24)])
def test_the_producer_writes_the_packed_layout(m, n, degree, packed):
    k = _compile(_poly(m, n, degree))
    scheduled, stored = _x_shapes(k)
    assert stored == (m, packed) and scheduled == (m, n + n * n + (n ** 3 if degree == 3 else 0))
    x = k.schedule.buffers.slot_of["X"]
    nest = next(nest for nest in k.loop_program.nests if nest.statement.target == "C")
    assert nest.packs == ()  # its copy of X is gone: nothing declared stores a copy of X
    assert any(isinstance(n, loops.Load) and n.slot == x for n in loops.walk(nest.body))  # it reads X itself
    # the producer stores every packed column exactly once per row
    producer = next(nest for nest in k.loop_program.nests if any(
        isinstance(n, loops.Store) and n.slot == x for n in loops.walk(nest.body)))
    used = n + n * (n + 1) // 2 + (n * (n + 1) * (n + 2) // 6 if degree == 3 else 0)  # the unique monomials
    assert sorted(_stored_columns(producer.body, x)) == list(range(used))
    # the columns past the last run are zeroed by the covariance's nest
    assert (packed > used) == any(isinstance(n, loops.Store) and n.slot == x and n.value == loops.Const(0.0)
                                  for n in loops.walk(nest.body))


def _stored_columns(body, slot: int) -> list[int]:
    """The 0-based columns the stores into ``slot`` write in row 0, by running the loops."""
    found: list[int] = []

    def position(index, env) -> int:
        if isinstance(index, str):
            return env[index]
        if isinstance(index, int):
            return index
        (var, coeff), = index.terms  # one variable: loops/structure.py _affine0's 0-based offset
        return coeff * env[var] + index.offset + coeff - 1

    def visit(node, env):
        if isinstance(node, loops.Loop):
            start = node.start if isinstance(node.start, int) else env[node.start]
            for value in range(start, node.extent):
                for child in node.body:
                    visit(child, {**env, node.var: value})
        elif isinstance(node, loops.Store) and node.slot == slot and position(node.indices[0], env) == 0:
            found.append(position(node.indices[1], env))

    for node in body:
        visit(node, {})
    return found


@pytest.mark.parametrize("text, why", [
    (_poly(16, 4, x_role="out var"), "X is a result"),
    (_poly(16, 4, extra="out var s : [16]\n|s[r] = sum(p) X[r,p]\n"), "X is read by a second statement"),
    (_poly(16, 3), "the packed layout (9 columns, rounded up to 16) is larger than X (12)"),
])
def test_the_copy_stays_where_the_producer_must_not_pack(text, why):
    k = _compile(text)
    scheduled, stored = _x_shapes(k)
    assert scheduled == stored, why
    nest = next(nest for nest in k.loop_program.nests if nest.statement.target == "C")
    assert nest.packs, why  # still its own packed copy
    F = np.random.default_rng(3).uniform(-1, 1, k.shapes["F"])
    want = _compile(text, "interp")(F=F)
    got = k(F=F)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.slow
def test_every_slot_fits_what_a_call_allocates():
    """The runtime allocates each pooled temporary in the schedule's shape: the loop
    program may store a slot smaller, never larger."""
    for m, n, degree in [(5, 2, 2), (7, 3, 2), (8, 4, 2), (9, 5, 2), (6, 2, 3), (6, 3, 3)]:
        k = _compile(_poly(m, n, degree))
        for a, b in zip(k.schedule.buffers.buffers, k.loop_program.buffers.buffers):
            assert math.prod(b.shape) <= math.prod(a.shape), (m, n, degree, a, b)


_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5])
#: finite values whose products of up to six factors neither overflow nor underflow: the
#: symmetry of a product of three or more factors holds up to rounding only where no
#: association order of it overflows or underflows (docs/structure.md, "Inference")
_MODERATE = st.one_of(st.floats(1e-3, 100), st.floats(-100, -1e-3))


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 9), n=st.integers(4, 7), degree=st.sampled_from([2, 3]), data=st.data())
def test_packed_producer_equals_the_reference(m, n, degree, data):
    """003 Property 5 with the producer packing: specials spread among moderate values."""
    n = min(n, 3) if degree == 3 else n
    text = _poly(m, n, degree)
    note(text)
    values = np.array(data.draw(st.lists(st.one_of(_SPECIAL, _MODERATE), min_size=m * n, max_size=m * n)))
    F = values.reshape(m, n)
    k = _compile(text)
    _same(k(F=F)["C"], _compile(text, "interp")(F=F)["C"])


def test_cuttable_loops():
    """A loop over the packed dimension may be cut to the runs' ranges only when every
    iteration does nothing but store the source at one position along it."""
    S, T = 1, 2
    row = ("r",)

    def loop(*body, **kw):
        return loops.Loop("j", 8, tuple(body), **kw)

    store = loops.Store(S, row + ("j",), loops.Const(1.0))
    assert _cuttable(loop(store), S, 1)
    assert _cuttable(loop(loops.Store(S, row + (affine([("j", 1)], 3),), loops.Const(1.0))), S, 1)
    assert not _cuttable(loop(store, loops.Store(T, row + ("j",), loops.Const(1.0))), S, 1)  # stores another buffer
    assert not _cuttable(loop(store, parallel=True), S, 1)
    assert not _cuttable(loops.Loop("j", 8, (store,), start="i"), S, 1)  # triangular
    assert not _cuttable(loop(loops.Store(S, ("j", "j"), loops.Const(1.0))), S, 1)  # the variable elsewhere too
    assert not _cuttable(loop(store, loops.Store(S, row + (affine([("j", 1)], 1),), loops.Const(2.0))), S, 1)  # two positions
    assert not _cuttable(loop(loops.Store(S, row + (affine([("j", 2)], 0),), loops.Const(1.0))), S, 1)  # a stride
    # an accumulator summed across iterations: each iteration depends on the ones cut away
    assert not _cuttable(loop(loops.Update("a", "+", loops.Const(1.0)), store), S, 1)
    # one initialised inside each iteration is the iteration's own
    assert _cuttable(loop(loops.Init("a", "+"), loops.Update("a", "+", loops.Const(1.0)),
                          loops.Store(S, row + ("j",), loops.Acc("a"))), S, 1)


@pytest.mark.slow
def test_packed_producer_is_clean_under_sanitizers():
    sanitizers = pytest.importorskip("properties.test_c_sanitizers")
    if not sanitizers._sanitizers_work():
        pytest.skip("the C compiler here cannot build with ASan/UBSan")
    for m, n, degree in [(9, 4, 2), (5, 3, 3)]:
        text = _poly(m, n, degree)
        F = np.random.default_rng(m).uniform(-2, 2, (m, n))
        F[0, 0], F[-1, -1] = np.nan, -np.inf
        with tempfile.TemporaryDirectory() as tmp:
            got = sanitizers.run_sanitized(text, {"F": F}, "float64", Path(tmp))
        _same(got["C"], _compile(text, "interp")(F=F)["C"])
