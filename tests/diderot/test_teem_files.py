"""NRRD files made by Teem's ``unu`` (every encoding, byte order and sample type, detached headers with line
and byte skips, comments and key/value pairs, spacings without space directions, permuted, resampled and
axis-inserted images; scalars, vectors, colors and matrices in 1-D/2-D/3-D; ``more/teem/``, made by
``teem_files.py``), probed with every kernel and its derivatives: a file the executable built by ``diderotc
--double --exec`` reads, tensorlang reads to the same values (within 1e-9 of the largest); a file it refuses
for another reason than its sample type, tensorlang refuses with an error code.  Diderot's executable of a
program whose image input has no proxy file expects float samples ("nrrd has unexpected sample type
short; expected float"); tensorlang reads any sample type the header names, to the values the executable
compiled with that file as its proxy reads (docs/diderot.md, "Images")."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.targets.c import build as c_build
from teem_files import HERE, STORED

EXPECTED = json.loads(STORED.read_text())
needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


#: files diderotc's executable refuses that tensorlang reads (docs/diderot.md, "Images"), to the values of the
#: file with the same samples, the vector axis first, of a kind Diderot's runtime takes
READ_HERE = {"probe2v v2_last.nrrd": "probe2v v2.nrrd", "probe2v v2_vector.nrrd": "probe2v v2.nrrd",
             "probe2v v2_list.nrrd": "probe2v v2.nrrd", "probe2c point2.nrrd": "probe2c c2.nrrd",
             "probe2c normal2.nrrd": "probe2c c2.nrrd", "probe2q q2_quaternion.nrrd": "probe2q q2_4-vector.nrrd"}


def _want(key: str) -> dict:
    """diderotc's run of ``key``: its exit status, what it said, its values (where the executable compiled for
    float samples refused the file's sample type: those of the executable compiled with the file as proxy)."""
    if key in READ_HERE:
        assert "nrrdMetaDataNormalize" in EXPECTED[key]["stderr"]
        key = READ_HERE[key]
    got = EXPECTED[key]
    if "unexpected sample type" in got["stderr"]:
        got = got["proxy"]
    if "same_as" in got:
        same = EXPECTED[got["same_as"]]
        got = {**got, "values": same.get("values") or same["proxy"]["values"]}
    return got


def _run(key: str, backend: str, folder, monkeypatch) -> tuple[int, str, list]:
    import nrrd
    prog, name = key.split()
    monkeypatch.chdir(folder)
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        try:
            rc = tl.compile(str(HERE / f"{prog}.diderot"), backend=backend).main(["-img", str(HERE / name), "-o", "o.nrrd"])
        except TensorLangError as exc:  # (as `tensorlang run` reports it)
            rc = 1
            print(exc, file=err)
    values = nrrd.read(str(folder / "o.nrrd"))[0].ravel(order="F").tolist() if rc == 0 else []
    return rc, err.getvalue(), values


def _same(key: str, got: tuple[int, str, list]) -> None:
    want, (rc, err, values) = _want(key), got
    if want["rc"] != 0:  # refused: so is it here, with an error code
        assert rc != 0 and "error[" in err and "error[internal]" not in err, err
        return
    assert rc == 0, err
    x, y = np.array(want["values"]), np.array(values)
    assert x.shape == y.shape
    assert np.array_equal(np.isnan(x), np.isnan(y))
    scale = np.max(np.abs(x[np.isfinite(x)]), initial=1.0)
    assert np.allclose(x, y, rtol=0, atol=1e-9 * scale, equal_nan=True), np.nanmax(abs(x - y))


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_the_interpreter_reads_each_file_as_diderotc_does(key, tmp_path, monkeypatch):
    _same(key, _run(key, "interp", tmp_path, monkeypatch))


@needs_cc
@pytest.mark.slow  # a C build each program
@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_the_c_executor_reads_each_file_as_diderotc_does(key, tmp_path, monkeypatch):
    _same(key, _run(key, "c", tmp_path, monkeypatch))
