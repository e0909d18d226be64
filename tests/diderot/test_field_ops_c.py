"""Field expressions lowered to C (docs/diderot-compiled.md): ``trace det transpose inv``
of matrix fields (``det(∇⊗∇F)`` as a field), quotients ``F/G`` to second order and
``c/F``, products to second order, and stacked fields ``[F, G]``: each compiles (no
fallback) and agrees with the interpreter, with ⊥ and ±∞ among the image samples."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.sampling.image import image as make_image
from tensorlang.targets.c import build as c_build
from agreement import same  # tests/diderot is on the path

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

HEAD = """#version 2.0
input image(2)[] img;
field#4(2)[] F = c4hexic ⊛ img;
field#4(2)[] G = bspln5 ⊛ img + 3.0;
%s
strand s (int i, int j) {
  output %s o = %s;
  update { vec2 x = [0.33*real(i) + 0.9, 0.31*real(j) + 1.1]; o = %s; stabilize; }
}
create_array { s(i, j) | i in 0..15, j in 0..15 }
"""

CASES = {
    "det of the Hessian": ("", "real", "0", "det(∇⊗∇F(x))"),
    "det field": ("field#2(2)[] D = det(∇⊗∇F);", "real", "0", "D(x)"),
    "gradient of det": ("field#2(2)[] D = det(∇⊗∇F);", "vec2", "[0,0]", "∇D(x)"),
    "trace field and its Hessian": ("field#2(2)[] T = trace(∇⊗∇F);", "tensor[2,2]", "[[0,0],[0,0]]",
                                    "∇⊗∇T(x) + [[T(x), 0], [0, 1]]"),
    "transpose of a gradient field": ("field#2(2)[2,2] M = transpose(∇⊗∇F) + 2.0*∇⊗∇G;", "tensor[2,2,2]",
                                      "[[[0,0],[0,0]],[[0,0],[0,0]]]", "∇⊗M(x)"),
    "inv field and its gradient": ("field#2(2)[2,2] I = inv(∇⊗∇F);", "real", "0", "|I(x)| + |∇⊗I(x)|"),
    "quotient": ("field#4(2)[] Q = F/G;", "real", "0", "Q(x)"),
    "gradient of a quotient": ("field#4(2)[] Q = F/G;", "vec2", "[0,0]", "∇Q(x)"),
    "Hessian of a quotient": ("field#4(2)[] Q = F/G;", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇Q(x)"),
    "det of the Hessian of a quotient": ("field#4(2)[] Q = F/G;", "real", "0", "det(∇⊗∇Q(x))"),
    "constant over a field": ("field#4(2)[] R = 2.0/G;", "vec3", "[0,0,0]", "[R(x), ∇R(x)[0], ∇⊗∇R(x)[0,1]]"),
    "Hessian of a product": ("field#4(2)[] P = F*G;", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇P(x)"),
    "Hessian of a vector over a scalar": ("field#3(2)[2] V = ∇F/G;", "tensor[2,2,2]",
                                          "[[[0,0],[0,0]],[[0,0],[0,0]]]", "∇⊗∇⊗V(x)"),
    "stacked fields": ("field#4(2)[2] T = [F, G];", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗T(x) + [T(x), T(x)]"),
    "a formula field": ("vec2 a = [1.5, -0.5];\nfield#3(2)[] P (p) = (p•p)*(p•a) + 0.75*|p|;", "tensor[2,2]",
                        "[[0,0],[0,0]]", "∇⊗∇P(x) + [∇P(x), [P(x), 1]]"),
    "a vector formula": ("vec2 a = [1.5, -0.5];\nfield#2(2)[2] Q (p) = 3.0*p + (p•p)*a;", "real", "0",
                         "∇•Q(x) + Q(x)•[1, 2] + det(∇⊗Q(x))"),
    "a formula times an image field": ("field#2(2)[] W (p) = 0.5*p•p - (p•[1.0, 0.0])^3;\nfield#2(2)[] M = W*F + W/G;",
                                       "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇M(x) + [∇M(x), ∇W(x)]"),
    "|p| twice": ("field#3(2)[] P (p) = |p| + |p - [1.0, 2.0]|;", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇P(x)"),
    "a cross product formula": ("vec3 s = [0.5, -1.0, 2.0];\nfield#2(3)[3] R (q) = q × s + q*(q•q);",
                                "tensor[3,3]", "[[0,0,0],[0,0,0],[0,0,0]]", "∇⊗R([x[0], x[1], 0.3])"),
    "gradients dotted": ("field#2(2)[] N = ∇F•∇G + ∇F⊗∇G:(∇G⊗∇F);", "vec2", "[0,0]", "∇N(x)"),
    "inline quotient and stack": ("field#4(2)[2] T = [F, G];", "vec3", "[0,0,0]",
                                  "[(∇(F/G)(x))[0], det(∇⊗∇(F*G)(x)), 1.0 if inside(x, T) else -1.0]"),
    "stack of gradients": ("field#3(2)[2,2] T = [∇F, -∇G];", "real", "0", "det(T(x)) + |∇⊗T(x)|"),
}


def _image(rng, bad: bool):
    n = 24
    ax = np.linspace(-1, 1, n)
    xx, yy = np.meshgrid(ax, ax, indexing="ij")
    data = 1.5 + np.cos(2.1 * xx + 0.3) * np.sin(1.7 * yy) + 0.05 * rng.standard_normal((n, n))
    if bad:
        data[5, 7], data[16, 4], data[11, 18] = np.nan, np.inf, -np.inf
    return make_image(data, 2, world=np.diag([0.3, 0.3, 1.0]))


def _program(decl, ty, init, expr):
    return strands(check(parse_program(HEAD % (decl, ty, init, expr))))


def assert_lowers_to_c(case):
    """The program of ``case`` (HEAD's blanks) compiles to C, no interpreter fallback."""
    ir, why = strand_plan(_program(*case).checked)
    assert why is None and ir is not None, why


def assert_c_agrees(case, seed: int, bad: bool, probes_bad_samples: bool):
    """C's outputs are the interpreter's, on an image with (``bad``) or without ⊥ and ±∞
    samples; most probes land inside on finite samples, and where ``probes_bad_samples``
    the bad ones reach some strands."""
    p = _program(*case)
    values = {"img": _image(np.random.default_rng(seed), bad)}
    a = p.run(values, backend="interp")
    c = p.run(values, backend="c")
    same(a, c)
    o = np.asarray(a.outputs["o"], dtype=np.float64)
    assert np.isfinite(o).sum() > o.size // 4
    if bad and probes_bad_samples:
        assert not np.isfinite(o).all()


@pytest.mark.parametrize("name", list(CASES))
def test_the_field_expression_lowers_to_c(name):
    assert_lowers_to_c(CASES[name])


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("bad", [False, True])
def test_the_field_expression_agrees_with_the_interpreter(name, bad):
    decl, _, _, expr = CASES[name]
    assert_c_agrees(CASES[name], len(name), bad, re.search(r"\b[FG]\b", decl + expr) is not None)  # image probed


def test_derivatives_past_what_the_interpreter_takes_stay_in_the_interpreter():
    _, why = strand_plan(_program("field#4(2)[] S = sin(F);", "real", "0", "|∇⊗∇⊗∇⊗∇S(x)|").checked)
    assert why is not None and "sin(F) past the third" in why


@needs_cc
@pytest.mark.slow
def test_programs_that_ran_in_the_interpreter_now_run_in_c_with_diderots_numbers(tmp_path):
    """products.diderot (second derivatives of products), vectorfield.diderot (a vector
    field's ∇⊗, ∇•, ∇× and •) and stack.diderot ([F, G]), whose expected numbers
    diderotc's executables wrote, now run in C and agree with the interpreter."""
    from agreement import printed_close
    from test_field_formulas import STACK, _ramp
    from test_more_language import PRODUCTS, _sq_image, _vec_image, numbers

    more = Path(__file__).parent / "more"
    pts = tmp_path / "pts.nrrd"
    pts.write_bytes(b"NRRD0004\ntype: double\ndimension: 2\nsizes: 2 4\nkinds: 2-vector list\nendian: little\n"
                    b"encoding: raw\n\n" + np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.5], [0.0, 0.0]]).tobytes())
    _ramp(tmp_path / "ramp.nrrd")
    runs = {"products.diderot": {"img": _sq_image(tmp_path / "sq.nrrd")},
            "vectorfield.diderot": {"img": _vec_image(tmp_path / "vec2.nrrd"), "pts": str(pts)},
            "stack.diderot": {}}
    got = {}
    for name, values in runs.items():
        p = strands(check(parse_program((more / name).read_text())), str(tmp_path))
        assert strand_plan(p.checked)[1] is None, name
        a, c = p.run(values, backend="interp"), p.run(values, backend="c")
        same(a, c)
        printed_close(a.printed, c.printed)
        assert p.executor_note is None
        got[name] = c
    assert np.allclose(numbers(got["products.diderot"].printed), numbers(PRODUCTS), rtol=1e-10, atol=1e-10)
    for name, want in STACK.items():
        assert np.allclose(got["stack.diderot"].outputs[name], want, rtol=1e-10, atol=1e-12), name


HEAD3 = """#version 2.0
input image(3)[] vol;
input image(1)[] ramp;
field#4(3)[] F = c4hexic ⊛ vol;
field#2(1)[] R = bspln3 ⊛ ramp;
field#2(3)[3,3] H = ∇⊗∇F;
field#2(3)[] D = det(H) + trace(H)/(F + 4.0);
field#1(3)[3,3] I = inv(H);
field#2(1)[] Q = R/(R + 2.0) + 1.0/R;
strand s (int i) {
  output vec3 g = [0,0,0];
  output tensor[3,3,3] ig = [[[0,0,0],[0,0,0],[0,0,0]],[[0,0,0],[0,0,0],[0,0,0]],[[0,0,0],[0,0,0],[0,0,0]]];
  output vec3 q = [0,0,0];
  update {
    vec3 x = [1.4 + 0.08*real(i), 1.5 + 0.06*real(i), 2.9 - 0.07*real(i)];
    real t = 1.2 + 0.13*real(i);
    g = ∇D(x); ig = ∇⊗I(x); q = [Q(t), ∇Q(t), ∇∇Q(t)];
    stabilize;
  }
}
create_array { s(i) | i in 0..19 }
"""


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("bad", [False, True])
def test_three_by_three_matrix_fields_and_one_d_quotients_agree(bad):
    rng = np.random.default_rng(7)
    n = 12
    ax = np.linspace(-1, 1, n)
    xx, yy, zz = np.meshgrid(ax, ax, ax, indexing="ij")
    data = 1.0 + np.cos(1.9 * xx) * np.sin(1.3 * yy + 0.2) + 0.5 * zz ** 2 + 0.02 * rng.standard_normal((n, n, n))
    ramp = 1.0 + 0.5 * np.sin(np.arange(16) * 0.7)
    if bad:
        data[4, 6, 8], data[7, 7, 7], ramp[5] = np.nan, np.inf, -np.inf
    vol = make_image(data, 3, world=np.diag([0.4, 0.4, 0.4, 1.0]))
    p = strands(check(parse_program(HEAD3)))
    assert strand_plan(p.checked)[1] is None
    values = {"vol": vol, "ramp": make_image(ramp, 1)}
    a, c = p.run(values, backend="interp"), p.run(values, backend="c")
    same(a, c)
    for name in ("g", "ig", "q"):
        o = a.outputs[name]
        assert np.isfinite(o).all() != bad, name  # inside everywhere; the ⊥ and ∞ samples reach some


@pytest.mark.slow
def test_the_interpreter_differentiates_a_scalar_field_times_a_vector_field_by_the_product_rule():
    """∇⊗(F ∇F) = ∇F ⊗ ∇F + F ∇⊗∇F: symmetric, and the same whichever side the scalar is
    (the first derivative once multiplied the scalar's gradient elementwise with the vector)."""
    # (the scalar first is a field#3 of its own: diderotc refuses F * ∇F, a later field rougher than the first)
    p = _program("field#3(2)[] F3 = F;\nfield#3(2)[2] V = F3 * ∇F;\nfield#3(2)[2] W = ∇F * F;", "tensor[2,2]", "[[0,0],[0,0]]",
                 "∇⊗V(x) - ∇⊗W(x) + (∇⊗V(x) - transpose(∇⊗V(x))) + 1e9 * (∇⊗V(x) - (∇F(x) ⊗ ∇F(x) + F(x) * ∇⊗∇F(x)))")
    o = p.run({"img": _image(np.random.default_rng(3), False)}, backend="interp").outputs["o"]
    finite = np.isfinite(o)
    assert finite.sum() > o.size // 4 and np.allclose(o[finite], 0.0, atol=1e-3)


def test_the_lowering_runs_the_interpreters_field_rules_on_symbols():
    """lower.py keeps no derivative rules of its own: fieldval's rules run on ``lower.Sym``
    (an IR expression with Python's arithmetic), folding x*1, 1*x and x/1 (exact) and a sum's
    leading 0 (0+x: x, but for the sign of a zero) and calling the C functions of the
    interpreter's numpy ones."""
    from tensorlang.lang.diderot import fieldval as FV
    from tensorlang.lang.diderot import lower as L
    from tensorlang.strand_ir import ir as S

    assert not [name for name in vars(L.Lowerer) if name.startswith("fval")]
    x = L.Sym(S.Ref("l", "x", "real"), None)  # type: ignore[arg-type]
    assert x * 1.0 is x and 1.0 * x is x and x / 1.0 is x and 0 + x is x
    assert (x * 0.0).e == S.Bin("*", x.e, S.Const(0.0, "real"), "real")  # 0*∞ is ⊥: kept
    assert FV.LIFTED["sin"][1](x).e == S.Call("cos", (x.e,), "real")
    assert FV.LIFTED["sqrt"][0](x).e == S.Call("tl_sqrt", (x.e,), "real")
    grad = FV.Lifted("norm", FV.Identity(2), None, 2).value(np.array([x, x]), 1)  # ∇|p| = p/|p|
    assert grad.shape == (2,) and all(isinstance(c, L.Sym) for c in grad)
