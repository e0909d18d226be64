"""Images from arrays, .npy and NRRD files, with their index-to-world transforms."""

import numpy as np
import pytest

import tensorlang as tl

nrrd = pytest.importorskip("nrrd")


def test_npy_round_trip(tmp_path):
    data = np.random.default_rng(0).normal(size=(6, 7, 5))
    np.save(tmp_path / "v.npy", data)
    img = tl.fields.load(tmp_path / "v.npy", world={"spacing": 0.5})
    assert img.dim == 3 and img.voxel_shape == () and np.array_equal(img.data, data)
    assert np.allclose(img.world[:3, :3], 0.5 * np.eye(3))
    F = tl.field(str(tmp_path / "v.npy"), "tent")
    assert F.probe([2.0, 3.0, 1.0]) == pytest.approx(data[2, 3, 1])


def test_nrrd_vector_image_with_space_directions(tmp_path):
    rng = np.random.default_rng(1)
    vec = rng.normal(size=(3, 6, 7, 8))  # NRRD order: the vector axis first (fastest)
    header = {"kinds": ["3-vector", "domain", "domain", "domain"], "space": "right-anterior-superior",
              "space directions": [[np.nan] * 3, [0.5, 0, 0], [0, 0.25, 0], [0, 0, 2.0]],
              "space origin": [1.0, 2.0, 3.0]}
    nrrd.write(str(tmp_path / "v.nrrd"), vec, header, index_order="F")
    img = tl.fields.load(tmp_path / "v.nrrd")
    assert img.dim == 3 and img.sizes == (6, 7, 8) and img.voxel_shape == (3,)
    assert np.allclose(img.world, [[0.5, 0, 0, 1], [0, 0.25, 0, 2], [0, 0, 2, 3], [0, 0, 0, 1]])
    assert np.array_equal(img.data, np.moveaxis(vec, 0, -1))
    F = tl.field(img, "tent")
    world = np.array([1 + 0.5 * 2, 2 + 0.25 * 3, 3 + 2.0 * 4])
    assert np.allclose(F.probe(world), vec[:, 2, 3, 4])


def test_nrrd_scalar_image_with_spacings_and_matrix_voxels(tmp_path):
    data = np.arange(5 * 6, dtype=float).reshape(5, 6)
    nrrd.write(str(tmp_path / "s.nrrd"), data, {"spacings": [2.0, 3.0]}, index_order="F")
    img = tl.fields.load(tmp_path / "s.nrrd")
    assert img.dim == 2 and np.allclose(np.diag(img.world), [2, 3, 1])
    mats = np.random.default_rng(2).normal(size=(9, 4, 5))
    nrrd.write(str(tmp_path / "m.nrrd"), mats, {"kinds": ["3D-matrix", "domain", "domain"]}, index_order="F")
    img = tl.fields.load(tmp_path / "m.nrrd")
    assert img.voxel_shape == (3, 3) and img.sizes == (4, 5)
    assert np.array_equal(img.data[1, 2], mats[:, 1, 2].reshape(3, 3))


def test_bad_files_are_input_errors(tmp_path):
    (tmp_path / "bad.nrrd").write_text("not a nrrd file")
    for path in (tmp_path / "bad.nrrd", tmp_path / "missing.npy", tmp_path / "x.png"):
        with pytest.raises(tl.TensorLangError) as err:
            tl.fields.load(path)
        assert err.value.code == "input"
    nrrd.write(str(tmp_path / "sym.nrrd"), np.zeros((7, 3, 3)), {"kinds": ["3D-masked-symmetric-matrix", "domain",
                                                                          "domain"]}, index_order="F")
    with pytest.raises(tl.TensorLangError) as err:
        tl.fields.load(tmp_path / "sym.nrrd")
    assert "kind" in err.value.message


def test_an_nrrd_file_read_again_unchanged_gives_the_image_read_last(tmp_path):
    """The image of an NRRD file changed in the last RACY_NS (this one: just written) is kept
    with the file's bytes: the same bytes again give the same image, any other bytes (one
    sample changed, same size and time stamp) a new one."""
    import os

    from tensorlang.sampling import image as I

    data = np.arange(30.0).reshape(5, 6)
    path = tmp_path / "s.nrrd"
    nrrd.write(str(path), data, {"spacings": [1.0, 1.0], "encoding": "raw"}, index_order="F")
    a = tl.fields.load(path)
    assert tl.fields.load(path) is a  # the same bytes
    stamp = os.stat(path)
    raw = bytearray(path.read_bytes())
    raw[-8:] = np.float64(-1.0).tobytes()  # the last sample, in place
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    b = tl.fields.load(path)
    assert b is not a and b.data[4, 5] == -1.0 and a.data[4, 5] == 29.0
    assert tl.fields.load(path, dim=2) is not b  # another declared dimension: its own entry
    assert tl.fields.load(path, world={"spacing": 2.0}) is not b  # another transform: read again
    # a header naming a detached data file is read each time (the data file may change alone)
    (tmp_path / "d.raw").write_bytes(data.T.astype("<f8").tobytes())
    (tmp_path / "d.nrrd").write_text("NRRD0004\ntype: double\ndimension: 2\nsizes: 5 6\nencoding: raw\n"
                                     "endian: little\ndata file: d.raw\n\n")
    assert tl.fields.load(tmp_path / "d.nrrd") is not tl.fields.load(tmp_path / "d.nrrd")
    assert I.SAME_BYTES >= 1 << 20


def test_a_settled_nrrd_file_is_not_opened_again_until_it_is_rewritten(tmp_path, monkeypatch):
    """Past RACY_NS after its last change, an NRRD file's image is kept on its file_key alone
    (the file is not opened again); rewritten in place with other samples of the same size
    (a new modification time), the file is read again."""
    import builtins
    import os

    from tensorlang.sampling import image as I

    data = np.arange(30.0).reshape(5, 6)
    path = tmp_path / "k.nrrd"
    nrrd.write(str(path), data, {"encoding": "raw"}, index_order="F")
    assert I.file_key(str(path)) is None  # just written: its times cannot tell another write yet
    monkeypatch.setattr(I, "RACY_NS", 0)  # every file settled from here on
    key = I.file_key(str(path))
    assert key is not None and key[0] == os.path.abspath(path)
    a = tl.fields.load(path)
    opened, real_open = [], builtins.open
    monkeypatch.setattr(builtins, "open", lambda file, *a, **k: opened.append(file) or real_open(file, *a, **k))
    assert tl.fields.load(path) is a and tl.fields.load(path) is a and not opened
    monkeypatch.setattr(builtins, "open", real_open)
    stamp = os.stat(path)
    nrrd.write(str(path), data + 1.0, {"encoding": "raw"}, index_order="F")  # in place, the same size
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 10**9))  # (a coarse clock may not have moved)
    assert (os.stat(path).st_ino, os.stat(path).st_size) == (stamp.st_ino, stamp.st_size)
    b = tl.fields.load(path)
    assert b is not a and np.array_equal(b.data, data + 1.0) and np.array_equal(a.data, data)
    assert tl.fields.load(path) is b
    assert I.file_key(str(tmp_path / "missing.nrrd")) is None


def test_a_large_nrrd_file_is_kept_on_its_file_key_alone_and_read_again_once_changed(tmp_path, monkeypatch):
    """An NRRD file past SAME_BYTES (here: every file) keeps its image on its file_key: not
    opened again while unchanged; rewritten in place (same size), read again; not kept where
    it has no key (changed in the last RACY_NS), where its samples would take more than
    1/KEEP_SHARE of the memory budget, or where its samples are in another file; two files kept."""
    import builtins
    import os

    from tensorlang.sampling import image as I

    monkeypatch.setattr(I, "SAME_BYTES", 0)
    monkeypatch.setattr(I, "_LAST", {})
    data = np.arange(30.0).reshape(5, 6) - 7.5
    path = tmp_path / "big.nrrd"
    nrrd.write(str(path), data, {"spacings": [1.0, 2.0], "encoding": "raw"}, index_order="F")
    a = tl.fields.load(path)  # just written: no key, not kept
    assert np.array_equal(a.data, data) and tl.fields.load(path) is not a and not I._LAST
    monkeypatch.setattr(I, "RACY_NS", 0)  # settled from here on
    a = tl.fields.load(path)
    opened, real_open = [], builtins.open
    monkeypatch.setattr(builtins, "open", lambda file, *a, **k: opened.append(file) or real_open(file, *a, **k))
    assert tl.fields.load(path) is a and tl.fields.load(str(path)) is a and not opened
    monkeypatch.setattr(builtins, "open", real_open)
    assert np.allclose(a.world[:2, :2], np.diag([1.0, 2.0]))
    stamp = os.stat(path)
    nrrd.write(str(path), data * 3.0, {"spacings": [1.0, 2.0], "encoding": "raw"}, index_order="F")
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 10**9))  # (a coarse clock may not have moved)
    assert os.stat(path).st_size == stamp.st_size
    b = tl.fields.load(path)
    assert b is not a and np.array_equal(b.data, data * 3.0) and np.array_equal(a.data, data)
    assert tl.fields.load(path) is b
    other, third = tmp_path / "other.nrrd", tmp_path / "third.nrrd"
    nrrd.write(str(other), data[:4], {"encoding": "raw"}, index_order="F")
    nrrd.write(str(third), data[:3], {"encoding": "raw"}, index_order="F")
    c = tl.fields.load(other)
    assert I.KEEP_FILES == 2 and tl.fields.load(path) is b and tl.fields.load(other) is c  # two files kept
    t = tl.fields.load(third)  # a third: the oldest (b) let go
    assert list(I._LAST) == [(os.path.abspath(f), None) for f in (other, third)] and tl.fields.load(third) is t
    I._LAST.clear()
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(I.KEEP_SHARE * b.data.nbytes - 1))
    d = tl.fields.load(path)
    assert np.array_equal(d.data, data * 3.0) and tl.fields.load(path) is not d and not I._LAST
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(I.KEEP_SHARE * b.data.nbytes))
    assert tl.fields.load(path) is tl.fields.load(path)
    (tmp_path / "d.raw").write_bytes(data.T.astype("<f8").tobytes())
    (tmp_path / "d.nrrd").write_text("NRRD0004\ntype: double\ndimension: 2\nsizes: 5 6\nencoding: raw\n"
                                     "endian: little\ndata file: d.raw\n\n")
    e = tl.fields.load(tmp_path / "d.nrrd")
    assert np.array_equal(e.data, data) and tl.fields.load(tmp_path / "d.nrrd") is not e
    assert all(slot[0] != os.path.abspath(tmp_path / "d.nrrd") for slot in I._LAST)


@pytest.mark.parametrize("encoding", ["raw", "gzip", "ascii"])
def test_a_small_nrrd_file_is_read_from_disk_once(tmp_path, monkeypatch, encoding):
    """The bytes read to compare a small NRRD file with the one read last are the bytes
    parsed: the file is opened once, and the image is the one read from disk directly."""
    import builtins

    from tensorlang.sampling import image as I

    data = np.arange(30.0).reshape(5, 6) - 7.5
    path = tmp_path / f"once-{encoding}.nrrd"
    nrrd.write(str(path), data, {"spacings": [1.0, 2.0], "encoding": encoding}, index_order="F")
    opened = []
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):
        if str(file) == str(path):
            opened.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    img = tl.fields.load(path)
    assert len(opened) == 1
    monkeypatch.setattr(builtins, "open", real_open)
    direct = I._load_nrrd(str(path), None, None)
    assert np.array_equal(img.data, direct.data) and np.array_equal(img.to_index, direct.to_index)
