"""Every public Diderot example compiles to C (no fallback to the interpreter) and agrees
with the interpreter at reduced sizes, on synthetic images and particles; sequences,
the eigen solver, ``inv``, images named in a field's definition, products and norms of
fields and sphere queries around other points, each on its own (docs/diderot-compiled.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nrrd
import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.sampling.image import image as make_image
from tensorlang.targets.c import build as c_build
from agreement import agree, same, same_bits  # tests/diderot is on the path: the folder is not a package


MIRROR = Path("/work/.mirror/Diderot-Language+examples/repo")
needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
needs_mirror = pytest.mark.skipif(not MIRROR.exists(), reason="the examples' mirror is not on this machine")


def example(name: str) -> str:
    return subprocess.run(["git", "--git-dir", str(MIRROR), "show", f"HEAD:{name}"], capture_output=True, text=True,
                          check=True).stdout


def _names() -> list[str]:
    if not MIRROR.exists():
        return []
    out = subprocess.run(["git", "--git-dir", str(MIRROR), "ls-tree", "-r", "--name-only", "HEAD"],
                         capture_output=True, text=True, check=False).stdout.split()
    return [n for n in out if n.endswith(".diderot")]


@needs_mirror
@pytest.mark.parametrize("name", _names())
def test_every_example_lowers_to_the_strand_ir(name):
    ir, why = strand_plan(check(parse_program(example(name))))
    assert why is None and ir is not None, why


# ---------------------------------------------------------------- the examples, run
def _smooth(shape, rng):
    axes = np.meshgrid(*[np.linspace(-1, 1, n) for n in shape], indexing="ij")
    f = sum(np.cos(2.3 * (k + 1) * a + 0.4 * k) for k, a in enumerate(axes))
    return f + 0.05 * rng.standard_normal(shape)


def _circle_points(n, d, rng):
    p = rng.standard_normal((n, d))
    return p / np.linalg.norm(p, axis=1, keepdims=True)


def _run_both(text: str, values: dict, base_dir=None, limit: int = 0, threads: bool = True):
    return agree(strands(check(parse_program(text)), base_dir), values, limit=limit, threads=threads)


def _vimg_inputs(rng, which):
    img = make_image(_smooth((40, 30), rng), 2, world=np.diag([0.1, 0.1, 1.0]))
    ramp = np.linspace(0, 1, 16)
    cmap = make_image(np.stack([ramp, ramp[::-1], ramp ** 2], axis=1), 1)
    return {"img": img, "cmimg": cmap, "sz0": 24, "sz1": 18, "cent": [2.0, 1.5], "fov": 2.5, "which": which,
            "cmax": 2.0, "cmin": -2.0, "th": 0.5}


@needs_cc
@needs_mirror
@pytest.mark.slow
@pytest.mark.parametrize("which", range(10))
def test_vimg_every_view_agrees(which):
    a, _ = _run_both(example("vimg/vimg.diderot"), _vimg_inputs(np.random.default_rng(which), which))
    assert a.outputs["rgb"].shape == (18, 24, 3)


@needs_cc
@needs_mirror
@pytest.mark.slow
@pytest.mark.parametrize("name,n,limit", [("circle/circle.diderot", 30, 40), ("circle-2.0/circle.diderot", 30, 40)])
def test_circle_particles_agree(name, n, limit):
    ipos = _circle_points(n, 2, np.random.default_rng(1))
    a, b = _run_both(example(name), {"ipos": ipos}, limit=limit, threads=False)
    assert a.steps == limit or a.stable == n


@needs_cc
@needs_mirror
@pytest.mark.slow
def test_sphere_particles_with_births_and_deaths_agree():
    ipos = _circle_points(40, 3, np.random.default_rng(2))
    a, _ = _run_both(example("sphere/sphere.diderot"), {"ipos": ipos, "rad": 0.5}, limit=12, threads=False)
    assert "(iter 11)" in a.printed


@needs_cc
@needs_mirror
@pytest.mark.slow
def test_halftone_agrees():
    rng = np.random.default_rng(3)
    img = make_image(np.clip(0.5 + 0.4 * _smooth((32, 32), rng) / 3, 0, 1), 2, world=np.diag([1 / 31, 1 / 31, 1.0]))
    ipos = rng.uniform(0.2, 0.8, (25, 2))
    _run_both(example("halftone/halftone.diderot"), {"img": img, "ipos": ipos, "radmm": [0.05, 0.2]}, limit=8,
              threads=False)


@needs_cc
@needs_mirror
@pytest.mark.slow
def test_steps_with_a_fixed_sequence_output_agrees():
    a, b = _run_both(example("steps-2.0/steps.diderot"), {}, threads=False)
    assert b.outputs["state"].shape[1:] == (5,) and a.printed


def _write(path: Path, data: np.ndarray, kinds: list[str] | None) -> None:
    """An NRRD file of ``data`` (C order: the voxel's components last; ``kinds`` in that order)."""
    nrrd.write(str(path), np.ascontiguousarray(data), {"kinds": kinds[::-1]} if kinds else {}, index_order="C")


@needs_cc
@needs_mirror
@pytest.mark.slow
def test_lic_with_images_named_in_its_fields_agrees(tmp_path):
    rng = np.random.default_rng(4)
    y, x = np.meshgrid(np.linspace(-1, 1, 20), np.linspace(-1, 1, 24), indexing="ij")
    flow = np.stack([-y + 0.1, x], axis=-1)  # a vortex, index space (24 x 20 samples of 2-vectors)
    _write(tmp_path / "flow.nrrd", flow, ["space", "space", "vector"])
    _write(tmp_path / "rand.nrrd", rng.uniform(0, 1, (30, 30)), ["space", "space"])
    _write(tmp_path / "cmap.nrrd", rng.uniform(0, 1, (8, 3)), ["space", "vector"])
    values = {"sizeX": 10, "sizeY": 6, "stepnum": 4, "h0": 0.5, "xymin": [2.0, 2.0], "xymax": [20.0, 16.0]}
    a, _ = _run_both(example("lic/lic.diderot"), values, base_dir=str(tmp_path))
    assert a.outputs["rgb"].shape == (6, 10, 2, 3)


@needs_cc
@needs_mirror
@pytest.mark.slow
def test_tensor2_probes_an_image_named_in_its_field(tmp_path):
    vol = np.random.default_rng(5).standard_normal((9, 9, 9, 3))
    _write(tmp_path / "vec.nrrd", vol, ["space", "space", "space", "vector"])
    text = example("tensor2/tensor2.diderot").replace("[0,0,0]", "[4,4,4]").replace("[1,0,0]", "[5,4,4]") \
        .replace("[0,1,0]", "[4,5,4]").replace("[0,0,1]", "[4,4,5]")
    a, b = _run_both(text, {}, base_dir=str(tmp_path), threads=False)
    assert a.printed.count("K[") == 3


# ---------------------------------------------------------------- each feature on its own
def _agree(text: str, values=None, base_dir=None, limit: int = 0):
    p = strands(check(parse_program(text)), base_dir)
    assert strand_plan(p.checked)[1] is None, strand_plan(p.checked)[1]
    return agree(p, values, limit=limit)


EIGEN = """#version 1.0
input real big = 1;
strand s (int i) {
   output vec3 ev3 = [0,0,0];
   output tensor[3,3] vec3s = zeros[3,3];
   output vec2 ev2 = [0,0];
   output tensor[2,2] vec2s = zeros[2,2];
   output tensor[3,3] inv3 = zeros[3,3];
   output tensor[2,2] inv2 = zeros[2,2];
   output real d = 0;
   update {
      real a = sin(1.3*i + 0.2) * big;
      real b = cos(0.7*i) - 0.5;
      real c = 0.3*i - 1;
      tensor[3,3] m = [[a, b, c], [b, 2*c - a, 0.5], [c, 0.5, a*b + 1]] if i < 9 else
                      [[1, 0, 0], [0, 1, 0], [0, 0, 1]] * (nan if i == 9 else (1/0.0 if i == 10 else 0));
      tensor[2,2] m2 = [[a, b], [b, c]] if i < 9 else [[1, 2], [2, 4]];
      real{3} e3 = evals(m);
      vec3{3} v3 = evecs(m);
      ev3 = [e3{0}, e3{1}, e3{2}];
      vec3s = [v3{0}, v3{1}, v3{2}];
      vec2{2} v2 = evecs(m2);
      ev2 = [evals(m2){0}, evals(m2){1}];
      vec2s = [v2{0}, v2{1}];
      inv3 = inv(m);
      inv2 = inv(m2);
      d = det(m) + trace(m2) + det(m2);
      stabilize;
   }
}
initially [ s(i) | i in 0..11 ];
"""


@pytest.mark.slow
@needs_cc
def test_eigenvalues_eigenvectors_and_inverses_agree_with_lapack():
    a, b = _agree(EIGEN)
    ev, vecs = b.outputs["ev3"][:9], b.outputs["vec3s"][:9]
    assert np.all(np.diff(ev, axis=1) <= 0)  # largest first
    for k in range(9):  # V diag(w) V^T is the (symmetric) matrix; unit eigenvectors
        assert np.allclose(np.linalg.norm(vecs[k], axis=1), 1)
    # ⊥ entries (∞ * 0 off the diagonal at i = 10) decide no root: the mean of the diagonal, the axes (diderotc's)
    assert np.all(np.isnan(b.outputs["ev3"][9])) and np.all(b.outputs["ev3"][10] == np.inf)
    assert np.all(b.outputs["vec3s"][9:] == np.eye(3)) and np.all(np.isnan(b.outputs["inv3"][9:]))
    assert np.all(b.outputs["inv2"][9:] == [[np.inf, -np.inf], [-np.inf, np.inf]])  # singular: (trace·I - M)/0, diderotc's
    assert np.allclose(b.outputs["inv3"][3] @ _m3(3), np.eye(3))
    assert np.all(b.outputs["ev3"][11] == 0)


EIGEN_TIE = """#version 1.0
strand S (int i) {
   real y = real(i) * -1.5;
   output vec3 v = [0.0,0.0,0.0];
   update { tensor[3,3] m = [[0.0, 0.5, 0.0], [0.5, y, 0.25], [0.0, 0.25, -0.0]]; v = evecs(m){2}; stabilize; }
}
initially [ S(i) | i in 0..5 ];
"""


@needs_cc
def test_an_eigenvector_sign_on_equal_gaps_is_diderots_in_both_executors():
    """For i = 0 the outer eigenvalues are ±0.559 around 0: both gaps are equal, and
    rounding decides which outer vector the frame keeps (tl_eig3).  The expected rows are
    what ``diderotc --double``'s executable wrote (its float build flips the first row)."""
    a, b = _agree(EIGEN_TIE)
    diderot = np.array([[-0.6324555320336759, 0.7071067811865476, -0.31622776601683794],
                        [0.2815786030668714, -0.9491532346616307, 0.14078930153343563],
                        [0.15869143476364894, -0.9841347903950038, 0.07934571738182447],
                        [0.10863708606006378, -0.99259633256197, 0.05431854303003187],
                        [0.08227197670446822, -0.9957605898565299, 0.04113598835223405],
                        [0.06611895312637511, -0.9972639344961995, 0.03305947656318753]])
    assert np.allclose(b.outputs["v"], diderot, rtol=1e-12, atol=1e-14)


INT_WRAP = """#version 1.0
strand S (int i) {
   output int k = 0;
   output int m = 0;
   output int d = 0;
   output int n = 0;
   output int q = 0;
   update {
      k = 9223372036854775807; k += 1 + i;
      m = 3037000500; m = m * m * (i + 1);
      d = -9223372036854775807 - 1; n = d / (-1 - i + i); q = -d + i; d = d % (-1 - i + i);
      stabilize;
   }
}
initially [ S(i) | i in 0..2 ];
"""


@needs_cc
def test_ints_wrap_in_twos_complement_in_both_executors():
    """Overflow of + - * and unary minus, and INT_MIN / -1, wrap to 64 bits (numpy's
    int64 arithmetic is the witness); INT_MIN % -1 is 0 (C's a % -1 would trap)."""
    a, b = _agree(INT_WRAP)
    with np.errstate(over="ignore"):
        i = np.arange(3, dtype=np.int64)
        top, low = np.int64(2**63 - 1), np.int64(-2**63)
        assert np.array_equal(b.outputs["k"], top + (1 + i))
        assert np.array_equal(b.outputs["m"], np.int64(3037000500) * np.int64(3037000500) * (i + 1))
        assert np.array_equal(b.outputs["n"], np.full(3, low)) and np.array_equal(b.outputs["d"], np.zeros(3, np.int64))
        assert np.array_equal(b.outputs["q"], -low + i)


def _m3(i: int) -> np.ndarray:
    a, b, c = np.sin(1.3 * i + 0.2), np.cos(0.7 * i) - 0.5, 0.3 * i - 1
    return np.array([[a, b, c], [b, 2 * c - a, 0.5], [c, 0.5, a * b + 1]])


@needs_cc
def test_eigen_solver_at_large_and_tiny_scales():
    """At 1e±150 the matrices are diagonal to within rounding, where Diderot's closed form
    takes the eigenvectors' signs from rounding noise: both executors compute it operation
    for operation, so the eigen-systems agree bit for bit (and the inverses, Diderot's closed form too)."""
    p = strands(check(parse_program(EIGEN)), None)
    for big in (1e150, 1e-150, 1e-300):
        a, b = p.run({"big": big}, backend="interp"), p.run({"big": big}, backend="c")
        for name in a.outputs:
            x, y = a.outputs[name], b.outputs[name]
            assert np.array_equal(np.isnan(x), np.isnan(y)), name
            assert np.allclose(x, y, rtol=1e-9, atol=1e-10, equal_nan=True), (name, big)
            assert same_bits(x, y), (name, big)


SEQUENCES = """#version 1.0
input vec3{} pts = load("pts.nrrd");
input real{} ws = load("ws.nrrd");
input int pick = 1;
real total = sum { w | w in ws };
strand s (vec3 p, int k) {
   output real[4] stats = {0, 0, 0, 0};
   output vec3{2} ends = {p, p};
   output bool flags = false;
   output int n = length(pts);
   update {
      real{3} xs = {p[0], p[1], p[2]};
      real acc = 0;
      foreach (real x in xs) { acc += x*x; }
      foreach (vec3 q in pts) { acc += 0.001 * |q - p|; }
      stats = {acc, mean { x | x in xs }, max { x | x in ws }, min { x*2 | x in xs }};
      ends = {pts{0}, pts[length(pts) - 1] + xs[pick] * p};
      flags = all { x > -10 | x in xs } && exists { w > 0.5 | w in ws } || product { x | x in xs } > total;
      n = sum { 1 | q in pts } + k + sum { j*j | j in 0..k } - 5 + min { j | j in 3..2 };
      stabilize;
   }
}
initially { s(q, 2) | q in pts };
"""


@needs_cc
def test_sequences_fixed_and_of_any_length(tmp_path):
    rng = np.random.default_rng(7)
    _write(tmp_path / "pts.nrrd", rng.standard_normal((6, 3)), None)
    _write(tmp_path / "ws.nrrd", rng.uniform(0, 1, 5), None)
    text = SEQUENCES
    a, b = _agree(text, base_dir=str(tmp_path))
    assert b.outputs["stats"].shape == (6, 4) and b.outputs["ends"].shape == (6, 2, 3)
    # 6 items + 2 + (0 + 1 + 4) - 5 + (an empty int min: 2^31 - 1, where diderotc's C++ starts its fold)
    assert b.outputs["n"].tolist() == [8 + 2 ** 31 - 1] * 6
    ir, _ = strand_plan(strands(check(parse_program(text))).checked)
    assert "seq0 pts" in ir.show() and "seq1 ws" in ir.show()
    for backend in ("interp", "c"):  # an index past the end is error[input] in both
        with pytest.raises(TensorLangError) as info:
            strands(check(parse_program(text)), str(tmp_path)).run({"pick": 3}, backend=backend)
        assert info.value.code == "input"


FIELDS = """#version 1.0
input image(2)[2] vimg;
input image(2)[] simg;
field#2(2)[2] V = bspln3 ⊛ vimg;
field#2(2)[] G = c4hexic ⊛ simg;
field#1(2)[2] N = V/|V|;
field#1(2)[2] W = normalize(V);
field#1(2)[2] P = V*G;
field#2(2)[] E = exp(G) + sin(G) - 2*cos(G) + sqrt(G);
strand s (int i, int j) {
   vec2 x = [0.37*i + 1.1, 0.41*j + 0.9];
   output vec2 n = [0,0];
   output vec2 gn = [0,0];
   output vec2 w = [0,0];
   output tensor[2,2] dp = zeros[2,2];
   output vec2 ge = [0,0];
   output tensor[2,2] he = zeros[2,2];
   output real q = 0;
   update {
      n = N(x);
      gn = ∇|V|(x) + ∇|G|(x);
      w = W(x);
      dp = ∇⊗P(x) + ∇⊗(V/G)(x);
      ge = ∇E(x);
      he = ∇⊗∇E(x);
      q = (V/G)(x)[0] + |V|(x) + (G*V)(x)[1];
      stabilize;
   }
}
initially [ s(i, j) | i in 0..9, j in 0..9 ];
"""


@pytest.mark.slow
@needs_cc
def test_norms_products_quotients_and_functions_of_fields():
    rng = np.random.default_rng(8)
    v = rng.standard_normal((8, 8, 2))
    g = rng.uniform(0.5, 2.0, (8, 8))
    g[3, 4] = -0.5  # sqrt of a negative: ⊥ near it
    v[6, 6] = [np.inf, 0]
    v[1, 7] = [np.nan, 1]
    a, b = _agree(FIELDS, {"vimg": make_image(v, 2), "simg": make_image(g, 2)})
    assert np.any(np.isnan(b.outputs["ge"])) and np.any(np.isfinite(b.outputs["ge"]))


SPHERES = """#version 1.0
input real rad = 0.3;
strand p (vec2 p0, real r0) {
   output vec2 pos = p0;
   output real seen = 0;
   output int near = 0;
   real r = r0;
   update {
      seen += sum { |P.pos - pos| | P in sphere(r) };
      foreach (p P in sphere(pos + [0.1, 0], rad/2)) { near += 1; }
      real m = max { P.r | P in sphere([0.5, 0.5], 0.25) };
      pos += 0.01 * [cos(m), sin(seen)];
      r *= 0.9;
      if (r < 0.05) { stabilize; }
   }
}
initially { p([0.1*(i % 7), 0.13*(i / 7)], 0.1 + 0.01*i) | i in 0..48 };
"""


@needs_cc
def test_sphere_queries_with_a_strand_radius_and_around_other_points():
    a, b = _agree(SPHERES)
    assert b.steps > 5 and np.any(b.outputs["near"] > 0) and np.any(b.outputs["seen"] > 0)


@needs_cc
def test_sums_of_vectors_over_neighbours_strands_and_sequences():
    text = """#version 1.0
real{2} ws = {0.5, 2.0};
vec2 centroid = [0, 0];
strand p (int i) {
   vec2 pos = [0.3*(i % 5), 0.25*(i / 5)];
   output vec2 push = [0, 0];
   output vec2 mix = [0, 0];
   update {
      push = sum { P.pos - pos | P in sphere(0.4) } + 0.1*centroid;
      mix = sum { w * pos | w in ws };
      pos += 0.05 * push;
      if (|push| < 0.01) { stabilize; }
   }
}
global { centroid = sum { P.pos | P in p.all } / real(numStrands()); }
initially [ p(i) | i in 0..19 ];
"""
    _, b = _agree(text, limit=6)
    assert b.outputs["push"].shape == (20, 2) and np.any(b.outputs["push"] != 0) and np.all(b.outputs["mix"][1:, 0] > 0)


@needs_cc
def test_strands_that_count_the_strands_run_in_order():
    text = """#version 1.0
strand s (int i) {
   output int seen = 0;
   output int act = 0;
   update {
      seen = numStrands();
      act = numActive() * 100 + numStable();
      if (i % 3 == 0) { die; }
      if (i % 3 == 1 || seen < 9) { stabilize; }
   }
}
initially { s(i) | i in 0..8 };
"""
    p = strands(check(parse_program(text)))
    ir, why = strand_plan(p.checked)
    assert why is None and ir.serial
    a, b = _agree(text)
    assert len(set(b.outputs["act"].tolist())) > 1  # each strand saw the statuses of those before it


PRINTS = """#version 1.0
strand s (int i) {
   output real x = 0;
   int k = 0;
   update {
      print("strand ", i, " step ", k, " seq ", {x, 2.0*i}, "\\n");
      k += 1;
      x += 0.5;
      if (k > i) { stabilize; }
   }
}
initially [ s(i) | i in 0..2 ];
"""


@needs_cc
def test_prints_of_a_program_that_is_not_bulk_synchronous_come_strand_by_strand_in_c():
    p = strands(check(parse_program(PRINTS)), None)
    assert strand_plan(p.checked)[1] is None  # runs in C
    a, b = _agree(PRINTS)
    lines = b.printed.splitlines()
    assert lines[:3] == ["strand 0 step 0 seq {0,0}", "strand 1 step 0 seq {0,2}", "strand 1 step 1 seq {0.5,2}"]
    assert [ln.split()[1] for ln in lines] == ["0", "1", "1", "2", "2", "2"]


BORDER_GLOBALS = """#version 1.0
input image(1)[] img;
image(1)[] bc = {border}(img);
image(1)[] alias = bc;
field#1(1)[] F = ctmr ⊛ alias;
field#0(1)[] G = tent ⊛ {other}(img);
strand s (int i) {{
  output vec3 v = [0, 0, 0];
  update {{ real x = -9 + 0.75*i; v = [F(x), ∇F(x), G(x)]; stabilize; }}
}}
initially [ s(i) | i in 0..24 ];
"""


@needs_cc
@pytest.mark.parametrize("border", ["clamp", "wrap", "mirror"])
def test_an_image_global_defined_with_a_border_keeps_it_in_c(tmp_path, border):
    """plot1d's `image(1)[] bcimg = clamp(img)`: the C probe takes the border from the
    global's definition (followed through an alias)."""
    data = np.array([0.5, -1.0, 2.0, 0.25, 1.5])
    nrrd.write(str(tmp_path / "d.nrrd"), data)
    text = BORDER_GLOBALS.format(border=border, other="clamp" if border != "clamp" else "wrap")
    p = strands(check(parse_program(text)), str(tmp_path))
    assert strand_plan(p.checked)[1] is None
    a = p.run({"img": str(tmp_path / "d.nrrd")}, backend="interp")
    b = p.run({"img": str(tmp_path / "d.nrrd")}, backend="c")
    assert not np.isnan(a.outputs["v"]).any()  # outside the samples too: the border maps the taps
    same(a, b)
