"""Compile generated C into shared objects, cached per user, and load them: the compiler
and its flags (:func:`_probe`), the cache's keys, manifests and fallbacks, and its
commands follow docs/c-backend.md, "Building and the cache", rule by rule."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...errors import TensorLangError, error
from ...limits import env_path

#: Bumped whenever the calling convention or the generated code's meaning changes.
ABI_VERSION = "2"
_MANIFEST_KIND = "tensorlang-c-kernel"
_COMPILE_TIMEOUT_S = 300


@dataclass(frozen=True)
class Compiler:
    """A working C compiler and the flags tensorlang builds with."""

    command: tuple[str, ...]
    identity: str
    flags: tuple[str, ...]
    openmp: bool

    def key_material(self) -> str:
        return "\n".join([ABI_VERSION, self.identity, " ".join(self.command), " ".join(self.flags)])


def compiler_command() -> tuple[str, ...]:
    return tuple((os.environ.get("CC", "").strip() or "cc").split())


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S, **kwargs)


@functools.lru_cache(maxsize=None)
def _probe(command: tuple[str, ...]) -> Compiler | str:
    """The compiler with the best flags it accepts, or why there is none."""
    if shutil.which(command[0]) is None:
        return f"no C compiler: {command[0]!r} is not on PATH (set $CC)"
    try:
        version = _run([*command, "--version"])
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the C compiler {command[0]!r} does not run: {exc}"
    identity = (version.stdout or version.stderr).strip().splitlines()[0:1]
    base = ["-O3", "-std=c99", "-fPIC", "-shared", "-fno-strict-aliasing", "-frounding-math"]  # (docs/c-backend.md)
    test = "#include <math.h>\nint tl_probe(double *x) { x[0] = sqrt(x[0]); return 0; }\n"
    with tempfile.TemporaryDirectory(prefix="tensorlang-probe-") as tmp:
        src, out = Path(tmp, "probe.c"), Path(tmp, "probe.so")
        src.write_text(test)
        for extra in (["-march=native", "-fopenmp"], ["-fopenmp"], ["-march=native", "-fopenmp-simd"], ["-march=native"], []):
            flags = base + extra
            try:
                if _run([*command, *flags, str(src), "-o", str(out), "-lm"]).returncode == 0 and out.exists():
                    ctypes.CDLL(str(out))
                    return Compiler(command, identity[0] if identity else command[0], tuple(flags), "-fopenmp" in flags)
            except (OSError, subprocess.SubprocessError):
                continue
    return f"the C compiler {command[0]!r} cannot build a shared library"


def find_compiler() -> Compiler | None:
    probed = _probe(compiler_command())
    return probed if isinstance(probed, Compiler) else None


def why_no_compiler() -> str | None:
    probed = _probe(compiler_command())
    return probed if isinstance(probed, str) else None


def require_compiler() -> Compiler:
    found = find_compiler()
    if found is None:
        raise error("backend", f"the 'c' back end needs a C compiler: {why_no_compiler()}")
    return found


# ------------------------------------------------------------------ the cache
def cache_dir() -> Path:
    explicit = env_path("TENSORLANG_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tensorlang"


def _usable_dir(path: Path) -> bool:
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and os.access(path, os.W_OK | os.X_OK) and _private(info)


def _private(info: os.stat_result) -> bool:
    """Owned by this user and writable by nobody else (nobody else may plant objects)."""
    return (not hasattr(os, "getuid") or info.st_uid == os.getuid()) and not info.st_mode & 0o022


_fallback_dir: Path | None = None
_notified = False


def _kernel_dir() -> Path:
    """The cache directory, or a private temporary one if the cache cannot be used."""
    global _notified
    path = cache_dir()
    if _usable_dir(path):
        return path
    fallback = _private_dir()
    if not _notified:
        print(f"tensorlang: note: cache directory {path} is not usable (not a private, writable directory); "
              f"compiling into {fallback} for this process", file=sys.stderr)
        _notified = True
    return fallback


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_key(source: str, compiler: Compiler, extra_flags: tuple[str, ...] = ()) -> str:
    return _digest((compiler.key_material() + "\n" + " ".join(extra_flags) + "\n" * bool(extra_flags) + source).encode())


#: The most bytes of an object and of a manifest read from the cache (a bigger one is rebuilt).
_MAX_OBJECT_BYTES, _MAX_MANIFEST_BYTES = 64 * 1024 * 1024, 64 * 1024


def _read_limited(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes, :func:`_private` (looked at
    before it is opened: no FIFO is), or None."""
    try:
        info = path.stat()
        if not (stat.S_ISREG(info.st_mode) and _private(info)):
            return None
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def _valid_entry(obj: Path, manifest: Path, key: str) -> bool:
    """Whether the entry may be loaded; anything odd is not valid (rebuilt, never an error)."""
    text = _read_limited(manifest, _MAX_MANIFEST_BYTES)
    if text is None:
        return False
    try:
        meta = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return False
    if not (isinstance(meta, dict) and meta.get("kind") == _MANIFEST_KIND and meta.get("key") == key):
        return False
    data = _read_limited(obj, _MAX_OBJECT_BYTES)
    return data is not None and meta.get("sha256") == _digest(data)


def _write_atomic(directory: Path, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o600)
        os.replace(tmp, directory / name)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def build(source: str, compiler: Compiler, extra_flags: tuple[str, ...] = ()) -> Path:
    """A valid shared object for ``source``, from the cache or compiled now (into this process's
    private directory where the shared cache will not take it: a damaged cache never fails
    a compile); ``extra_flags`` are part of the key."""
    key = cache_key(source, compiler, extra_flags)
    directory = _kernel_dir()
    obj, manifest = directory / f"{key}.so", directory / f"{key}.json"
    if _valid_entry(obj, manifest, key):
        return obj
    with contextlib.suppress(OSError, _Vanished):
        return _compile_into(directory, key, source, compiler, extra_flags)
    try:
        return _compile_into(_private_dir(), key, source, compiler, extra_flags)
    except OSError as exc:  # no room even in the temporary directory, say
        raise error("backend", f"cannot write the compiled kernel: {exc.strerror or exc}") from None


class _Vanished(Exception):
    """The compiler failed in the shared cache: retried privately, where a failure is reported."""


def _private_dir() -> Path:
    global _fallback_dir
    _fallback_dir = _fallback_dir or Path(tempfile.mkdtemp(prefix="tensorlang-kernels-"))
    return _fallback_dir


def _clear_path(path: Path) -> None:
    """Remove a directory where an entry goes (our own entry names: nothing else belongs there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)


def _compile_into(directory: Path, key: str, source: str, compiler: Compiler,
                  extra_flags: tuple[str, ...] = ()) -> Path:
    obj, manifest = directory / f"{key}.so", directory / f"{key}.json"
    shared = directory != _fallback_dir
    fd, tmp_obj = tempfile.mkstemp(dir=directory, prefix=f".{key}.", suffix=".so")
    os.close(fd)
    try:
        try:
            # the source on standard input: a temporary file's name would make two processes' objects differ
            result = _run([*compiler.command, *compiler.flags, *extra_flags, "-x", "c", "-", "-o", tmp_obj, "-lm"],
                          input=source)
        except subprocess.TimeoutExpired:
            raise error("backend", f"the C compiler took more than {_COMPILE_TIMEOUT_S} s") from None
        except OSError as exc:
            raise error("backend", f"the C compiler failed to run: {exc}") from None
        if result.returncode != 0:
            if shared:  # another process may have removed our files (cache clear): retry privately
                raise _Vanished()
            first = (result.stderr or result.stdout).strip().splitlines()[:3]
            raise error("internal", "generated C did not compile: " + " | ".join(first))
        data = Path(tmp_obj).read_bytes()
        os.chmod(tmp_obj, 0o600)
        _clear_path(obj)
        _clear_path(manifest)
        os.replace(tmp_obj, obj)
        _write_atomic(directory, manifest.name, json.dumps(
            {"kind": _MANIFEST_KIND, "key": key, "sha256": _digest(data), "size": len(data),
             "compiler": compiler.identity, "flags": list(compiler.flags), "abi": ABI_VERSION}).encode())
    finally:
        _unlink(tmp_obj)
    return obj


def build_and_load(source: str, compiler: Compiler, declarations: str, extra_flags: tuple[str, ...] = ()):
    """:func:`build` then :func:`load`, compiled again privately where the object vanished between."""
    path = build(source, compiler, extra_flags)
    try:
        return load(path, declarations)
    except CannotLoad:
        if path.parent == _fallback_dir:
            raise
        key = cache_key(source, compiler, extra_flags)
        return load(_compile_into(_private_dir(), key, source, compiler, extra_flags), declarations)


_loaded: dict[str, tuple[object, object]] = {}


def prepare_openmp() -> None:
    """``OMP_WAIT_POLICY=passive`` unless chosen, before the first object linking OpenMP loads."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "passive"


class CannotLoad(TensorLangError):
    """dlopen refused the object."""


def load(path: Path, declarations: str):
    """dlopen ``path`` through cffi with ``declarations``: (ffi, lib), once per object (its name is its source's hash)."""
    import cffi

    loaded = _loaded.get(str(path))
    if loaded is None:
        prepare_openmp()
        ffi = cffi.FFI()
        ffi.cdef(declarations)
        try:
            lib = ffi.dlopen(str(path), getattr(os, "RTLD_NOW", 0) | getattr(os, "RTLD_NODELETE", 0))  # never unloaded: c-backend.md, "Threads"
        except OSError as exc:
            raise CannotLoad("backend", f"cannot load the compiled kernel: {exc}") from None
        loaded = _loaded[str(path)] = (ffi, lib)
    return loaded


# ------------------------------------------------------------ cache commands
def _listing(directory: Path) -> list[Path]:
    """The cache directory's files; one that cannot be read is error[input]."""
    try:
        return list(directory.iterdir()) if directory.is_dir() else []
    except OSError as exc:
        raise error("input", f"cannot read the cache directory {str(directory)!r}: {exc.strerror or exc}") from None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # removed meanwhile (cache clear in another process)
        return 0


def cache_info() -> str:
    directory = cache_dir()
    entries = [p for p in _listing(directory) if p.suffix in (".so", ".json") and len(p.stem) == 64]
    kernels = [p for p in entries if p.suffix == ".so"]
    size = sum(_size(p) for p in entries)
    probed = _probe(compiler_command())
    compiler = (f"{' '.join(probed.command)} ({probed.identity}); flags {' '.join(probed.flags)}; "
                f"{'' if probed.openmp else 'no '}OpenMP" if isinstance(probed, Compiler) else f"none: {probed}")
    usable = "" if _usable_dir(directory) else "  (not usable: kernels go to a temporary directory)"
    return f"cache directory: {directory}{usable}\nkernels: {len(kernels)}, {size / 1024:.1f} KiB\ncompiler: {compiler}"


def _young(path: Path) -> bool:
    """Whether a temporary file may still belong to a compile in progress."""
    with contextlib.suppress(OSError):
        return time.time() - path.stat().st_mtime < 2 * _COMPILE_TIMEOUT_S
    return False


def cache_clear() -> int:
    """Remove every cache entry (and leftover temporary files); return how many kernels."""
    directory = cache_dir()
    removed = 0
    for path in _listing(directory):
        is_entry = path.suffix in (".so", ".json") and len(path.stem) == 64
        is_temp = path.name.startswith(".") and len(path.name) > 65 and path.name[1:65].isalnum()
        if is_temp and _young(path):
            continue  # another process is compiling into it right now
        if (is_entry or is_temp) and path.is_file():
            removed += path.suffix == ".so" and is_entry
            _unlink(path)
    _loaded.clear()
    return removed
