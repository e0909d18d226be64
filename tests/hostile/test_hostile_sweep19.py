"""Issue 41, nineteenth sweep: hostile inputs and what new users trip over, on the
surfaces besides the Diderot front end and einsum, each fixed at its cause and covered here.

* An extent written ``[1e3]`` (meaning 1000) or ``[2n]`` (meaning 2 * n) read as two
  dimensions, ``[1 e3]`` and ``[2 n]``, with a symbolic size ``e3`` that no input then
  bound, in the model language, TeIL and CFDlang alike: dimensions written together with
  nothing between them are error[syntax] saying how to write either meaning.
* ``tensorlang run p.tl --random-inputs=abc`` was refused by argparse as "argument
  --random-seed: invalid int value", an option the help does not list: a seed that is
  no whole number is error[input] naming ``--random-inputs=``, as a negative one was.
* What new users paste into a model-language program got lark's list of expected tokens:
  a trailing Python comment (``C = A + B  # add them``; of one word, ``# add``, it was
  "'add' is not declared", which now says comments start with //), ``s = sum(A)``, ``B = A[1]`` or
  ``B = A[:,1]`` (indices on the right of an operator-form statement), and characters
  from typeset text (U+2212 minus, U+00D7 times, Σ, a no-break space, a zero-width space):
  each gets a hint saying what tensorlang writes.
* ``tensorlang run p.tl --output r.npz`` wrote ``r.npz`` with mode 0600 whatever the
  umask (the atomic write's temporary file kept mkstemp's mode), and replaced an existing
  file's mode with it: a new file gets 0666 less the umask, as ``compile -o`` and numpy's
  own ``np.savez`` give, and an existing file keeps its mode.
* A float32 kernel called with a float64 input past float32's range (1e300) converted it
  to inf with numpy's RuntimeWarning pointing into tensorlang's sources, and where
  warnings are errors (``-W error``, pytest's ``filterwarnings = error``) the call failed
  with error[internal] "please report it": the conversion rounds as IEEE does (inf), a
  value as every computed inf is, with no warning, on every target.
* A STUR D fact with a product that holds nowhere (``(3 <= i < 3) * (0 <= j < 3)``) was
  refused as "dimension 2 (j) is not bounded" (the bounds' propagation stops at the empty
  i, leaving j unknown), and a D fact that adds such a product to a good one was refused
  the same way: a product that holds nowhere adds nothing to the hull, and a D fact of
  only such products is "dimension 1 is empty".
* ``B = A + 1`` (a new user's first program) said only "'+' needs equal shapes (there
  is no broadcasting)": where one side is a scalar, the message shows the index form
  that adds it entry by entry (``B[i] = A[i] + 1``).
"""

from __future__ import annotations

import os
import stat
import warnings

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError

JOINED = {
    "tl": "in var A : [{d}]\nout var B : [{d}]\nB = A + A\n",
    "teil": "in alloc A : [{d}]\nout alloc B : [{d}]\nB = add A A\n",
    "cfd": "var input A : [{d}]\nvar output B : [{d}]\nB = A + A\n",
}


@pytest.mark.parametrize("lang", sorted(JOINED))
@pytest.mark.parametrize("dims", ["1e3", "2n", "4 2n", "(n)(n)"])
def test_dimensions_written_together_are_a_syntax_error_saying_how_to_write_them(lang, dims):
    if "(" in dims and lang != "tl":
        pytest.skip("only the model language has size expressions")
    with pytest.raises(TensorLangError) as err:
        tl.check(JOINED[lang].format(d=dims), lang=lang)
    assert err.value.code == "syntax"
    assert "2*n" in str(err.value) and "1000" in str(err.value)
    assert "Traceback" not in str(err.value)


@pytest.mark.parametrize("lang", sorted(JOINED))
@pytest.mark.parametrize("dims", ["2 n", "1000", "e3", "n 2", "2,n"])
def test_dimensions_written_apart_still_declare(lang, dims):
    if "," in dims and lang != "teil":
        pytest.skip("only TeIL separates extents by commas")
    assert tl.check(JOINED[lang].format(d=dims), lang=lang) is not None


def test_size_expressions_still_join_their_terms():
    text = "in var A : [n 2*n (n+1) n*(n)]\nout var B : [n 2*n (n+1) n*(n)]\nB = A + A\n"
    assert tl.check(text) is not None


@pytest.mark.parametrize("seed", ["abc", "1.5", "-1", "", "0x10"])
def test_a_random_inputs_seed_that_is_no_whole_number_names_the_option_the_user_wrote(tmp_path, capsys, seed):
    from tensorlang.cli import main

    (tmp_path / "p.tl").write_text("in var A : [2]\nout var B : [2]\nB = A + A\n")
    assert main(["run", str(tmp_path / "p.tl"), f"--random-inputs={seed}"]) == 1
    out, err = capsys.readouterr()
    assert f"--random-inputs={seed}" in err and "error[input]" in err and "--random-seed" not in err, err


@pytest.mark.parametrize("seed", ["0", "7", "99999999999999999999999"])
def test_a_random_inputs_seed_that_is_a_whole_number_runs(tmp_path, capsys, seed):
    from tensorlang.cli import main

    (tmp_path / "p.tl").write_text("in var A : [2]\nout var B : [2]\nB = A + A\n")
    assert main(["run", str(tmp_path / "p.tl"), f"--random-inputs={seed}", "--backend", "numpy"]) == 0
    assert f"seed {seed}" in capsys.readouterr().out


HEAD = "in var A : [3 3]\nin var B : [3 3]\nout var C : [3 3]\nout var s : [ ]\n"


@pytest.mark.parametrize("line,said", [
    ("C = A + B  # add them", "comments start with //"),
    ("s = sum(A)", "s = sum(i) A[i]"),
    ("s = sum(A, axis=0)", "s = sum(i) A[i]"),
    ("C = A \u2212 B", "U+2212"),
    ("C = A \u00d7 B", "write '*'"),
    ("C = A\u00a0+ B", "plain space"),
    ("C = A\u200b + B", "delete it"),
    ("C[i,j] = \u03a3(k) A[i,k] * B[k,j]", "sum(k)"),
    ("s = A[1,1]", "s[] = A[1]"),
    ("C = A[:,1] + B", "C[j] = A[1,j]"),
    ("C = 2 * A[i,j]", "index form"),
])
def test_what_new_users_paste_gets_a_hint(line, said):
    with pytest.raises(TensorLangError) as err:
        tl.check(HEAD + line + "\n")
    assert err.value.code == "syntax" and said in err.value.message, err.value


@pytest.mark.parametrize("line", ["C = A # B . [2 3]", "C = (A # B # A) . [[2 3] [4 5]]", "s = sum(i) A[i,i]",
                                  "C = A - B // it\u2019s \u2212 fine"])
def test_what_reads_as_tensorlang_still_does(line):
    target = line.split()[0]
    head = HEAD.replace("out var s : [ ]\n" if target == "C" else "out var C : [3 3]\n", "")
    assert tl.check(head + line + "\n") is not None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_run_output_gets_the_mode_of_a_new_file_and_keeps_an_existing_ones(tmp_path, capsys):
    from tensorlang.cli import main

    (tmp_path / "p.tl").write_text("in var A : [2]\nout var B : [2]\nB = A + A\n")
    run = ["run", str(tmp_path / "p.tl"), "--random-inputs", "--backend", "numpy", "-q", "--output"]
    assert main([*run, str(tmp_path / "new.npz")]) == 0
    assert stat.S_IMODE((tmp_path / "new.npz").stat().st_mode) == 0o666 & ~_umask()
    (tmp_path / "old.npz").write_bytes(b"")
    (tmp_path / "old.npz").chmod(0o640)
    assert main([*run, str(tmp_path / "old.npz")]) == 0
    assert stat.S_IMODE((tmp_path / "old.npz").stat().st_mode) == 0o640
    assert (tmp_path / "old.npz").stat().st_size > 0


@pytest.mark.parametrize("backend", ["interp", "numpy", "c"])
def test_a_float64_input_past_float32_s_range_is_inf_in_a_float32_kernel_without_a_warning(backend):
    k = tl.compile("in var A : [4]\ninout var X : [4]\nout var B : [4]\nB = A * 1\nX = X + A\n",
                   backend=backend, dtype="float32")
    a = np.array([1e300, -1e300, 1e-300, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = k(A=a, X=a)
    b = r["B"]
    assert b.dtype == np.float32 and np.isposinf(b[0]) and np.isneginf(b[1]) and b[2] == 0 and np.isnan(b[3])
    assert np.isposinf(r["X"][0]) and np.isneginf(r["X"][1])


STUR = "y(i, j) := S(i, j)\ny:D(i, j) := {d}\nS:D(i, j) := (0 <= i < 3) * (0 <= j < 3)\n"


def test_a_stur_dimension_fact_that_holds_nowhere_is_said_to_be_empty():
    with pytest.raises(TensorLangError) as err:
        tl.compile(STUR.format(d="(3 <= i < 3) * (0 <= j < 3)"), lang="stur", backend="interp")
    assert err.value.code == "shape" and "dimension 1 of 'y' is empty" in err.value.message, err.value


def test_a_stur_dimension_fact_s_product_that_holds_nowhere_adds_nothing():
    k = tl.compile(STUR.format(d="(0 <= i < 3) * (0 <= j < 3) + (5 <= i < 2) * (0 <= j)"), lang="stur",
                   backend="interp")  # (a union: the compiled targets refuse it, error[backend])
    s = np.arange(9.0).reshape(3, 3)
    assert k(S=s)["y"].tolist() == s.tolist()


@pytest.mark.parametrize("decl,line,shown", [
    ("[6 2]", "B = A * 2 + 1", "B[i,j] = A[i,j] + 1"),
    ("[6]", "B = 1 - A", "B[i] = 1 - A[i]"),
])
def test_a_scalar_added_to_a_tensor_is_shown_in_index_form(decl, line, shown):
    with pytest.raises(TensorLangError) as err:
        tl.check(f"in var A : {decl}\nout var B : {decl}\n{line}\n")
    assert err.value.code == "shape" and "no broadcasting" in err.value.message and shown in err.value.message
    fixed = shown.replace("1", "2 + 1") if "*" in line else shown
    assert tl.check(f"in var A : {decl}\nout var B : {decl}\n{fixed}\n") is not None


def test_tensors_of_different_shapes_get_no_index_form_hint():
    with pytest.raises(TensorLangError) as err:
        tl.check("in var A : [6]\nin var C : [2]\nout var B : [6]\nB = A + C\n")
    assert "no broadcasting)" in err.value.message and "index form" not in err.value.message


def test_a_one_word_python_comment_is_undeclared_saying_how_comments_are_written():
    with pytest.raises(TensorLangError) as err:
        tl.check("in var A : [3]\nout var C : [3]\nC = A + A  # double\n")
    assert err.value.code == "undeclared" and "'double' is not declared" in err.value.message
    assert "comments start with //" in err.value.message
    with pytest.raises(TensorLangError) as err:
        tl.check("in var A : [3]\nout var C : [3]\nC = Q + A\n")
    assert "comment" not in err.value.message
