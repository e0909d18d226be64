"""Ninth hostile round, aimed at Diderot runs and their inputs: holes found, each fixed at
its cause and covered here.

* An NRRD image's data were read whole whatever the header's sizes said: a 4 x 4 image
  with gigabytes behind its header (a sparse file costs no disk) was read into memory
  (raw: 2 GiB read for 16 samples, then refused; hex, gzip: 4 GiB held, then the image
  loaded), and one line skipped by ``line skip`` was read whole however long.  The bytes
  after the line skip are bounded by what the sizes, type, encoding and byte skip take
  (``sampling/image.py``, ``_bound_data``), the skipped lines by MAX_HEADER_BYTES: both
  error[input] before any data are read.
* ``sizes: 4 nan`` made pynrrd's cast warn (a RuntimeWarning, error[internal] under
  ``-W error``) before the sizes were refused.
* From Python, a ragged list as an image input was a ValueError traceback and ``r=10**400``
  for a real input an OverflowError; a tensor input took ``None`` as NaN and a complex
  number as its real part (with a ComplexWarning).  All four are error[input] now.
* ``p.run("img")`` (no mapping) was an AttributeError, inputs named ``1`` and ``"zz"`` a
  TypeError, and ``progress=3`` or ``on_snapshot="f"`` a TypeError inside the run: error[input].
* ``q=b"x.nrrd"`` for a ``real{}`` input ran with the bytes' codes as items: error[input].
* ``p.main(["-o", "a\\0b"])`` was a ValueError (an embedded NUL), ``p.main(None)`` or a word
  that is no str a TypeError: error[input].
* ``k.dask(X=object_array, batch="N")`` was error[internal] (dask's NotImplementedError on
  chunking object data): error[input], as the kernel's own call says.
* A Diderot input holding an int of more than 4300 digits (``k=-10**5000``, ``r=[10**5000]``)
  made the message's ``repr`` raise ValueError (Python's digit limit): the messages say so.
"""

from __future__ import annotations

import bz2
import gzip
import os
import re
import warnings

import numpy as np
import pytest

import tensorlang as tl

_DATA = np.arange(16, dtype="<f8").tobytes()
_PAYLOAD = {"raw": _DATA, "hex": _DATA.hex().encode() + b"\n", "gzip": gzip.compress(_DATA),
            "bzip2": bz2.compress(_DATA), "ascii": b" ".join(b"%d" % k for k in range(16)) + b"\n"}
_HEADER = "NRRD0004\ntype: double\ndimension: 2\nsizes: 4 4\nendian: little\nencoding: {}\n"


@pytest.mark.parametrize("encoding", list(_PAYLOAD))
@pytest.mark.parametrize("detached", [False, True])
def test_data_far_beyond_the_sizes_are_refused_before_reading(encoding, detached, tmp_path):
    """16 samples, then 16 GiB (sparse): refused at once, the file never read (it was read whole); raw data's
    samples are read alone, the rest unread, as Teem reads them (round 10): the image loads."""
    header = _HEADER.format(encoding) + ("data file: d.dat\n" if detached else "")
    data = tmp_path / ("d.dat" if detached else "i.nrrd")
    with open(tmp_path / "i.nrrd", "wb") as fh:
        fh.write(header.encode() + b"\n")
    with open(data, "ab") as fh:
        fh.write(_PAYLOAD[encoding])
    assert tl.fields.load(tmp_path / "i.nrrd").data.sum() == 120  # the honest file loads
    os.truncate(data, 16 << 30)
    if encoding == "raw":
        assert tl.fields.load(tmp_path / "i.nrrd").data.sum() == 120
        return
    with pytest.raises(tl.TensorLangError, match=f"bytes of {encoding} data follow its header, more than") as caught:
        tl.fields.load(tmp_path / "i.nrrd")
    assert caught.value.code == "input"


def test_a_skipped_line_of_gigabytes_is_refused_before_reading(tmp_path):
    (tmp_path / "i.nhdr").write_bytes((_HEADER.format("raw") + "line skip: 1\ndata file: d.raw\n").encode())
    with open(tmp_path / "d.raw", "wb") as fh:
        fh.truncate(16 << 30)  # one line of zeros, no line end
    with pytest.raises(tl.TensorLangError, match="line skip passes more than"):
        tl.fields.load(tmp_path / "i.nhdr")


def test_sizes_of_nan_are_refused_without_a_warning(tmp_path):
    (tmp_path / "i.nrrd").write_bytes(_HEADER.format("raw").replace("4 4", "4 nan").encode() + b"\n" + _DATA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(tl.TensorLangError, match="sizes must be whole numbers"):
            tl.fields.load(tmp_path / "i.nrrd")


_PROGRAM = """#version 2.0
input image(2)[] img;
input real r = 1.0;
input vec2 v = [1.0, 2.0];
field#0(2)[] F = img ⊛ tent;
strand S (int i) {
  output real x = 0.0;
  update { x = F([1.0, 1.0]) + r + v[0] + v[1]; stabilize; }
}
initially [ S(i) | i in 0..0 ];
"""


@pytest.fixture(scope="module")
def program():
    return tl.compile(_PROGRAM, lang="diderot", backend="interp")


@pytest.mark.parametrize("inputs, message", [
    ({"img": [[1.0], [1.0, 2.0]]}, "an image is an array of real numbers"),
    ({"r": 10**400}, "a number beyond the doubles"),
    ({"r": -10**400}, "a number beyond the doubles"),
    ({"v": [1.0, None]}, "must be an array of shape \\(2,\\) of real numbers"),
    ({"v": [1 + 2j, 2.0]}, "must be an array of shape \\(2,\\) of real numbers"),
    ({"v": [1.0, 10**400]}, "beyond the doubles"),
])
def test_python_inputs_that_are_no_real_numbers_are_input_errors(program, inputs, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(tl.TensorLangError, match=message) as caught:
            program(**{"img": np.ones((4, 4)), **inputs})
    assert caught.value.code == "input"


def test_real_numbers_of_every_python_kind_still_run(program):
    result = program(img=np.ones((4, 4)), r=np.float16(1.0), v=np.array([1, 2], dtype=object))
    assert result["x"].tolist() == [5.0]


@pytest.mark.parametrize("args, kwargs, message", [
    (("img",), {}, "the inputs are a mapping from names to values, got str"),
    (([("img", 1.0)],), {}, "a mapping from names to values, got list"),
    (({1: 2, "zz": 3},), {}, "no input 'zz', 1;"),
    (({"img": np.ones((4, 4))},), {"snapshot": 1, "on_snapshot": "f"}, "on_snapshot must be callable or None"),
    (({"img": np.ones((4, 4))},), {"progress": 3}, "progress must be callable or None"),
])
def test_run_arguments_of_the_wrong_kind_are_input_errors(program, args, kwargs, message):
    """``p.run("img")`` was an AttributeError, ``{1: 2, "zz": 3}`` a TypeError (sorting the unknown names), a
    ``progress`` or ``on_snapshot`` that is no function a TypeError from inside the run."""
    with pytest.raises(tl.TensorLangError, match=message) as caught:
        program.run(*args, **kwargs)
    assert caught.value.code == "input"


def test_bytes_for_a_sequence_or_an_image_are_an_input_error(program, tmp_path):
    """``q=b"x.nrrd"`` for a ``real{}`` input ran with the bytes' codes as its items (120, 46, ...)."""
    seq = tl.compile(_PROGRAM.replace("input real r = 1.0;", "input real{} r = {1.0};").replace("+ r +", "+ r{0} +"),
                     lang="diderot", backend="interp")
    for run, name in ((seq, "r"), (program, "img")):
        with pytest.raises(tl.TensorLangError, match="is given bytes b'x.nrrd'; give a file's path as a str"):
            run(**{"img": np.ones((4, 4)), name: b"x.nrrd"})


@pytest.mark.parametrize("argv, message", [
    (["-o", "a\0b.nrrd"], "without NUL"), (["-print", "a\0b"], "without NUL"), (["-s", "1", "-sp", "a\0"], "without NUL"),
    (["-r", 1.0], "a list of strings"), ("-r 1", "a list of strings"), (None, "a list of strings"),
])
def test_a_command_line_of_the_wrong_kind_is_an_input_error(program, argv, message):
    """``p.main(["-o", "a\\0b"])`` was a ValueError (embedded null byte), a word that is no str or an argv that is
    no list a TypeError."""
    with pytest.raises(tl.TensorLangError, match=message) as caught:
        program.main(argv)
    assert caught.value.code == "input"


@pytest.mark.parametrize("dtype", [object, complex, "datetime64[s]"])
def test_a_dask_input_that_is_no_real_number_is_an_input_error(dtype):
    """``k.dask(X=object_array)`` was error[internal] (dask cannot chunk object data by size)."""
    pytest.importorskip("dask")
    kernel = tl.compile("in var X : [N p]\nout var s : [p]\ns[i] = sum(r) X[r,i]\n", lang="tl", backend="numpy")
    with pytest.raises(tl.TensorLangError, match=re.escape(f"has dtype {np.dtype(dtype)}; expected real numbers")) as caught:
        kernel.dask(X=np.zeros((4, 3), dtype=dtype), batch="N")
    assert caught.value.code == "input"


@pytest.mark.parametrize("inputs", [{"v": [[1.0, 2.0], 10**5000]}, {"r": [10**5000]}, {"r": 10**5000}, {"v": [10**5000, 1]}])
def test_a_message_about_an_int_of_thousands_of_digits_is_no_value_error(program, inputs):
    """The message's ``repr`` of an input holding an int past Python's 4300 digits raised ValueError (a traceback)."""
    with pytest.raises(tl.TensorLangError, match="more than 4300 digits|beyond the doubles"):
        program(**{"img": np.ones((4, 4)), **inputs})
