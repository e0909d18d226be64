"""Probes of a block of strands at once (src/tensorlang/targets/c/strands_batch.py): the
block's vectorized probes fill each update's probe cache, and the results are those of
the strand-by-strand update bit for bit (a NaN's sign aside: which operand's NaN an
operation passes on is the C compiler's choice), and the interpreter's to rounding."""

from __future__ import annotations

import numpy as np
import pytest
from agreement import same_bits  # tests/diderot is on the path

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.sampling.image import Image
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as CS
from tensorlang.targets.c import strands_batch as SB

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

# a pixel viewer over a vector image whose index-to-world map rotates and scales (the
# gradient's chain rule), the window larger than the image (⊥ outside), a grid that is no
# multiple of the blocks' 8 lanes
VIEW = """#version 1.0
input image(2)[2] img;
field#1(2)[2] F = bspln3 ⊛ img;
strand s (int i, int j) {
   output vec2 v = [0, 0];
   output tensor[2,2] g = zeros[2,2];
   update {
      vec2 x = [-2.3 + 0.37 * real(i), -2.1 + 0.33 * real(j)];
      v = F(x);
      g = ∇⊗F(x);
      stabilize;
   }
}
initially [ s(i, j) | i in 0..12, j in 0..14 ];
"""

# Newton steps to an isocontour (a collection: die, stabilize, strands finishing after
# different numbers of steps, so that a block's lanes go idle one by one)
NEWTON = """#version 1.0
input image(2)[] img;
field#1(2)[] F = ctmr ⊛ img - 0.1;
strand seed (vec2 x0) {
   output vec2 x = x0;
   int n = 0;
   update {
      if (!inside(x, F) || n > 12) { die; }
      vec2 g = ∇F(x);
      if (|g| == 0.0) { die; }
      vec2 d = -F(x) * g / (g • g);
      x += d;
      n += 1;
      if (|d| < 0.000001) { stabilize; }
   }
}
initially { seed([-1.5 + 0.21 * real(i), -1.4 + 0.19 * real(j)]) | i in 0..14, j in 0..13 };
"""

# the position the block computes (from the state at the step's start) is not where the
# update probes (it moves the state first): every update misses the block's cache and
# probes itself
MOVED = """#version 1.0
input image(2)[] img;
field#1(2)[] F = bspln3 ⊛ img;
strand s (int i, int j) {
   vec2 p = [-1.0 + 0.2 * real(i), -1.1 + 0.2 * real(j)];
   int k = 0;
   output real acc = 0;
   update {
      vec2 q = p;
      p += [0.05, 0.03];
      acc += F(q) + |∇F(p)|;
      k += 1;
      if (k >= 3 + i % 4) { stabilize; }
   }
}
initially [ s(i, j) | i in 0..9, j in 0..10 ];
"""


def _image(vox: tuple) -> Image:
    rng = np.random.default_rng(11)
    data = rng.normal(size=(10, 9) + vox)
    data[4, 5] = np.nan  # ⊥ and ±inf reach some probes
    data[2, 6] = np.inf
    c, s = np.cos(0.4), np.sin(0.4)
    to_world = np.array([[0.45 * c, -0.4 * s, -1.9], [0.45 * s, 0.4 * c, -1.7], [0, 0, 1]])
    return Image(data, 2, to_world)


def _run(text: str, values: dict, batched: bool, monkeypatch, threads: int):
    monkeypatch.setattr(SB, "ENABLED", batched)
    monkeypatch.setattr(CS, "_RUNNERS", {})  # build this variant afresh
    p = strands(check(parse_program(text)))
    res = p.run(values, backend="c", threads=threads)
    assert p.executor_note is None
    source = next(iter(CS._RUNNERS.values())).source
    return p, res, source


@pytest.mark.slow
@pytest.mark.parametrize("text, vox, batches", [(VIEW, (2,), True), (NEWTON, (), True), (MOVED, (), True)],
                         ids=["view", "newton", "moved"])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_blocks_probes_give_the_strand_by_strand_results_bit_for_bit(text, vox, batches, threads, monkeypatch):
    values = {"img": _image(vox)}
    _, plain, src0 = _run(text, values, False, monkeypatch, threads)
    p, lanes, src1 = _run(text, values, True, monkeypatch, threads)
    assert "tl_fill" not in src0 and ("tl_fill" in src1) == batches
    assert (plain.steps, plain.active, plain.stable) == (lanes.steps, lanes.active, lanes.stable)
    for name in plain.outputs:
        a, b = np.asarray(plain.outputs[name]), np.asarray(lanes.outputs[name])
        assert same_bits(a, b), name
    ref = p.run(values, backend="interp")
    for name in ref.outputs:
        a, b = np.asarray(ref.outputs[name]), np.asarray(lanes.outputs[name])
        assert a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True), name
    some = np.concatenate([np.ravel(np.asarray(v)) for v in lanes.outputs.values()])
    assert np.isfinite(some).any()


def test_a_position_behind_a_probe_or_a_reassigned_local_is_not_batched():
    chained = VIEW.replace("v = F(x);", "v = F(x);\n      vec2 y = x + v;\n      g = ∇⊗F(y);").replace(
        "g = ∇⊗F(x);", "")
    ir, _ = __import__("tensorlang.lang.diderot.lower", fromlist=["strand_plan"]).strand_plan(
        check(parse_program(chained)))
    assert ir is not None
    r = CS.Renderer(ir)
    src = r.source()
    # one family (img, bspln3): its first probe F(x) is batched; ∇⊗F(y) at a probed point is not
    assert src.count("TL_NOTRAP TL_WIDE static void tl_fill") == 1
    reassigned = VIEW.replace("v = F(x);", "if (i > 3) { x = x * 0.5; }\n      v = F(x);")
    ir2, _ = __import__("tensorlang.lang.diderot.lower", fromlist=["strand_plan"]).strand_plan(
        check(parse_program(reassigned)))
    assert ir2 is not None and "tl_fill" not in CS.Renderer(ir2).source()


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 3])
def test_a_step_limit_stops_the_block_where_the_strand_by_strand_loop_stops(limit, monkeypatch):
    values = {"img": _image(())}
    runs = []
    for batched in (False, True):
        monkeypatch.setattr(SB, "ENABLED", batched)
        monkeypatch.setattr(CS, "_RUNNERS", {})
        p = strands(check(parse_program(NEWTON.replace("initially {", "initially [").replace("};", "];")
                                        .replace("die;", "stabilize;"))))
        runs.append(p.run(values, backend="c", limit=limit))
    a, b = runs
    assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable) and a.active > 0
    assert same_bits(a.outputs["x"], b.outputs["x"])


@pytest.mark.slow
def test_an_image_narrower_than_the_kernel_leaves_every_probe_to_the_update(monkeypatch):
    # 3 samples across: no bspln3 cell fits, the block computes nothing and every probe is ⊥
    img = Image(np.arange(30.0).reshape(10, 3), 2, np.eye(3))
    text = VIEW.replace("image(2)[2]", "image(2)[]").replace("field#1(2)[2]", "field#1(2)[]").replace(
        "output vec2 v = [0, 0];", "output real v = 0;").replace("tensor[2,2] g = zeros[2,2]", "vec2 g = [0, 0]").replace(
        "∇⊗F(x)", "∇F(x)").replace("0.37 * real(i)", "0.9 * real(i)").replace("-2.3", "0.5").replace("-2.1", "0.5")
    _, plain, _ = _run(text, {"img": img}, False, monkeypatch, 1)
    _, lanes, src = _run(text, {"img": img}, True, monkeypatch, 1)
    assert "tl_fill" in src
    v = np.asarray(lanes.outputs["v"])
    assert np.isnan(v).all() and same_bits(v, plain.outputs["v"])
