"""Issue 41, fourteenth sweep: hostile values on the kernels' call surfaces, each finding
fixed at its cause and covered here by its class.

* ``k(A=a, out=np.zeros(...))`` (an array where a dict belongs) and ``k.run(inputs,
  out=array)`` were error[internal] ("The truth value of an array ... is ambiguous") on
  every back end, plain and symbolic kernels alike; an empty array was silently ignored.
  Now error[input], "out= must be a dict".
* ``SymbolicKernel.for_inputs([a, b])`` (or None, a string) was error[internal]; it takes
  a mapping, as ``run`` does: error[input].
* ``tl.testing.assert_matches_reference`` passed a complex result whose imaginary part
  was wrong (``astype(float64)`` dropped it, with numpy's warning); an object or string
  result was "shape ()". A result must be real numbers of the reference's shape.
  ``tl.testing.reference(prog, [a])`` (a list for the inputs) was an AttributeError
  traceback on a plain kernel: error[input], as a call says.
* ``tl.einsum_path()`` (no operands) was an IndexError from tensorlang's own reading; now
  numpy's ValueError ("No input operands"), as ``np.einsum_path()`` and ``tl.einsum()`` say.
* An array for a temporary said "'t' is an 'temporary' variable": now "a temporary variable".
* A STUR input that breaks its structure was reported as ``M(0, 1) = np.float64(1.0)``
  (numpy's repr): now ``M(0, 1) = 1.0``, as the model language's check says it.
* ``tensorlang compile p.tl --emit c -o p.tl`` replaced the program with its C (exit 0: the
  program lost), as did ``-o`` naming a link to it; now error[input] and the file is kept.
* ``tensorlang run --inputs EMPTY.npz`` said "expected an .npz archive, got a single array",
  and ``--input A=EMPTY.npy`` numpy's "EOF: reading magic string": now "the file is empty".

Left by that sweep, fixed after it:

* ``SymbolicKernel.ir("nonsense")`` and ``.code("cuda")`` said the stage "depends on the
  symbolic sizes"; an unknown stage or target is error[backend] naming those that exist,
  as a plain kernel says (ProgramInterface._check_stage).
* An ``out=`` masked array with masked entries kept its mask, hiding the results written
  under it: error[input], as a masked input is.
* A file name with a newline or a control character was printed as it is, breaking the
  one-line diagnostics (``FILE: ok`` of ``tensorlang check``, ``FILE:LINE:COL: error``):
  such a name is printed in Python's escapes (errors.shown_name).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tensorlang as tl
import tensorlang.testing
from tensorlang.cli import main
from lang.stur.test_stur import DIAGONAL_MATVEC, SYMMETRIC_COPY  # the STUR programs the structure tests run

PRODUCT = "in var A : [n k]\nin var B : [k m]\nout var C : [n m]\nC = (A # B) . [2 3]\n"
BACKENDS = tl.available_backends()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("symbolic", [True, False])
@pytest.mark.parametrize("out", [np.zeros((2, 4)), np.zeros(0), [np.zeros((2, 4))], "C"])
def test_an_out_that_is_no_mapping_is_an_input_error(backend, symbolic, out):
    kernel = tl.compile(PRODUCT, backend=backend, params=None if symbolic else {"n": 2, "k": 3, "m": 4})
    a, b = np.ones((2, 3)), np.ones((3, 4))
    for call in (lambda: kernel(A=a, B=b, out=out), lambda: kernel.run({"A": a, "B": b}, out=out)):
        with pytest.raises(tl.TensorLangError, match="out= must be a dict") as caught:
            call()
        assert caught.value.code == "input"


@pytest.mark.parametrize("arrays", [[np.ones((2, 3)), np.ones((3, 4))], None, "AB", (np.ones(3),)])
def test_for_inputs_takes_a_mapping(arrays):
    kernel = tl.compile(PRODUCT, backend="numpy")
    with pytest.raises(tl.TensorLangError, match="inputs must be a dict") as caught:
        kernel.for_inputs(arrays)
    assert caught.value.code == "input"
    assert kernel.for_inputs({"A": np.ones((2, 3)), "B": np.ones((3, 4))}).shapes["C"] == (2, 4)



@pytest.mark.parametrize(("flag", "name"), [("--inputs=", "empty.npz"), ("--input=A=", "empty.npy")])
def test_an_empty_input_file_is_said_to_be_empty(tmp_path, capsys, flag, name):
    program, empty = tmp_path / "s.tl", tmp_path / name
    program.write_text("in var A : [2 3]\nout var C : [2]\nC[i] = sum(j) A[i,j]\n")
    empty.write_bytes(b"")
    assert main(["run", str(program), flag + str(empty)]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "the file is empty" in err and "single array" not in err


@pytest.mark.parametrize("result", [np.array([3 + 5j, 12]), np.array([3.0, None]), "abc", np.ones(3)])
def test_the_reference_check_takes_real_results_of_the_reference_s_shape(result):
    source = "in var A : [2 3]\nout var C : [2]\nC[i] = sum(j) A[i,j]\n"
    inputs = {"A": np.arange(6.0).reshape(2, 3)}
    tensorlang.testing.assert_matches_reference(source, inputs, {"C": np.array([3.0, 12.0])})
    with pytest.raises(AssertionError, match=r"^C: .* of shape .*, the reference float64 of shape \(2,\)$"):
        tensorlang.testing.assert_matches_reference(source, inputs, {"C": result})


@pytest.mark.parametrize("symbolic", [True, False])
@pytest.mark.parametrize("inputs", [[np.ones((2, 3))], None])
def test_the_reference_of_inputs_that_are_no_mapping_is_an_input_error(symbolic, inputs):
    kernel = tl.compile("in var A : [n 3]\nout var C : [n]\nC[i] = sum(j) A[i,j]\n", backend="numpy",
                        params=None if symbolic else {"n": 2})
    with pytest.raises(tl.TensorLangError, match="inputs must be a dict") as caught:
        tensorlang.testing.reference(kernel, inputs)
    assert caught.value.code == "input"


def test_einsum_path_without_operands_is_numpy_s_value_error():
    with pytest.raises(ValueError, match="No input operands"):
        tl.einsum_path()


def test_an_array_for_a_temporary_or_an_out_variable_says_which_it_is():
    kernel = tl.compile("in var A : [2]\nout var C : [2]\nvar t : [2]\nt = A * 2\nC = t\n", backend="numpy")
    for name, said in (("t", "'t' is a temporary variable and takes no input"),
                       ("C", "'C' is an 'out' variable and takes no input; pass it in out=")):
        with pytest.raises(tl.TensorLangError, match=said):
            kernel.run({"A": np.ones(2), name: np.ones(2)})


@pytest.mark.parametrize(("source", "inputs", "said"), [
    (DIAGONAL_MATVEC, {"M": np.ones((2, 2)), "x": np.ones(2)}, "M(0, 1) = 1.0 is outside the unique set M:U and should be 0"),
    (SYMMETRIC_COPY, {"S": np.array([[1.0, 2.0], [3.0, 4.0]])}, "S(1, 0) = 3.0 is a redundant copy by S:R and should be 2.0")])
def test_a_broken_stur_structure_names_the_numbers_as_python_prints_them(source, inputs, said):
    kernel = tl.compile(source, lang="stur", params={"N": 2}, backend="numpy", check_structure=True)
    with pytest.raises(tl.TensorLangError, match=re.escape(said)) as caught:
        kernel.run(inputs)
    assert caught.value.code == "structure" and "np.float64" not in str(caught.value)


@pytest.mark.parametrize("output", ["p.tl", "./p.tl", "link.tl", "hard.tl"])
def test_compile_never_writes_over_its_program(tmp_path, capsys, monkeypatch, output):
    monkeypatch.chdir(tmp_path)
    program = tmp_path / "p.tl"
    text = "in var A : [2 3]\nout var C : [2]\nC[i] = sum(j) A[i,j]\n"
    program.write_text(text)
    (tmp_path / "link.tl").symlink_to(program)
    os.link(program, tmp_path / "hard.tl")
    assert main(["compile", "p.tl", "--emit", "c", "-o", output]) == 1
    assert "error[input]" in capsys.readouterr().err and program.read_text() == text
    assert main(["compile", "p.tl", "--emit", "c", "-o", "p.c"]) == 0 and "#include" in (tmp_path / "p.c").read_text()


@pytest.mark.parametrize("symbolic", [True, False])
def test_an_unknown_stage_or_target_names_those_that_exist(symbolic):
    kernel = tl.compile(PRODUCT, backend="numpy", params=None if symbolic else {"n": 2, "k": 3, "m": 4})
    for call, said in ((lambda: kernel.ir("nonsense"), "stage 'nonsense' is not available"),
                       (lambda: kernel.ir(["ein"]), r"stage \['ein'\] is not available"),
                       (lambda: kernel.code("cuda"), "no 'cuda' code generator")):
        with pytest.raises(tl.TensorLangError, match=said) as caught:
            call()
        assert caught.value.code == "backend" and "available: " in str(caught.value)
        assert "symbolic sizes" not in str(caught.value)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("symbolic", [True, False])
def test_an_out_masked_array_with_masked_entries_is_an_input_error(backend, symbolic):
    kernel = tl.compile(PRODUCT, backend=backend, params=None if symbolic else {"n": 2, "k": 3, "m": 4})
    a, b = np.ones((2, 3)), np.ones((3, 4))
    hidden = np.ma.masked_array(np.zeros((2, 4)), mask=np.eye(2, 4, dtype=bool))
    with pytest.raises(tl.TensorLangError, match=r"out\['C'\] is a masked array with masked entries") as caught:
        kernel(A=a, B=b, out={"C": hidden})
    assert caught.value.code == "input" and not hidden.data.any()
    unmasked = np.ma.masked_array(np.zeros((2, 4)), mask=False)  # no entry hidden: the results land there
    kernel(A=a, B=b, out={"C": unmasked})
    assert np.array_equal(unmasked, np.full((2, 4), 3.0))


@pytest.mark.parametrize("name", ["a\nb.tl", "a\rb.tl", "a\x1b[2Jb.tl", "a\u2028b.tl"])
def test_a_file_name_with_a_control_character_is_printed_escaped(tmp_path, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text("in var A : [2]\nout var C : [2]\nC = A\n")
    (tmp_path / "bad.tl").write_text("in var A : [2]\nout var C : [3]\nC = A\n")
    os.link(tmp_path / "bad.tl", tmp_path / ("bad" + name))
    assert main(["check", name, "bad" + name, "missing" + name]) == 1
    out, err = capsys.readouterr()
    assert out == f"{name!r}: ok\n"
    first = err.splitlines()
    assert first[0].startswith(repr("bad" + name) + ":3:1: error[") and repr("missing" + name) in err
    assert not any(c in (out + err).replace("\n", "") for c in name if not c.isprintable())
    assert main(["check", "bad.tl"]) == 1 and capsys.readouterr().err.startswith("bad.tl:3:1: error[")
