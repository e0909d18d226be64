"""Outputs as NRRD files (tensorlang.strands.nrrd_out): layout, header, round trip."""

from __future__ import annotations

import nrrd
import numpy as np
import pytest

from diderot.run_programs.fake import Output
from tensorlang.errors import TensorLangError
from tensorlang.strands import nrrd_out

REAL = Output("v", "real", "real")
VEC2 = Output("p", "vec2", "tensor", (2,))
MAT3 = Output("m", "mat3", "tensor", (3, 3))
T23 = Output("t", "tensor[2,3]", "tensor", (2, 3))
INT = Output("k", "int", "int")
BOOL = Output("b", "bool", "bool")


@pytest.mark.parametrize("output, outer, grid, sizes, kinds", [
    (REAL, (4, 5), True, [5, 4], ["space", "space"]),
    (VEC2, (4, 5), True, [2, 5, 4], ["2-vector", "space", "space"]),
    (MAT3, (7,), False, [9, 7], ["3D-matrix", "list"]),
    (T23, (7,), False, [6, 7], ["list", "list"]),
    (Output("q", "vec4", "tensor", (4,)), (2, 3, 4), True, [4, 4, 3, 2], ["4-vector", "space", "space", "space"]),
    (Output("q", "mat2", "tensor", (2, 2)), (3,), True, [4, 3], ["2D-matrix", "space"]),
])
def test_the_component_axis_comes_first_and_the_grid_reversed(output, outer, grid, sizes, kinds):
    assert nrrd_out.layout(output.kind, output.shape, outer, grid) == (sizes, kinds)


@pytest.mark.parametrize("output, outer, grid, dtype", [
    (REAL, (3, 4), True, np.float64), (VEC2, (3, 4), True, np.float64), (MAT3, (5,), False, np.float64),
    (T23, (5,), False, np.float64), (INT, (6,), False, np.int32), (BOOL, (2, 3), True, np.uint8),
])
def test_an_output_reads_back_as_the_array_it_was(tmp_path, output, outer, grid, dtype):
    rng = np.random.default_rng(1)
    value = rng.normal(size=outer + output.shape)
    if output.kind == "int":
        value = rng.integers(-1000, 1000, size=outer)
    if output.kind == "bool":
        value = value > 0
    path = nrrd_out.write(str(tmp_path / "out.nrrd"), output, value, grid)
    data, header = nrrd.read(path, index_order="C")
    assert data.dtype == dtype
    expected = value.reshape(outer + ((int(np.prod(output.shape)),) if output.shape else ()))
    np.testing.assert_array_equal(data, expected)
    sizes, kinds = nrrd_out.layout(output.kind, output.shape, outer, grid)
    assert list(header["sizes"]) == sizes and header["kinds"] == kinds


def test_the_header_is_the_one_teem_writes_for_diderot(tmp_path):
    path = nrrd_out.write(str(tmp_path / "pos.nrrd"), VEC2, np.zeros((3, 2)), False)
    text = open(path, "rb").read()
    head, _, data = text.partition(b"\n\n")
    assert head.decode().splitlines() == [
        "NRRD0003", "# Complete NRRD file format specification at:", "# http://teem.sourceforge.net/nrrd/format.html",
        "type: double", "dimension: 2", "sizes: 2 3", "kinds: 2-vector list", "endian: little", "encoding: raw"]
    assert len(data) == 6 * 8


def test_a_detached_header_names_its_raw_file(tmp_path):
    value = np.arange(12.0).reshape(3, 4)
    nrrd_out.write(str(tmp_path / "v.nhdr"), REAL, value, True)
    assert (tmp_path / "v.raw").stat().st_size == 12 * 8
    assert b"data file: ./v.raw" in (tmp_path / "v.nhdr").read_bytes()  # as Teem writes it
    data, _ = nrrd.read(str(tmp_path / "v.nhdr"), index_order="C")
    np.testing.assert_array_equal(data, value)
    nrrd_out.write(str(tmp_path / "w.NHDR"), REAL, value, True)  # Teem's test of the name is exact: one file
    assert not (tmp_path / "w.raw").exists() and b"data file" not in (tmp_path / "w.NHDR").read_bytes()
    np.testing.assert_array_equal(nrrd.read(str(tmp_path / "w.NHDR"), index_order="C")[0], value)


def test_snapshot_names_have_at_least_four_digits():
    assert nrrd_out.snapshot_name("pos", 0) == "pos-0000.nrrd"
    assert nrrd_out.snapshot_name("out/state", 42) == "out/state-0042.nrrd"
    assert nrrd_out.snapshot_name("s", 123456) == "s-123456.nrrd"


def test_an_unwritable_file_is_an_input_error(tmp_path):
    with pytest.raises(TensorLangError, match="cannot write output 'v'") as info:
        nrrd_out.write(str(tmp_path / "no" / "such" / "v.nrrd"), REAL, np.zeros((2, 2)), True)
    assert info.value.code == "input"


def test_an_int_output_beyond_32_bits_is_refused(tmp_path):
    with pytest.raises(TensorLangError, match="beyond 32 bits"):
        nrrd_out.write(str(tmp_path / "k.nrrd"), INT, np.array([2**40]), False)


def test_an_image_header_claiming_more_than_the_memory_budget_is_too_large(tmp_path, monkeypatch):
    path = tmp_path / "big.nrrd"
    path.write_bytes(b"NRRD0004\ntype: float\ndimension: 3\nsizes: 1000 1000 1000\nencoding: raw\n\n")
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(2**20))
    with pytest.raises(TensorLangError, match="more than the memory budget") as info:
        nrrd_out.check_image_file(str(path))
    assert info.value.code == "too-large"
    small = tmp_path / "small.nrrd"
    small.write_bytes(b"NRRD0004\ntype: float\ndimension: 1\nsizes: 10\nencoding: raw\n\n" + bytes(40))
    nrrd_out.check_image_file(str(small))  # within the budget: left to the reader


def _head(path) -> list[str]:
    return open(path, "rb").read().split(b"\n\n")[0].decode().split("\n")


def test_a_sequence_of_any_length_is_a_lengths_file_and_a_data_file(tmp_path):
    # as diderotc's --double executable wrote them for a 4-strand grid of real[] outputs
    # holding {0}, {10, 11}, {20, 21, 22}, {30, 31, 32, 33}
    out = Output("hist", "real[]", "sequence", (0,))
    seqs = np.empty(4, dtype=object)
    for i in range(4):
        seqs[i] = np.array([10.0 * i + n for n in range(i + 1)])
    prefix = str(tmp_path / "hist")
    written = nrrd_out.write_dynamic(prefix, out, seqs, True)
    assert written == [prefix + "-len.nrrd", prefix + "-data.nrrd"]
    assert _head(written[0])[3:] == ["type: int", "dimension: 2", "sizes: 2 4", "kinds: 2-vector space",
                                     "endian: little", "encoding: raw"]
    lens, _ = nrrd.read(written[0], index_order="C")
    assert lens.tolist() == [[0, 1], [1, 2], [3, 3], [6, 4]]
    assert _head(written[1])[3:7] == ["type: double", "dimension: 1", "sizes: 10", "kinds: list"]
    data, _ = nrrd.read(written[1], index_order="C")
    assert data.tolist() == [0, 10, 11, 20, 21, 22, 30, 31, 32, 33]


def test_a_collection_of_vector_sequences_and_all_empty(tmp_path):
    out = Output("pts", "vec2[]", "sequence", (0, 2))
    seqs = np.empty(3, dtype=object)
    seqs[0], seqs[1], seqs[2] = np.zeros((0, 2)), np.array([[1.0, 10.0]]), np.array([[2.0, 0.0], [2.0, 1.0]])
    len_path, data_path = nrrd_out.write_dynamic(str(tmp_path / "pts"), out, seqs, False)
    assert "kinds: 2-vector list" in _head(len_path) and "kinds: 2-vector list" in _head(data_path)
    assert nrrd.read(data_path, index_order="C")[0].tolist() == [[1, 10], [2, 0], [2, 1]]
    empty = np.empty(3, dtype=object)
    for i in range(3):
        empty[i] = np.zeros((0, 2))
    said: list[str] = []
    written = nrrd_out.write_dynamic(str(tmp_path / "e"), out, empty, False, said.append, step=0)
    assert written == [str(tmp_path / "e-len-0000.nrrd")]
    # Diderot's runtime writes such a lengths file without kinds (so NRRD0001)
    assert _head(written[0])[0] == "NRRD0001" and not any(x.startswith("kinds") for x in _head(written[0]))
    assert said == [f"Warning: all sequences in snapshot are empty, so no '{tmp_path}/e-data-0000.nrrd' file produced"]


def test_a_fixed_length_sequence_is_one_list_axis_of_its_elements_type(tmp_path):
    ints = Output("s", "int[3]", "sequence", (3,))
    path = nrrd_out.write(str(tmp_path / "s.nrrd"), ints, np.arange(6).reshape(2, 3), False)
    data, header = nrrd.read(path, index_order="C")
    assert data.dtype == np.int32 and header["kinds"] == ["list", "list"] and data.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_an_image_with_signalling_nans_loads_without_a_warning(tmp_path):
    # a float image holding signalling-NaN bit patterns (met in an iso2d input that unu
    # assembled from a half-written file): numpy's cast to float64 warned "invalid value
    # encountered in cast" on every `tensorlang run`.  They load as NaNs, silently.
    import warnings

    from tensorlang.sampling import image as image_mod

    raw = np.array([1.0, 2.0, 3.0, 4.0], dtype="<f4")
    raw.view("<u4")[2] = 0x7FA00000  # a signalling NaN
    path = tmp_path / "snan.nrrd"
    path.write_bytes(b"NRRD0004\ntype: float\ndimension: 2\nsizes: 2 2\nkinds: space space\nendian: little\n"
                     b"encoding: raw\n\n" + raw.tobytes())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        img = image_mod.load(str(path))
    values = np.asarray(img.data, dtype=np.float64)
    assert np.isnan(values).sum() == 1 and np.nansum(values) == 7.0
