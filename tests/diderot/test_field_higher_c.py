"""Field expressions that ran only in the interpreter and now compile to C (issue 42):
third derivatives of products (Leibniz's rule, any order), quotients, ``|F|``,
``normalize(F)`` and ``sin cos tan atan asin acos exp sqrt`` and powers of fields
(Faà di Bruno's formula), a scalar field times a vector field, a tensor over a scalar
field, ``F ∘ G``, formula fields that call functions or test values (probes) and
constant formula fields.  Each compiles (no fallback) and agrees with the interpreter,
with ⊥ and ±∞ among the image samples; the programs of ``more/`` that use them give
diderotc's numbers in C."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from test_compiled import same  # tests/diderot is on the path
from test_field_ops_c import HEAD, _image, needs_cc

T3 = "tensor[2,2,2]", "[[[0,0],[0,0]],[[0,0],[0,0]]]"

CASES = {
    "third derivative of a product": ("field#4(2)[] P = F*G;", *T3, "∇⊗∇⊗∇P(x)"),
    "third derivative of a quotient": ("field#4(2)[] Q = F/G;", *T3, "∇⊗∇⊗∇Q(x)"),
    "third derivative of sin": ("field#4(2)[] Q = sin(F) + cos(G) + exp(0.2*F) + sqrt(G);", *T3, "∇⊗∇⊗∇Q(x)"),
    "tan atan asin acos to the third": ("field#4(2)[] Q = tan(0.2*F) + atan(F) + asin(0.1*G) + acos(0.1*F);",
                                        *T3, "∇⊗∇⊗∇Q(x) + [[[Q(x), 0], ∇Q(x)], ∇⊗∇Q(x)]"),
    "third derivative of |F|, F scalar": ("field#4(2)[] N = |F - 1.5|;", *T3, "∇⊗∇⊗∇N(x)"),
    "third derivative of |V|": ("field#4(2)[2] V = [F, G];\nfield#4(2)[] N = |V|;", *T3, "∇⊗∇⊗∇N(x)"),
    "third derivative of c/F": ("field#4(2)[] R = 2.0/G;", *T3, "∇⊗∇⊗∇R(x)"),
    "third derivative of powers": ("field#4(2)[] R = G^3 + F^2 - G^(-2);", *T3, "∇⊗∇⊗∇R(x)"),
    "third derivative of a dot product": ("field#4(2)[2] V = [F, G];\nfield#4(2)[] N = V•V;", *T3, "∇⊗∇⊗∇N(x)"),
    "third derivative of an outer product": ("field#4(2)[2] V = [F, G];\nfield#4(2)[2,2] N = V⊗V;", "real", "0",
                                             "|∇⊗∇⊗∇⊗N(x)|"),
    "Hessian of normalize": ("field#4(2)[2] V = [F, G];\nfield#4(2)[2] N = normalize(V);", *T3, "∇⊗∇⊗N(x)"),
    "third derivative of normalize": ("field#4(2)[2] V = [F, G];\nfield#4(2)[2] N = normalize(V);", "real", "0",
                                      "|∇⊗∇⊗∇⊗N(x)|"),
    "gradient of a scalar times a vector field": ("field#3(2)[2] V = F * ∇G;", "tensor[2,2]", "[[0,0],[0,0]]",
                                                  "∇⊗V(x)"),
    "third derivative of a scalar times a vector": ("field#4(2)[2] V = G * [F, 1.0 + F*F];", "real", "0",
                                                    "|∇⊗∇⊗∇⊗V(x)|"),
    "a vector over a field": ("field#4(2)[2] R = [1.0, 2.0]/G;", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗R(x) + [R(x), R(x)]"),
    "constant formulas": ("field#2(2)[] W (p) = 5.0;\nfield#2(2)[2] Z (p) = [1.0, 2.0];", "vec4", "[0,0,0,0]",
                          "[W(x), ∇W(x)[1], Z(x)[1] + ∇⊗Z(x)[1,0], (W*F)(x)]"),
    "a formula that calls a function": ("function real bump(real t) = t*t - 3.0*t;\n"
                                        "field#2(2)[] U (p) = bump(p[0]) + F(p);", "real", "0", "U(x)"),
    "a formula that tests": ("field#2(2)[] U (p) = 1.0 if p[0] > 2.0 else F(p);", "vec2", "[0,0]",
                             "[U(x), 1.0 if inside(x, U) else 0.0]"),
    "a formula with a block function": ("function vec2 f(vec2 p) { if (p[0] > 2.0) { return p; } return [F(p), G(p)]; }\n"
                                        "field#2(2)[2] U (p) = f(p);", "vec2", "[0,0]", "U(x) + 2.0*U(x)"),
    "a composition with a formula": ("field#2(2)[2] V (p) = [0.5*p[1] + 1.0, 1.6*p[0] - 1.2];\nfield#2(2)[] C = F ∘ V;",
                                     "vec2", "[0,0]", "[C(x), 1.0 if inside(x, C) else 0.0]"),
    "a composition of image fields": ("field#4(2)[2] V = [0.3*F + 1.0, G - 1.0];\nfield#2(2)[] C = F ∘ V;", "vec2",
                                      "[0,0]", "[(C + F)(x), 1.0 if inside(x, C) else 0.0]"),
}


def _program(decl, ty, init, expr):
    return strands(check(parse_program(HEAD % (decl, ty, init, expr))))


@pytest.mark.parametrize("name", list(CASES))
def test_the_field_expression_lowers_to_c(name):
    ir, why = strand_plan(_program(*CASES[name]).checked)
    assert why is None and ir is not None, why


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("bad", [False, True])
def test_the_field_expression_agrees_with_the_interpreter(name, bad):
    p = _program(*CASES[name])
    values = {"img": _image(np.random.default_rng(len(name)), bad)}
    a = p.run(values, backend="interp")
    c = p.run(values, backend="c")
    same(a, c)
    o = np.asarray(a.outputs["o"], dtype=np.float64)
    assert np.isfinite(o).sum() > o.size // 4
    if bad and "inside" not in CASES[name][3] and "5.0" not in CASES[name][0]:
        assert not np.isfinite(o).all()  # the ⊥ and ∞ samples reach some strands


@needs_cc
@pytest.mark.slow
def test_a_composition_is_inside_where_both_fields_are():
    """inside(x, F ∘ V) is V's test at x and F's at V(x): both outcomes occur, and C's
    agree with the interpreter's (the probe outside is ⊥ in both)."""
    p = _program(*CASES["a composition with a formula"])
    values = {"img": _image(np.random.default_rng(5), False)}
    a, c = p.run(values, backend="interp"), p.run(values, backend="c")
    same(a, c)
    o = np.asarray(c.outputs["o"])
    assert set(np.unique(o[..., 1])) == {0.0, 1.0}
    assert np.isnan(o[..., 0][o[..., 1] == 0]).all() and np.isfinite(o[..., 0][o[..., 1] == 1]).all()


@pytest.mark.parametrize("decl, expr, why", [
    ("field#2(2)[2] V (p) = [p[1], p[0]];\nfield#2(2)[] C = F ∘ V;", "∇C(x)[0]", "a composition of fields"),
    ("function real bump(real t) = t*t;\nfield#2(2)[] U (p) = bump(p[0]);", "∇U(x)[0]", "U, whose formula calls"),
    ("field#2(2)[] D = det(∇⊗∇F);", "|∇⊗∇D(x)|", "det(F) past the first"),
])
def test_derivatives_the_interpreter_does_not_take_stay_in_the_interpreter(decl, expr, why):
    _, reason = strand_plan(_program(decl, "real", "0", expr).checked)
    assert reason is not None and why in reason, reason


ONE_D = """#version 2.0
input image(1)[] ramp;
field#4(1)[] R = bspln5 ⊛ ramp;
field#4(1)[] Q = R*R/(R + 3.0) + tan(0.1*R) + |R - 2.0|;
strand s (int i) {
  output vec4 q = [0,0,0,0];
  update { real t = 2.6 + 0.37*real(i); q = [Q(t), ∇Q(t), ∇∇Q(t), ∇∇∇Q(t)]; stabilize; }
}
create_array { s(i) | i in 0..19 }
"""


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("bad", [False, True])
def test_third_derivatives_of_one_d_fields_agree(bad):
    from tensorlang.sampling.image import image as make_image

    ramp = 1.0 + 0.8 * np.sin(np.arange(16) * 0.6)
    if bad:
        ramp[7], ramp[9] = np.nan, np.inf
    p = strands(check(parse_program(ONE_D)))
    assert strand_plan(p.checked)[1] is None
    values = {"ramp": make_image(ramp, 1)}
    a, c = p.run(values, backend="interp"), p.run(values, backend="c")
    same(a, c)
    assert np.isfinite(a.outputs["q"]).all() != bad


@needs_cc
@pytest.mark.slow
def test_programs_of_more_now_run_in_c_with_diderots_numbers(tmp_path):
    """fieldfns.diderot (tan atan asin acos of fields, normalize) and formula.diderot (third
    derivatives of formula fields, a constant formula) ran in the interpreter; in C they
    agree with it and with the numbers diderotc's executables wrote."""
    from test_c_coverage import printed_close
    from test_field_formulas import POINTWISE, PRINTED, WANT
    from test_more_language import FIELDFNS, _sq_image, numbers

    more = Path(__file__).parent / "more"
    got = {}
    for name, values in {"fieldfns.diderot": {"img": _sq_image(tmp_path / "sq.nrrd")}, "formula.diderot": {}}.items():
        p = strands(check(parse_program((more / name).read_text())), str(tmp_path))
        assert strand_plan(p.checked)[1] is None, name
        a, c = p.run(values, backend="interp"), p.run(values, backend="c")
        same(a, c)
        printed_close(a.printed, c.printed)
        assert p.executor_note is None
        got[name] = c
    assert np.allclose(numbers(got["fieldfns.diderot"].printed), numbers(FIELDFNS), rtol=1e-10, atol=1e-11)
    res = got["formula.diderot"]
    for name, want in WANT.items():
        assert np.allclose(np.asarray(res.outputs[name]).reshape(np.shape(want)), want, rtol=1e-12, atol=1e-13), name
    assert np.allclose(numbers(res.printed), numbers(PRINTED), rtol=1e-13, atol=1e-15)
    pw = strands(check(parse_program(POINTWISE)))
    assert strand_plan(pw.checked)[1] is None
    assert pw.run({}, backend="c").outputs["u"].tolist() == [0.5, -1.5, -1.5]
