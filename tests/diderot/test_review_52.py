"""Findings of a review (rev52b) outside the strands' counts: a hexadecimal real too large for a double on the
command line (diderotc's executables read it with strtod: ±inf) and arithmetic between fields of different
continuity, which diderotc refuses ("unable to resolve overloaded operator") (docs/diderot.md)."""

from __future__ import annotations

import pytest

import numpy as np

import tensorlang as tl
from tensorlang.cli import main
from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program
from tensorlang.lang.diderot import typecheck as check

D1 = 'input real r = 0.0;\nstrand S (int i) { output real y = r; update { print(r, "\\n"); stabilize; } }\n' \
     'create_array { S(i) | i in 0..0 }\n'


@pytest.mark.parametrize("word, printed", [  # diderotc's executable (its -r), as it printed them
    ("0x1p99999", "inf"), ("-0x1.fffffffffffff8p1023", "-inf"), ("+0X1P1024", "inf"), ("0x1p-99999", "0"),
    ("1e999", "inf")])
def test_a_hexadecimal_real_too_large_for_a_double_is_infinite(word, printed, tmp_path, capsys):
    prog = tmp_path / "d1.diderot"
    prog.write_text(D1)
    assert main(["run", str(prog), "-r", word, "-o", str(tmp_path / "y.nrrd")]) == 0
    assert capsys.readouterr().out == printed + "\n"


@pytest.mark.parametrize("word", ["0x1p", "1e", "1.5abc", "0x"])  # (diderotc: 1, 1, 1.5 and refused)
def test_a_real_that_is_only_a_prefix_of_the_word_is_refused(word, tmp_path, capsys):
    prog = tmp_path / "d1.diderot"
    prog.write_text(D1)
    assert main(["run", str(prog), "-r", word, "-o", str(tmp_path / "y.nrrd")]) != 0
    err = capsys.readouterr().err
    assert "error[input]" in err and "expects a number" in err and "Traceback" not in err


FIELDS = """#version 2.0
input image(2)[] img;
input image(2)[2] vimg;
field#2(2)[] F = bspln3 ⊛ img;
field#1(2)[] G = ctmr ⊛ img;
field#4(2)[] H = c4hexic ⊛ img;
field#0(2)[] T = tent ⊛ img;
field#2(2)[2] V = bspln3 ⊛ vimg;
field#1(2)[2] U = ctmr ⊛ vimg;
strand S (int i) {
  vec2 x = [0.1*real(i), 0.2];
  real a = 0.5;
  output real o = 0.0;
  update { o = %s; stabilize; }
}
create_array { S(i) | i in 0..1 }
"""
#: diderotc (2026-12 build) refused these ("unable to resolve overloaded operator", "arguments of tensor
#: construction must have same type"): + - * × and [..] take the first field's continuity, a later one's may not
#: be lower; / • ⊗ take the first's whatever the second's, : asks for one continuity, ∇• keeps the field's; a
#: field with a tensor is any (rev53: tensorlang gave / • ⊗ the lower one and ∇• one less, and refused F + F/G)
REFUSED = ["(F+G)(x)", "(a*F-G)(x)", "(F*G)(x)", "(G+T)(x)", "(H*F)(x)", "|(V*G)(x)|", "(V×U)(x)", "|(V-U)(x)|",
           "|[H, F](x)|", "(2*F - |∇F|)(x)", "(F - 2.0*G)(x)", "(|∇H| - G)(x)", "((-F) + G)(x)", "(F + G*(x•x))(x)",
           "((∇⊗V) : (∇⊗U))(x)", "((H/G)*F)(x)", "(∇•V + G)(x)", "(F + ∇G•∇F)(x)"]
ACCEPTED = ["(G+F)(x)", "(F*H)(x)", "(G*F)(x)", "|(G*V)(x)|", "(U×V)(x)", "(F/G)(x)", "(V•U)(x)", "trace((V⊗U)(x))",
            "|(∇F+V)(x)|", "|[F, H](x)|", "(-|∇F| + 2*F)(x)", "(F+1.0)(x)", "|(∇F - ∇H)(x)|", "(F + ∇H•∇F)(x)",
            "(F + V•∇F)(x)", "(F + F/G)(x)", "(F + ∇•V)(x)", "|∇(∇F•∇G)(x)|", "((∇⊗V) : (∇⊗V))(x)", "|[F, F/G](x)|"]


@pytest.mark.parametrize("expr", REFUSED)
def test_arithmetic_with_a_rougher_field_after_a_smoother_one_is_refused(expr):
    with pytest.raises(TensorLangError, match=r"error\[shape\].*(continuity|continuities)") as err:
        check(parse_program(FIELDS % expr))
    assert ":14:" in str(err.value)  # (the position of the operator)


@pytest.mark.parametrize("expr", ACCEPTED)
def test_arithmetic_diderotc_accepts_between_fields_of_different_continuity_checks(expr):
    check(parse_program(FIELDS % expr))


SEQ = """#version 2.0
input real[] rs = {1.0};
input real[2][] nest = {{0.0, 0.0}};
input bool[] bs = {true};
strand S (int i) {
  output real y = 0.0;
  update { real[2] p = nest[i]; y = rs[i] / 3.0 + p[0] / 3.0 + p[1]; print(i, " ", bs[i], "\\n"); stabilize; }
}
create_collection { S(i) | i in 0..2 };
"""


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=pytest.mark.slow)])
def test_sequences_given_as_float32_or_number_arrays_are_read_as_c_reads_them(backend):
    """float32 arrays for real[] and real[2][] inputs are computed in doubles (the interpreter kept float32 items:
    0.033333335 where C gives 0.0333333338), and a bool[] given as numbers holds true and false (it printed 1, 0, 2)."""
    rs, nest = np.array([0.1, 0.7, 0.47], np.float32), np.array([[0.1, 0.7], [0.47, 0.41], [0.84, 0.12]], np.float32)
    res = tl.compile(SEQ, lang="diderot", backend=backend).run({"rs": rs, "nest": nest, "bs": [1.0, 0.0, 2.0]})
    r, n = rs.astype(np.float64), nest.astype(np.float64)
    np.testing.assert_array_equal(res["y"], r / 3.0 + n[:, 0] / 3.0 + n[:, 1])
    assert res.printed == "0 true\n1 false\n2 true\n"
