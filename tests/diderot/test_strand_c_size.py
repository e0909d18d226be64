"""The C of higher derivatives of field products stays small: each probe family's cache
fill is rendered once per file (``strands_probe.OUTLINE``), not at every probe of it.

∇⊗∇ and ∇⊗∇⊗∇ of ``F*G`` for two 3-D fields probe each image at four derivative orders;
every probe rendered the whole fill (90 KB of straight-line C to third order): 1.59 MB of
C, 14 s of gcc.  With the fill a function of the file it is 252 KB.  The results are the
interpreter's, and the same bit for bit whether the fill is inline or called."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.sampling.image import image as make_image
from tensorlang.targets.c import strands as CS
from tensorlang.targets.c import strands_probe as P
from agreement import same  # tests/diderot is on the path
from test_field_ops_c import needs_cc

PRODUCT_3D = """#version 2.0
input image(3)[] vol ("a volume");
input int N ("strands") = 6;
field#4(3)[] F = vol ⊛ c4hexic;
field#4(3)[] G = vol ⊛ bspln5;
field#4(3)[] P = F*G;
strand S (int i) {
  output tensor[3,3,3] t = zeros[3,3,3];
  output tensor[3,3] h = zeros[3,3];
  update {
    real u = real(i);
    vec3 p = [2.2 + 2.4*fmod(0.173*u, 1.0), 2.3 + 1.9*fmod(0.131*u, 1.0), 2.4 + 2.0*fmod(0.071*u, 1.0)];
    h = ∇⊗∇P(p);
    t = ∇⊗∇⊗∇P(p);
    stabilize;
  }
}
create_array { S(i) | i in 0..N-1 }
"""

#: the C of PRODUCT_3D was 252 KB with the fills called, 1.59 MB with them inline
BOUND = 384 * 1024


def _source(text: str) -> str:
    ir, why = strand_plan(check(parse_program(text)))
    assert ir is not None, why
    return CS.render(ir)


def test_a_third_derivative_of_a_3d_product_renders_each_probe_fill_once():
    src = _source(PRODUCT_3D)
    assert len(src) < BOUND, len(src)
    fills = [ln for ln in src.splitlines() if ln.startswith("TL_OUTLINE void tl_probe_")]
    assert len(fills) == 2, fills  # one per kernel: c4hexic and bspln5 of vol, orders 0..3
    name = fills[0].split()[2].split("(")[0]
    assert src.count(f"{name}(im, ok,") >= 4  # each probe of the family calls it


def test_small_fills_stay_inline():
    """Two probes of a 2-D image to first order (iso2d's kind) keep their fill inline: no call."""
    src = _source("""#version 2.0
input image(2)[] img ("an image");
field#1(2)[] F = img ⊛ bspln3;
strand S (int i) {
  output vec3 o = [0,0,0];
  update { vec2 p = [2.2 + 0.1*real(i), 2.3]; o = [F(p), ∇F(p)[0], ∇F(p)[1]]; stabilize; }
}
create_array { S(i) | i in 0..3 }
""")
    assert "tl_probe_" not in src and src.count("tl_pc0_x[0]") >= 2


def _volume(bad: bool):
    rng = np.random.default_rng(11)
    data = rng.random((9, 10, 11)) * 2 - 1
    if bad:
        data[4, 5, 5], data[3, 4, 6] = np.nan, np.inf
    return make_image(data, 3)


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("bad", [False, True])
def test_a_third_derivative_of_a_3d_product_agrees_with_the_interpreter(bad):
    p = strands(check(parse_program(PRODUCT_3D)))
    values = {"vol": _volume(bad)}
    a, c = p.run(values, backend="interp"), p.run(values, backend="c")
    assert p.executor_note is None
    same(a, c)
    assert np.isfinite(c.outputs["t"]).all() != bad


@needs_cc
@pytest.mark.slow
def test_a_called_fill_gives_the_inline_fills_results_bit_for_bit(monkeypatch):
    """products.diderot (second derivatives of products of a 2-D field, four probes of one
    family) with its fill called and inline: the same numbers, NaNs included."""
    text = (Path(__file__).parent / "more" / "products.diderot").read_text()
    img = make_image(np.random.default_rng(3).random((12, 13)), 2)
    outs, sources = [], []
    for outline in (0, 10**9):
        monkeypatch.setattr(P, "OUTLINE", outline)
        monkeypatch.setattr(CS, "_RUNNERS", {})  # build this variant afresh
        p = strands(check(parse_program(text)))
        res = p.run({"img": img}, backend="c")
        outs.append((res.outputs, res.printed))
        sources.append(next(iter(CS._RUNNERS.values())).source)
    assert "tl_probe_" in sources[0] and "tl_probe_" not in sources[1]
    (a, pa), (b, pb) = outs
    assert pa == pb and a.keys() == b.keys()
    assert all(np.array_equal(np.asarray(a[k]).view(np.int64), np.asarray(b[k]).view(np.int64)) for k in a)


#: vimg's kind: one family probed to different orders in different branches, a value probe
#: followed by a Hessian probe in one block (its fill computes the Hessian at once), and a
#: value probe in an inner block before a gradient probe (the cache refilled to order 1)
MODES = """#version 1.0
input image(2)[] img ("an image");
input int which ("the view") = 0;
field#2(2)[] F = c4hexic ⊛ img;
strand S (int i) {
  output vec3 o = [0,0,0];
  update {
    vec2 x = [0.37*real(i) - 1.1, 0.21*real(i) - 0.4];
    if (0 == which) { real v = 0; if (i > 2) { v = F(x); } o = [v, ∇F(x)[0], F(x) + 1]; }
    else if (1 == which) { o = [∇F(x)[0], |∇F(x)|, F(x)]; }
    else if (2 == which) { real v = F(x); o = [v, trace(∇⊗∇F(x)), det(∇⊗∇F(x))]; }
    else { o = [(∇⊗∇F(x))[0,1], F(x), ∇F(x)[1]]; }
    stabilize;
  }
}
create_array { S(i) | i in 0..39 }
"""


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("bad", [False, True])
def test_called_fills_per_order_give_the_inline_results_bit_for_bit(monkeypatch, bad):
    """Called fills of the orders up to the highest one read after the probe in its block
    (``tl_probe_.._0`` for a value, ``_2`` where a Hessian follows; a cache filled to the
    value only is refilled for a gradient): the inline fill's numbers, NaNs included."""
    data = np.random.default_rng(5).random((14, 13)) * 2 - 1
    if bad:
        data[6, 7], data[8, 5] = np.nan, np.inf
    img = make_image(data, 2, world=np.diag([0.2, 0.2, 1.0]))
    for outline, inline in ((0, False), (10**9, True)):
        monkeypatch.setattr(P, "OUTLINE", outline)
        monkeypatch.setattr(CS, "_RUNNERS", {})
        p = strands(check(parse_program(MODES)))
        runs = [p.run({"img": img, "which": w}, backend="c") for w in range(4)]
        src = next(iter(CS._RUNNERS.values())).source
        assert ("tl_probe_" not in src) == inline
        if not inline:
            assert "tl_probe_0_c4hexic_in_0(im" in src and "tl_probe_0_c4hexic_in_2(im" in src
            assert "tl_pc0_n < 1) {" in src  # a value probe's fill does not serve a gradient
            called = [r.outputs["o"] for r in runs]
        else:
            for a, r in zip(called, runs):
                assert np.array_equal(np.asarray(a).view(np.int64), np.asarray(r.outputs["o"]).view(np.int64))
    assert all(np.isnan(a).any() and np.isfinite(a).any() for a in called)  # points off the image too
