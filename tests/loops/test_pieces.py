"""Index-set splitting of direct sums (loops/pieces.py): a loop over a concat's index runs
piece by piece, with no select left, and computes the same numbers to the bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlang as tl
from tensorlang.loops import ir as loops, pieces
from tensorlang.targets.c import build as c_build

needs_c = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")


def _loops_and_selects(program: loops.LoopProgram) -> tuple[list[loops.Loop], int]:
    found, selects = [], 0
    stack = [n for nest in program.nests for n in nest.body]
    while stack:
        node = stack.pop()
        if isinstance(node, loops.Loop):
            found.append(node)
        if isinstance(node, loops.Select) and node.bounds:
            selects += 1
        stack.extend(loops.children(node))
    return found, selects


def test_a_concat_loop_runs_one_loop_per_piece():
    k = tl.compile("in var a : [3]\nin var b : [5]\nout var y : [8]\ny = concat(a, b)\n", backend="numpy")
    found, selects = _loops_and_selects(k.loop_program)
    assert selects == 0
    assert sorted((l.start, l.extent) for l in found) == [(0, 3), (3, 8)]


def test_vec_inside_concat_splits_in_turn():
    """X = concat(F, vec(G)) per row: 1 + 4 pieces, each a plain copy."""
    text = ("in var F : [6 4]\nvar G : [6 4 4]\nout var X : [6 20]\nG[r,i,j] = F[r,i] * F[r,j]\n"
            "X = concat(F, vec(G))\n")
    k = tl.compile(text, backend="numpy")
    found, selects = _loops_and_selects(k.loop_program)
    assert selects == 0
    spans = {(l.start, l.extent) for l in found if isinstance(l.start, int)}
    assert {(0, 4), (4, 8), (8, 12), (12, 16), (16, 20)} <= spans


def test_too_many_pieces_keep_the_select(monkeypatch):
    monkeypatch.setattr(pieces, "MAX_PIECES", 1)
    k = tl.compile("in var a : [3]\nin var b : [5]\nout var y : [8]\ny = concat(a , b)\n", backend="numpy")
    assert _loops_and_selects(k.loop_program)[1] == 1


_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0])


@pytest.mark.slow
@needs_c
@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(1, 7), min_size=1, max_size=4), rows=st.integers(1, 3),
       op=st.sampled_from(["", " * 2"]), data=st.data())
def test_split_loops_compute_what_the_select_did_to_the_bit(sizes, rows, op, data):
    """Matrices joined along their last dimension (a leading batch of rows), the pieces
    holding NaN, ±inf and ±0: the split kernel and one compiled with the selects kept
    give the same bits."""
    names = [f"a{n}" for n in range(len(sizes))]
    text = ("".join(f"in var {x} : [{rows} {n}]\n" for x, n in zip(names, sizes))
            + f"out var Y : [{rows} {sum(sizes)}]\nY = concat({', '.join(names)}){op}\n")
    split = tl.compile(text, backend="c")
    saved, pieces.MAX_PIECES = pieces.MAX_PIECES, 0
    try:
        whole = tl.compile(text.replace("out var", "out  var"), backend="c")  # another source: not the cached kernel
    finally:
        pieces.MAX_PIECES = saved
    body = {k: kernel.code("c").split("tl_step0(")[1] for k, kernel in (("whole", whole), ("split", split))}
    assert ("LL ?" in body["whole"]) == (len(sizes) > 1) and "LL ?" not in body["split"]  # a select: x_j < 3LL ? ..
    inputs = {x: np.array(data.draw(st.lists(st.one_of(st.floats(-1e3, 1e3), _SPECIAL), min_size=rows * n,
                                             max_size=rows * n)), dtype=float).reshape(rows, n)
              for x, n in zip(names, sizes)}
    np.testing.assert_array_equal(split(**inputs)["Y"], whole(**inputs)["Y"])
