"""The compile cache: keyed, atomic, private; bad entries are rebuilt, never loaded."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import callext
from tensorlang.cli import main

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler on this machine")

#: These tests count and damage kernel entries: the processes they start leave the C
#: call path's extension (one more entry, targets/c/callext.py) out of the cache.
KERNELS_ONLY = {"TENSORLANG_NO_CALLEXT": "1"}

PROGRAM = "in var x : [3]\nout var y : [3]\ny = {c} * x * x\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    callext.extension()  # loaded (from the user's cache) before the test's cache is made
    directory = tmp_path / "cache"
    monkeypatch.setenv("TENSORLANG_CACHE", str(directory))
    monkeypatch.setattr(c_build, "_loaded", {})  # a fresh process, as far as loading goes
    return directory


def _entries(directory: Path):
    # the kernels' files; the grammar tables' folder (lark_support) shares the cache root
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith(".") and p.name != "grammars")


def _run(c: float = 1.0):
    return tl.compile(PROGRAM.format(c=c), backend="c")(x=np.arange(3.0))["y"]


def test_kernels_are_cached_by_source(cache):
    np.testing.assert_array_equal(_run(), [0, 1, 4])
    first = _entries(cache)
    assert len(first) == 2 and {Path(n).suffix for n in first} == {".so", ".json"}
    _run()
    assert _entries(cache) == first  # the same program reuses its entry
    _run(2.0)
    assert len(_entries(cache)) == 4  # another program, another key
    assert oct(cache.stat().st_mode & 0o777) == "0o700"


def test_cached_objects_are_reused_without_compiling(cache, monkeypatch):
    _run()
    monkeypatch.setattr(c_build, "_loaded", {})
    calls = []
    real_run = c_build._run
    monkeypatch.setattr(c_build, "_run", lambda cmd, **kw: calls.append(cmd) or real_run(cmd, **kw))
    np.testing.assert_array_equal(_run(), [0, 1, 4])
    assert calls == []


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncate", "garbage", "manifest-key", "manifest-hash", "no-manifest",
                                    "world-writable", "manifest-not-json"])
def test_damaged_or_foreign_entries_are_rebuilt(cache, monkeypatch, damage):
    # another process makes the entry, so this one never maps the file it then damages
    # (overwriting a mapped object in place would crash the process that mapped it, which
    # is why the cache itself only ever renames new files over old ones)
    _compile_elsewhere(cache, 1.0)
    so = next(cache.glob("*.so"))
    manifest = so.with_suffix(".json")
    if damage == "truncate":
        so.write_bytes(so.read_bytes()[:100])
    elif damage == "garbage":
        so.write_bytes(b"\x7fELF not really")
    elif damage == "manifest-key":
        meta = json.loads(manifest.read_text())
        meta["key"] = "0" * 64
        manifest.write_text(json.dumps(meta))
    elif damage == "manifest-hash":
        meta = json.loads(manifest.read_text())
        meta["sha256"] = "0" * 64
        manifest.write_text(json.dumps(meta))
    elif damage == "no-manifest":
        manifest.unlink()
    elif damage == "world-writable":
        so.chmod(0o666)
    else:
        manifest.write_text("{not json")
    monkeypatch.setattr(c_build, "_loaded", {})
    key = so.stem
    compiler = c_build.require_compiler()
    assert not c_build._valid_entry(so, manifest, key)
    np.testing.assert_array_equal(_run(), [0, 1, 4])  # rebuilt, and right
    assert c_build._valid_entry(so, manifest, key)
    assert c_build.cache_key(tl.compile(PROGRAM.format(c=1.0), backend="c").code("c"), compiler) == key


def test_an_unusable_cache_directory_falls_back_to_a_private_temporary_one(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TENSORLANG_CACHE", str(blocker / "cache"))
    monkeypatch.setattr(c_build, "_loaded", {})
    monkeypatch.setattr(c_build, "_notified", False)
    np.testing.assert_array_equal(_run(3.0), [0, 3, 12])
    assert "not usable" in capsys.readouterr().err
    assert blocker.read_text() == "not a directory"


def _compile_code(c: float) -> str:
    return (
        "import numpy as np, tensorlang as tl\n"
        f"k = tl.compile({PROGRAM.format(c=c)!r}, backend='c')\n"
        "print(k(x=np.arange(3.0))['y'].tolist())\n"
    )


def _compile_elsewhere(cache: Path, c: float) -> None:
    env = {**os.environ, "TENSORLANG_CACHE": str(cache), **KERNELS_ONLY}
    done = subprocess.run([sys.executable, "-c", _compile_code(c)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_concurrent_processes_compiling_one_kernel_are_safe(cache):
    env = {**os.environ, "TENSORLANG_CACHE": str(cache), **KERNELS_ONLY}
    procs = [subprocess.Popen([sys.executable, "-c", _compile_code(5.0)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(6)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == "[0.0, 5.0, 20.0]"
    assert len(_entries(cache)) == 2  # one object and its manifest; no temporary left behind
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]


def test_cache_info_and_clear(cache, capsys):
    _run()
    _run(2.0)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(cache) in out and "kernels: 2" in out and "compiler:" in out
    (cache / "unrelated.txt").write_text("keep me")
    assert main(["cache", "clear"]) == 0
    assert "removed 2 cached kernels" in capsys.readouterr().out
    assert _entries(cache) == ["unrelated.txt"]
    np.testing.assert_array_equal(_run(), [0, 1, 4])  # and kernels build again


# ------------------------------------------------------- issue 16: odd entries, clear races
def _damaged_entry(cache: Path):
    _compile_elsewhere(cache, 1.0)
    so = next(cache.glob("*.so"))
    return so, so.with_suffix(".json")


@pytest.mark.slow
@pytest.mark.parametrize("which", ["so", "manifest", "both"])
def test_an_entry_that_is_a_directory_is_rebuilt(cache, which):
    so, manifest = _damaged_entry(cache)
    for path in ([so] if which == "so" else [manifest] if which == "manifest" else [so, manifest]):
        path.unlink()
        path.mkdir()
        (path / "inside").write_text("x")  # not empty: os.replace cannot go over it
    np.testing.assert_array_equal(_run(), [0, 1, 4])
    assert so.is_file() and manifest.is_file() and c_build._valid_entry(so, manifest, so.stem)


@pytest.mark.slow
@pytest.mark.parametrize("depth", [30_000, 200_000])
def test_a_deeply_nested_manifest_is_rebuilt(cache, depth):
    so, manifest = _damaged_entry(cache)
    manifest.write_text("[" * depth + "]" * depth)  # RecursionError in json, or just too big
    assert not c_build._valid_entry(so, manifest, so.stem)
    np.testing.assert_array_equal(_run(), [0, 1, 4])
    assert c_build._valid_entry(so, manifest, so.stem)


@pytest.mark.slow
def test_a_huge_sparse_object_is_rebuilt_without_reading_it(cache):
    import tracemalloc

    so, manifest = _damaged_entry(cache)
    os.truncate(so, 1 << 30)  # 1 GiB, sparse
    tracemalloc.start()
    try:
        assert not c_build._valid_entry(so, manifest, so.stem)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak  # the file was never read into memory
    np.testing.assert_array_equal(_run(), [0, 1, 4])
    assert so.stat().st_size < 1 << 24 and c_build._valid_entry(so, manifest, so.stem)


def test_cache_clear_during_a_compile_does_not_fail_it(cache, monkeypatch):
    # `tensorlang cache clear` in another process, just as this one runs the compiler on
    # its temporary files in the cache directory
    real_run = c_build._run

    def clear_then_run(cmd, **kw):
        c_build.cache_clear()
        return real_run(cmd, **kw)
    monkeypatch.setattr(c_build, "_run", clear_then_run)
    np.testing.assert_array_equal(_run(4.0), [0, 4, 16])


def test_an_object_removed_between_build_and_load_is_rebuilt(cache, monkeypatch):
    real_build = c_build.build

    def build_then_vanish(source, compiler, extra_flags=()):
        path = real_build(source, compiler, extra_flags)
        path.unlink()  # cache clear in another process, before this one loads the object
        return path
    monkeypatch.setattr(c_build, "build", build_then_vanish)
    np.testing.assert_array_equal(_run(6.0), [0, 6, 24])


@pytest.mark.slow
def test_concurrent_cache_clear_and_compiles(cache):
    env = {**os.environ, "TENSORLANG_CACHE": str(cache), **KERNELS_ONLY}
    procs = [subprocess.Popen([sys.executable, "-c", _compile_code(c)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
             for c in (7.0, 8.0, 9.0)]
    while any(p.poll() is None for p in procs):
        c_build.cache_clear()
    for p, c in zip(procs, (7.0, 8.0, 9.0)):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == str([0.0, c, 4 * c])


@pytest.mark.parametrize("action", ["info", "clear"])
def test_an_unreadable_cache_directory_is_an_input_error(cache, monkeypatch, capsys, action):
    _run()
    real_iterdir = Path.iterdir

    def refuse(self):
        if self == cache:
            raise PermissionError(13, "Permission denied")
        return real_iterdir(self)
    monkeypatch.setattr(Path, "iterdir", refuse)
    assert main(["cache", action]) == 1
    err = capsys.readouterr().err
    assert "error[input]" in err and "Permission denied" in err and err.count("\n") == 1


def test_no_room_anywhere_for_the_object_is_a_backend_error(cache, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(c_build.tempfile, "mkstemp", full)
    monkeypatch.setattr(c_build, "_fallback_dir", cache)  # no fresh temporary directory either
    with pytest.raises(tl.TensorLangError) as info:
        _run(11.0)
    assert info.value.code == "backend" and "No space left" in info.value.message
