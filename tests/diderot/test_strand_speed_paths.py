"""The C executor's fast paths (docs/diderot-compiled.md, "How a run goes"; docs/performance.md,
"Diderot strand programs") give the interpreter's results: strands run to completion in
tiles where none sees another, probes sharing their work at one point, images read in place
whatever their memory layout, and Diderot's strict ``inside``."""

from __future__ import annotations

import numpy as np
import pytest
from agreement import agree as agree_both  # tests/diderot is on the path

import tensorlang as tl
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.sampling.image import Image
from tensorlang.targets.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def program(text: str):
    return strands(check(parse_program(text)))


def agree(p, values=None, **kw):
    return agree_both(p, values, rtol=1e-12, **kw)[0]


# strands that stabilize (or, in a collection, die) after different numbers of steps, some
# never: the grid is not a multiple of the 8x8 tiles, and a limit can stop the run with
# strands active (a grid may not use die, as in Diderot: the collection has it)
SOLO = """#version 1.0
input int every = 7;
strand s (int i, int j) {
   int k = 0;
   output real v = 0.0;
   update {
      k += 1;
      v += real(i) / (1.0 + real(k));
      if (k >= (i * 13 + j * 5) % every + 1 && i % 3 != 2) { stabilize; }
      if (j == 4 && k == 3) { die; }
   }
}
initially [ s(i, j) | i in 0..10, j in 0..18 ];
"""


GRID = SOLO.replace("      if (j == 4 && k == 3) { die; }\n", "")
COLLECTION = SOLO.replace("initially [ s(i, j) | i in 0..10, j in 0..18 ];", "initially { s(i, j) | i in 0..10, j in 0..18 };")


@pytest.mark.slow
@pytest.mark.parametrize("text", [GRID, COLLECTION], ids=["grid", "collection"])
@pytest.mark.parametrize("limit", [0, 1, 3, 50])
def test_strands_run_to_completion_count_the_steps_of_the_bulk_synchronous_loop(limit, text):
    assert text != SOLO
    res = agree(program(text), {}, limit=limit or None)
    assert res.steps == (limit or 10000)  # strands with i % 3 == 2 never stabilize


PROBES = """#version 1.0
input image(2)[] img;
field#2(2)[] F = bspln3 ⊛ img;
field#1(2)[] G = ctmr ⊛ img;
strand s (int i, int j) {
   vec2 x = [0.37 * real(i) - 0.2, 0.41 * real(j) - 0.3];
   output vec4 o = [0, 0, 0, 0];
   output vec2 h = [0, 0];
   update {
      vec2 g = ∇F(x);
      real v = F(x);
      real w = G(x);
      tensor[2,2] H = ∇⊗∇F(x);
      vec2 y = x + [0.5, 0.0];
      real u = F(y);
      o = [v, g[0] + H[0,1], w, u + F(x)];
      h = ∇G(x) + ∇F(y);
      stabilize;
   }
}
initially [ s(i, j) | i in 0..13, j in 0..12 ];
"""


@pytest.mark.slow
def test_probes_at_one_point_share_their_work_and_agree_with_the_interpreter():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(9, 8))
    data[4, 5] = np.nan  # ⊥ and ±inf samples reach some probes, not others
    data[2, 2], data[6, 1] = np.inf, -np.inf
    img = tl.image(data, world={"spacing": 0.6, "origin": [-0.5, -0.4]})
    res = agree(program(PROBES), {"img": img})
    o = np.asarray(res.outputs["o"])
    assert np.isnan(o).any() and np.isfinite(o).any()


@pytest.mark.parametrize("layout", ["C", "F", "reversed", "strided"])
def test_images_are_read_in_place_whatever_their_layout(layout):
    rng = np.random.default_rng(5)
    base = rng.normal(size=(9, 8, 3))
    arr = {"C": base, "F": np.asfortranarray(base), "reversed": base[::-1, :, ::-1],
           "strided": np.repeat(base, 2, axis=1)[:, ::2]}[layout]
    img = Image(arr, 2, np.eye(3))  # the array itself, not a copy: the C probe reads it in place
    text = """#version 1.0
input image(2)[3] img;
field#2(2)[3] F = bspln3 ⊛ img;
strand s (int i, int j) {
   vec2 x = [1.1 + 0.45 * real(i), 1.2 + 0.4 * real(j)];
   output vec3 v = [0, 0, 0];
   output tensor[3,2] g = zeros[3,2];
   update { v = F(x); g = ∇⊗F(x); stabilize; }
}
initially [ s(i, j) | i in 0..12, j in 0..12 ];
"""
    p = program(text)
    want = p.run({"img": img}, backend="interp")
    got = p.run({"img": img}, backend="c")
    for name in ("v", "g"):
        assert np.allclose(np.asarray(want.outputs[name]), np.asarray(got.outputs[name]), rtol=1e-12, atol=1e-12,
                           equal_nan=True)


def test_inside_is_diderots_strict_test_on_the_index_position():
    # what diderotc's executable gives (checked with it): bspln3 on 8 samples is inside for
    # 1 < x < 6, tent for 0 < x < 7, strictly
    text = """#version 1.0
input image(2)[] img;
field#2(2)[] F = bspln3 ⊛ img;
field#0(2)[] T = tent ⊛ img;
strand s (int i) {
   real x = real(i) / 2.0;
   output vec2 o = [0, 0];
   update { o = [1.0 if inside([x, 3.5], F) else 0.0, 1.0 if inside([x, 3.5], T) else 0.0]; stabilize; }
}
initially [ s(i) | i in 0..16 ];
"""
    res = agree(program(text), {"img": tl.image(np.arange(64.0).reshape(8, 8))})
    o = np.asarray(res.outputs["o"])
    x = np.arange(17) / 2.0
    assert o[:, 0].tolist() == ((x > 1) & (x < 6)).astype(float).tolist()
    assert o[:, 1].tolist() == ((x > 0) & (x < 7)).astype(float).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["C", "F", "reversed"])
def test_three_d_probes_with_axis_0_in_lanes_agree_whatever_the_layout(layout):
    # the innermost sums run with axis 0's taps as lanes (contiguous where its stride is 1:
    # "F", an NRRD file's layout; strided otherwise), kept [t1][t0]: value, gradient and
    # Hessian of a 3-D image, ⊥ and ±inf among the samples, against the interpreter
    rng = np.random.default_rng(11)
    base = rng.normal(size=(7, 8, 9))
    base[3, 4, 4], base[2, 5, 3], base[4, 2, 5] = np.nan, np.inf, -np.inf
    arr = {"C": base, "F": np.asfortranarray(base), "reversed": base[::-1, ::-1, :]}[layout]
    img = Image(arr, 3, np.diag([0.7, 0.8, 0.9, 1.0]))
    text = """#version 1.0
input image(3)[] img;
field#2(3)[] F = bspln3 ⊛ img;
strand s (int i, int j) {
   vec3 x = [1.3 + 0.31 * real(i), 1.7 + 0.33 * real(j), 1.9 + 0.29 * real(i + j)];
   output real v = 0;
   output vec3 g = [0, 0, 0];
   output tensor[3,3] h = zeros[3,3];
   update { if (inside(x, F)) { v = F(x); g = ∇F(x); h = ∇⊗∇F(x); } stabilize; }
}
initially [ s(i, j) | i in 0..10, j in 0..10 ];
"""
    res = agree(program(text), {"img": img})
    v = np.asarray(res.outputs["v"])
    assert np.isnan(v).any() and (np.isfinite(v) & (v != 0)).any()


def test_a_norm_compared_with_zero_needs_no_root_and_keeps_its_truth():
    # |v| == 0 compiles to v•v == 0: the same truth for 0, -0, tiny (v•v underflows), NaN, inf
    text = """#version 1.0
input real a = 0;
strand s (int i) {
   output vec2 o = [0, 0];
   update {
      real c = 0.0 if i == 0 else (-0.0 if i == 1 else (1e-200 if i == 2 else (a / a if i == 3 else (1.0 / a if i == 4 else (-3.0 if i == 5 else (2.5))))));
      vec2 v = [c, -0.0];
      o = [1.0 if |v| == 0.0 else 0.0, 1.0 if |v| != 0.0 else 0.0];
      stabilize;
   }
}
initially [ s(i) | i in 0..6 ];
"""
    o = np.asarray(agree(program(text), {}).outputs["o"])
    assert o[:, 0].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert o[:, 1].tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
