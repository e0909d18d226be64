"""A compiled strand program called again keeps what does not change between calls
(docs/diderot-compiled.md, "How a run goes"): the image descriptors of the same image
objects and an image file's header check.  Both must notice a change: a rewritten file,
another image, a world map changed in place, a smaller memory budget.  Results are compared with a fresh program's, bit for bit."""

from __future__ import annotations

import os

import nrrd
import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.sampling.image import image as make_image
from tensorlang.strands import nrrd_out
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as c_strands
from tensorlang.targets.c import strands_probe

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

PROGRAM = """#version 1.0
input image(2)[] img;
input real scale = 1.0;
field#1(2)[] F = bspln3 ⊛ img;
strand s (vec2 p) {
   output real v = scale * F(p) if inside(p, F) else -1.0;
   output vec2 g = ∇F(p) if inside(p, F) else [0.0, 0.0];
   update { stabilize; }
}
initially [ s([0.5 * real(i), 0.4 * real(j)]) | i in 0..5, j in 0..4 ];
"""


def _program(tmp_path):
    path = tmp_path / "prog.diderot"
    path.write_text(PROGRAM)
    return tl.compile(str(path), backend="c")


def _write(path, data):
    nrrd.write(str(path), data, {"kinds": ["space", "space"]}, index_order="C")


def _same(a, b):
    for name in ("v", "g"):
        np.testing.assert_array_equal(a[name], b[name])


def test_a_rewritten_image_file_is_read_again(tmp_path):
    p, fresh = _program(tmp_path), _program(tmp_path)
    path = tmp_path / "img.nrrd"
    rng = np.random.default_rng(3)
    for _ in range(3):  # same name, same size, other samples each time
        _write(path, rng.random((6, 7)))
        first, again = p(img=str(path)), p(img=str(path))
        _same(first, again)
        _same(first, fresh(img=str(path)))


def test_another_image_object_is_packed_again_and_a_world_is_never_changed_in_place(tmp_path):
    p = _program(tmp_path)
    a, b = np.arange(42.0).reshape(6, 7) / 10, np.cos(np.arange(42.0)).reshape(6, 7)
    img_a, img_b = make_image(a, 2), make_image(b, 2)
    ra, rb = p(img=img_a), p(img=img_b)
    _same(p(img=img_a), ra)
    assert not np.array_equal(ra["v"], rb["v"])
    with pytest.raises(ValueError, match="read-only"):  # a world map changed in place: refused (its inverse is kept)
        img_a.world[0, 0] = 0.5
    _same(p(img=img_a), ra)
    _same(p(img=make_image(a, 2, np.diag([0.5, 1.0, 1.0]))), _program(tmp_path)(img=make_image(a, 2, np.diag([0.5, 1.0, 1.0]))))


def test_a_file_checked_before_is_checked_again_once_written_or_under_a_smaller_budget(tmp_path, monkeypatch):
    path = tmp_path / "img.nrrd"
    _write(path, np.zeros((40, 40)))
    nrrd_out.check_image_file(str(path))
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(4096))  # 1,600 samples: 12,800 bytes
    with pytest.raises(TensorLangError) as info:
        nrrd_out.check_image_file(str(path))
    assert info.value.code == "too-large"
    monkeypatch.delenv("TENSORLANG_MAX_BYTES")
    nrrd_out.check_image_file(str(path))
    stat = os.stat(path)
    head = b"NRRD0004\ntype: double\ndimension: 2\nsizes: 100000000 100000000\nencoding: raw\n\n"
    path.write_bytes(head + bytes(stat.st_size - len(head)))  # the same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and modification time: its change time differs
    assert os.stat(path).st_size == stat.st_size
    with pytest.raises(TensorLangError) as info:
        nrrd_out.check_image_file(str(path))
    assert info.value.code == "too-large"


def test_the_header_check_and_the_image_reader_skip_a_settled_file_together(tmp_path, monkeypatch):
    """check_image_file and the image reader key a file on one file_key: called again on a
    file unchanged past RACY_NS, neither opens it; rewritten in place, both read it again."""
    import builtins

    from tensorlang.sampling import image as I

    p, path = _program(tmp_path), tmp_path / "img.nrrd"
    _write(path, np.arange(42.0).reshape(6, 7))
    monkeypatch.setattr(I, "RACY_NS", 0)
    first = p(img=str(path))
    opened, real_open = [], builtins.open
    monkeypatch.setattr(builtins, "open", lambda file, *a, **k: opened.append(str(file)) or real_open(file, *a, **k))
    _same(p(img=str(path)), first)
    assert str(path) not in opened
    stamp = os.stat(path)
    _write(path, np.arange(42.0).reshape(6, 7) * 2.0)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 10**9))  # (a coarse clock may not have moved)
    opened.clear()
    again = p(img=str(path))
    assert opened.count(str(path)) == 2  # the header check, then the reader
    inside = first["v"] != -1.0
    assert inside.any()
    np.testing.assert_array_equal(again["v"][inside], 2.0 * first["v"][inside])


def test_a_large_image_file_kept_between_calls_is_read_again_once_rewritten(tmp_path, monkeypatch):
    """An image file past SAME_BYTES (here: every file) is kept between calls on its
    file_key: the second call does not open it, and gives the first call's bits; rewritten
    in place with other samples (the same size), it is read again: the C results are a fresh
    program's and the interpreter's."""
    import builtins

    from tensorlang.sampling import image as I

    monkeypatch.setattr(I, "SAME_BYTES", 0)
    monkeypatch.setattr(I, "RACY_NS", 0)
    monkeypatch.setattr(I, "_LAST", {})
    p, path = _program(tmp_path), tmp_path / "vol.nrrd"
    rng = np.random.default_rng(11)
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    for k in range(3):
        data = rng.random((6, 7))
        data[2, 3] = (np.nan, np.inf, -np.inf)[k]
        stamp = os.stat(path) if path.exists() else None
        _write(path, data)
        if stamp is not None:
            os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 10**9))  # (a coarse clock may not have moved)
            assert os.stat(path).st_size == stamp.st_size
        first = p(img=str(path))
        opened.clear()
        monkeypatch.setattr(builtins, "open", counting_open)
        again = p(img=str(path))
        monkeypatch.setattr(builtins, "open", real_open)
        assert str(path) not in opened
        _same(first, again)
        _same(first, _program(tmp_path)(img=make_image(data.T, 2)))  # (NRRD axis 0: the last C axis)
        interp = tl.compile(str(tmp_path / "prog.diderot"), backend="interp")(img=str(path))
        for name in ("v", "g"):
            np.testing.assert_allclose(first[name], interp[name], rtol=1e-12, atol=1e-12)


def test_images_larger_than_the_cache_keeps_are_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(c_strands, "_RUNNERS", {})  # this program's runner alone
    p = _program(tmp_path)
    img = make_image(np.arange(42.0).reshape(6, 7), 2)
    monkeypatch.setattr(strands_probe, "KEEP", 42 * 8 - 1)
    first = p(img=img)
    (runner,) = c_strands._RUNNERS.values()
    assert runner.packed.get("last") is None  # the samples are more than KEEP bytes: nothing kept
    monkeypatch.setattr(strands_probe, "KEEP", 42 * 8)
    _same(p(img=img), first)
    assert runner.packed["last"][0][0] is img


def test_a_settled_image_file_called_again_costs_one_stat_and_still_meets_a_smaller_budget(tmp_path, monkeypatch):
    """A call again on an image file unchanged since the last call (past RACY_NS) takes the image the reader
    keeps after one look at the file (its file_key): not the header check's and the reader's four; a smaller
    memory budget still refuses it, a rewritten file is read again (docs/performance.md, life's parts)."""
    from tensorlang.sampling import image as I

    monkeypatch.setattr(I, "RACY_NS", 0)
    p, path = _program(tmp_path), tmp_path / "img.nrrd"
    _write(path, np.arange(42.0).reshape(6, 7))
    first = p(img=str(path))
    looked: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda f, *a, **k: looked.append(os.fspath(f)) or real_stat(f, *a, **k))
    _same(p(img=str(path)), first)
    assert looked.count(str(path)) == 1
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(256))  # 42 samples: 336 bytes
    with pytest.raises(TensorLangError) as info:
        p(img=str(path))
    assert info.value.code == "too-large"
    monkeypatch.delenv("TENSORLANG_MAX_BYTES")
    stamp = real_stat(path)
    _write(path, np.arange(42.0).reshape(6, 7) * 2.0)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 10**9))  # (a coarse clock may not have moved)
    inside = first["v"] != -1.0
    np.testing.assert_array_equal(p(img=str(path))["v"][inside], 2.0 * first["v"][inside])


def test_a_call_again_casts_the_state_arrays_once(tmp_path, monkeypatch):
    """The state arrays a finished run hands to the next (Runner.spare) keep their C pointers: a call again
    casts none of them again, and makes no new string table where the program has no string input."""
    monkeypatch.setattr(c_strands, "_RUNNERS", {})  # this program's runner alone
    p, path = _program(tmp_path), tmp_path / "img.nrrd"
    _write(path, np.arange(42.0).reshape(6, 7))
    first = p(img=str(path))
    p(img=str(path))
    (runner,) = c_strands._RUNNERS.values()
    (R, I, status, _), = runner.spare.values()
    cast: list[int] = []
    real = runner.ffi.from_buffer
    runner.ffi.from_buffer = lambda a, *rest, **k: cast.append(id(a)) or real(a, *rest, **k)
    try:
        _same(p(img=str(path)), first)
    finally:
        del runner.ffi.from_buffer
    assert not {id(R), id(I), id(status)} & set(cast)


def test_the_call_keeps_no_image_of_its_own(tmp_path):
    """What a repeat call reuses is the reader's kept image (kept_image): the runner notes a file's
    key and budget only, so images the reader lets go are freed (review: up to nine were held,
    files the reader never keeps among them)."""
    from tensorlang.strands import runner
    k = _program(tmp_path)
    for n in range(4):
        path = tmp_path / f"img{n}.nrrd"
        _write(path, np.full((6, 7), float(n)))
        k(img=str(path))
    assert runner._FILES and all(len(v) == 2 for v in runner._FILES.values())
