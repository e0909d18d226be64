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
from agreement import same  # tests/diderot is on the path
from test_field_ops_c import _image, _program, assert_c_agrees, assert_lowers_to_c, needs_cc

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
    "gradient of a scalar times a vector field": ("field#3(2)[2] V = ∇G * F;", "tensor[2,2]", "[[0,0],[0,0]]",
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
    "Hessian of det": ("field#2(2)[] D = det(∇⊗∇F + ∇G⊗∇G);", "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇D(x)"),
    "Hessian of inv": ("field#2(2)[2,2] I = inv(∇⊗∇F);", "real", "0", "|∇⊗∇⊗I(x)|"),
    "Hessian of det and inv of a stack": ("field#4(2)[2,2] M = [[F, G], [G*G, 1.0 + F]];\nfield#4(2)[] D = det(M);\n"
                                          "field#4(2)[2,2] I = inv(M);", "real", "0",
                                          "|∇⊗∇⊗∇D(x)| + |∇⊗∇⊗∇⊗I(x)|"),
    "a composition with a formula": ("field#2(2)[2] V (p) = [0.5*p[1] + 1.0, 1.6*p[0] - 1.2];\nfield#2(2)[] C = F ∘ V;",
                                     "vec2", "[0,0]", "[C(x), 1.0 if inside(x, C) else 0.0]"),
    "the gradient of a composition": ("field#2(2)[2] V (p) = [[0.0, 0.5], [1.6, 0.0]]•p + [1.0, -1.2];\n"
                                      "field#2(2)[] C = F ∘ V;", "vec2", "[0,0]", "∇C(x)"),
    "the Hessian of a composition": ("field#4(2)[2] V = [0.3*F + 1.0, G - 1.0];\nfield#2(2)[] C = F ∘ V;",
                                     "tensor[2,2]", "[[0,0],[0,0]]", "∇⊗∇C(x)"),
    "derivatives of a composition of vector fields": ("field#4(2)[2] V = [0.3*F + 1.0, G - 1.0];\n"
                                                      "field#4(2)[2] W = [F, G*G];\nfield#2(2)[2] C = W ∘ V;",
                                                      *T3, "∇⊗∇⊗C(x) + [∇⊗C(x), [C(x), C(x)]]"),
    "a composition of image fields": ("field#4(2)[2] V = [0.3*F + 1.0, G - 1.0];\nfield#2(2)[] C = F ∘ V;", "vec2",
                                      "[0,0]", "[(C + F)(x), 1.0 if inside(x, C) else 0.0]"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_field_expression_lowers_to_c(name):
    assert_lowers_to_c(CASES[name])


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("bad", [False, True])
def test_the_field_expression_agrees_with_the_interpreter(name, bad):
    decl, _, _, expr = CASES[name]
    assert_c_agrees(CASES[name], len(name), bad, "inside" not in expr and "5.0" not in decl)


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


def test_the_chain_rule_of_a_composition_in_the_interpreter():
    """∇(F ∘ V) = ∇F(V(x)) • M for V(x) = M x + c, and ∇⊗∇(F ∘ G) matches central
    differences of ∇(F ∘ G) (the interpreter, C's oracle)."""
    p = _program("field#2(2)[2] V (p) = [[0.0, 0.5], [1.6, 0.0]]•p + [1.0, -1.2];\nfield#2(2)[] C = F ∘ V;",
                 "vec2", "[0,0]", "∇C(x) - ∇F(V(x))•[[0.0, 0.5], [1.6, 0.0]] + [0.0, 1.0 if inside(x, C) else 0.0]")
    o = p.run({"img": _image(np.random.default_rng(2), False)}, backend="interp").outputs["o"]
    live = np.isfinite(o[..., 0])
    assert live.sum() > 20 and np.allclose(o[live], [0.0, 1.0], atol=1e-12)
    from tensorlang.lang.diderot import fieldval as FV
    from tensorlang.sampling.kernels import KERNELS

    img = _image(np.random.default_rng(2), False)
    f, g = FV.Conv(img, KERNELS["c4hexic"]), FV.Conv(img, KERNELS["bspln5"])
    inner = FV.Stack([FV.Lifted("+", FV.Lifted("*", f, 0.3, 2), 2.0, 2), FV.Lifted("+", g, 1.0, 2)])
    c = FV.Compose(f, inner)
    x, h = np.array([2.3, 3.1]), 1e-5
    fd = np.stack([(c.value(x + h * e, 1) - c.value(x - h * e, 1)) / (2 * h) for e in np.eye(2)], axis=-1)
    assert np.allclose(c.value(x, 2), fd, rtol=1e-6, atol=1e-6)


def test_the_c_targets_ir_walk_visits_a_shared_subexpression_once(monkeypatch):
    """A field's derivatives share subexpressions (the IR is a DAG): ``strand_ir.nodes``
    walks each node once, in the tree walk's order.  Walked as a tree, 20 doublings are
    2^21 visits; the C target asks for 185 walks of "Hessian of det and inv of a stack",
    which took 33 s of its 34 s build."""
    import dataclasses

    from tensorlang.strand_ir import ir as S

    leaf = S.Ref("l", "x", "real")
    e = leaf
    for _ in range(20):
        e = S.Bin("+", e, S.Bin("*", e, S.Const(2.0, "real"), "real"), "real")
    calls = [0]
    fields = dataclasses.fields

    def counted(x):
        calls[0] += 1
        return fields(x)

    monkeypatch.setattr(dataclasses, "fields", counted)
    got = S.nodes((e, e), S.Bin)
    refs = S.nodes(e, S.Ref)
    monkeypatch.setattr(dataclasses, "fields", fields)
    assert calls[0] <= 2 * (3 * 20 + 1) + 2, calls[0]
    assert len(got) == 40 and got[0] is e and refs == [leaf]
    assert len(S.nodes(e, S.Bin, most=4)) == 5


@pytest.mark.parametrize("decl, expr, why", [
    ("function real bump(real t) = t*t;\nfield#2(2)[] U (p) = bump(p[0]);", "∇U(x)[0]", "U, whose formula calls"),
    ("field#4(2)[] S = sin(F) + F;", "|∇⊗∇⊗∇⊗∇S(x)|", "sin(F) past the third"),
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
    from agreement import printed_close
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


#: what the executable ``diderotc --double --exec more/higher.diderot`` printed, reading the
#: float NRRD that :func:`_sq_float` writes
HIGHER = (
    "0 [[[7.4593611709581324,2.362511758393075],[2.362511758393075,4.2827873955971452]],[[2.362511758393075,4.2827873955971452],[4.2827873955971452,-42.556930905672537]]] [[[-0.056289304519491566,-0.016876087856219607],[-0.016876087856219597,0.10108778302771113]],[[-0.0168760878562196,0.10108778302771114],[0.10108778302771114,-0.083830782899287526]]] [[[-0.25871346955478303,-0.084722004163859915],[-0.084722004163859888,0.41878583121393875]],[[-0.084722004163859915,0.41878583121393875],[0.41878583121393875,-0.29550132400190121]]] [[2.8516487275956588,4.3162864539313865],[4.3162864539313865,2.717220612202953]] [[[-5.1542758750049433,-1.2478351591098664],[-1.2478351591098653,8.4582566650537814]],[[0.47926971019676434,-3.8747996865642889],[-3.8747996865642884,-13.47567379989898]]]\n"
    "0 [[[-0.049616281050299312,-0.014007558535229329],[-0.014007558535229338,0.27429413273521663]],[[-0.014007558535229342,0.27429413273521663],[0.27429413273521663,-0.64672987995991493]]] [[[0.00081930096094484694,-3.7654182225303669e-05],[-3.7654182225303669e-05,1.000199744844714]],[[-3.7654182225303669e-05,1.000199744844714],[1.000199744844714,-3.140963143836828]]] [[[91.476223071294783,29.925656074950737],[29.925656074950737,-6.9072394085446209]],[[29.925656074950737,-6.9072394085446209],[-6.9072394085446103,-318.93939916520765]]] [[-0.03864221097571105,-0.044141114795465425],[-0.0772844219514221,-0.08828222959093085]] [[[[7.4585418699971875,2.3625494125752997],[2.3625494125752997,3.282587650752431]],[[2.3625494125753002,3.282587650752431],[3.282587650752431,-39.415967761835702]]],[[[91.218931001316207,30.186750016775985],[30.186750016775985,-5.9643511276900032]],[[30.186750016775985,-5.9643511276900067],[-5.9643511276900032,-326.22426089556444]]]]\n"
    "1 [[[9.7391094121106434,1.6248956565181136],[1.6248956565181136,3.378445519429953]],[[1.6248956565181136,3.3784455194299534],[3.3784455194299534,-32.411730960167738]]] [[[-0.070022786855830466,-0.010308412527587435],[-0.010308412527587442,0.10582944281949147]],[[-0.010308412527587444,0.1058294428194915],[0.10582944281949148,-0.059450584383883634]]] [[[-0.34420490321324443,-0.05999026203459569],[-0.059990262034595704,0.45391982507344314]],[[-0.05999026203459569,0.45391982507344314],[0.45391982507344314,-0.20100987187899735]]] [[1.5356256481267925,4.0580831333650824],[4.0580831333650815,7.5726582861330707]] [[[-3.5905243037300631,-4.6610268051653607],[-4.6610268051653607,1.0073898027266481]],[[2.5905778433362756,0.50929041284295462],[0.50929041284295462,-16.639410500513108]]]\n"
    "1 [[[-0.05994535863489197,-0.0078129256747320498],[-0.0078129256747320498,0.27731657842347307]],[[-0.0078129256747320498,0.27731657842347307],[0.27731657842347307,-0.48884707716986087]]] [[[-0.0019033439458225859,2.9740020387114194e-05],[2.9740020387114194e-05,0.99920246105701138]],[[2.9740020387114194e-05,0.99920246105701138],[0.99920246105701138,-2.3404740963974824]]] [[[123.8972022401404,22.006896694392296],[22.006896694392296,-19.807883969134444]],[[22.006896694392296,-19.807883969134444],[-19.807883969134444,-249.80255854635683]]] [[-0.048025436157548049,-0.030993422580393806],[-0.096050872315096097,-0.061986845160787611]] [[[[9.741012756056465,1.6248659164977264],[1.6248659164977264,2.3792430583729418]],[[1.6248659164977264,2.3792430583729418],[2.3792430583729418,-30.071256863770255]]],[[[123.55209606572461,22.221213775236013],[22.221213775236016,-19.22808938202494]],[[22.221213775236016,-19.22808938202494],[-19.228089382024937,-254.49506915210327]]]]\n"
    "2 [[[12.08491626682158,0.98152351922169456],[0.98152351922169434,2.4872887277462339]],[[0.98152351922169456,2.4872887277462339],[2.4872887277462339,-22.083169369078192]]] [[[-0.081004900982006786,-0.0052136394580701816],[-0.0052136394580701859,0.10982083761812557]],[[-0.0052136394580701842,0.10982083761812557],[0.10982083761812558,-0.045263710837766757]]] [[[-0.43238966601269652,-0.037248833168037232],[-0.037248833168037246,0.48839979854742144]],[[-0.037248833168037239,0.48839979854742144],[0.48839979854742144,-0.13075084227336686]]] [[0.52749299677862616,2.5715966076551466],[2.5715966076551466,10.001597621642988]] [[[-1.270056526036542,-3.7371548162968247],[-3.7371548162968242,-5.7203892796388809]],[[2.1607793072823149,4.3509476731178065],[4.3509476731178065,-11.030939356252309]]]\n"
    "2 [[[-0.065773089585444269,-0.0031228139107618499],[-0.0031228139107618499,0.2797647765369905]],[[-0.0031228139107618456,0.2797647765369905],[0.2797647765369905,-0.3344926271568518]]] [[[0.0015461230457807353,0.00039385868063452571],[0.00039385868063452571,0.99986791896281013]],[[0.00039385868063452571,0.99986791896281013],[0.99986791896281013,-1.6034863420628653]]] [[[159.64198718802379,14.414346305783894],[14.414346305783894,-33.912130518116797]],[[14.414346305783893,-33.912130518116783],[-33.912130518116783,-172.60411627901132]]] [[-0.056332207869362411,-0.019199594420441855],[-0.11266441573872482,-0.038399188840883711]] [[[[12.083370143775797,0.98112966054105999],[0.98112966054105999,1.4874208087834238]],[[0.98112966054105999,1.4874208087834238],[1.4874208087834238,-20.479683027015327]]],[[[159.38752910781125,14.579248832615809],[14.579248832615809,-33.18625591499292]],[[14.579248832615809,-33.18625591499292],[-33.18625591499292,-176.56087963461289]]]]\n"
)


def _sq_float(path: Path) -> str:
    """test_more_language's test image, its samples stored as floats (Diderot's executable
    reads an image input of unknown type as float)."""
    from test_more_language import _sq_image

    _sq_image(path)
    head, data = path.read_bytes().split(b"\n\n", 1)
    path.write_bytes(head.replace(b"type: double", b"type: float") + b"\n\n"
                     + np.frombuffer(data, "<f8").astype("<f4").tobytes())
    return str(path)


def _gives_diderots_numbers(name: str, expected: str, tmp_path, atol: float):
    """The program ``more/NAME`` compiles to C, prints what the interpreter prints, and
    its numbers are ``expected`` (diderotc's executable's, on the same float image)."""
    from agreement import printed_close
    from test_more_language import numbers

    p = strands(check(parse_program((Path(__file__).parent / "more" / name).read_text())))
    assert strand_plan(p.checked)[1] is None
    values = {"img": _sq_float(tmp_path / "sqf.nrrd")}
    a, c = p.run(values, backend="interp"), p.run(values, backend="c")
    printed_close(a.printed, c.printed)
    assert np.allclose(numbers(c.printed), numbers(expected), rtol=1e-9, atol=atol)


@needs_cc
@pytest.mark.slow
def test_higher_derivatives_give_diderots_numbers(tmp_path):
    """Third derivatives of products, quotients, lifted functions, |F| and powers, the
    Hessian of normalize, a vector over a field: C, the interpreter and diderotc's
    executable agree (within its 12-digit kernel coefficients: 3e-10 of values ~300)."""
    _gives_diderots_numbers("higher.diderot", HIGHER, tmp_path, atol=2e-9)


#: what ``diderotc --double --exec more/matrixderivs.diderot`` printed (the same float image)
MATRIXDERIVS = (
    "0 [[-0.024119124787055857,0.07933807545835718],[0.07933807545835718,-52.994474223136862]] [[[[-0.0013479527010006526,-0.0051416233910834093],[-0.0051416233910833962,-0.0055413158717975818]],[[0.012987453193061287,0.007824270357408257],[0.0078242703574082674,-0.33764053743245359]]],[[[0.012987453193061287,0.007824270357408257],[0.0078242703574082674,-0.33764053743245359]],[[-0.1442405424444127,0.47134406354906344],[0.47134406354906344,0.73326050362033102]]]]\n"
    "1 [[-0.047645271351355246,-0.013752582835770192],[-0.013752582835770192,286.15799196027723]] [[[[-0.0011184636186629474,-0.0052218254944275764],[-0.0052218254944275816,-0.1107156159345071]],[[0.01282598642602641,0.010656966589855751],[0.010656966589855755,0.90018656893230198]]],[[[0.01282598642602641,0.010656966589855751],[0.010656966589855755,0.90018656893230198]],[[-0.13191503458956755,0.33662509507637717],[0.33662509507637722,-12.656686387972115]]]]\n"
    "2 [[0.010470502588744471,0.035987448948295961],[0.035987448948295961,-56.24765455436485]] [[[[-0.0012426458784603111,-0.005167583547453853],[-0.0051675835474538339,-0.0020756950223224111]],[[0.012407076460672574,0.017274788060977219],[0.017274788060977202,-0.33958799240169152]]],[[[0.012407076460672574,0.017274788060977219],[0.017274788060977202,-0.33958799240169152]],[[-0.13620281716116317,0.24438413803125059],[0.24438413803125059,1.8981552513957969]]]]\n"
)


@needs_cc
@pytest.mark.slow
def test_second_derivatives_of_det_and_inv_give_diderots_numbers(tmp_path):
    """∇⊗∇det(H) and ∇⊗∇⊗inv(H), H a Hessian field plus a constant: the interpreter (which
    differentiated det and inv once before), C and diderotc's executable agree."""
    _gives_diderots_numbers("matrixderivs.diderot", MATRIXDERIVS, tmp_path, atol=1e-8)


HEAD3 = """#version 2.0
input image(3)[] vol;
field#4(3)[] F = c4hexic ⊛ vol;
field#4(3)[] G = bspln5 ⊛ vol;
field#2(3)[3,3] H = ∇⊗∇F + [[3.0, 0.0, 0.5], [0.0, 2.0, 0.0], [0.5, 0.0, 4.0]];
field#2(3)[] D = det(H);
field#2(3)[3,3] I = inv(H);
field#4(3)[] P = F*G + sin(F)/(G + 4.0);
field#3(3)[3] V = ∇F * G;  // (G * ∇F: diderotc refuses a later field less smooth than the first)
strand s (int i) {
  output tensor[3,3] dd = [[0,0,0],[0,0,0],[0,0,0]];
  output real ii = 0;
  output tensor[3,3,3] pp = [[[0,0,0],[0,0,0],[0,0,0]],[[0,0,0],[0,0,0],[0,0,0]],[[0,0,0],[0,0,0],[0,0,0]]];
  output real vv = 0;
  update {
    vec3 x = [1.4 + 0.08*real(i), 1.5 + 0.06*real(i), 2.9 - 0.07*real(i)];
    dd = ∇⊗∇D(x); ii = |∇⊗∇⊗I(x)|; pp = ∇⊗∇⊗∇P(x); vv = |∇⊗∇⊗V(x)|;
    stabilize;
  }
}
create_array { s(i) | i in 0..11 }
"""


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("bad", [False, True])
def test_three_d_higher_derivatives_agree(bad):
    """3×3 det and inv to the second derivative, a product and a quotient to the third,
    a scalar times a vector field to the second, over a volume."""
    from tensorlang.sampling.image import image as make_image

    rng = np.random.default_rng(11)
    n = 12
    ax = np.linspace(-1, 1, n)
    xx, yy, zz = np.meshgrid(ax, ax, ax, indexing="ij")
    data = 1.0 + np.cos(1.9 * xx) * np.sin(1.3 * yy + 0.2) + 0.5 * zz ** 2 + 0.02 * rng.standard_normal((n, n, n))
    if bad:
        data[4, 6, 8], data[7, 7, 7] = np.nan, np.inf
    p = strands(check(parse_program(HEAD3)))
    assert strand_plan(p.checked)[1] is None
    values = {"vol": make_image(data, 3, world=np.diag([0.4, 0.4, 0.4, 1.0]))}
    a, c = p.run(values, backend="interp"), p.run(values, backend="c")
    same(a, c)
    for name in ("dd", "ii", "pp", "vv"):
        assert np.isfinite(a.outputs[name]).all() != bad, name


RANDOM_HEAD = """#version 2.0
input image(2)[] img;
field#4(2)[] F = c4hexic ⊛ img;
field#4(2)[] G = bspln5 ⊛ img + 3.0;
field#4(2)[] R = %s;
strand s (int i, int j) {
  output %s o = %s;
  update { vec2 x = [0.8*real(i) + 0.9, 0.75*real(j) + 1.1]; o = %s; stabilize; }
}
create_array { s(i, j) | i in 0..6, j in 0..6 }
"""


def _random_field(rng, depth: int) -> str:
    """A random scalar field expression over F and G, with every operation the C
    executor differentiates to the third order."""
    if depth == 0 or rng.random() < 0.2:
        return str(rng.choice(["F", "G", "(0.5*F)", "(G - 2.0)"]))
    a, b = _random_field(rng, depth - 1), _random_field(rng, depth - 1)
    form = rng.choice(["({a} + {b})", "({a} * {b})", "({a} / (G + 1.5))", "sin({a})", "exp(0.2*{a})",
                       "atan({a})", "(|{a}|)", "({a})^2", "([{a}, {b}]•[{b}, G])", "(|[{a}, {b}]|)",
                       "(3.0/({a}*{a} + 1.0))", "sqrt({a}*{a} + 1.0)", "det([[{a}, G], [{b}, {a}]])"])
    return form.format(a=a, b=b)


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_random_field_expressions_to_the_third_derivative_agree(seed):
    """Generated field expressions (sums, products, quotients, functions, norms, dots,
    det of a stack), probed with derivatives of order 0..3, on images with ⊥ and ±∞
    samples half the time: C and the interpreter agree."""
    rng = np.random.default_rng(100 + seed)
    expr = _random_field(rng, 3)
    order = int(rng.integers(0, 4))
    probe = ["R(x)", "∇R(x)", "∇⊗∇R(x)", "∇⊗∇⊗∇R(x)"][order]
    ty, init = [("real", "0"), ("vec2", "[0,0]"), ("tensor[2,2]", "[[0,0],[0,0]]"), T3][order]
    p = strands(check(parse_program(RANDOM_HEAD % (expr, ty, init, probe))))
    ir, why = strand_plan(p.checked)
    assert why is None, (expr, why)
    values = {"img": _image(np.random.default_rng(seed), bool(seed % 2))}
    a, c = p.run(values, backend="interp"), p.run(values, backend="c")
    same(a, c)
