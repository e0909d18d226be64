"""Strands made in lanes (``tl_create_lanes``, src/tensorlang/targets/c/strands.py): the state
initializers of whole 64s of strands along the grid's last iterator run as one vectorized loop
(a row's last ones made again where that changes nothing, or one by one: no vector epilogue to compile),
their probes and ``inside`` tests as straight-line code per lane
(``strands_batch.lane_probe``).  The outputs are those of the strand-by-strand create bit
for bit, and the interpreter's to rounding."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from agreement import same_bits  # tests/diderot is on the path

from tensorlang.strand_ir import ir as S
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import lower
from tensorlang.lang.diderot import typecheck as check
from tensorlang.sampling.image import Image
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as CS
from tensorlang.targets.c import strands_batch as B

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

# a vector image's value and gradient (bspln3), an inside test, a branch on a probe, a
# narrow int; the grid's rows (71 strands) no multiple of the 64 lanes; points outside
PLANE = """#version 1.0
input image(2)[2] img;
field#1(2)[2] F = bspln3 ⊛ img;
field#0(2)[2] G = tent ⊛ img;
strand s (int i, int j) {
   vec2 x = [-2.6 + 0.075 * real(i), -2.4 + 0.5 * real(j)];
   output vec2 v = F(x) if inside(x, F) else [-1.0, 2.0];
   output tensor[2,2] g = ∇⊗F(x);
   output int k = 1 if inside(x, G) && G(x)[0] > 0.2 else (2 if |x| < 1.0 else 0);
   output real w = G(x)[1] * real(i - j);
   update { stabilize; }
}
initially [ s(i, j) | j in 0..8, i in 0..70 ];
"""

# a 3-D probe (tent) and a function with an early return: the latter is made one by one
VOLUME = """#version 1.0
input image(3)[] vol;
field#0(3)[] V = tent ⊛ vol;
strand s (int i, int j, int k) {
   vec3 p = [-1.3 + 0.04 * real(i), -1.2 + 0.27 * real(j), -1.1 + 0.33 * real(k)];
   output real v = V(p) if inside(p, V) else 7.0;
   output real u = V(p + [0.5, 0.0, 0.0]);
   update { stabilize; }
}
initially [ s(i, j, k) | k in 0..4, j in 0..5, i in 0..69 ];  // (rows of 70: 64 lanes, then 64 ending at the row's end)
"""

EARLY = """#version 1.0
function int f(int a) { if (a > 3) { return a / 2; } return -a; }
strand s (int i) {
   output int v = f(i);
   update { stabilize; }
}
initially [ s(i) | i in 0..9 ];
"""


def _map(rotated: bool, d: int) -> np.ndarray:
    if not rotated:
        m = np.eye(d + 1)
        m[:d, :d] *= 0.45
        m[:d, d] = -1.9
        return m
    c, s = np.cos(0.4), np.sin(0.4)
    return np.array([[0.45 * c, -0.4 * s, -1.9], [0.45 * s, 0.4 * c, -1.7], [0, 0, 1]])


def _plane(rotated: bool) -> Image:
    data = np.random.default_rng(5).normal(size=(10, 9, 2))
    data[4, 5] = np.nan  # ⊥ and ±inf reach some probes
    data[2, 6, 1] = np.inf
    return Image(data, 2, _map(rotated, 2))


def _run(text: str, values: dict, lanes: bool, monkeypatch, threads: int = 1):
    monkeypatch.setattr(CS, "CREATE_LANES", lanes)
    monkeypatch.setattr(CS, "_RUNNERS", {})  # build this variant afresh
    p = strands(check(parse_program(text)))
    res = p.run(values, backend="c", threads=threads)
    assert p.executor_note is None
    return p, res, next(iter(CS._RUNNERS.values())).source


@pytest.mark.slow
@pytest.mark.parametrize("text, values", [
    (PLANE, lambda: {"img": _plane(True)}), (PLANE, lambda: {"img": _plane(False)}),
    (VOLUME, lambda: {"vol": Image(np.random.default_rng(2).normal(size=(7, 8, 9)), 3, _map(False, 3))}),
    (PLANE.replace("j in 0..8, i in 0..70", "i in 0..70, j in 0..6"), lambda: {"img": _plane(True)})],
    ids=["plane-rotated", "plane-diagonal", "volume", "rows-of-7"])  # (rows under 64 strands: one by one)
@pytest.mark.parametrize("threads", [1, 2])
def test_strands_made_in_lanes_give_the_one_by_one_outputs_bit_for_bit(text, values, threads, monkeypatch):
    vals = values()
    _, plain, src0 = _run(text, vals, False, monkeypatch, threads)
    p, lanes, src1 = _run(text, vals, True, monkeypatch, threads)
    assert "int tl_create_lanes(" not in src0 and "int tl_create_lanes(" in src1 and "#define TL_CLANES 2" in src1
    for name in plain.outputs:
        assert same_bits(plain.outputs[name], lanes.outputs[name]), name
    ref = p.run(vals, backend="interp")
    for name in ref.outputs:
        a, b = np.asarray(ref.outputs[name]), np.asarray(lanes.outputs[name])
        assert a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True), name
    some = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in lanes.outputs.values()])
    assert np.isfinite(some).any() and np.isnan(some).any()


@pytest.mark.slow
def test_an_image_narrower_than_the_kernel_makes_the_strands_one_by_one(monkeypatch):
    img = Image(np.arange(60.0).reshape(30, 1, 2), 2, np.eye(3))  # 1 sample across: no support fits
    _, plain, _ = _run(PLANE, {"img": img}, False, monkeypatch)
    _, lanes, src = _run(PLANE, {"img": img}, True, monkeypatch)
    assert "int tl_create_lanes(" in src and np.isnan(np.asarray(lanes.outputs["w"])).all()
    for name in plain.outputs:
        assert same_bits(plain.outputs[name], lanes.outputs[name]), name


def test_a_create_with_a_jump_or_an_int_division_is_made_one_by_one(monkeypatch):
    p, res, src = _run(EARLY, {}, True, monkeypatch)
    assert "int tl_create_lanes(" not in src
    assert list(res.outputs["v"]) == [0, -1, -2, -3, 2, 2, 3, 3, 4, 4]


@pytest.mark.slow
def test_a_create_not_made_twice_makes_a_row_past_its_whole_64s_one_by_one(monkeypatch):
    made = CS.Renderer.create_lanes

    def once(self):  # (as where the create would read a state slot that it sets afterwards: TL_CLANES 1)
        lines, self.redo = made(self), False
        return lines

    ir = lower.strand_plan(check(parse_program(PLANE)))[0]
    k = S.Ref("s", "k", "int")
    only = tuple(st for st in ir.init if not (isinstance(st, S.Set) and st.name == "k"))
    for init, redo in ((ir.init, True), (ir.init + (S.Set("s", "k", k),), False),  # (k read, then set: not made twice)
                       (only + (S.Set("s", "k", S.Bin("+", k, S.Const(1, "int"), "int")),), False)):  # (k = k + 1, its only set)
        renderer = CS.Renderer(dataclasses.replace(ir, init=init))
        assert renderer.create_lanes() and renderer.redo == redo
    monkeypatch.setattr(CS.Renderer, "create_lanes", once)
    vals = {"img": _plane(False)}
    _, plain, _ = _run(PLANE, vals, False, monkeypatch)
    _, lanes, src = _run(PLANE, vals, True, monkeypatch)
    assert "#define TL_CLANES 1" in src
    for name in plain.outputs:
        assert same_bits(plain.outputs[name], lanes.outputs[name]), name


# probes at the grid's integer points (tl_create_lanes loads a row of samples where the image's
# map is diagonal with integral entries, scale 1 and stride 1 along the lanes: strands_batch.unit_rows);
# the query blocks the folds (TL_BK 256): each row of 151 strands one block, which loads where every
# load of the row lies within the image's samples in memory (strands_batch.unit_check), its lanes
# past the image's border too (NaN: the support leaves the image)
GRID = """#version 1.0
input image(2)[] img;
field#0(2)[] G = tent ⊛ img;
field#1(2)[] F = bspln3 ⊛ img;
strand s (int i, int j) {
   vec2 x = [real(i), real(j)];
   vec2 pos = x;  // (still positions from the grid, a query: a second run keeps the positions, kp_)
   output real v = G(x) if inside(x, G) else -1.0;
   output real w = F(x) if inside(x, F) else -2.0;
   output vec2 g = ∇F(x) if inside(x, F) else [7.0, 7.0];
   output real h = G([real(i), 3.0]) if inside([real(i), 3.0], G) else -3.0;
   update { real c = sum { q.v | q in sphere(0.5) }; stabilize; }
}
initially [ s(i, j) | j in -3..12, i in 0..150 ];
"""


def _grid(order: str, world) -> Image:
    data = np.random.default_rng(7).normal(size=(160, 11))
    data[70, 4] = np.nan  # ⊥ and ±inf reach some probes
    data[100, 6] = np.inf
    data[130, 2] = -np.inf
    return Image(np.asfortranarray(data) if order == "F" else np.ascontiguousarray(data), 2, np.asarray(world, float))


@pytest.mark.slow
@pytest.mark.parametrize("image, rows", [
    # each row of 151 strands (one block of 256: a query) in two calls, strands 0..127 and 87..150 (made again):
    # loads in both calls of rows j = 1..7: F's support (y = j + 1, taps y - 1 .. y + 2) inside the image's 11 rows
    # for j = 0..7, and in the second of j = 0, whose first lanes' loads (x = i - 2: from -3) start before the first sample
    (lambda: _grid("F", [[1, 0, 2], [0, 1, -1], [0, 0, 1]]), 15),
    # loads in both calls of rows j = 1..3: y = 2j, x = i + 10 (the last lanes' x past 159, their loads in the
    # next row of samples): j = 0 starts before the first sample, j = 4 ends past the last
    (lambda: _grid("F", [[1, 0, -10], [0, 0.5, 0], [0, 0, 1]]), 6),
    (lambda: _grid("C", [[1, 0, 2], [0, 1, -1], [0, 0, 1]]), 0),  # gathers: the rows' samples strided
    (lambda: _grid("F", [[1, 0, 2.5], [0, 1, -1], [0, 0, 1]]), 0),  # gathers: a fraction in every index
    (lambda: _grid("F", [[0.5, 0, 2], [0, 1, -1], [0, 0, 1]]), 0)],  # gathers: two samples a strand along the rows
    ids=["unit", "unit-scaled-past", "strided", "fraction", "scale-2"])
@pytest.mark.parametrize("threads", [1, 2])
def test_strands_probing_at_the_grid_points_load_rows_with_the_gathers_bits(image, rows, threads, monkeypatch, capfd):
    check_rows = B.unit_check

    def told(units, ir):  # each block that loads rows says so on stderr
        return check_rows(units, ir) + ['    if (un_) fprintf(stderr, "tl-rows\\n");']

    monkeypatch.setattr(B, "unit_check", told)
    vals = {"img": image()}
    _, plain, _ = _run(GRID, vals, False, monkeypatch, threads)
    p, lanes, src = _run(GRID, vals, True, monkeypatch, threads)
    assert src.count("base = un_ ? ub_[") == 4  # G's probes at x and at [i, 3], F's value, F's gradient
    # one loop per variant (kp_ alone falls to loop 0), each over whole 64s of lanes (no vector epilogue for the
    # C compiler to build; a row's last 23 strands are made in a second call, of its last 64): compile time
    assert src.count(", ub_)") == 4 and "u_ < (m_ & ~(int64_t)63)" in src
    assert capfd.readouterr().err.count("tl-rows") == 0  # (a first run gathers)
    again = p.run(vals, backend="c", threads=threads)  # (the positions kept: the rows loaded where they may be)
    assert capfd.readouterr().err.count("tl-rows") == rows
    for name in plain.outputs:
        assert same_bits(plain.outputs[name], lanes.outputs[name]), name
        assert same_bits(plain.outputs[name], again.outputs[name]), name
    ref = p.run(vals, backend="interp")
    for name in ref.outputs:
        a, b = np.asarray(ref.outputs[name]), np.asarray(lanes.outputs[name])
        assert a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True), name
    v = np.asarray(lanes.outputs["v"])
    assert np.isfinite(v).sum() > 1000 and np.isnan(v).any() and (v == -1.0).any()
