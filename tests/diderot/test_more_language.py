"""Diderot language features beyond the 27 public examples (programs of ours in
``tests/diderot/more/``): sequences joined with ``@`` and made by comprehensions, more of
the basis library (clerp, tan/asin/acos/atan and powers of fields, det/trace/inv/transpose
of matrix fields), Diderot's x^n, global reductions, outputs of sequences of any length,
and the type errors diderotc reports.  Every expected number below was printed or written
by the executable that the real compiler (``diderotc --double --exec``) made from the same
program, on this machine; the interpreter is run (the oracle)."""

from __future__ import annotations

import os
from pathlib import Path

import nrrd
import numpy as np
import pytest

from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check

HERE = Path(__file__).parent / "more"


def load(name: str):
    return strands(check(parse_program((HERE / name).read_text())))


def run(name: str, values=None):
    return load(name).run(values or {}, backend="interp")


def numbers(text: str) -> list[float]:
    return [float(w) for w in text.replace("[", " ").replace("]", " ").replace("{", " ").replace("}", " ")
            .replace(",", " ").split() if w not in ("true", "false")]


def test_sequences_join_with_at_and_comprehensions_make_them():
    res = run("sequences.diderot")
    assert res.printed == ("0 33.5 {0,1,4,9,16} {1,2,3,4,0.5,1,2,3,4}\n"
                           "1 32.5 {0,1,4,9,16} {1,2,3,4,0.5,1,2,3,4}\n"
                           "2 32.5 {0,1,4,9,16} {1,2,3,4,0.5,1,2,3,4}\n")
    assert res.outputs["y"].tolist() == [33.5, 32.5, 32.5]


def test_math_functions_int_division_and_clerp():
    res = run("math.diderot")
    assert res.printed == ("0 -3 -1 1 0 2.8501358591119264 0.027 0.25\n"
                           "1 -3 -1 1 0.20000000000000018 2.7610862764774282 0.064000000000000015 0.25\n"
                           "2 -3 -1 1 0.5 2.677945044588987 0.125 0.25\n"
                           "3 -3 -1 1 0.79999999999999982 2.6011731533192091 0.216 0.25\n")
    want = MATH_Y
    assert np.allclose(res.outputs["y"], want, rtol=1e-15, atol=1e-15)


def test_integer_powers_multiply_as_diderot_does():
    res = run("powers.diderot")
    assert res.printed.splitlines() == POWERS.splitlines()


def test_global_reductions_and_strand_counts():
    res = run("reductions.diderot")
    assert res.printed.splitlines() == REDUCTIONS.splitlines()
    assert res.outputs["w"].tolist() == pytest.approx(
        [-0.16666666666666666, 1.0, 1.9583333333333333, -0.16666666666666666, 0.7708333333333334, 1.7291666666666667],
        rel=1e-15)


def test_tensor_operations():
    res = run("tensors.diderot")
    assert np.allclose(numbers(res.printed), numbers(TENSORS), rtol=1e-14, atol=1e-15)
    assert np.allclose(res.outputs["v"], [[-1.5527864045000421, 2.0, 2.8944271909999166],
                                          [1.4082482904638631, 2.591751709536137, 1.8164965809277263],
                                          [6.333333333333334, 5.333333333333333, 0.6666666666666661]], rtol=1e-14)


def _sq_image(path: Path) -> str:
    """A 24x24 sampling of x^2 + x y^2 / 2 + cos 2y + 3 on [-1.15, 1.15]^2 (NRRD, world
    coordinates in the header), the image the reference run read."""
    n, h, o = 24, 0.1, -1.15
    ys, xs = np.meshgrid(o + h * np.arange(n), o + h * np.arange(n), indexing="ij")
    v = xs ** 2 + 0.5 * xs * ys ** 2 + np.cos(2 * ys) + 3
    head = (f"NRRD0004\ntype: double\ndimension: 2\nspace dimension: 2\nsizes: {n} {n}\n"
            f"space directions: ({h},0) (0,{h})\ncenters: cell cell\nkinds: space space\nendian: little\n"
            f"encoding: raw\nspace origin: ({o},{o})\n\n")
    path.write_bytes(head.encode() + v.astype("<f8").tobytes())
    return str(path)


@pytest.mark.slow
def test_functions_of_fields(tmp_path):
    res = run("fieldfns.diderot", {"img": _sq_image(tmp_path / "sq.nrrd")})
    # c4hexic probes: Diderot's 12-digit kernel coefficients leave ~1e-11 differences
    assert np.allclose(numbers(res.printed), numbers(FIELDFNS), rtol=1e-10, atol=1e-11)
    assert np.allclose(res.outputs["y"], [[0.4248012662660208, 0.3819730204285686, -6.792028859863524, -1.3760158247975403],
                                          [0.43332677347627274, 0.38815714319640277, -6.592028900722957, -1.276015843496472],
                                          [0.4442983255354053, 0.3960137626873665, -6.392028940419925, -1.1760158672949739]],
                       rtol=1e-10)


def test_a_grid_of_sequences_of_any_length_is_written_as_diderot_does(tmp_path):
    p = load("history.diderot")
    res = p.run({}, backend="interp")
    assert [list(v) for v in res.outputs["hist"]] == [[0], [10, 11], [20, 21, 22], [30, 31, 32, 33]]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        from tensorlang.strands.runner import StrandRun
        assert StrandRun(p).main(["-o-hist", "h.nrrd"]) == 0
    finally:
        os.chdir(cwd)
    lens, head = nrrd.read(str(tmp_path / "h.nrrd-len.nrrd"), index_order="C")
    assert lens.tolist() == [[0, 1], [1, 2], [3, 3], [6, 4]] and list(head["kinds"]) == ["2-vector", "space"]
    data, head = nrrd.read(str(tmp_path / "h.nrrd-data.nrrd"), index_order="C")
    assert data.tolist() == [0, 10, 11, 20, 21, 22, 30, 31, 32, 33] and list(head["kinds"]) == ["list"]


def test_a_collection_of_vector_sequences():
    res = run("paths.diderot")
    flat = np.concatenate([np.asarray(v).reshape(-1, 2) for v in res.outputs["pts"]])
    assert [len(v) for v in res.outputs["pts"]] == [0, 1, 2, 2, 3]  # pts-len.nrrd's counts
    assert flat.tolist() == [[0, 10], [1, 10], [1, 11], [2, 0], [2, 1], [2, 10], [2, 11], [2, 12]]


# diderotc's verdicts on small ill-typed programs (the strand S (int i) { output real y = 0.0; ...})
REJECTED = [
    ("real z; y = z;", "uninit", "possible use of variable z before it has been initialized"),
    ("real w; if (i > 0) { w = 1.0; } else { stabilize; } y = w;", "uninit", "variable w"),
    ("real z; foreach (int k in 0..2) { z = real(k); } y = z;", "uninit", "variable z"),
    ("y = [1.0, 2.0, 3.0];", "assign-shape", "expected real, got vec3"),
    ("y = frob(1.0);", "undeclared", "unknown function frob"),
    ("int k = 1.5;", "assign-shape", "expected int, got real"),
    ("if (i) { y = 1.0; }", "shape", "a condition must be bool"),
    ("i = 2;", "read-only", "strand parameter i"),
    ("y = true;", "assign-shape", "expected real, got bool"),
    ("y = [[1.0, 2.0], [3.0, 4.0]] • [1.0, 1.0];", "assign-shape", "expected real, got vec2"),
]


@pytest.mark.parametrize("body, code, words", REJECTED)
def test_programs_diderotc_rejects_are_errors_at_a_position(body, code, words):
    text = ("#version 2.0\nstrand S (int i) { output real y = 0.0; update { " + body + " stabilize; } }\n"
            "create_collection { S(i) | i in 0..1 }\n")
    with pytest.raises(TensorLangError, match=words) as info:
        check(parse_program(text))
    assert info.value.code == code and info.value.span is not None and info.value.span.line == 2


@pytest.mark.parametrize("text, code, words", [
    ("real g;\nstrand S (int i) { output real y = 0.0; update { y = g; stabilize; } }\n"
     "create_array { S(i) | i in 0..1 }", "uninit", "global variable g is not initialized"),
    ("strand S (int i) { output real y; update { y = 1.0; stabilize; } }\ncreate_array { S(i) | i in 0..1 }",
     "uninit", "output variable y is not initialized"),
    ("function real f(real x) { if (x > 0.0) { return x; } }\n"
     "strand S (int i) { output real y = 0.0; update { y = f(1.0); stabilize; } }\ncreate_array { S(i) | i in 0..1 }",
     "uninit", "function f can end without returning"),
    ("strand S (int i) { output string y = \"a\"; update { stabilize; } }\ncreate_array { S(i) | i in 0..1 }",
     "shape", "output y is string"),
    ("strand S (int i) { output real y = 0.0; update { if (i == 1) die; stabilize; } }\n"
     "create_array { S(i) | i in 0..2 }", "syntax", "cannot use 'die'"),
    ("strand S (int i) { output real y = 0.0; update { if (i == 1) new S(7); stabilize; } }\n"
     "create_array { S(i) | i in 0..2 }", "syntax", "cannot use 'new'"),
])
def test_program_level_errors(text, code, words):
    with pytest.raises(TensorLangError, match=words) as info:
        check(parse_program("#version 2.0\n" + text + "\n"))
    assert info.value.code == code


def test_a_return_in_both_branches_and_a_state_variable_set_before_use_are_fine():
    text = ("#version 2.0\nfunction real f(real x) { if (x > 0.0) { return x; } else { return -x; } }\n"
            "strand S (int i) { real z; output real y = 0.0; update { z = f(-2.0); y = z; stabilize; } }\n"
            "create_array { S(i) | i in 0..1 }\n")
    assert load_text(text).run({}, backend="interp").outputs["y"].tolist() == [2.0, 2.0]


def load_text(text: str):
    return strands(check(parse_program(text)))


MATH_Y = [[1.2661036727794992, 0.3046926540153975, 0.2914567944778671, 0.30933624960962325, 0.3286267594591274, 0.6713732405408726, 0.37851162325372983, 0.11394335230683678, -2.0, 2.0, 1.0, 0.6999999999999997], [1.1592794807274085, 0.41151684606748806, 0.3805063771123649, 0.4227932187381618, 0.42839235504666845, 0.5716076449533315, 0.48542682717024166, 0.146128035678238, -2.0, 3.0, 2.0, 1.6], [1.0471975511965979, 0.5235987755982989, 0.4636476090008061, 0.5463024898437905, 0.5204998778130465, 0.4795001221869535, 0.5849625007211562, 0.17609125905568124, -3.0, 4.0, 2.0, 0.5], [0.9272952180016123, 0.6435011087932844, 0.5404195002705842, 0.6841368083416923, 0.6038560908479259, 0.3961439091520741, 0.6780719051126377, 0.20411998265592482, -4.0, 4.0, 2.0, 1.3999999999999995]]

POWERS = """0.089999999999999997 0.027 0.0080999999999999996 0.0024299999999999999 0.00072899999999999994 0.00021869999999999998 3.3333333333333335 37.037037037037038 0.16431676725154981 -0.027
0.44889999999999991 0.30076299999999989 0.20151120999999991 0.13501251069999992 0.090458382168999929 0.060607116053229944 1.4925373134328359 3.324877062670609 0.54841863571545402 -0.30076299999999989
1.0816000000000001 1.1248640000000001 1.1698585600000002 1.2166529024000003 1.2653190184960001 1.3159317792358403 0.96153846153846145 0.88899635867091487 1.0605960588272993 -1.1248640000000001
1.9880999999999998 2.8032209999999993 3.952541609999999 5.5730836700999982 7.8580479748409964 11.079847644525804 0.70921985815602839 0.35673248737791285 1.6742822342723462 -2.8032209999999993"""

REDUCTIONS = """1 11 0.83333333333333337 1.6666666666666667 -0.16666666666666666 231.89300411522635 5 1 6 false true
2 7.5833333333333339 0.2638888888888889 0.66666666666666663 -0.16666666666666666 66.203703703703709 4 2 6 false true
3 6.0416666666666661 0.0069444444444444449 0.16666666666666666 -0.16666666666666666 32.527970679012334 3 3 6 false true
4 5.416666666666667 -0.097222222222222224 -0.083333333333333329 -0.16666666666666666 22.469979745370374 2 4 6 true true
5 5.1875 -0.13541666666666666 -0.20833333333333334 -0.16666666666666666 20.312148357124492 1 5 6 true true
6 5.125 -0.14583333333333334 -inf -0.16666666666666666 19.857398767039616 0 6 6 true true"""

TENSORS = """0 34.282856857085704 [0,2,0] {6,3.9999999999999996,2}
1 35.282856857085704 [0,2,1] {6.7784571182583893,3.7108314535516902,1.5107114281899214}
2 42.282856857085704 [0,2,2] {8.4286394867550705,2.9216222543782218,0.64973825886670822}"""

FIELDFNS = """0 -1.3760158247975403 0 [0.65313903969440068,0.75723800408265041] 0.94926189192360166 [[1.9999994810573112,-0.20000000028070292],[-0.20000000028070292,-3.3760153058548514]] 0.04018104189768483 1.5306152848972119 [[0.49705550072157495,-0.02944628245951264],[-0.02944628245951264,-0.29446274777717868]]
1 -1.2760158434964719 0 [0.76110637091372435,0.64862708250160217] 1.0773789735704844 [[1.9999994718775316,-0.20000000028061066],[-0.20000000028061066,-3.2760153153740035]] 0.040901634014958839 1.5298946927799377 [[0.49696616394001525,-0.03033967285226501],[-0.03033967285226501,-0.30339664798165389]]
2 -1.1760158672949739 0 [0.83249558817540781,0.55403167388560171] 1.2252317193320355 [[1.9999994601479643,-0.20000000028097065],[-0.20000000028097065,-3.1760153274429381]] 0.041822421585060408 1.5289739052098361 [[0.49687123713715375,-0.03128896976925008],[-0.03128896976925008,-0.31288961279586669]]"""


def test_start_methods_global_start_and_new_strands_starting_next_step():
    res = run("starts.diderot")
    assert res.printed.splitlines() == STARTS.splitlines()
    assert res.outputs["k"].tolist() == [2, 5, 7, 9, 13, 5]  # the stable strands in Diderot's order


def test_a_program_without_super_steps_prints_strand_by_strand():
    p = load("startorder.diderot")
    want = STARTORDER.splitlines()
    assert p.run({}, backend="interp").printed.splitlines() == want
    assert p.run({}).printed.splitlines() == want and p.executor_note is None  # C, strand by strand as well
    assert p.run({}, backend="interp").outputs["k"].tolist() == [7, 7, 7]


def test_the_global_initialize_block_runs_before_the_strands_exist():
    res = run("globalinit.diderot")
    assert res.outputs["u"].tolist() == [1.0, 2.0, 3.0]
    assert res.printed == "0 1\n1 1\n2 1\n"


STARTS = """gstart 5 0
start 0 5
start 1 5
stab 1
start 2 5
start 3 5
start 4 5
upd 0 1
upd 2 5
stab 2
upd 3 7
stab 3
upd 4 9
stab 4
gupd 6
start 6 6
upd 0 2
upd 6 13
stab 6
gupd 7
upd 0 3
gupd 8
upd 0 4
gupd 9
upd 0 5
stab 0
gupd 10"""

STARTORDER = """0 1
0 3
0 5
0 7
1 3
1 5
1 7
2 5
2 7"""


def test_int_constants_size_tensors_sequences_and_identity():
    res = run("consts.diderot")
    assert res.printed == "[[1,0,0],[0,1,0],[0,0,1]]\n" * 2
    assert res.outputs["y"].tolist() == [[[1, 0, 2], [1, 2, 0]], [[1, 1, 2], [1, 2, 0]]]
    with pytest.raises(TensorLangError, match="K in a shape is not an int constant") as info:
        check(parse_program((HERE / "consts.diderot").read_text().replace("tensor[M,N] y", "tensor[M,K] y")))
    assert info.value.code == "syntax" and info.value.span.line == 6


CONST_EXPRS = """#version 2.0
const int M = 2;
const int N = -(1-3)*(7/M) + 7 % 3;
const int K = (0-7)/M;
const int R = (0-7)%M;
const int P = N - 2*M + 1;
input real[N-4] w = {1.0, 2.0, 3.0};
strand A (int i) {
  output tensor[N] v = zeros[N];
  output real[P] s = {0.0, 0.0, 0.0, 0.0};
  update { v = [real(i), real(N), real(K), real(R), real(M), w[0], w[2]]; s = {1.0, 2.0, 3.0, real(P)};
           print(identity[P-2], " ", K, " ", R, "\\n"); stabilize; }
}
create_array { A(i) | i in 0..1 }
"""


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_int_constants_computed_from_constants_size_types(backend):
    # diderotc folds + - * / % (quot and rem: toward zero) of int constants, in shapes too;
    # its executable printed "[[1,0],[0,1]] -3 -1" twice and wrote these outputs
    res = strands(check(parse_program(CONST_EXPRS))).run({}, backend=backend)
    assert res.printed == "[[1,0],[0,1]] -3 -1\n" * 2
    assert res.outputs["v"].tolist() == [[0, 7, -3, -1, 2, 1, 3], [1, 7, -3, -1, 2, 1, 3]]
    assert res.outputs["s"].tolist() == [[1, 2, 3, 4]] * 2


@pytest.mark.parametrize("size, words", [("M@1", "a size is an int constant expression"), ("1-3", "a size in a type is -2"),
                                         ("3/(M-2)", "divides by zero"), ("M•2", "a size is an int constant expression"),
                                         ("Q+1", "Q in a shape is not an int constant")])
def test_sizes_that_are_not_int_constant_expressions(size, words):
    text = CONST_EXPRS.replace("real[N-4] w", f"real[{size}] w")
    with pytest.raises(TensorLangError, match=words) as info:
        check(parse_program(text))
    assert info.value.code == "syntax" and info.value.span.line == 7


EIGEN2_EV = [[[-0.9870874576374967, 0.16018224300696723], [-0.16018224300696723, -0.9870874576374967]], [[-0.9819563867314219, 0.1891075211549513], [-0.18910752115495125, -0.9819563867314217]], [[0.03327793671031181, 0.9994461360815322], [-0.999446136081532, 0.0332779367103118]], [[0.0443134252079069, 0.9990176776946158], [-0.9990176776946158, 0.0443134252079069]], [[0.04107220477765108, 0.9991561809820839], [-0.9991561809820839, 0.04107220477765108]], [[0.036961098084952654, 0.9993167051682639], [-0.9993167051682637, 0.03696109808495265]], [[0.0332779367103119, 0.9994461360815323], [-0.9994461360815321, 0.033277936710311894]]]
EIGEN2_VALS = [[1.0811388300841898, -2.08113883008419], [0.038516480713450374, -1.0385164807134504], [2.0033296378372905, -1.0033296378372907], [7.017742799230607, -2.017742799230607], [14.028774824088158, -3.028774824088158], [23.036986370680886, -4.036986370680884], [34.043285291884786, -5.043285291884782]]
EIGEN3_EV = [[[-0.9438967544584234, 0.1502117910307014, -0.2941008921411216], [0.2883710853327953, -0.05910086600010316, -0.9556930494578391], [-0.1609379820515979, -0.9868857611058063, 0.01246837839387314]], [[0.3521741244453321, -0.10301278830564516, 0.9302482203781206], [0.918253899948202, -0.15425017662859034, -0.3647144886619755], [0.18106120871429462, 0.9826470619991419, 0.04026897370648557]], [[0.024387144408346727, 0.9916532543437293, -0.12660604384111024], [-0.13885554581698378, -0.12205610891035516, -0.9827621501022161], [-0.9900123254704832, 0.04154671379488642, 0.13471995393916908]], [[-0.04322189617758007, -0.9980728539357957, 0.044524666503751344], [-0.08597457310003889, -0.04068522577477731, -0.9954662652164168], [0.9953593524306086, -0.04685392875854898, -0.08405039493546869]], [[-0.040689140422178305, -0.9987536980303785, 0.028904057195275203], [-0.0622456839488571, -0.02633806340143153, -0.9977132760698343], [0.9972311009397187, -0.04239524840009382, -0.06109643387016212]], [[-0.036776438657540676, -0.9990850826332985, 0.021828678825870404], [-0.04883417268307329, -0.02002062488101295, -0.9986062277783639], [0.9981296093884942, -0.037791166150155, -0.04805320616757484]], [[-0.03317342303650804, -0.9992933735137112, 0.017671379562084734], [-0.04020268966967087, -0.016332614251635538, -0.9990580510936447], [0.9986407100390835, -0.033852612355528194, -0.039632472662468624]]]
EIGEN3_VALS = [[1.1418863591923434, 0.4396519446287932, -2.0815383038211364], [0.5867898502260117, -0.04584011285881989, -1.0409497373671919], [2.0279935784887106, 0.5034188204958607, -1.0314123989845716], [7.03070533208203, 0.5050120702849632, -2.035717402366993], [14.040093990392831, 0.5019182980472485, -3.042012288440081], [23.04773445114882, 0.4997561822697296, -4.047490633418549], [34.05376627035541, 0.49823931090377904, -5.0520055812591895]]


def test_eigenvectors_have_diderots_signs():
    res = run("eigen2.diderot")
    assert np.allclose(res.outputs["ev"], EIGEN2_EV, atol=1e-15) and np.allclose(res.outputs["vals"], EIGEN2_VALS)
    res = run("eigen3.diderot")
    assert np.allclose(res.outputs["ev"], EIGEN3_EV, atol=1e-14)
    assert np.allclose(res.outputs["vals"], EIGEN3_VALS, atol=1e-14)


def _vec_image(path: Path) -> str:
    n, h, o = 20, 0.1, -0.95
    ys, xs = np.meshgrid(o + h * np.arange(n), o + h * np.arange(n), indexing="ij")
    v = np.stack([np.sin(xs) * ys + xs ** 2, np.cos(ys) * xs - ys * xs * 0.5], axis=-1)
    head = (f"NRRD0004\ntype: double\ndimension: 3\nspace dimension: 2\nsizes: 2 {n} {n}\n"
            f"space directions: none ({h},0) (0,{h})\ncenters: ??? cell cell\nkinds: 2-vector space space\n"
            f"endian: little\nencoding: raw\nspace origin: ({o},{o})\n\n")
    path.write_bytes(head.encode() + v.astype("<f8").tobytes())
    return str(path)


def test_a_vector_field_and_a_sequence_read_from_a_file(tmp_path):
    pts = tmp_path / "pts.nrrd"
    pts.write_bytes(b"NRRD0004\ntype: double\ndimension: 2\nsizes: 2 4\nkinds: 2-vector list\nendian: little\n"
                    b"encoding: raw\n\n" + np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.5], [0.0, 0.0]]).tobytes())
    res = run("vectorfield.diderot", {"img": _vec_image(tmp_path / "vec2.nrrd"), "pts": str(pts)})
    assert np.allclose(numbers(res.printed), numbers(VECTORFIELD), rtol=1e-13, atol=1e-15)
    assert np.allclose(res.outputs["div"], [0.32883563254791726, 0.048129303367482994, 0.551252964611981, 1.5558301175166989e-16], rtol=1e-14)
    assert np.allclose(res.outputs["curl"], [0.778767098639774, 1.014554937372685, 0.6474938772805597, 0.9983344611176934], rtol=1e-14)
    assert np.allclose(res.outputs["jac"], [[[0.39866948613166303, 0.09966714020964951], [0.8784342388494235, -0.0698338535837458]], [[-0.21850167867706036, -0.29502800626663783], [0.7195269311060472, 0.26663098204454333]], [[0.5619393297592804, 0.47862703672848694], [1.1261209140090467, -0.01068636514729937]], [[2.0491421059976034e-16, 5.637851296924623e-17], [0.9983344611176935, -4.933119884809045e-17]]], rtol=1e-14)
    assert np.allclose(res.outputs["ev"], [[[0.84616562089364, 0.5329200146529316], [-0.5329200146529316, 0.84616562089364]], [[0.35173096084748695, 0.9361011329879394], [-0.9361011329879394, 0.35173096084748695]], [[0.8173361824802711, 0.5761610580459053], [-0.5761610580459053, 0.8173361824802711]], [[0.7071067811865477, 0.7071067811865475], [-0.7071067811865475, 0.7071067811865477]]], atol=1e-14)
    assert res.outputs["ins"].tolist() == [True] * 4


VECTORFIELD = """[0.10000000000000001,0.20000000000000001] [0.033266761374707333,0.08784342388421762] 0.093931594961780857 0.0088231445320640541 [0.35415944324423537,0.93518505589050827] {1.4133528924574827,-0.75568162736164834}
[-0.29999999999999999,0.40000000000000002] [-0.024677869174059768,-0.21585807933003323] 0.21726414255238469 0.047203707639022929 [-0.11358463888310366,-0.99352832360723109] {0.69276333573673132,-0.59650472900176532}
[0.5,-0.5] [0.014019814966712745,0.5630604569998785] 0.56323497179118143 0.31723363344861288 [0.024891591731471128,0.99969015632898661] {2.2551062951142158,-1.1526003658902537}
[0,0] [0.0033333333331068658,6.1537508306202647e-17] 0.0033333333331068658 1.1111111109601328e-05 [1,1.8461252493115055e-14] {0.99833446111769375,-0.99833446111769353}"""


def test_progress_inside_a_long_super_step(monkeypatch):
    import io

    from tensorlang.strands import runner

    text = ("#version 2.0\nstrand S (int i) { output real y = 0.0; update { y = real(i); stabilize; } }\n"
            "create_array { S(i) | i in 0..4999 }\n")
    seen: list = []

    class Progress:
        def __call__(self, step, active):
            seen.append(("step", step, active))

        def within(self, done, total):
            seen.append(("within", done, total))

    load_text(text).run({}, progress=Progress(), backend="interp")
    assert seen == [("within", 2048, 5000), ("within", 4096, 5000), ("step", 1, 0)]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    clock = iter(range(10**6))
    monkeypatch.setattr(runner.time, "monotonic", lambda: float(next(clock)))
    err = Terminal()
    say = runner._Progress(err, False)
    say.within(2048, 5000)
    say(1, 3)
    assert err.getvalue() == "\rstep 1: 2048 of 5000 strands updated\033[K\rstep 1: 3 active strands\033[K"


@pytest.mark.slow
def test_second_derivatives_of_products_of_fields(tmp_path):
    res = run("products.diderot", {"img": _sq_image(tmp_path / "sq.nrrd")})
    assert np.allclose(numbers(res.printed), numbers(PRODUCTS), rtol=1e-10, atol=1e-10)
    assert np.allclose(res.outputs["y"], [[[16.836888077563664, -0.7154759223876977], [-0.7154759223876977, -26.089666400710886]], [[17.70088792877487, -0.48954905009602445], [-0.48954905009602445, -25.81471344491455]], [[18.804887734808865, -0.28762217784731137], [-0.28762217784731137, -25.636401126196812]]], rtol=1e-10)


PRODUCTS = """[[8.418444038781832,-0.35773796119384887],[-0.35773796119384887,-13.044833200355443]] [[36.978390826898583,6.2188567589231383],[6.2188567589231383,68.347443585605689]] -4.0170230613774178 [[8.0799957169304122,1.9880404601579493],[1.9880404601579493,19.597502955960131]]
[[8.8504439643874342,-0.24477452504801223],[-0.24477452504801223,-12.907356722457275]] [[40.281553361159808,5.6431829929922017],[5.6431829929922017,66.183791873597102]] -4.0890230613943457 [[8.0799956507166595,1.9080404027033535],[1.9080404027033535,18.792788249375061]]
[[9.4024438674044326,-0.14381108892365568],[-0.14381108892365568,-12.818200563098406]] [[44.554315457157166,5.1138316628696971],[5.1138316628696971,64.200125669250241]] -4.1810230614159032 [[8.0799955639149932,1.8280403513752277],[1.8280403513752277,18.028073547144558]]"""



def test_a_kernel_declared_smoother_than_it_is(tmp_path):
    res = run("kernelk.diderot", {"img": _sq_image(tmp_path / "sq.nrrd")})
    assert np.allclose(numbers(res.printed), numbers(KERNELK), rtol=1e-12, atol=1e-13)
    assert np.allclose(res.outputs["y"], [[[1.9999999999999516, -0.20999999999994928], [-0.20999999999994928, -3.2306408113082608]], [[1.9999999999999347, -0.21000000000001884], [-0.21000000000001884, -3.130640811308416]], [[1.9999999999999747, -0.20999999999996924], [-0.20999999999996924, -3.030640811308394]]], rtol=1e-12, atol=1e-13)


KERNELK = """[0.68205000000000426,0.74818540566244596] [[0,-0.19999999999997797],[-0.19999999999997797,0]] [0.62325000000000408,0.71153927235233283]
[0.88205000000000766,0.72718540566243162] [[0,-0.19999999999997797],[-0.19999999999997797,0]] [0.82324999999999982,0.69153927235232615]
[1.0820500000000024,0.70618540566243948] [[0,-0.20000000000006679],[-0.20000000000006679,0]] [1.0232500000000009,0.67153927235232835]"""


def test_inputs_of_every_kind_on_the_command_line(tmp_path):
    import io

    from tensorlang.strands.runner import StrandRun

    p = StrandRun(load("inputs.diderot"))
    out = io.StringIO()
    argv = ["-w", "4", "5", "6", "-b", "true", "-k", "7", "-m", "9", "8", "7", "6", "-s", "0.5", "0.25", "0.125",
            "-name", "hello", "-o", str(tmp_path / "y.nrrd")]
    assert p.main(argv, out=out, err=io.StringIO()) == 0
    assert out.getvalue() == "hello [[9,8],[7,6]] {0.5,0.25,0.125}\n" * 3  # as the executable printed
    y, _ = nrrd.read(str(tmp_path / "y.nrrd"))
    assert y.tolist() == [15.5, 19.25, 23.125]
    with pytest.raises(TensorLangError, match="-s expects 3 values, got 2"):
        p.main(["-s", "1", "2"], out=io.StringIO(), err=io.StringIO())


def test_print_formats_as_diderots_executable():
    # diderotc's executable printed "-nan" for 0.0/0.0 (x86's default NaN); tensorlang's
    # interpreter and C executor both make a NaN without its sign bit there
    assert run("printing.diderot").printed == \
        "{} {1,2,3} [1.5,-0] inf -inf nan inf 123456789 9.9999999999999995e-08 3\n"


@pytest.mark.parametrize("where", [
    'update { real{} s = load("f.txt"); x = s{0}; stabilize; }',   # a local's value
    'update { x = load("f.txt"){0}; stabilize; }',                  # inside an expression
])
def test_load_outside_a_global_value_is_refused_at_its_place(where):
    """load("file") is read when the run starts: only the whole value of a global (it was a
    KeyError from the interpreter's basis when the program was built)."""
    text = f"#version 2.0\nstrand S (int i) {{\n  output real x = 0.0;\n  {where}\n}}\ninitially [ S(i) | i in 0..1 ];\n"
    with pytest.raises(TensorLangError, match="whole value of a global") as info:
        check(parse_program(text))
    assert info.value.code == "syntax" and info.value.span.line == 4
    check(parse_program('#version 1.0\nreal{} g = load("f.nrrd");\n' + text.split("\n", 1)[1]
                        .replace(where, "update { x = g{0}; stabilize; }")))


@pytest.mark.parametrize("decl", ["real{} xs = load(fn);", "input real{} xs = load(fn);"])
def test_load_of_a_name_not_a_literal_is_refused(decl):
    """diderotc's grammar takes a string literal only; a string input named the file '' at run time."""
    text = f'#version 1.0\ninput string fn = "xs.nrrd";\n{decl}\n' \
           "strand S (int i) {\n  output real x = 0.0;\n  update { x = xs{0}; stabilize; }\n}\ninitially [ S(i) | i in 0..1 ];\n"
    with pytest.raises(TensorLangError, match="string literal") as info:
        check(parse_program(text))
    assert info.value.code == "syntax" and info.value.span.line == 3
