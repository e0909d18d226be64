"""Issue 41, seventeenth sweep: hostile inputs on the surfaces besides the Diderot front
end (structure annotations, syntax hints, the CLI), each finding fixed at its cause and covered here by
its class.

* A ``where`` condition whose numbers pass int64 over the positions was evaluated in
  numpy's int64 by the structure check (``check_structure=True``, ``--check-structure``)
  and by ``--random-inputs``' keeping of the promise: ``where i1 <= i2 + 2^63 - 2``
  (true everywhere) wrapped to false and refused a good input ("A[1,2] = 2.0 should be
  0.0"); ``where i1 = i2 + 10^26`` was error[internal] (OverflowError).  A condition
  whose sides may leave int64 is evaluated in Python integers, exactly.
* What new users write from other languages stopped the parser with a bare list of the
  tokens it expected, often on the wrong line's terms: ``# comment`` and ``/* */``
  ("unexpected '#'; expected a name"), CFDlang's ``var input A`` in a ``.tl`` file
  ("expected ':'"), ``C += A``, ``C[i][j]`` and ``C = 2A`` ("unexpected end of input;
  expected '=', '['").  Each now gets a one-line hint with the tensorlang form.
* ``tensorlang run p.tl --inputs in.npz --output in.npz`` replaced the inputs with the
  results (exit 0), as ``compile -o p.tl`` once replaced the program: an output that is a
  file the run reads is error[input], checked before any work, and the file is kept.
* A built program with symbolic sizes is read back from its model-language text at each
  binding, so an output named with a reserved word (``tl.build({"sum": ...})``) or a
  variable or size named in Unicode (``tl.var("Ä", ("n",))``) compiled and then failed
  every call with "the sizes n = 2 do not fit the program: 'sum' is a reserved word"
  (a plain build printed ``--emit tl`` text that does not read back).  The builder now
  refuses, where the name is given, every name the model language cannot write: error[input].
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError


#: (a condition, where it holds over the 1-based positions of a 3 x 3 matrix)
WHERE = [("i1 <= i2 + 9223372036854775806", lambda i1, i2: i1 > 0),  # wrapped to false in int64
         ("i1 >= i2 - 9223372036854775807", lambda i1, i2: i1 > 0),
         ("i1 = i2 + 99999999999999999999999999", lambda i1, i2: i1 < 0),  # OverflowError
         ("99999999999999999999999999 * i1 = i2", lambda i1, i2: i1 < 0),
         ("4611686018427387904 * i1 = 4611686018427387904 * i2", lambda i1, i2: i1 == i2),
         ("3 * i1 = i2", lambda i1, i2: 3 * i1 == i2)]


@pytest.mark.parametrize("condition, holds", WHERE)
def test_where_conditions_past_int64_are_checked_exactly(condition, holds):
    """The structure check holds every input to exactly the unique set the condition names."""
    unique = holds(*(np.indices((3, 3)) + 1))
    k = tl.compile(f"in var A : [3 3] where {condition}\nout var C : [3 3]\nC = A * 2\n", backend="numpy",
                   check_structure=True)
    good = np.where(unique, 1.0, 0.0)
    assert (k(A=good)["C"] == 2 * good).all()
    if not unique.all():
        with pytest.raises(TensorLangError) as e:
            k(A=np.ones((3, 3)))
        assert e.value.code == "structure", e.value
        first = tuple(int(p) + 1 for p in np.argwhere(~unique)[0])
        assert f"A[{first[0]},{first[1]}] = 1.0 should be 0.0" in str(e.value)


DECLS = "in var A : [3 3]\nout var C : [3 3]\n"


@pytest.mark.parametrize("text, hint", [
    ("# the matrix\n" + DECLS + "C = A\n", "comments start with //"),
    ("/* the matrix */\n" + DECLS + "C = A\n", "comments start with //"),
    ("var input A : [3 3]\nvar output C : [3 3]\nC = A\n", "CFDlang's dialect"),
    ("input var A : [3 3]\nC = A\n", "CFDlang's dialect"),
    ("type matrix : [3 3]\nvar input A : matrix\n", "--lang cfd"),
    (DECLS + "C[i,j] += A[i,j]\n", "write C[i,j] = C[i,j] + ..."),
    (DECLS + "C = A\nC *= 2\n", "write C = C * ..."),
    (DECLS + "C[i][j] = A[j][i]\n", "one pair of brackets, separated by commas: C[i,j]"),
    (DECLS + "C = 2A\n", "a product is written with '*': 2 * A"),
    (DECLS + "C = 2.5 (A + A)\n", "2.5 * (...)"),
    (DECLS + "C = 1e5A\n", "1e5 * A"),
])
def test_what_new_users_write_from_elsewhere_gets_a_hint(text, hint):
    with pytest.raises(TensorLangError) as e:
        tl.check(text)
    assert e.value.code == "syntax" and hint in e.value.message and "\n" not in e.value.message, e.value


@pytest.mark.parametrize("text", [DECLS + "C = A # # A\n", "in var A : [2 n]\nout var C : [2 n];\nC = A\n",
                                  DECLS + "C = 2 * A +\n"])
def test_other_syntax_errors_keep_their_plain_message(text):
    with pytest.raises(TensorLangError) as e:
        tl.check(text)
    assert e.value.code == "syntax" and ": " not in e.value.message.split("unexpected ", 1)[1], e.value


@pytest.mark.parametrize("reads", ["--inputs", "--input"])
def test_run_output_that_names_an_input_file_is_refused_and_the_file_kept(tmp_path, monkeypatch, capsys, reads):
    """``run p.tl --inputs in.npz --output in.npz`` replaced the inputs with the results (exit 0)."""
    from tensorlang.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.tl").write_text("in var A : [3]\nout var B : [3]\nB = A * A\n")
    if reads == "--inputs":
        np.savez(tmp_path / "in.npz", A=np.arange(3.0))
        given = ["--inputs", "in.npz"]
    else:  # (a .npy file whose name ends in .npz: --output's name as given)
        with open(tmp_path / "in.npz", "wb") as fh:
            np.save(fh, np.arange(3.0))
        given = ["--input", "A=in.npz"]
    before = (tmp_path / "in.npz").read_bytes()
    assert main(["run", "p.tl", *given, "--output", "in.npz", "-q"]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "in.npz" in err
    assert (tmp_path / "in.npz").read_bytes() == before
    assert main(["run", "p.tl", *given, "--output", "out.npz", "-q"]) == 0  # another name: written
    assert np.load(tmp_path / "out.npz")["B"].tolist() == [0.0, 1.0, 4.0]


@pytest.mark.parametrize("make", [
    lambda: tl.build({"sum": tl.var("A", ("n",)) * 2}),        # a reserved word as an output
    lambda: tl.build({"out": tl.var("A", (2,)) * 2}),
    lambda: tl.build({"Ω": tl.var("A", ("n",)) * 2}),          # Unicode: the text's names are ASCII
    lambda: tl.var("Ä", ("n",)),
    lambda: tl.var("A", ("ñ",)),
])
def test_builder_names_the_model_language_cannot_write_are_refused_where_given(make):
    with pytest.raises(TensorLangError) as e:
        make()
    assert e.value.code == "input", e.value


def test_a_built_symbolic_program_with_plain_names_reads_back_at_each_binding():
    k = tl.build({"total": tl.var("A", ("n",)) * 2}, backend="numpy")
    assert k(A=np.ones(2))["total"].tolist() == [2.0, 2.0] and k(A=np.ones(3))["total"].sum() == 6.0


def test_a_variable_named_input_is_no_cfdlang_hint():
    with pytest.raises(TensorLangError) as info:
        tl.compile("var input : [2 2]]\nout var C : [2 2]\nC = input\n", backend="numpy")
    assert info.value.code == "syntax" and "CFDlang" not in info.value.message
