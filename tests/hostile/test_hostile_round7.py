"""Seventh hostile round, aimed at the Diderot run path (NRRD and sequence inputs, string
inputs, ``-o`` paths): holes found, each fixed at its cause and covered here.

* A count of more than 4300 digits in a message was error[internal] (Python's limit on
  turning an int into text): a ``.npy`` header of 500 axes, an NRRD ``sizes`` of 500
  numbers, a Diderot grid of 300 iterators, a ``tensor[...]`` of 300 axes.  Such counts are
  written ``at least 2^K`` now (``limits.shown_count``), and the memory message's bytes too.
* An NRRD header whose ``space`` (or ``space dimension``) has another dimension than its
  space axes loaded where space directions were given (``space: RAS`` with 2-vectors as a
  2-D image); Teem refuses the header, and so does the reader now.
* ``-o -`` wrote a file named ``-``; Teem's nrrdSave, so Diderot's executables, write the
  NRRD to standard output, and so does ``tensorlang run`` now.  ``-o ''`` was refused after
  the run, by the write; now before it.
* A string input holding a NUL: the C executor printed up to it, the interpreter all of
  it; one holding a lone surrogate (``'\\ud800'``, from Python) was a UnicodeEncodeError
  traceback in the C executor.  Both are error[input].  A string literal with ``\\000``
  printed past it in the interpreter; it ends there now, as in C and in diderotc's
  executables (``print("|c\\000d|")`` prints ``|c``).
* Under ``-W error``: a text sequence file with no numbers (numpy's UserWarning, then a
  misleading "items of sizes [1]") and NRRD axis mins and maxs of one node-centred sample
  (1/0) or from -inf to inf (numpy's RuntimeWarning) were error[internal]; they are
  error[input] with no warning.
* An ``int[]`` input from a file with an item past 64 bits (``1e30``, ``inf``, a uint64 of
  2^64 - 1) was error[internal] (OverflowError) in the interpreter: error[input] now.  And
  the C executor held dynamic sequences' items as doubles, so ``int{} xs = {2^53 + 1}``
  printed 2^53 there (a documented wrong answer): an int sequence's cells hold int64s now
  (``tl_ati``, the same fix as a review's, test_review_54).
* ``-xs 9007199254740993 1`` for an ``int{2}`` input was read as reals (2^53 in both
  executors), ``-bs true false`` for a ``bool{2}`` was refused, and ``--help`` showed their
  defaults as Python tuples; their components are read as ints and bools now.
"""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import limits
from tensorlang.cli import main

_RAW = np.arange(16, dtype="<f8").tobytes()
_HEAD = "NRRD0004\ntype: double\ndimension: 2\nsizes: 4 4\nendian: little\nencoding: raw\n"


def _npy_of_shape(path, shape) -> None:
    """A .npy file of a header alone: ``shape`` of float64 and no data."""
    text = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + "".join(f"{n}, " for n in shape) + "), }"
    text = text.ljust(-(-(len(text) + 13) // 64) * 64 - 13) + "\n"
    path.write_bytes(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(text)) + text.encode())


def _strand_program(extra: str = "", body: str = "stabilize;", create: str = "[ S(i) | i in 0..0 ]",
                    params: str = "int i") -> str:
    return f"{extra}\nstrand S({params}) {{ output real o = 0.0; update {{ {body} }} }}\ninitially {create};\n"


_ITERS = 32  # (bounds.MAX_AXES: a grid of more iterators, a type of more axes is refused for that first)


@pytest.mark.parametrize("case", ["npy", "nrrd", "allocation", "grid", "tensor"])
def test_counts_of_thousands_of_digits_are_too_large_not_internal(case, tmp_path):
    if case == "npy":
        _npy_of_shape(tmp_path / "big.npy", [10**9] * 500)
        call = lambda: tl.fields.load(tmp_path / "big.npy")  # noqa: E731
    elif case == "nrrd":
        (tmp_path / "big.nrrd").write_bytes(_HEAD.replace("dimension: 2", "dimension: 500").replace(
            "sizes: 4 4", "sizes:" + " 1000000000" * 500).encode() + b"\n")
        call = lambda: tl.fields.load(tmp_path / "big.nrrd")  # noqa: E731
    elif case == "allocation":
        call = lambda: limits.check_allocation(10**5000, 8, "x")  # noqa: E731
    elif case == "grid":
        names = [f"i{j}" for j in range(_ITERS)]
        text = _strand_program(params=", ".join(f"int {n}" for n in names), create=(
            f"[ S({', '.join(names)}) | " + ", ".join(f"{n} in 0..9223372036854775806" for n in names) + " ]"))
        call = lambda: tl.compile(text, lang="diderot", backend="interp")()  # noqa: E731
    else:
        text = _strand_program("input tensor[" + ",".join(["1000000000000000000"] * _ITERS) + "] t;")
        call = lambda: tl.compile(text, lang="diderot", backend="interp")  # noqa: E731
    with pytest.raises(tl.TensorLangError) as caught:
        call()
    assert caught.value.code == "too-large" and "at least 2^" in caught.value.message


@pytest.mark.parametrize("space,ok", [
    ("space: RAS\nspace directions: (1,0) (0,1)\n", False),
    ("space dimension: 3\nspace directions: (1,0) (0,1)\n", False),
    ("space: RAS\nspace directions: (1,0,0) (0,1,0)\n", False),
    ("space dimension: 2\nspace directions: (1,0) (0,2)\n", True),
])
def test_a_space_of_another_dimension_than_the_images_is_refused(space, ok, tmp_path):
    (tmp_path / "a.nrrd").write_bytes((_HEAD + space + "\n").encode() + _RAW)
    if ok:
        assert tl.fields.load(tmp_path / "a.nrrd").world[1, 1] == 2.0
        return
    with pytest.raises(tl.TensorLangError, match="space dimension 3 for 2 space axes") as caught:
        tl.fields.load(tmp_path / "a.nrrd")
    assert caught.value.code == "input"


_ONE_OUTPUT = _strand_program("input real x = 1.0;", body="o = x; stabilize;")


def test_minus_o_dash_writes_the_nrrd_to_standard_output(tmp_path, monkeypatch, capfdbinary):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.diderot").write_text(_ONE_OUTPUT)
    assert main(["run", "p.diderot", "--backend", "interp", "-x", "2.5", "-o", "-"]) == 0
    out = capfdbinary.readouterr().out
    assert out.startswith(b"NRRD0003\n") and out.endswith(struct.pack("<d", 2.5)) and not (tmp_path / "-").exists()


def test_an_empty_output_name_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.diderot").write_text(_strand_program(body='print("ran\\n"); stabilize;'))
    assert main(["run", "p.diderot", "--backend", "interp", "-o", ""]) == 1
    out, err = capsys.readouterr()
    assert "error[input]" in err and "it is no name" in err and "ran" not in out


@pytest.mark.parametrize("value,message", [("a\0b", "x00"), ("\ud800", "ud800")])
def test_a_string_input_no_c_string_carries_is_an_input_error(value, message):
    run = tl.compile(_strand_program('input string s = "d";', body="print(s); stabilize;"), lang="diderot",
                     backend="interp")
    with pytest.raises(tl.TensorLangError, match=message) as caught:
        run(s=value)
    assert caught.value.code == "input"
    assert run(s="x\udcff").printed == "x\udcff"  # (a command line's byte that is no UTF-8: kept)


def test_a_string_literal_ends_at_its_first_nul_as_in_c():
    text = _strand_program('input string s = "a\\000b";', body='print(s, "|c\\000d|", 1, "\\055\\n"); stabilize;')
    run = tl.compile(text, lang="diderot", backend="interp")
    assert run().printed == "a|c17\n"  # diderotc's executable: "|c17" of the print (\055 is decimal: '7')
    assert "default: a\n" in run.usage()


@pytest.mark.parametrize("name,text,message", [
    ("e.txt", "", "holds no numbers"),
    ("c.txt", "# only a comment\n", "holds no numbers"),
    ("node.nrrd", _HEAD.replace("4 4", "1 4") + "centers: node node\naxis mins: 0 0\naxis maxs: 1 1\n\n",
     "no finite sample spacing"),
    ("inf.nrrd", _HEAD + "axis mins: -inf 0\naxis maxs: inf 1\n\n", "no finite sample spacing"),
])
def test_files_that_made_numpy_warn_are_input_errors_without_a_warning(name, text, message, tmp_path):
    (tmp_path / name).write_bytes(text.encode() + (_RAW if name.endswith(".nrrd") else b""))
    if name.endswith(".txt"):
        program = tl.compile(_strand_program("input real[] xs;", create="{ S(x) | x in xs }", params="real x"),
                             lang="diderot", backend="interp")
        call = lambda: program(xs=str(tmp_path / name))  # noqa: E731
    else:
        call = lambda: tl.fields.load(tmp_path / name)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(tl.TensorLangError, match=message) as caught:
            call()
    assert caught.value.code == "input"


@pytest.mark.parametrize("text", ["1\n1e30\n", "1\ninf\n", "nan\n"])
def test_an_int_sequence_file_beyond_64_bits_is_an_input_error(text, tmp_path):
    (tmp_path / "ns.txt").write_text(text)
    program = tl.compile(_strand_program("input int[] ns;", create="{ S(n) | n in ns }", params="int n"),
                         lang="diderot", backend="interp")
    with pytest.raises(tl.TensorLangError, match="no 64-bit int") as caught:  # (1e30 was an OverflowError)
        program(ns=str(tmp_path / "ns.txt"))
    assert caught.value.code == "input"


@pytest.mark.slow
@pytest.mark.parametrize("items", [[2**53 + 1], [-(2**53) - 1]])
def test_int_sequence_items_past_2_to_the_53_stay_whole_in_c(items):
    text = _strand_program("input int[] xs;", body='print(xs{0}, "\\n"); stabilize;')
    assert tl.compile(text, lang="diderot", backend="c")(xs=items).printed == f"{items[0]}\n"  # (was 2^53: doubles)


def test_int_and_bool_sequence_inputs_on_the_command_line_are_read_as_such(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.diderot").write_text(_strand_program("input int{2} xs = {1, 2};\ninput bool{2} bs = {true, false};",
                                                        body='print(xs{0}, " ", bs{1}, "\\n"); stabilize;'))
    argv = ["run", "p.diderot", "--backend", "interp", "-o", "o.nrrd"]
    assert main([*argv, "--help"]) == 0  # (the defaults were "(1, 2)" and "(True, False)", true refused)
    assert "default: 1 2\n" in capsys.readouterr().out
    assert main([*argv, "-xs", str(2**53 + 1), "0", "-bs", "false", "TRUE"]) == 0  # (2^53 + 1 was read as a real)
    assert capsys.readouterr().out == f"{2**53 + 1} true\n"
    assert main([*argv, "-xs", "1.5", "0"]) == 1 and "expects an integer" in capsys.readouterr().err
