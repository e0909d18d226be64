"""Findings of a review (rev52b) outside the strands' counts: a hexadecimal real too large for a double on the
command line (diderotc's executables read it with strtod: ±inf) and arithmetic between fields of different
continuity, which diderotc refuses ("unable to resolve overloaded operator") (docs/diderot.md)."""

from __future__ import annotations

import pytest

from tensorlang.cli import main

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
