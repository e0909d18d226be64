"""Outputs and snapshots as NRRD files, laid out as Diderot's executables write them
(docs/diderot.md, "Output files": the axes, kinds, types and the two files of a sequence).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from .. import limits
from ..errors import TensorLangError, error
from ..sampling.image import file_key

#: NRRD's kind for the component axis of a tensor shape (any other shape: ``list``).
COMPONENT_KINDS = {(2,): "2-vector", (3,): "3-vector", (4,): "4-vector", (2, 2): "2D-matrix", (3, 3): "3D-matrix"}

_TYPES: dict[str, tuple[np.dtype, str]] = {"real": (np.dtype("<f8"), "double"), "tensor": (np.dtype("<f8"), "double"),
          "int": (np.dtype("<i4"), "int"), "bool": (np.dtype("u1"), "unsigned char")}


def layout(kind: str, shape: tuple[int, ...], outer: tuple[int, ...], grid: bool) -> tuple[list[int], list[str]]:
    """The NRRD sizes and kinds (fastest axis first) of an output of ``kind`` and per-strand
    ``shape`` over ``outer`` strands: the grid's shape, or ``(n,)`` for a collection."""
    sizes: list[int] = []
    kinds: list[str] = []
    if shape:
        sizes.append(int(np.prod(shape)))
        kinds.append(COMPONENT_KINDS.get(tuple(shape), "list") if kind != "sequence" else "list")
    sizes += [int(n) for n in reversed(outer)]
    kinds += ["space" if grid else "list"] * len(outer)
    return sizes, kinds


def header(sizes: list[int], kinds: list[str] | None, type_name: str, data_file: str | None = None) -> bytes:
    """The text of an NRRD header (with its blank line when attached); without ``kinds``,
    the version Teem writes for such a header (NRRD0001)."""
    lines = ["NRRD0003" if kinds is not None else "NRRD0001", "# Complete NRRD file format specification at:",
             "# http://teem.sourceforge.net/nrrd/format.html",
             f"type: {type_name}", f"dimension: {len(sizes)}", "sizes: " + " ".join(map(str, sizes))]
    lines += ["kinds: " + " ".join(kinds)] if kinds is not None else []
    lines += ["endian: little", "encoding: raw"][type_name == "unsigned char":]  # Teem: no endian for 1-byte data
    if data_file is not None:
        lines.append(f"data file: {data_file}")
    return ("\n".join(lines) + "\n" + ("" if data_file is not None else "\n")).encode("ascii")


def encode(output, value: Any, grid: bool) -> tuple[list[int], list[str], str, np.ndarray]:
    """(sizes, kinds, NRRD type, C-ordered data) of ``value``, the array of ``output``
    (an object with ``name``, ``kind`` and per-strand ``shape``) over all strands."""
    array = np.asarray(value)
    shape = tuple(output.shape)
    if array.ndim < len(shape) or tuple(array.shape[array.ndim - len(shape):]) != shape:
        raise error("internal", f"output {output.name!r}: an array of shape {array.shape} does not end in the "
                                f"output's shape {shape}")
    outer = tuple(array.shape[:array.ndim - len(shape)])
    if not grid and len(outer) != 1:
        raise error("internal", f"output {output.name!r} of a collection has shape {array.shape}")
    if not outer:  # NRRD has at least one axis; a lone strand's grid is 1 long
        outer = (1,)
    element = output.type.split("{")[0].split("[")[0] if output.kind == "sequence" else output.kind  # int{3}: ints
    dtype, type_name = _TYPES.get(element, _TYPES["real"])
    if type_name == "int" and array.size and (array.min() < -2**31 or array.max() >= 2**31):
        raise error("input", f"output {output.name!r} holds integers beyond 32 bits, which Diderot's int output "
                             "(NRRD type int) cannot hold")
    sizes, kinds = layout(output.kind, shape, outer, grid)
    return sizes, kinds, type_name, np.ascontiguousarray(array, dtype=dtype)


def write(path: str, output, value: Any, grid: bool) -> str:
    """Write ``value`` (the output's array over all strands) to ``path``; returns the path.
    error[input] when the file cannot be written."""
    _save(path, output, *encode(output, value, grid))
    return path


def is_dynamic(output) -> bool:
    """Whether ``output`` is a sequence of any length (``T[]``, ``T{}``)."""
    return output.kind == "sequence" and (not output.shape or output.shape[0] == 0)


def dynamic_files(prefix: str, step: int | None = None) -> tuple[str, str]:
    """The two files of a sequence-of-any-length output: ``PREFIX-len.nrrd`` and
    ``PREFIX-data.nrrd`` (the prefix is the output's name, or what ``-o`` gives, as is);
    a snapshot's are ``PREFIX-len-NNNN.nrrd`` and ``PREFIX-data-NNNN.nrrd``."""
    if step is not None:
        return snapshot_name(f"{prefix}-len", step), snapshot_name(f"{prefix}-data", step)
    return f"{prefix}-len.nrrd", f"{prefix}-data.nrrd"


def write_dynamic(prefix: str, output, value: Any, grid: bool, warn=None, step: int | None = None) -> list[str]:
    """Write a sequence-of-any-length output as Diderot's executables do (docs/diderot.md,
    "Output files"); ``warn`` gets the message for no data file.  Returns the paths written."""
    seqs = np.asarray(value, dtype=object)
    outer = seqs.shape or (1,)
    flat = [np.asarray(v) for v in seqs.reshape(-1)]
    elem_shape = tuple(output.shape[1:])
    counts = np.array([len(v) for v in flat], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    pairs = np.stack([offsets, counts], axis=-1).reshape(outer + (2,))
    len_path, data_path = dynamic_files(prefix, step)
    length = _Out(output.name, "tensor", (2,), "int[2]")
    sizes, kinds, _t, data = encode(length, pairs, grid)
    total = int(counts.sum())
    # with every sequence empty, Diderot's runtime writes the lengths without kinds
    _save(len_path, output, sizes, kinds if total else None, "int", np.ascontiguousarray(pairs, "<i4"))
    written = [len_path]
    if total == 0:
        if warn is not None:
            what = "snapshot" if step is not None else "output"
            warn(f"Warning: all sequences in {what} are empty, so no {data_path!r} file produced")
        return written
    element = output.type.split("[")[0].split("{")[0]
    dtype, type_name = _TYPES.get(element, _TYPES["real"])
    elements = np.concatenate([v.reshape((len(v),) + elem_shape) for v in flat if len(v)])
    sizes, kinds = layout("tensor", elem_shape, (total,), False)
    _save(data_path, output, sizes, kinds, type_name, np.ascontiguousarray(elements, dtype=dtype))
    return written + [data_path]


class _Out:
    def __init__(self, name: str, kind: str, shape: tuple[int, ...], type_: str):
        self.name, self.kind, self.shape, self.type = name, kind, shape, type_


#: FIFOs opened for writing before a run ((its thread, path) -> descriptor): :func:`open_nonblocking` takes them
_HELD: dict[tuple[int, str], int] = {}


@contextlib.contextmanager
def fifos_opened(targets):
    """Each of ``targets`` (what, path) that is a FIFO opened for writing before the run, so that one no process
    reads is error[input] before any work (it was after the whole run), held till its output is written."""
    held: dict[str, int] = {}
    try:
        for what, path in targets:
            try:
                held.update({path: open_nonblocking(path, os.O_WRONLY)} if path not in held and Path(path).is_fifo() else {})
            except OSError as exc:
                raise error("input", f"cannot write {what} to {path!r}: {exc.strerror or exc}") from None
        _HELD.update({(threading.get_ident(), path): fd for path, fd in held.items()})
        yield
    finally:
        for path, fd in held.items():
            if _HELD.get(key := (threading.get_ident(), path)) == fd:
                os.close(_HELD.pop(key))


def open_nonblocking(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` that waits at most 2 s for a FIFO's reader (a plain open waits forever);
    a FIFO :func:`fifos_opened` holds, at once."""
    if (fd := _HELD.pop((threading.get_ident(), path), None)) is not None:
        return fd
    for _ in range(100):  # 100 x 20 ms for a reader started beside us: ``cat fifo & tensorlang ... -o fifo``
        try:
            fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)
            os.set_blocking(fd, True)
            return fd
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
        time.sleep(0.02)
    raise OSError(errno.ENXIO, "it is a FIFO that no process reads")


def _save(path: str, output, sizes: list[int], kinds: list[str] | None, type_name: str, data: np.ndarray) -> None:
    """The header and the data in one file, a ``.nhdr`` header beside its ``.raw`` data, or ``-``: standard output (Teem's)."""
    raw = os.path.splitext(path)[0] + ".raw" if path.endswith(".nhdr") else None  # (as Teem: .NHDR is one file)
    try:
        if path == "-":  # (after what the program printed there)
            if not hasattr(sys.stdout, "buffer"):  # (None where it was closed: >&-)
                raise OSError(errno.EBADF, "standard output is closed, or takes text only")
            sys.stdout.flush()
            sys.stdout.buffer.write(header(sizes, kinds, type_name) + data.tobytes())
            sys.stdout.buffer.flush()
        elif raw is not None:
            with open(raw, "wb", opener=open_nonblocking) as fh:
                fh.write(data.tobytes())
            with open(path, "wb", opener=open_nonblocking) as fh:
                fh.write(header(sizes, kinds, type_name, "./" + os.path.basename(raw)))  # as Teem names it
        else:
            with open(path, "wb", opener=open_nonblocking) as fh:
                fh.write(header(sizes, kinds, type_name))
                fh.write(data.tobytes())
    except (OSError, ValueError) as exc:
        raise error("input", f"cannot write output {output.name!r} to {path!r}: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None


def snapshot_name(prefix: str, step: int) -> str:
    """``PREFIX-NNNN.nrrd``: the step with at least four digits, as Diderot names snapshots."""
    return f"{prefix}-{step:04d}.nrrd"


def write_all(files: dict[str, str], outputs, values: dict[str, Any], grid: bool, warn=None, step=None) -> list[str]:
    """Write every output, each checked before any is, to its file (``files``: output name -> path, a prefix
    for a sequence of any length or for snapshot ``step``'s files); the paths written."""
    encoded = {out.name: encode(out, values[out.name], grid) for out in outputs if not is_dynamic(out)}
    for out in (o for o in outputs if is_dynamic(o) and o.type.startswith("int")):
        seqs = list(np.asarray(values[out.name], dtype=object).reshape(-1))  # its ints, checked at once as an int output's
        encode(_Out(out.name, "int", (), "int"), np.concatenate(seqs, axis=None) if seqs else np.zeros(0), False)
    written: list[str] = []
    for out in outputs:
        if is_dynamic(out):
            written += write_dynamic(files[out.name], out, values[out.name], grid, warn, step)
        else:
            path = files[out.name] if step is None else snapshot_name(files[out.name], step)
            _save(path, out, *encoded[out.name])
            written.append(path)
    return written


#: the files :func:`check_image_file` passed (:func:`.image.file_key`, budget)
_CHECKED: set[tuple] = set()


def check_image_file(path: str) -> None:
    """Refuse, before its data are read, an NRRD image whose header claims more samples
    than the memory budget holds as float64 (error[too-large]); an unreadable header is
    left to the image reader, which names what is wrong."""
    if not path.lower().endswith((".nrrd", ".nhdr")) or not os.path.isfile(path):
        return  # a FIFO would block here: the image reader refuses what is no regular file
    try:  # a file passed before and not written since (as the image reader sees it), under the same budget, passes
        seen = (file_key(path), limits.memory_budget_bytes())
        if seen[0] is not None and seen in _CHECKED:
            return
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except (OSError, ValueError):
        return
    if len(_CHECKED) > 64:
        _CHECKED.clear()
    _CHECKED.add(seen)  # (one without a file_key is never looked up)
    end = head.find(b"\n\n")  # (the header ends at the first empty line)
    for line in (head[:end] if end >= 0 else head).split(b"\n"):
        if not line.strip():
            break
        key, sep, rest = line.decode("latin-1").partition(":")
        if sep and key.strip().lower() == "sizes":
            try:
                count = int(np.prod([int(w) for w in rest.split()], dtype=object))
            except ValueError:
                return
            budget = limits.memory_budget_bytes()  # a malformed $TENSORLANG_MAX_BYTES: its own error[input]
            try:
                limits.check_allocation(count, 8, f"image {path!r}")
            except TensorLangError as exc:
                _CHECKED.discard(seen)
                raise TensorLangError("too-large", exc.message + f" (TENSORLANG_MAX_BYTES sets the budget, {budget})") from None
            return
