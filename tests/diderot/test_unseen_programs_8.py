"""A seventh round of programs and inputs (``more/unseen8/``, ``unseen8_inputs.py``): programs as researchers write
them (ridges from the eigensystem of a 3-D Hessian, the shape operator of isosurfaces, Jacobian, curl and divergence
of vector-field images, diffusion tensors, streamlines by RK4 that die leaving the field, fields built by arithmetic
and their derivatives by the product and quotient rules), language corners (order-3 and order-4 tensors with
⊗ • : ×, slices, functions of fields, int and real promotion, sequences grown with ``@`` and printed, a 1.0
program), NRRD files of every sample type, byte order and encoding (the type fixed by the file a program names),
rotated axes, NaN samples, and inputs given in odd forms (hexadecimal reals, ``+`` signs, bools as words and
digits).  Each run must print and write what the executable of ``diderotc --double --exec`` did
(``more/unseen8/diderotc.json``), on the interpreter and on the C executor: the same exit status, the same text
(numbers within 1e-9), the same files (``agreement.same_files``)."""

from __future__ import annotations

import pytest

from agreement import compiled, round_tests  # tests/diderot is on the path: the folder is not a package
from tensorlang.errors import TensorLangError
from tensorlang.targets.c import build as c_build
import unseen8_inputs
from unseen8_inputs import PROGRAMS, RUNS, make

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
#: runs where tensorlang differs from diderotc's executable on purpose (docs/diderot.md): run -> why
DIFFERENT: dict[str, str] = {
    "x13_7": "an input named v: diderotc's executable takes -v as its own --verbose",
    "x20_flat": "inside(x, F) over an axis of 1 sample: diderotc's executable says true and reads past the image",
    **dict.fromkeys(["x24_slices", "x24_list"], "data in several files (data file: slice%d.raw 0 7 1, LIST): Teem reads "
                    "them; error[input] here (only one data file is read)"),
}
_run, test_every_run_has_its_stored_outputs, test_the_interpreter_prints_and_writes_what_diderotc_does, \
    test_the_c_executor_prints_and_writes_what_diderotc_does = round_tests(unseen8_inputs, DIFFERENT)


@pytest.mark.parametrize("backend", ["interp", pytest.param("c", marks=[needs_cc, pytest.mark.slow])])
def test_hexadecimal_reals_on_the_command_line_are_read_as_strtod_reads_them(backend, tmp_path, monkeypatch):
    """``-r 0X1.8p1`` is 3 and ``-m 0x1 -0x.8 0x1p-1074 +0x0`` a matrix for Diderot's executables (Teem's option
    parser reads reals with strtod); tensorlang refused them as error[input]; ``-r 0x`` stays refused."""
    for name in ("x13_12", "x13_13"):
        (tmp_path / name).mkdir()
        _run(next(r for r in RUNS if r[0] == name), backend, tmp_path / name, monkeypatch)


@needs_cc
@pytest.mark.slow
@pytest.mark.parametrize("name", ["x06", "x21"])
def test_user_functions_of_fields_run_in_c(name, tmp_path, monkeypatch):
    """A function with a field parameter (probed, differentiated, tested with ``inside``, handed on to another
    function, given ``F + G`` or ``a*F - G`` with ``a`` a strand's local) was error[backend] in the C executor
    ("the field F as a value"): the run fell back to the interpreter."""
    _run(next(r for r in RUNS if r[0] == name), "c", tmp_path, monkeypatch)


@pytest.mark.parametrize("run", ["x24_slices", "x24_list"])
def test_data_in_several_files_is_refused_saying_so(run, tmp_path, monkeypatch):
    """A detached header whose data are in several files, by a format or a list: error[input] saying that one data
    file is read; the list's names (lines of the header after ``data file: LIST``) were called malformed header
    lines ("header line 11, 'slice0.raw', is no 'field: value' line")."""
    name, prog, argv = next(r for r in RUNS if r[0] == run)
    make(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TensorLangError, match="only one data file is read") as exc:
        compiled(str(PROGRAMS / f"{prog}.diderot"), "interp").main(list(argv))
    assert exc.value.code == "input"
