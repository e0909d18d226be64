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

import bz2
import gzip
import json

import numpy as np
import pytest

from agreement import compiled, round_tests  # tests/diderot is on the path: the folder is not a package
from tensorlang.errors import TensorLangError
from tensorlang.targets.c import build as c_build
import unseen8_inputs
from unseen8_inputs import PROGRAMS, RUNS, STORED, make

EXPECTED = json.loads(STORED.read_text())
needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
#: runs where tensorlang differs from diderotc's executable on purpose (docs/diderot.md): run -> why
DIFFERENT: dict[str, str] = {
    "x13_7": "an input named v: diderotc's executable takes -v as its own --verbose",
    "x20_flat": "inside(x, F) over an axis of 1 sample: diderotc's executable says true and reads past the image",
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


@pytest.mark.parametrize(("run", "says"), [
    ("x24_lmiss", r"data file 'slice9.raw': .*No such file"),
    ("x24_short", r"data file 'slice0.raw': Size of the data does not equal"),
    ("x24_count", r"names 3 files; sizes \[9, 8\] need a count that divides 8, each file an equal slab of the slowest"),
    ("x24_huge", r"names 1000000000001 files; sizes \[9, 8\] need 8, each file holding axes \[0\]")])
def test_data_in_several_files_that_do_not_fit_are_refused_saying_why(run, says, tmp_path, monkeypatch):
    """Data in several files, by a format (``data file: slice%d.raw 7 0 -1``) or a list (``data file: LIST 2`` and a
    name a line), are read as Teem reads them (x24_slices, _list, _rev, _gz, _txt above, on both executors: they were
    error[input] "only one data file is read"); where they do not fit, diderotc's executable exits 1 and tensorlang
    says error[input] naming the file or the count: a missing file of a list, a file too short, a count that does not
    divide the slowest axis, a format of 10**12 files (refused before any name is made)."""
    assert EXPECTED[run]["rc"] == 1
    name, prog, argv = next(r for r in RUNS if r[0] == run)
    make(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TensorLangError, match=says) as exc:
        compiled(str(PROGRAMS / f"{prog}.diderot"), "interp").main(list(argv))
    assert exc.value.code == "input"


_G = np.arange(24, dtype="<f4").reshape(4, 3, 2)  # sizes 2 3 4, slowest axis first
#: data file lines and what Teem's unu read of them (checked with unu save): True, the samples of _G; else refused
_LAYOUTS = {
    "r%03d.raw 0 11 1 1": True,  # 1-D pieces of a 3-D image, by a format of width 3
    "b%d.bz2 3 0 -1": "reversed",  # bzip2 pieces, the numbers counted down
    "h%d.hex 0 3 1": True,  # hex pieces
    "be%d.raw 0 3 1": "big",  # each file in the header's byte order
    "LIST\nz0.raw\n../sub/z1.raw\n../z2.raw\n{abs}/z3.raw\n": True,  # names from the header's folder, or absolute
    "LIST\r\nz0.raw\r\nz1.raw\r\nz2.raw\r\nz3.raw\r\n": True,
    "LIST\nz0.raw\nz1.raw\nz2.raw\nz3.raw": "names 3 files",  # a last name without its line end: not read
    "LIST\nz0.raw\nz1.raw\n\nz2.raw\nz3.raw\n": "names 5 files",  # a blank line is a name
    "LIST x\nz0.raw\n": "LIST is followed by the number of axes",
    "z%d.raw 0 3 1 4": "each file holds 4 axes; the image has 3",
    "z%d.raw 0 3 0": "a step from the first to the last",
    "z%d%d.raw 0 3 1": "a conversion other than one %d",
    "z%u.raw 0 3 1": "data file 'z%u.raw 0 3 1': .*No such file",  # (no %d: one file of that name, as Teem reads it)
    "all.gz": True,  # one gzip file, its byte skip of 4 after inflating (pynrrd skipped 4 compressed bytes too)
}


@pytest.mark.parametrize("layout", list(_LAYOUTS))
def test_data_in_several_files_are_read_in_every_layout_as_teem_reads_them(layout, tmp_path):
    """The layouts the x24 runs leave out, read or refused as ``unu save`` reads them: pieces of one axis of a
    3-D image, bzip2, hex and big-endian pieces, a list's names relative to the header's folder (``../``), absolute,
    ended by CRLF; a list whose last name has no line end or that holds a blank line, a SUBDIM past the dimension,
    a step of 0, two conversions, ``%u`` (no format: one file's name); and one gzip file's byte skip."""
    from tensorlang.sampling.image import read_nrrd

    sub = tmp_path / "sub"
    sub.mkdir()
    for k in range(4):
        for folder in (tmp_path, sub):
            _G[k].tofile(folder / f"z{k}.raw")
        (sub / f"b{k}.bz2").write_bytes(bz2.compress(_G[k].tobytes()))
        (sub / f"h{k}.hex").write_text(_G[k].tobytes().hex() + "\n")
        (sub / f"be{k}.raw").write_bytes(_G[k].astype(">f4").tobytes())
    for k in range(12):
        _G.reshape(12, 2)[k].tofile(sub / f"r{k:03d}.raw")
    (sub / "all.gz").write_bytes(gzip.compress(b"junk" + _G.tobytes()))
    encoding = {"b%": "bzip2", "h%": "hex", "al": "gzip\nbyte skip: 4"}.get(layout[:2], "raw")
    endian = "big" if layout.startswith("be") else "little"
    (sub / "x.nhdr").write_bytes(f"NRRD0004\ntype: float\ndimension: 3\nsizes: 2 3 4\nendian: {endian}\nencoding: "
                                 f"{encoding}\ndata file: {layout.format(abs=sub)}\n".encode().removesuffix(b"\n" if layout.startswith("LIST") else b""))
    want = _LAYOUTS[layout]
    if isinstance(want, str) and want not in ("reversed", "big"):
        with pytest.raises(TensorLangError, match=want):
            read_nrrd(str(sub / "x.nhdr"))
    else:
        got = read_nrrd(str(sub / "x.nhdr"))[0]
        assert np.array_equal(got, (_G[::-1] if want == "reversed" else _G).T)
