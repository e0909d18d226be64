"""Functions of Diderot's standard basis that programs beyond the examples call:
``inv`` of a real (1/x) and of a scalar field (1/F, differentiable as F is).  Each
typechecks, lowers to C and agrees with the interpreter (with ⊥ and ±∞ among the image
samples), and the interpreter's values are the reciprocals."""

from __future__ import annotations

import numpy as np
import pytest

from test_field_ops_c import _image, _program, assert_c_agrees, assert_lowers_to_c, needs_cc

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
@pytest.mark.parametrize("name", list(CASES))
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
@pytest.mark.parametrize("name", list(SLICES))
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
    assert seen == [((),), (("-O1",),)]
    a, b = np.asarray(o3.outputs["o"]), np.asarray(o1.outputs["o"])
    assert np.array_equal(a, b, equal_nan=True) and np.isfinite(a).any()
