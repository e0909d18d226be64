"""Functions of Diderot's standard basis that programs beyond the examples call:
``inv`` of a real (1/x) and of a scalar field (1/F, differentiable as F is).  Each
typechecks, lowers to C and agrees with the interpreter (with ⊥ and ±∞ among the image
samples), and the interpreter's values are the reciprocals."""

from __future__ import annotations

import numpy as np
import pytest

from test_field_ops_c import _image, _program, assert_c_agrees, assert_lowers_to_c, needs_cc
from tiers import quick_first

CASES = {
    "inv of a real": ("", "real", "0", "inv(F(x)) + inv(4)"),
    "inv field": ("field#4(2)[] R = inv(G);", "real", "0", "R(x)"),
    "gradient of an inv field": ("field#4(2)[] R = inv(G);", "vec2", "[0,0]", "∇R(x)"),
    "Hessian of an inline inv": ("", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇(inv(G))(x)"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_inv_of_a_scalar_lowers_to_c(name):
    assert_lowers_to_c(CASES[name])


@needs_cc
@pytest.mark.parametrize("name", quick_first(CASES, {"inv of a real", "gradient of an inv field"}))  # a C build each
@pytest.mark.parametrize("bad", [False, True])
def test_inv_of_a_scalar_agrees_with_the_interpreter(name, bad):
    assert_c_agrees(CASES[name], len(name), bad, True)


def test_inv_is_the_reciprocal_and_its_gradient_the_quotient_rule():
    img = {"img": _image(np.random.default_rng(1), False)}
    inv = _program("field#4(2)[] R = inv(G);", "vec3", "[0,0,0]", "[R(x), ∇R(x)[0], inv(2)]").run(img, backend="interp")
    ref = _program("", "vec3", "[0,0,0]", "[1.0/G(x), -∇G(x)[0]/(G(x)*G(x)), 0.5]").run(img, backend="interp")
    a, b = np.asarray(inv.outputs["o"]), np.asarray(ref.outputs["o"])
    assert np.isfinite(a).all() and np.allclose(a, b, rtol=1e-12, atol=1e-12)


def test_inv_of_a_vector_field_is_still_refused():
    from test_check import error_of
    err = error_of("#version 2.0\ninput image(2)[2] v;\nfield#1(2)[2] V = ctmr ⊛ v;\nfield#1(2)[2] W = inv(V);\n"
                   "strand s (int i) { output real o = 0; update { stabilize; } }\ninitially [ s(i) | i in 0..1 ];\n")
    assert (err.code, err.line) == ("shape", 4)


SLICES = {
    "a component of a vector field": ("field#3(2)[2] V = ∇F;", "real", "0", "V[1](x)"),
    "its gradient": ("field#3(2)[2] V = ∇F;", "vec2", "[0,0]", "∇(V[0])(x)"),
    "a row and a column of a matrix field": ("field#2(2)[2,2] H = ∇⊗∇F;", "vec2", "[0,0]", "H[1,:](x) + H[:,0](x)"),
    "a component of a sum, inline": ("", "real", "0", "(∇F + ∇G)[0](x) + (∇⊗∇G)[0,1](x)"),
}


@pytest.mark.parametrize("name", list(SLICES))
def test_a_field_indexed_by_constants_lowers_to_c(name):
    assert_lowers_to_c(SLICES[name])


@needs_cc
@pytest.mark.parametrize("name", quick_first(SLICES, {"a component of a vector field", "a row and a column of a matrix field"}))
@pytest.mark.parametrize("bad", [False, True])
def test_a_field_indexed_by_constants_agrees_with_the_interpreter(name, bad):
    assert_c_agrees(SLICES[name], len(name), bad, True)


def test_a_field_component_is_the_component_of_the_probe():
    img = {"img": _image(np.random.default_rng(2), False)}
    got = _program("field#2(2)[2,2] H = ∇⊗∇F;", "vec3", "[0,0,0]", "[H[0,1](x), H[1,:](x)[1], ∇(H[0,0])(x)[1]]")
    want = _program("", "vec3", "[0,0,0]", "[(∇⊗∇F(x))[0,1], (∇⊗∇F(x))[1,1], (∇⊗∇⊗∇F(x))[0,0,1]]")
    a, b = (np.asarray(p.run(img, backend="interp").outputs["o"]) for p in (got, want))
    assert np.isfinite(a).all() and np.allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("index, code", [("V[i]", "shape"), ("V[0,0]", "shape"), ("V[2]", "dim-range")])
def test_a_field_index_must_be_a_constant_within_the_shape(index, code):
    from test_check import error_of
    err = error_of("#version 2.0\ninput image(2)[2] v;\nfield#1(2)[2] V = ctmr ⊛ v;\n"
                   "strand s (int i) { output real o = 0; update { o = " + index + "([0.5, 0.5]); stabilize; } }\n"
                   "initially [ s(i) | i in 0..1 ];\n")
    assert (err.code, err.line) == (code, 4)


@needs_cc
def test_large_generated_c_is_compiled_at_o1_with_the_same_results(monkeypatch):
    from tensorlang.targets.c import build as c_build_mod
    from tensorlang.targets.c import strands as c_strands
    case = ("field#4(2)[] R = inv(G);", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇R(x)")
    img = {"img": _image(np.random.default_rng(3), True)}
    seen = []
    real = c_build_mod.build_and_load
    monkeypatch.setattr(c_build_mod, "build_and_load", lambda *a, **k: seen.append(a[3:]) or real(*a, **k))
    monkeypatch.setattr(c_strands, "_RUNNERS", {})  # not a runner an earlier test built for the same program
    o3 = _program(*case).run(img, backend="c")
    monkeypatch.setattr(c_strands, "LARGE_SOURCE", 0)
    monkeypatch.setattr(c_strands, "_RUNNERS", {})  # built again, not the runner of the same program above
    o1 = _program(*case).run(img, backend="c")
    assert seen == [(c_strands.NO_ERRNO,), (c_strands.NO_ERRNO + ("-O1",),)]
    a, b = np.asarray(o3.outputs["o"]), np.asarray(o1.outputs["o"])
    assert np.array_equal(a, b, equal_nan=True) and np.isfinite(a).any()


NO_ERRNO_PROGRAM = """#version 2.0
input image(2)[] img;
field#1(2)[] G = bspln3 ⊛ img;
input real r = 0.35;
strand pt (int i) {
  output vec2 pos = [0.1 * real(i % 7) - 0.3, 0.07 * real(i / 7) - 0.3];
  output real o = 0;
  int age = 0;
  update {
    if (age >= 3) { stabilize; }
    vec2 f = [0, 0];
    foreach (pt q in sphere(r)) {
      vec2 d = pos - q.pos;
      if (|d| > 0) { f += (1 - |d|/r)^3 * d/|d|; }
      real z = sqrt(|d| - 0.2);
      o += sqrt(|d|) / (|d| - 0.1) + inv(|d|) + (z if z > 0.1 else 0);
    }
    vec2 x = 0.9 * normalize(pos + [1e-3, 0]);
    if (inside(x, G)) { o += sqrt(|∇G(x)|) / G(x) + atan2(G(x), |∇G(x)|); }
    pos += 0.01 * f;
    age += 1;
  }
}
initially { pt(i) | i in 0..48 };
"""


@needs_cc
@pytest.mark.parametrize("bad", quick_first([False, True], {True}))  # two C builds each
def test_strand_c_without_errno_gives_the_same_bits(monkeypatch, bad):
    """``NO_ERRNO`` (no errno from libm) changes no value: roots of negatives, 0/0, x/0 and
    ⊥ or ±∞ samples give the bits of the build without it, and the interpreter's."""
    from tensorlang.lang.diderot import parse_program, strands
    from tensorlang.lang.diderot import typecheck as check
    from tensorlang.targets.c import strands as c_strands
    values = {"img": _image(np.random.default_rng(5), bad)}
    runs = []
    for flags in (c_strands.NO_ERRNO, ()):
        monkeypatch.setattr(c_strands, "NO_ERRNO", flags)
        monkeypatch.setattr(c_strands, "_RUNNERS", {})  # built again with these flags
        runs.append(strands(check(parse_program(NO_ERRNO_PROGRAM))).run(values, backend="c"))
    ref = strands(check(parse_program(NO_ERRNO_PROGRAM))).run(values, backend="interp")
    for key in ("pos", "o"):
        a, b, c = (np.asarray(r.outputs[key]) for r in (*runs, ref))
        assert np.array_equal(a, b, equal_nan=True) and np.isfinite(a).any() and np.isfinite(a).all() == (key == "pos")
        assert np.allclose(a, c, rtol=1e-12, atol=1e-12, equal_nan=True)


def _sizes_program(img_decl: str, expr: str, ty: str = "int", extra: str = ""):
    from tensorlang.lang.diderot import parse_program, strands
    from tensorlang.lang.diderot import typecheck as check
    src = (f"#version 2.0\n{img_decl}\n{extra}\nstrand s (int i) {{\n  output {ty} o = 0;\n"
           f"  update {{ o = {expr}; stabilize; }}\n}}\ninitially [ s(i) | i in 0..3 ];\n")
    return strands(check(parse_program(src)))


SIZES = {  # image sizes along x, y (numpy axes in index order)
    "the sizes of an image": ("input image(2)[] img;", "size(img)[0] * 100 + size(img)[1] + i", "int"),
    "through a border control": ("input image(2)[] img;\nimage(2)[] c = clamp(img);",
                                 "size(c)[1] - size(c)[0]", "int"),
    "as a real": ("input image(2)[] img;", "real(size(img)[0]) / real(size(img)[1])", "real"),
    "in a global computed at start-up": ("input image(2)[] img;\nint[2] n = size(img);", "n[0] * 100 + n[1] + i", "int"),
}


@pytest.mark.parametrize("name", list(SIZES))
def test_size_of_an_image_is_its_samples_per_axis_in_the_interpreter_and_c(name):
    decl, expr, ty = SIZES[name]
    p = _sizes_program(decl, expr, ty)
    img = np.arange(7 * 5, dtype=np.float64).reshape(7, 5)  # 7 samples on axis 0, 5 on axis 1
    a = np.asarray(p.run({"img": img}, backend="interp").outputs["o"])
    want = {"the sizes of an image": np.array([705, 706, 707, 708]), "through a border control": np.full(4, -2),
            "as a real": np.full(4, 7 / 5), "in a global computed at start-up": np.array([705, 706, 707, 708])}[name]
    assert np.allclose(a, want)
    assert_lowers_to_c_program(p)


@needs_cc
@pytest.mark.parametrize("name", list(SIZES))
def test_size_of_an_image_in_c_is_the_interpreters(name):
    decl, expr, ty = SIZES[name]
    p = _sizes_program(decl, expr, ty)
    img = np.arange(6 * 9, dtype=np.float64).reshape(6, 9)
    a = np.asarray(p.run({"img": img}, backend="interp").outputs["o"])
    c = np.asarray(p.run({"img": img}, backend="c").outputs["o"])
    assert np.array_equal(a, c)


def assert_lowers_to_c_program(p):
    from tensorlang.lang.diderot.lower import strand_plan
    ir, why = strand_plan(p.checked)
    assert why is None and ir is not None, why


def test_size_is_an_int_sequence_of_the_image_dimension():
    from test_check import error_of
    err = error_of("#version 2.0\ninput image(3)[] v;\nint[2] n = size(v);\n"
                   "strand s (int i) { output real o = 0; update { stabilize; } }\ninitially [ s(i) | i in 0..1 ];\n")
    assert (err.code, err.line) == ("assign-shape", 3)
    err = error_of("#version 2.0\ninput real v;\nint[1] n = size(v);\n"
                   "strand s (int i) { output real o = 0; update { stabilize; } }\ninitially [ s(i) | i in 0..1 ];\n")
    assert (err.code, err.line) == ("shape", 3)


@pytest.mark.parametrize("use, name", [("image(2)[] b = border(img, 0.0);", "border"),
                                       ("real m = variance { s.o | s in s.all };", "variance")])
def test_border_and_variance_are_refused_with_the_reason(use, name):
    from test_check import error_of
    src = ("#version 2.0\ninput image(2)[] img;\n"
           "strand s (int i) { output real o = 0; update { stabilize; } }\n"
           f"global {{ {use} }}\ninitially [ s(i) | i in 0..1 ];\n")
    err = error_of(src)
    assert err.code == "undeclared" and err.line == 4 and name in err.message
    assert "compiler" in err.message


def test_size_of_an_nrrd_image_follows_its_sizes_field(tmp_path):
    """Diderot's executable (diderotc --double) prints 705 for this file: NRRD's first
    (fastest) axis is size(img)[0]."""
    path = tmp_path / "img.nrrd"
    data = np.arange(35, dtype=np.float32).reshape(5, 7)  # file order: 7 samples fastest, 5 slowest
    path.write_bytes(b"NRRD0004\ntype: float\ndimension: 2\nsizes: 7 5\nencoding: raw\nendian: little\n\n"
                     + data.tobytes())
    p = _sizes_program("input image(2)[] img;", SIZES["the sizes of an image"][1])
    assert list(np.asarray(p.run({"img": str(path)}, backend="interp").outputs["o"])) == [705, 706, 707, 708]
