"""Fields defined by a formula of the position (``field#k(d)[s] F(x) = expr;``, which
diderotc accepts): probes and derivatives to third order, ``c / F``, a constant formula,
and formulas the interpreter can only probe; globals loaded from text files.  The program
``more/formula.diderot`` is ours; the expected numbers were written by the executable that
``diderotc --double --exec`` made from it on this machine (interpreter = the oracle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check

HERE = Path(__file__).parent / "more"

WANT = {
    "pv": [-0.9713167019494859, 0.040125866614836914, 0.5639658342969665, 0.9807283641494978],
    "pg": [[3.1228291754873716, -2.9684875264621144], [1.7326431805290037, -1.2271283955545358],
           [1.3776978433639921, 0.03714029513796435], [2.009775147168922, 0.7802877207533827]],
    "ph": [[[-4.266365644846586, 4.177878118384471], [4.177878118384471, -4.740707293871843]],
           [[-1.2453234295121467, 3.3171120543321773], [3.317112054332177, -3.4436083757778886]],
           [[1.6752073713225504, 2.3277316952616554], [2.327731695261656, -2.06171815450259]],
           [[4.326034819156969, 1.3659767872286874], [1.3659767872286876, -0.49398452481912525]]],
    "p3": [[9.400225766365061, -1.311286707172825, -1.3112867071728247, 2.7480059989553323,
            -1.3112867071728247, 2.7480059989553323, 2.7480059989553323, -3.133408588788354],
           [9.190025142603467, -1.653022910692864, -1.6530229106928642, 2.873891099617654,
            -1.653022910692864, 2.873891099617654, 2.873891099617654, -3.018097632628901],
           [8.452794796713494, -1.7397403674058327, -1.7397403674058327, 3.355795975799457,
            -1.7397403674058327, 3.355795975799457, 3.355795975799457, -3.1216011562858905],
           [7.936551103094827, -1.05908049427251, -1.0590804942725098, 3.551417946543423,
            -1.0590804942725098, 3.551417946543423, 3.551417946543423, -3.7089659312701153]],
    "qd": [3.5999999999999996, 4.6499999999999995, 5.699999999999999, 6.75],
    "rv": [[-0.33317984087430574, 0.7678618567868754, -0.39806472153003514],
           [-0.35376313442364005, 0.0049025822896443085, -0.5213419409654806],
           [-0.0666898568261056, -0.5660278281913266, -0.8565855011086303],
           [0.6854121959736899, -0.913129023623679, -1.4045770743631658]],
    "s": [[-0.6873069347693841, 0.8495294328873821, -2.6785085902525334],
          [-0.5273141236401525, 0.3069250352314534, -0.8882578602376695],
          [-0.4465986813136521, 0.325281965679608, 0.9856164504059184],
          [-0.2801436153489493, 0.8588211790767961, 2.4661598163381004]],
    "u": [3.1999999999999997, 2.225, 1.7000000000000002, 1.625],
    "wg": [[5.0, 0.0]] * 4,
}
PRINTED = ("0 -0.97131670194948594 3.1999999999999997\n1 0.040125866614836914 2.2250000000000001\n"
           "2 0.56396583429696645 1.7000000000000002\n3 0.98072836414949782 1.625\n")


def program(text: str, base_dir: str | None = None):
    return strands(check(parse_program(text)), base_dir)


def test_fields_defined_by_formulas_probe_and_differentiate_as_diderot_does():
    res = program((HERE / "formula.diderot").read_text()).run({}, backend="interp")
    for name, want in WANT.items():
        got = np.asarray(res.outputs[name], dtype=np.float64).reshape(np.shape(want))
        assert np.allclose(got, want, rtol=1e-12, atol=1e-13), name
    # printed reals: diderotc reassociates sums and products, so the last digits may differ
    lines = [line.split() for line in res.printed.splitlines()]
    want = [line.split() for line in PRINTED.splitlines()]
    assert [w[0] for w in lines] == [w[0] for w in want]
    assert np.allclose([[float(v) for v in w[1:]] for w in lines], [[float(v) for v in w[1:]] for w in want],
                       rtol=1e-13, atol=1e-15)


POINTWISE = """#version 2.0
function real bump(real t) = t*t - 3.0*t;
field#1(2)[] U (p) = bump(p[0]) + p[1];
strand s (int i) {
  output real u = 0;
  update { u = U([real(i), 0.5]); stabilize; }
}
create_array { s(i) | i in 0..2 }
"""


def test_a_formula_that_calls_a_function_is_probed_pointwise():
    # (diderotc's executable prints garbage for this program: the values are bump's)
    res = program(POINTWISE).run({}, backend="interp")
    assert res.outputs["u"].tolist() == [0.5, -1.5, -1.5]
    with pytest.raises(TensorLangError, match="does not differentiate U"):
        program(POINTWISE.replace("u = U(", "u = |∇U(").replace("stabilize;", "stabilize;").replace(
            "0.5]); stabilize", "0.5])|; stabilize")).run({}, backend="interp")


@pytest.mark.parametrize("decl, code", [
    ("real F (x) = x;", "shape"),              # not a field type
    ("field#1(2)[] F (x) = x;", "assign-shape"),  # a vector formula for a scalar field
    # a field, not a value at x (diderotc: a syntax error; was an internal error when probed)
    ('field#1(2)[] F (x) = tent ⊛ image("a.nrrd");', "assign-shape"),
    ("field#1(2)[] G (x) = x[0]; field#1(2)[] F (x) = G;", "assign-shape"),
])
def test_formula_declarations_are_typechecked(decl, code):
    text = f"#version 2.0\n{decl}\nstrand s (int i) {{ output real o = 0; update {{ stabilize; }} }}\n" \
           "create_array { s(i) | i in 0..1 }\n"
    with pytest.raises(TensorLangError) as exc:
        check(parse_program(text))
    assert exc.value.code == code


SEEDS = """#version 1.0
vec2{} pts = load("pts.txt");
strand s (vec2 p) {
  output real d = 0;
  update { d = p[0] - 2.0*p[1]; stabilize; }
}
initially [ s(pts{i}) | i in 0..length(pts)-1 ];
"""


def test_a_global_loads_a_sequence_from_a_text_file(tmp_path):
    (tmp_path / "pts.txt").write_text("1.5 0.25\n-2 1\n# a comment\n4 4.5\n")
    res = program(SEEDS, str(tmp_path)).run({}, backend="interp")
    assert res.outputs["d"].tolist() == [1.0, -4.0, -5.0]


def test_a_text_file_holds_single_precision_numbers_as_teem_reads_it(tmp_path):
    """Diderot's executables read a plain-text sequence file through Teem, which makes its
    numbers floats: 0.2 becomes 0.20000000298023224 (an NRRD file keeps its type)."""
    (tmp_path / "pts.txt").write_text("0.2 0.1\n0.33 -0.71\n")
    want = [float(np.float32(0.2)) - 2.0 * float(np.float32(0.1)),
            float(np.float32(0.33)) - 2.0 * float(np.float32(-0.71))]
    for backend in ("interp", "c"):
        res = program(SEEDS, str(tmp_path)).run({}, backend=backend)
        assert res.outputs["d"].tolist() == want


def _ramp(path: Path) -> str:
    """Twelve samples on a unit-spaced 1-D grid (the image the reference run read)."""
    v = np.array([0.0, 1.0, 4.0, 2.5, -1.0, 3.0, 7.0, 6.5, 5.0, 2.0, 1.0, 0.5], dtype="<f8")
    head = ("NRRD0004\ntype: double\ndimension: 1\nspace dimension: 1\nsizes: 12\nspace directions: (1.0)\n"
            "centers: cell\nkinds: space\nendian: little\nencoding: raw\nspace origin: (0.0)\n\n")
    path.write_bytes(head.encode() + v.tobytes())
    return str(path)


STACK = {
    "g": [[3.2500000000045004, 3.7937500001404345], [2.8154166666679283, 3.2347795834329047],
          [1.1079999999694103, 0.7959753338135958], [0.31124999995188624, -0.5523366864092623],
          [2.2099999999601065, 1.931588667223251], [4.906249999978812, 5.268001302466765]],
    "c": [[1.0, 7.0], [1.0, 7.0], [1.7999999999999998, 8.0], [4.6, 8.0], [7.3999999999999995, 8.0], [9.0, 8.0]],
    "r": [2.0, 2.0, 5.0, 5.0, 5.0, 5.0],
}


def test_stacked_fields_and_clerp_with_bounds_in_either_order(tmp_path):
    backend = "interp"  # (the C executor runs it too: tests/diderot/test_field_ops_c.py)
    _ramp(tmp_path / "ramp.nrrd")
    res = program((HERE / "stack.diderot").read_text(), str(tmp_path)).run({}, backend=backend)
    for name, want in STACK.items():
        assert np.allclose(res.outputs[name], want, rtol=1e-10, atol=1e-12), name
    g = np.asarray(STACK["g"])
    assert np.allclose(res.outputs["h"], np.stack([g[:, 0], g[:, 1], g[:, 0]], axis=1), rtol=1e-10)
    assert res.printed.splitlines()[0] == "0 [1,7] 2"


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=pytest.mark.slow)])
def test_clamp_tests_the_lower_bound_first(backend):
    from tensorlang.targets.c import build as c_build
    if backend == "c" and c_build.find_compiler() is None:
        pytest.skip("no working C compiler")
    text = """#version 1.0
strand s (int i) {
  output real a = 0;
  output vec2 v = [0,0];
  output vec2 c = [0,0];
  update {
    real x = real(i) - 1.0;
    a = clamp(1.0, -1.0, x); v = clamp([1.0, -1.0], [-1.0, 1.0], [x, x]);
    c = clerp([1.0, 8.0], [9.0, 7.0], 0.5*x);
    stabilize;
  }
}
initially [ s(i) | i in 0..3 ];
"""
    res = program(text).run({}, backend=backend)
    assert res.outputs["c"].tolist() == [[1.0, 7.0], [1.0, 8.0], [5.0, 8.0], [9.0, 8.0]]
    # x <= lo gives lo; else hi <= x gives hi (diderotc's clamp)
    assert res.outputs["a"].tolist() == [1.0, 1.0, 1.0, -1.0]
    assert res.outputs["v"].tolist() == [[1.0, -1.0], [1.0, 0.0], [1.0, 1.0], [-1.0, 1.0]]
