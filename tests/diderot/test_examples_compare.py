"""benchmarks/diderot/examples.py's comparisons (the script that holds Diderot's public
examples run through tensorlang to the real compiler's outputs): the header meta-data are
compared field by field, beside the values."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "diderot" / "examples.py"


def _script():
    if "diderot_examples" not in sys.modules:
        spec = importlib.util.spec_from_file_location("diderot_examples", SCRIPT)
        module = sys.modules["diderot_examples"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["diderot_examples"]


def _write(path: Path, kinds: str, sizes: str = "3 2", endian: str = "little") -> Path:
    data = np.arange(6, dtype="<f8" if endian == "little" else ">f8")
    path.write_bytes(f"NRRD0003\ntype: double\ndimension: 2\nsizes: {sizes}\nkinds: {kinds}\nendian: {endian}\n"
                     f"encoding: raw\n\n".encode() + data.tobytes())
    return path


def test_headers_compared_field_by_field_storage_aside(tmp_path):
    ex = _script()
    ref = _write(tmp_path / "ref.nrrd", "3-vector list")
    assert ex.compare_headers(_write(tmp_path / "same.nrrd", "3-vector list", endian="big"), ref) == []
    assert ex.compare_headers(_write(tmp_path / "k.nrrd", "3-vector space"), ref) == [
        "kinds: ['3-vector', 'space'] vs ['3-vector', 'list']"]
    assert [d.split(":")[0] for d in ex.compare_headers(_write(tmp_path / "s.nrrd", "3-vector list", "2 3"), ref)] == [
        "sizes"]


def test_values_shape_nans_and_tolerance():
    ex = _script()
    ref = np.array([1.0, np.nan, 2.0])
    assert ex.compare_arrays(np.array([1.0, np.nan, 2.0 + 1e-9]), ref)[0]
    assert not ex.compare_arrays(np.array([1.0, 0.0, 2.0]), ref)[0]
    assert not ex.compare_arrays(np.array([1.0, np.nan, 2.1]), ref)[0]
    assert not ex.compare_arrays(np.array([1.0, np.nan]), ref)[0]
