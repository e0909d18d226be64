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
    assert p.run({}).printed.splitlines() == want  # the C executor leaves such a program to the interpreter
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
