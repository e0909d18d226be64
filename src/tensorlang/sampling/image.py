"""Images: sampled data on a regular grid with an index-to-world transform (004 §2.1):
a float64 array (``dim`` space axes, then the voxel shape) and a homogeneous
(dim+1)×(dim+1) index-to-world matrix; ``.npy`` and NRRD files (NRRD's axis order, as
Diderot indexes images), bounded and checked before any data are read (docs/fields.md,
"Images").
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import os
import re
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field as dataclass_field

import numpy as np

from .. import limits
from ..errors import TensorLangError, error

_COUNTER = itertools.count(1)

#: NRRD axis kinds that are components of a voxel, and the tensor shape they make.
_VOXEL_KINDS = {
    "vector": None, "list": None, "point": None, "covariant-vector": None, "normal": None,
    "2-vector": (2,), "3-vector": (3,), "4-vector": (4,), "3-color": (3,), "4-color": (4,),
    "2d-matrix": (2, 2), "3d-matrix": (3, 3), "quaternion": (4,),
    # their stored components, as Diderot's runtime reads them (an image(2)[3], an image(3)[6])
    "2d-symmetric-matrix": (3,), "3d-symmetric-matrix": (6,), "rgb-color": (3,), "rgba-color": (4,),
}
_SPACE_KINDS = {"domain", "space", "time", "???"}  # (???: unknown, as Teem reads it)


class Samples:
    """The axes of sampled data ``data`` (``dim`` space axes first, then the voxel shape):
    shared by :class:`Image` and the arrays a probe step reads (fields/reconstruct.py)."""

    data: np.ndarray
    dim: int

    @property
    def sizes(self) -> tuple[int, ...]:
        """The number of samples along each space axis."""
        return tuple(self.data.shape[: self.dim])

    @property
    def voxel_shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape[self.dim:])


@dataclass(frozen=True, eq=False)
class Image(Samples):
    """Sampled data (space axes first, then the voxel shape) and its index-to-world map."""

    data: np.ndarray
    dim: int
    world: np.ndarray  # (dim+1, dim+1), homogeneous: world = world @ [index, 1]
    name: str = dataclass_field(default_factory=lambda: f"V{next(_COUNTER)}")
    #: what is made from the samples and kept with them (strands_batch.bounds), where nothing writes them (an
    #: image made here: a copy, a reader's array; see :func:`_kept`); None for an Image of a caller's array
    tables: dict | None = dataclass_field(default=None, init=False, repr=False)
    to_index: np.ndarray = dataclass_field(init=False)  # the world-to-index map (world's inverse): made once, read-only

    def __post_init__(self) -> None:  # (world: as image() takes it; checked and copied: nothing else writes it)
        for name, value in (("world", world := _world_matrix(self.world, self.dim)), ("to_index", world_to_index(world, self.dim))):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"Image({self.name}, sizes={self.sizes}, voxel={self.voxel_shape})"

    def __reduce__(self) -> tuple:  # (a copy's samples, a pickle's, are its holder's, who may write them: no tables)
        return Image, (self.data, self.dim, self.world, self.name)


#: numpy dtype kinds an image or a probe point may have: bool, integers, floats (complex
#: values, objects, strings, dates and times are refused, not cast)
REAL_KINDS = frozenset("biuf")

#: The most samples an image may have (2**31 float64 values: 16 GiB); a file whose
#: header claims more is refused before its data is read.
MAX_IMAGE_ELEMENTS = 2**31

#: The most bytes of an NRRD header the loader reads (pynrrd reads it line by line).
MAX_HEADER_BYTES = 1 << 20


def real_array(value, what: str) -> np.ndarray:
    """``value`` as a float64 array, or error[input] when it is not an array of real
    numbers (complex, object, string, datetime; ragged; masked entries)."""
    limits.refuse_masked(value, what)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise error("input", f"{what} must be an array of real numbers, got {type(value).__name__}") from None
    if array.dtype.kind not in REAL_KINDS:
        raise error("input", f"{what} must be an array of real numbers (bool, integer or float), "
                             f"got dtype {array.dtype}")
    if array.size > MAX_IMAGE_ELEMENTS:
        raise error("too-large", f"{what} has {array.size} elements; at most {MAX_IMAGE_ELEMENTS} are taken")
    with np.errstate(over="ignore"):  # a long double past float64's range is ±inf, a value (no warning)
        return array if array.dtype == np.float64 else array.astype(np.float64)


def _vector(value, dim: int, what: str) -> np.ndarray:
    """A per-axis number (one number, or one per space axis) as a float64 vector of ``dim``."""
    v = real_array(value, f"world {what}")
    if v.ndim == 0:
        v = np.full(dim, float(v))
    if v.shape != (dim,):
        raise error("input", f"world {what} of a {dim}-D image is one number or {dim}, got shape {v.shape}")
    if not np.all(np.isfinite(v)):  # (it was "the world matrix must be finite", of a matrix not written)
        raise error("input", f"world {what} must be finite numbers, got {v.tolist()}")
    return v


def _world_matrix(world, dim: int) -> np.ndarray:
    """The homogeneous index-to-world matrix of ``world=`` (docs/fields.md, "Images")."""
    if world is None:
        return np.eye(dim + 1)
    if isinstance(world, dict):
        unknown = set(world) - {"spacing", "origin", "directions"}
        if unknown:
            raise error("input", f"world= takes spacing, origin and directions, not {sorted(unknown)}")
        directions = real_array(world.get("directions", np.eye(dim)), "world directions")
        spacing = _vector(world.get("spacing", 1.0), dim, "spacing")
        origin = _vector(world.get("origin", 0.0), dim, "origin")
        if directions.shape != (dim, dim) or not np.all(np.isfinite(directions)):
            raise error("input", f"world directions must be {dim}x{dim} finite numbers, got {directions.tolist()}")
        m = np.eye(dim + 1)
        with np.errstate(over="ignore"):  # (a product past the float range: refused below as not finite)
            m[:dim, :dim] = directions * spacing[None, :]
        m[:dim, dim] = origin
        world = m
    m = real_array(world, "world=").copy()
    if m.shape == (dim, dim):
        h = np.eye(dim + 1)
        h[:dim, :dim] = m
        m = h
    if m.shape != (dim + 1, dim + 1):
        raise error("input", f"a {dim}-D image needs a {dim}x{dim} or {dim + 1}x{dim + 1} world matrix, "
                             f"got shape {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m[dim, :dim] != 0) or m[dim, dim] != 1:
        raise error("input", "the world matrix must be finite and affine (last row 0 ... 0 1)")
    try:  # invertible where the inverse is finite numbers, at any scale or condition (as Diderot's runtime, which
        # inverts whatever it is given: docs/fields.md, "Images"); exactly singular, or past the float range: refused
        with np.errstate(all="ignore"):
            invertible = bool(np.isfinite(world_to_index(m, dim)).all())
    except (np.linalg.LinAlgError, ZeroDivisionError):
        invertible = False
    if not invertible:
        raise error("input", "the world matrix is singular: index space cannot be recovered from world space")
    return m


def fma(a: float, b: float, c: float) -> float:
    """``a·b + c`` rounded once (C's fma) where all three are finite; else as two operations.
    Exact in integers: each float is an integer over a power of two, and Python's division
    of two integers rounds once."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    (na, da), (nb, db), (nc, dc) = a.as_integer_ratio(), b.as_integer_ratio(), c.as_integer_ratio()
    den = max(da * db, dc)
    num = na * nb * (den // (da * db)) + nc * (den // dc)
    if num == 0:  # (-0 only from -0 + -0, as IEEE rounds)
        return a * b + c
    try:
        return num / den
    except OverflowError:
        return math.inf if num > 0 else -math.inf


#: the 3x3 adjugate's entries ``m[a]·m[d] - m[b]·m[c]`` as (a, b, c, d), row-major (diderot/image.cxx: invert3x3)
_ADJUGATE3 = ((4, 5, 7, 8), (2, 1, 8, 7), (1, 2, 4, 5), (5, 3, 8, 6), (0, 2, 6, 8), (2, 0, 5, 3),
              (3, 4, 6, 7), (1, 0, 7, 6), (0, 1, 3, 4))


def world_to_index(world: np.ndarray, dim: int) -> np.ndarray:
    """The inverse of the affine ``world``, bit for bit as Diderot's executables compute it
    (docs/diderot.md, "Images"): 1-D ``1/s`` and ``-t/s``; 2-D and 3-D the adjugate times
    ``1/det`` (image.cxx: invert2x2, invert3x3, their products and sums in their order), the
    translation ``-(M⁻¹ t)`` in fused multiply-adds (g++ -march=native contracts the loop of
    image-inst.hxx); numpy's inverse where the det under- or overflows."""
    m = world[:dim, :dim].ravel().tolist()
    t = world[:dim, dim].tolist()
    if dim == 1:  # (m[0] is not 0: _world_matrix refuses a singular map)
        inv, shift = [1.0 / m[0]], [-t[0] / m[0]]
    else:
        det = _det(m, dim)
        if not 0 < abs(det) < math.inf:  # (under- or overflowed: an executable's map is 0 or ∞ there)
            return np.linalg.inv(world)
        scale = 1.0 / det
        if dim == 2:
            inv = [scale * m[3], scale * -m[1], scale * -m[2], scale * m[0]]
        else:
            inv = [scale * (m[a] * m[d] - m[b] * m[c]) for a, b, c, d in _ADJUGATE3]
        shift = [_shift(inv[dim * i: dim * i + dim], t) for i in range(dim)]
    out = np.eye(dim + 1)
    out[:dim, :dim] = np.reshape(inv, (dim, dim))
    out[:dim, dim] = shift
    return out if np.all(np.isfinite(out)) else np.linalg.inv(world)


def _det(m: list[float], dim: int) -> float:
    """The determinant of the row-major ``m`` in Diderot's order of products and sums."""
    if dim == 2:
        return m[0] * m[3] - m[1] * m[2]
    return (m[0] * m[4] * m[8] + m[3] * m[7] * m[2] + m[6] * m[1] * m[5]
            - m[6] * m[4] * m[2] - m[3] * m[1] * m[8] - m[0] * m[7] * m[5])


def _shift(row: list[float], t: list[float]) -> float:
    """``-(row · t)``: the sum in fused multiply-adds, left to right, the last one negated."""
    total = 0.0
    for j in range(len(t) - 1):
        total = fma(row[j], t[j], total)
    return fma(-row[-1], t[-1], -total)


def index_point(to_index: np.ndarray, x) -> np.ndarray:
    """World point ``x`` in index space in the order of Diderot's executables: 1-D
    ``fma(s, x, t)``; else each row's products summed left to right, then its translation."""
    rows = to_index.tolist()
    x = np.reshape(np.asarray(x, dtype=np.float64), (len(rows) - 1,)).tolist()
    if len(x) == 1:
        return np.array([fma(rows[0][0], x[0], rows[0][1])])
    out = []
    for row in rows[:-1]:
        total = row[0] * x[0]
        for b in range(1, len(x)):
            total = total + row[b] * x[b]
        out.append(total + row[-1])
    return np.array(out)


def image(data, dim: int | None = None, world=None) -> Image:
    """An image from an array: the first ``dim`` axes are space (default: all of them),
    the rest the voxel shape; ``world``: the index-to-world transform (default identity).
    A path (a string, bytes or a path object) is read as :func:`load` reads it."""
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        return load(data, dim, world)  # (was an array of one string: "got dtype <U22")
    if isinstance(data, Image):  # (another world: the same samples, so the same tables)
        if dim is not None and (isinstance(dim, bool) or dim != data.dim):  # (it was ignored: a 2-D field for dim=1)
            raise error("input", f"the image is {data.dim}-D; dim={dim!r} does not change that (tl.image(img.data, dim={dim!r}) does)")
        return data if world is None else _kept(Image(data.data, data.dim, world, data.name), data.tables)
    array = np.array(real_array(data, "an image"), dtype=np.float64)  # a copy: the image is read-only
    return _owned(array, dim, world)


def _kept(img: Image, tables: dict | None) -> Image:
    """``img`` with :attr:`~Image.tables` ``tables`` (new ones: samples made here; else those of its samples)."""
    object.__setattr__(img, "tables", tables)  # (not an argument of Image: a caller's array may change)
    return img


def _owned(array: np.ndarray, dim: int | None, world) -> Image:
    """An image of a float64 array nothing else refers to (a copy, or a reader's array)."""
    dim = array.ndim if dim is None else dim
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or not 1 <= dim <= 3:
        raise error("input", f"an image has 1, 2 or 3 space axes, not {dim!r}")
    if array.ndim < dim:
        raise error("input", f"a {dim}-D image needs at least {dim} axes, the array has {array.ndim}")
    if any(n < 1 for n in array.shape):
        raise error("input", f"an image needs samples along every axis, got shape {array.shape}")
    array.setflags(write=False)
    return _kept(Image(array, int(dim), world), {})


def load(path, dim: int | None = None, world=None) -> Image:
    """An image from a ``.npy`` or NRRD (``.nrrd``, ``.nhdr``) file: error[input] for no
    regular file, a malformed header or data that are no real numbers, error[too-large]
    past MAX_IMAGE_ELEMENTS samples (before the data are read)."""
    try:
        name = os.fspath(path)
    except TypeError:
        raise error("input", f"an image file is a path, got {type(path).__name__}") from None
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not name:
        raise error("input", "the name of the image file is empty")
    suffix = os.path.splitext(name)[1].lower()
    if suffix == ".npy":
        return image(_load_npy(name), dim, world)
    if suffix in (".nrrd", ".nhdr"):
        size = _regular_file(name)
        return _load_same(name, dim, size) if suffix == ".nrrd" and world is None else _load_nrrd(name, dim, world)
    raise error("input", f"cannot read image {name!r}: expected a .npy, .nrrd or .nhdr file")


#: NRRD files up to this size keep the image read last, read again where :func:`file_key` changed
SAME_BYTES = 8 << 20  # (the image kept is up to 8x larger: samples as float64)
#: a file changed this recently may change again, its times kept (a coarse file-system clock): bytes compared
RACY_NS = 2 * 10**9
KEEP_FILES, KEEP_SHARE = 2, 4  # images kept: of this many files, together up to this share of the memory budget
_LAST: dict = limits.kept({})


def file_key(name: str) -> tuple | None:
    """What a write to file ``name`` changes (path, inode, size, modification and change
    times), or None where it cannot be read or was changed in the last RACY_NS."""
    try:
        info = os.stat(name)
    except (OSError, ValueError):
        return None
    if time.time_ns() - info.st_ctime_ns < RACY_NS:
        return None
    return os.path.abspath(name), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _load_same(name: str, dim: int | None, size: int) -> Image:
    """An NRRD file of ``size`` bytes with its data inside: the image kept where its :func:`file_key` (or, up to
    SAME_BYTES without one, its bytes) is as then (a program called again on its file), else read anew."""
    key, slot, small = file_key(name), (os.path.abspath(name), dim), size <= SAME_BYTES
    last = _LAST.get(slot)
    if key is not None and last is not None and last[0] == key:
        return last[2]
    try:
        with open(name, "rb") as fh:
            raw = fh.read(size + 1 if small else MAX_HEADER_BYTES)
    except (OSError, ValueError):
        return _load_nrrd(name, dim, None)  # (it says what is wrong)
    end = raw.find(b"\n\n", 0, MAX_HEADER_BYTES)
    head = raw[:end if end >= 0 else MAX_HEADER_BYTES].replace(b"\r", b"").lower()
    if b"data file" in head or b"datafile" in head:  # the samples are in other files
        return _load_nrrd(name, dim, None)
    if small and last is not None and last[1] == raw:
        _LAST[slot] = (key, raw if key is None else None, last[2])
        return last[2]
    whole, last = small and len(raw) == size, None  # (one byte more: the file grew since its size was read)
    for old in list(_LAST)[:len(_LAST) + 1 - KEEP_FILES] + [slot]:  # (let go before this one is read)
        _LAST.pop(old, None)
    img = _load_nrrd(name, dim, None, raw if whole else None)
    share = limits.memory_budget_bytes() // KEEP_SHARE - sum(_held(kept[2]) for kept in _LAST.values())
    if (whole or not small and key is not None) and img.data.nbytes <= share and file_key(name) == key:  # (unchanged)
        img = _padded(img)
        if _held(img) <= share:  # (a padded image's buffer: its rows up to 1/8 longer)
            _LAST[slot] = (key, raw if key is None else None, img)
    return img


def kept_image(key: tuple) -> Image | None:
    """What :func:`load` (no ``dim``) returns now for the NRRD file of :func:`file_key` ``key``, where it keeps it."""
    last = _LAST.get((key[0], None))
    return last[2] if last is not None and last[0] == key else None


def _held(img: Image) -> int:
    """The bytes an image's samples hold: their buffer's, where they are a view of one."""
    return max(img.data.nbytes, getattr(img.data.base, "nbytes", 0))


#: doubles after each row of a kept image whose rows are a multiple of 512 bytes apart (0: none): a probe's
#: rows (4 rows x 4 slices for bspln3) then fall into more L1 sets than 2 (docs/performance.md)
PAD_ROWS = 8


def _padded(img: Image) -> Image:
    """``img`` with its rows ``PAD_ROWS`` doubles apart more (a copy, made once for a kept image: the
    probes read any strides), where its samples are a 3-D scalar volume, each row contiguous."""
    a = img.data
    if not PAD_ROWS or a.ndim != 3 or img.dim != 3 or a.strides[0] != 8 or a.strides[1] != 8 * a.shape[0] \
            or (8 * a.shape[0]) % 512 or a.nbytes <= SAME_BYTES:
        return img
    buf = np.empty((a.shape[2], a.shape[1], a.shape[0] + PAD_ROWS))
    view = buf[:, :, :a.shape[0]].transpose(2, 1, 0)
    view[...] = a
    view.setflags(write=False)
    return _kept(Image(view, 3, img.world, img.name), {})


def _regular_file(name: str, what: str = "image file") -> int:
    """The size of file ``name``; error[input] unless it is a regular file (reading a FIFO
    or a device could block for ever or never end)."""
    try:
        info = os.stat(name)
    except (OSError, ValueError) as exc:
        raise error("input", f"cannot read {what} {name!r}: {exc}" if name else f"the name of the {what} is empty") from None
    if not stat.S_ISREG(info.st_mode):
        raise error("input", f"cannot read {what} {name!r}: it is not a regular file")
    return info.st_size


def _claimed(shape, what: str) -> int:
    """The number of samples a header claims, error[too-large] beyond MAX_IMAGE_ELEMENTS."""
    total = math.prod(int(n) for n in shape)
    if total > MAX_IMAGE_ELEMENTS:
        raise error("too-large", f"{what} claims {limits.shown_count(total)} samples; images hold at most {MAX_IMAGE_ELEMENTS}")
    return total


def _load_npy(name: str, bound: Callable[[int], object] | None = None) -> np.ndarray:
    """A .npy file's array, its header checked (dtype, size; ``bound`` called with the number of
    elements, as :func:`read_nrrd` calls it) before the data are read."""
    _regular_file(name)
    fmt = np.lib.format
    try:
        with open(name, "rb") as fh:
            version = fmt.read_magic(fh)
            read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, _, dtype = read_header(fh)
    except (OSError, ValueError, TypeError, SyntaxError, EOFError) as exc:
        raise error("input", f"cannot read image {name!r}: {exc}") from None
    if dtype.kind not in REAL_KINDS:
        raise error("input", f"image {name!r} holds {dtype} data; images are real numbers (bool, integer or float)")
    elements = _claimed(shape, f"image {name!r}")
    if bound is not None:
        bound(elements)
    try:
        return np.load(name, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise error("input", f"cannot read image {name!r}: {exc}") from None
    except MemoryError:
        raise error("too-large", f"image {name!r} does not fit in memory") from None


def _header_lines(fh, name: str):
    """The lines of an NRRD header, at most MAX_HEADER_BYTES of them in all."""
    used = 0
    while True:
        line = fh.readline(MAX_HEADER_BYTES + 1 - used)
        if not line:
            return
        used += len(line)
        if used > MAX_HEADER_BYTES:
            raise error("input", f"NRRD image {name!r}: the header is longer than {MAX_HEADER_BYTES} bytes")
        field, sep, value = line.partition(b": ")
        if sep and not line.startswith(b"#") and b":=" not in field:  # a field's name in any case, as Teem reads it
            line = field.lower() + sep + value
        if line.startswith((b"space directions:", b"space origin:", b"measurement frame:")):  # "( 1, 0 )(0,1)": Teem's
            # blanks beside the brackets and commas go; one between two numbers stays (and is refused)
            line = re.sub(rb"\)\s*\(", b") (", re.sub(rb"\([^)]*\)", lambda m: re.sub(rb"\s*([(),])\s*", rb"\1", m[0]), line))
        if b":=" in line.split(b": ", 1)[0]:  # key/value pairs: unread here, and one given twice is Teem's (the last)
            line = b"#" + line
        yield line
        if line.strip() == b"" or re.match(rb"data ?file: *LIST", line):  # (a list's names follow: not the header's)
            return


def _check_sizes_text(lines: list[bytes], name: str) -> None:
    """The ``sizes`` field as written: whole decimal numbers (pynrrd reads ``4.5`` as 4
    and ``2^64`` wrapped to a negative int64)."""
    for line in lines:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"sizes":
            words = value.split()
            if not all(w.isdigit() for w in words):
                raise error("input", f"NRRD image {name!r}: sizes must be whole numbers, got "
                                     f"{value.strip()[:60].decode('ascii', 'replace')!r}")
            _claimed([int(w) for w in words], f"NRRD image {name!r}")


def _check_nrrd_header(header: dict, name: str, size: int, fh=None) -> tuple[list[int], Iterable[str]] | None:
    """error[input] (or error[too-large]) naming the field pynrrd would trip over or loop
    on: sizes, kinds, skips past the data (a line skip of 10**18), a data file; the data
    files where there are several (:func:`_data_files`)."""
    for field in ("type", "dimension", "sizes", "encoding"):
        if field not in header:
            raise error("input", f"NRRD image {name!r}: the header has no {field!r} field")
    sizes = [int(n) for n in np.atleast_1d(header["sizes"])]
    if not 1 <= int(header["dimension"]) <= 16:
        raise error("input", f"NRRD image {name!r}: dimension {header['dimension']}; an NRRD image has 1 to 16 axes")
    if int(header["dimension"]) != len(sizes):
        raise error("input", f"NRRD image {name!r}: dimension {header['dimension']} but sizes lists {len(sizes)} "
                             f"numbers; give one size per axis")
    kind = str(header["type"]).lower()
    if kind not in _NRRD_TYPES:
        raise error("input", f"NRRD image {name!r}: type {kind!r:.40} is no sample type this reader takes; write one "
                             "of int8, uint8, int16, uint16, int32, uint32, int64, uint64, float, double")
    if any(n < 1 for n in sizes):
        raise error("input", f"NRRD image {name!r}: sizes {sizes} must be positive")
    _claimed(sizes, f"NRRD image {name!r}")
    kinds = header.get("kinds")
    if kinds is not None and len(kinds) != len(sizes):
        raise error("input", f"NRRD image {name!r}: kinds lists {len(kinds)} kinds for {len(sizes)} axes; give one "
                             "per axis (domain or space for a space axis, vector, list, ... for a voxel axis)")
    files = _data_files(str(header.get("datafile", header.get("data file", ""))), sizes, name, fh)
    _check_data(header, name, size, None if files is not None else header.get("datafile", header.get("data file")))
    return files


def _check_data(header: dict, name: str, size: int, data_file: str | None) -> None:
    """error[input] for a data file that is no regular file (or is the header), or skips past the data."""
    if data_file is not None:
        path = os.path.join(os.path.dirname(name), data_file)  # (an absolute one as it is)
        try:
            size = _regular_file(path)
        except TensorLangError as exc:  # (named from the header that names it)
            raise error("input", f"NRRD image {name!r}: data file {data_file[:80]!r}: {exc.message.split(': ', 1)[1][:200]}") from None
        if os.path.samefile(path, name):
            raise error("input", f"NRRD image {name!r}: its data file is the header itself")
    for field in ("line skip", "lineskip", "byte skip", "byteskip"):
        if field in header:
            skip = int(header[field])
            if not (-1 if "byte" in field else 0) <= skip <= size:
                raise error("input", f"NRRD image {name!r}: {field} {skip} is beyond the {size} bytes of data")


def _data_files(spec: str, sizes: list[int], name: str, fh) -> tuple[list[int], Iterable[str]] | None:
    """The sizes of each file's piece and the files' names in order, where the data are in several files as Teem
    reads them (docs/diderot.md, "Images"): ``FORMAT FIRST LAST STEP [SUBDIM]`` or ``LIST [SUBDIM]`` and the lines
    after it (``fh``, there; None: not read); their count checked against the sizes before any name is made."""
    where, count = f"NRRD image {name!r}: data file {spec[:80]!r}", None
    names: Iterable[str]
    if spec.startswith("LIST"):
        given = re.match(r"\s*([-+]?\d+)|$", spec[4:])
        if given is None:
            raise error("input", f"{where}: LIST is followed by the number of axes each file holds, or nothing")
        listed = [os.fsdecode(n.removesuffix(b"\r")) for n in (fh.read(MAX_HEADER_BYTES) if fh else b"").split(b"\n")[:-1]]
        names, count, sub = listed, None if fh is None else len(listed), given[1]  # (as Teem: a last name without its
        # line end is none)
    elif re.search(r"%\d*d", spec):
        form = re.match(r"(\S+)\s+([-+]?\d+)\s+([-+]?\d+)\s+([-+]?\d+)(\s+[-+]?\d+)?", spec)
        first, last, step = (int(g) for g in form.groups()[1:4]) if form else (0, 0, 0)
        if not form or step == 0 or (last - first) * step < 0:
            raise error("input", f"{where}: a format of names takes the first and last numbers and a step from the "
                                 "first to the last ('slice%03d.raw 0 7 1'), then optionally the axes a file holds")
        if any(len(w) > 4 for w in re.findall(r"%[-+ #0]*(\d+)", form[1])):  # (%099999999d: names of 100 MB)
            raise error("input", f"{where}: the format's width makes names longer than a path may be")
        try:
            form[1] % first
        except (TypeError, ValueError):
            raise error("input", f"{where}: the format holds a conversion other than one %d") from None
        numbers, sub = range(first, last + (1 if step > 0 else -1), step), form[5]
        names, count = map(form[1].__mod__, numbers), len(numbers)
    else:
        return None
    subdim = int(sub) if sub else len(sizes) - 1
    slab, need = subdim == len(sizes), math.prod(sizes[subdim:])
    if not (1 if sub else 0) <= subdim <= len(sizes):
        raise error("input", f"{where}: each file holds {subdim} axes; the image has {len(sizes)}")
    if count is not None and not (0 < count <= sizes[-1] and sizes[-1] % count == 0 if slab else count == need):
        raise error("input", f"{where}: names {count} files; sizes {sizes} need " + (
            f"a count that divides {sizes[-1]}, each file an equal slab of the slowest axis" if slab else
            f"{need}, each file holding axes {list(range(subdim))}"))
    return (sizes[:-1] + [sizes[-1] // (count or 1)] if slab else sizes[:subdim]), names


#: bytes a compressed payload may inflate to beyond what its header's sizes need
INFLATE_SLACK = 1 << 20


def _bound_compressed(header: dict, source, name: str) -> None:
    """error[too-large] when a gzip or bzip2 payload inflates past what the header's sizes
    need (8 bytes a sample, the byte skip, INFLATE_SLACK), checked before pynrrd inflates
    it; an invalid stream is left to pynrrd.  ``source`` (after the line skip) is left where it was."""
    import bz2
    import zlib

    encoding = str(header.get("encoding", "")).lower()
    if encoding not in ("gzip", "gz", "bzip2", "bz2"):
        return
    limit = int(np.prod([int(n) for n in np.atleast_1d(header["sizes"])], dtype=object)) * 8
    limit += max(int(header.get("byte skip", header.get("byteskip", 0))), 0) + INFLATE_SLACK
    start = source.tell()
    try:
        gz = zlib.decompressobj(zlib.MAX_WBITS | 16) if encoding.startswith("g") else None
        bz = None if gz is not None else bz2.BZ2Decompressor()
        total = 0
        try:
            while True:
                chunk = source.read(1 << 16)
                if not chunk:
                    return
                if gz is not None:
                    while chunk:
                        total += len(gz.decompress(chunk, 1 << 20))
                        chunk = gz.unconsumed_tail
                        if total > limit:
                            break
                    done = gz.eof
                else:
                    assert bz is not None
                    total += len(bz.decompress(chunk, 1 << 20))
                    while total <= limit and not bz.eof and not bz.needs_input:
                        total += len(bz.decompress(b"", 1 << 20))
                    done = bz.eof
                if total > limit:
                    raise error("too-large", f"NRRD image {name!r}: its {encoding} data inflate to more than "
                                f"{limit} bytes, beyond what its sizes {[int(n) for n in np.atleast_1d(header['sizes'])]} need")
                if done:
                    return
        except (zlib.error, OSError, EOFError, ValueError):
            return  # not a valid stream: pynrrd reports it
    finally:
        source.seek(start)


def _to_data(header: dict, source, name: str, kind: np.dtype) -> int:
    """The bytes the samples (of ``kind``) take; ``source`` past its line skip (at most MAX_HEADER_BYTES of lines:
    one line of gigabytes was read whole); error[input] where more bytes follow than the sizes, encoding and byte
    skip can take (hex: 4 a byte, text 64 a sample, gzip and bzip2 2 a byte, each with INFLATE_SLACK), so that a
    4 x 4 image with gigabytes behind its header is refused before any is read (raw: only the samples' bytes are
    read, :func:`_read_samples`)."""
    used, skip = 0, int(header.get("byte skip", header.get("byteskip", 0)))
    for _ in range(int(header.get("line skip", header.get("lineskip", 0)))):
        line = source.readline(MAX_HEADER_BYTES + 1 - used)
        if (used := used + len(line)) > MAX_HEADER_BYTES or not line:
            raise error("input", f"NRRD image {name!r}: its line skip passes " + (
                f"more than {MAX_HEADER_BYTES} bytes of lines" if line else "the end of its data"))
    encoding, sizes = {"text": "ascii", "txt": "ascii"}.get(header["encoding"], header["encoding"]), np.atleast_1d(header["sizes"])
    samples = int(np.prod([int(n) for n in sizes], dtype=object))
    need = samples * kind.itemsize
    if encoding == "raw" or skip < 0 and encoding == "ascii":
        return need  # (raw: its samples' bytes alone are read; byte skip -1: the data's last bytes, where pynrrd seeks)
    bound = max(skip, 0) + {"hex": 4 * need + INFLATE_SLACK, "ascii": 64 * samples + INFLATE_SLACK}.get(
        encoding, 2 * need + INFLATE_SLACK)
    start = source.tell()
    if (size := source.seek(0, os.SEEK_END) - source.seek(start)) > bound:  # (``source`` left where it was)
        also = f" and byte skip {skip}" if skip > 0 else ""
        raise error("input", f"NRRD image {name!r}: {size} bytes of {encoding} data follow its header, more than its "
                             f"sizes {[int(n) for n in sizes]} of {header['type']}{also} take ({bound} bytes)")
    return need


def read_nrrd(name: str, raw: bytes | None = None, bound: Callable[[int], object] | None = None):
    """An NRRD file's samples (NRRD's axis order, index_order="F") and header: a regular
    file only, its header bounded and checked before any data are read (also Diderot's
    sequence inputs).  ``raw``: the whole file's bytes, where the caller has read them;
    ``bound``: called with the number of samples before they are read (it raises to refuse)."""
    import zlib

    import nrrd  # pynrrd: imported here, so `import tensorlang` does not need it

    failures = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, StopIteration, zlib.error,
                nrrd.NRRDError)  # what pynrrd and the decompressors raise for a malformed header or payload
    size = _regular_file(name) if raw is None else len(raw)
    try:
        with open(name, "rb") if raw is None else io.BytesIO(raw) as fh:
            lines = list(_header_lines(fh, name))
            if not lines:
                raise error("input", f"cannot read NRRD image {name!r}: the file is empty")
            with np.errstate(all="ignore"):  # (pynrrd casts sizes of "nan", "1e30" or 2^63 with a warning: refused below)
                header = _read_header(lines, name, failures)
            header.update({f: str(header[f]).lower() for f in ("type", "encoding", "endian") if f in header})  # (Teem's)
            _check_sizes_text(lines, name)
            files = _check_nrrd_header(header, name, size, fh)
            if bound is not None:
                bound(math.prod(int(n) for n in np.atleast_1d(header["sizes"])))
            if files is None:
                data = _read_samples(nrrd, header, fh, name)
            else:
                data = _read_pieces(nrrd, header, name, files, failures)
    except MemoryError:
        raise error("too-large", f"NRRD image {name!r} does not fit in memory") from None
    except failures as exc:
        if isinstance(exc, TensorLangError):
            raise
        raise error("input", f"cannot read NRRD image {name!r}: {str(exc)[:200] or type(exc).__name__} (check its "
                             "type, encoding, endian, sizes and skips against the data)") from None
    return data, header


def _read_pieces(nrrd, header: dict, name: str, files: tuple[list[int], Iterable[str]], failures: tuple) -> np.ndarray:
    """The samples of several data files (:func:`_data_files`), each read as one data file is; a failure names it."""
    piece, parts = files[0] or [1], []
    plain = {k: v for k, v in header.items() if k in ("type", "encoding", "endian", "line skip", "lineskip", "byte skip", "byteskip")}
    for data_file in files[1]:
        part = {**plain, "dimension": len(piece), "sizes": np.array(piece), "data file": data_file}
        _check_data(part, name, 0, data_file)
        try:
            parts.append(_read_samples(nrrd, part, None, name).ravel(order="F"))
        except failures as exc:
            raise exc if isinstance(exc, TensorLangError) else error(
                "input", f"NRRD image {name!r}: data file {data_file!r}: {str(exc)[:200] or type(exc).__name__}") from None
    return np.concatenate(parts).reshape([int(n) for n in np.atleast_1d(header["sizes"])], order="F")


def _read_samples(nrrd, header: dict, fh, name: str) -> np.ndarray:
    """pynrrd's samples of the file the data are in (the data file, else ``fh`` on), after its line skip and bounded
    (:func:`_to_data`, :func:`_bound_compressed`); text samples of an integer type under 64 bits are read as int64
    and checked to fit it (numpy's text reader wraps them: 300 was 44 in a uchar image); a gzip or bzip2 payload's
    byte skip skips inflated bytes only (pynrrd skipped compressed ones too)."""
    data_file = header.get("datafile", header.get("data file"))
    with open(os.path.join(os.path.dirname(name), data_file), "rb") if data_file is not None else \
            contextlib.nullcontext(fh) as source:
        kind, encoding = np.dtype(nrrd.reader._determine_datatype(header)), str(header["encoding"]).lower()
        need = _to_data(header, source, name, kind)
        _bound_compressed(header, source, name)
        header, skip = _plain(header), int(header.get("byte skip", header.get("byteskip", 0)))
        if encoding == "raw" and skip >= 0:  # the samples' bytes alone, as Teem reads them (what follows: unread)
            source.seek(skip, os.SEEK_CUR)
            source, skip = io.BytesIO(source.read(need)), 0
        if encoding == "hex":
            return _hex_samples(nrrd, header, source, name, kind.itemsize, skip)
        if encoding in ("gzip", "gz", "bzip2", "bz2") and skip > 0:  # (pynrrd's seek passes the zeros put first)
            source = io.BytesIO(bytes(skip) + source.read())
        header["byte skip"] = skip
        if kind.kind not in "iu" or kind.itemsize == 8 or encoding not in ("ascii", "text", "txt"):
            return nrrd.read_data(header, source, name, index_order="F")
        data = nrrd.read_data({**header, "type": "int64"}, source, name, index_order="F")
    bad = data[(data < np.iinfo(kind).min) | (data > np.iinfo(kind).max)]
    if bad.size:
        raise error("input", f"NRRD image {name!r}: sample {int(bad[0])} is outside the range of its type "
                             f"{header['type']} ({np.iinfo(kind).min}..{np.iinfo(kind).max})")
    return data.astype(kind)


def _plain(header: dict) -> dict:
    """``header`` without its data file and skips: of data read already."""
    return {k: v for k, v in header.items() if k not in ("datafile", "data file", "line skip", "lineskip", "byte skip", "byteskip")}


def _hex_samples(nrrd, header: dict, source, name: str, itemsize: int, skip: int) -> np.ndarray:
    """The samples of NRRD's hex encoding (``unu save -e hex``; pynrrd reads raw, text, gzip, bzip2): after the
    line and byte skips (of the file's bytes, as Teem skips them: hex is no compression), two hex digits a byte,
    white space anywhere, as many as the samples take (what follows them is not read)."""
    if skip < 0:
        raise error("input", f"NRRD image {name!r}: byte skip {skip} (the data's end) needs raw encoding, not hex")
    need = 2 * int(np.prod(np.atleast_1d(header["sizes"]))) * itemsize
    digits = b"".join(source.read()[skip:].split())[:need]
    try:
        raw = bytes.fromhex(digits.decode("ascii"))
    except ValueError:  # (UnicodeDecodeError is one)
        raise error("input", f"NRRD image {name!r}: its hex data hold a character that is no hex digit, or an odd "
                             "number of digits") from None
    return nrrd.read_data({**_plain(header), "encoding": "raw"}, io.BytesIO(raw), name, index_order="F")


#: NRRD's sample types, by every spelling the format allows (``block`` is no number)
_NRRD_TYPES = {f"{u}int{bits}{t}" for u in ("", "u") for bits in (8, 16, 32, 64) for t in ("", "_t")} | {
    "signed char", "uchar", "unsigned char", "short", "short int", "signed short", "signed short int", "ushort",
    "unsigned short", "unsigned short int", "int", "signed int", "uint", "unsigned int", "longlong", "long long",
    "long long int", "signed long long", "signed long long int", "ulonglong", "unsigned long long",
    "unsigned long long int", "float", "double"}


def _read_header(lines: list[bytes], name: str, failures: tuple) -> dict:
    """pynrrd's header of ``lines``; else error[input] naming the line and what it
    should be (pynrrd's own messages name none)."""
    import nrrd

    try:
        return nrrd.read_header(iter(lines))
    except failures as exc:
        why = str(exc)
    first = lines[0].strip()[:40].decode("ascii", "replace")
    try:
        nrrd.read_header(iter(lines[:1]))
    except failures:
        raise error("input", f"NRRD image {name!r}: its first line is {first!r}, not NRRD's magic NRRD0001 to "
                             "NRRD0005; is this an NRRD file?") from None
    for number, line in enumerate(lines[1:4096], 2):  # (bounded: a header has up to 1 MiB of lines)
        if line.startswith(b"#") or not line.strip():
            continue
        try:
            nrrd.read_header(iter([lines[0], line]))
        except failures:
            text, field = line.strip()[:60].decode("ascii", "replace"), line.split(b":")[0].strip().decode("ascii", "replace")
            whole = field.replace(" ", "") in ("dimension", "lineskip", "byteskip", "spacedimension", "blocksize", "sizes")
            fix = "is no 'field: value' line (or 'key:=value'; a comment starts with '#')" if b":" not in line else \
                f"does not give {field!r} " + ("whole numbers" if whole else "the numbers, vectors (x,y,z) or none it takes")
            raise error("input", f"NRRD image {name!r}: header line {number}, {text!r}, {fix}") from None
    raise error("input", f"NRRD image {name!r}: its header cannot be read: {why}")


def _image_axes(kinds: list[str], sizes: list[int], name: str) -> tuple[int, tuple[int, ...]]:
    """The space dimension and voxel shape of the image an NRRD file of axis ``kinds`` and
    ``sizes`` holds, or error[input] saying which axis does not fit."""
    vshape: tuple[int, ...] = ()
    for a, kind in enumerate(kinds):
        if kind in _SPACE_KINDS:
            continue
        if kind not in _VOXEL_KINDS:
            raise error("input", f"NRRD image {name!r}: axis {a} has kind {kind!r}, which this reader does not "
                                 f"take (vector, list, n-vector, 2D-matrix, 3D-matrix, 2D- and 3D-symmetric-matrix)")
        shape = _VOXEL_KINDS[kind] or (sizes[a],)
        if math.prod(shape) != sizes[a]:
            raise error("input", f"NRRD image {name!r}: axis {a} of kind {kind} has {sizes[a]} samples")
        vshape += shape
    d = sum(kind in _SPACE_KINDS for kind in kinds)
    if not 1 <= d <= 3:
        raise error("input", f"NRRD image {name!r} has {d} space axes (kinds {kinds}); an image has 1, 2 or 3: "
                             "give the others a voxel kind (vector, list, ...)")
    return d, vshape


def _from_header(name: str, then: Callable):
    """``then(header, lines, size, fh)`` of the NRRD header in file ``name`` (at most MAX_HEADER_BYTES read, ``fh``
    after it); None where there is no such file, or the loader would refuse it (it then says why)."""
    import nrrd  # pynrrd

    try:
        fd = limits.open_regular(name, "image")  # (checked as opened: a FIFO put there since would block)
        with os.fdopen(fd, "rb") as fh, np.errstate(all="ignore"):  # (pynrrd casts "4.5" and "nan" sizes)
            lines = list(_header_lines(fh, name))
            return then(nrrd.read_header(iter(lines)), lines, os.fstat(fd).st_size, fh)
    except (TensorLangError, OSError, ValueError, KeyError, TypeError, IndexError, EOFError, StopIteration,
            OverflowError, nrrd.NRRDError):
        return None


def data_paths(name: str, most: int = 1 << 20) -> list[str]:
    """The data files (at most ``most``: a LIST's names fit in a header's bytes, a format's are made one by one)
    that the NRRD header in file ``name`` names, beside it: one, several (:func:`_data_files`) or none."""
    def names(header: dict, lines, size, fh) -> list[str]:
        spec = str(header.get("datafile", header.get("data file", "")))
        files = _data_files(spec, [int(n) for n in np.atleast_1d(header["sizes"])], name, fh) if spec else None
        return list(itertools.islice(files[1], most)) if files else [spec] if spec else []
    return [os.path.join(os.path.dirname(name), n) for n in _from_header(name, names) or ()]


def nrrd_type(name: str) -> tuple[int, tuple[int, ...]] | None:
    """The space dimension and voxel shape of the image in NRRD file ``name``, from its
    header alone, checked as the loader checks it; None where :func:`_from_header` says."""
    def axes(header: dict, lines, size, fh) -> tuple[int, tuple[int, ...]] | None:
        _check_sizes_text(lines, name)
        _check_nrrd_header(header, name, size)
        sizes = [int(n) for n in np.atleast_1d(header["sizes"])]
        kinds = [str(k).lower() for k in header.get("kinds", ["domain"] * len(sizes))]
        return _image_axes(kinds, sizes, name) if len(kinds) == len(sizes) else None
    return _from_header(name, axes)


def _load_nrrd(name: str, dim: int | None, world, raw: bytes | None = None) -> Image:
    data, header = read_nrrd(name, raw)
    if data.dtype.kind not in REAL_KINDS:
        raise error("input", f"NRRD image {name!r} holds {data.dtype} data; images are real numbers")
    kinds = [str(k).lower() for k in header.get("kinds", ["domain"] * data.ndim)]
    d, vshape = _image_axes(kinds, list(data.shape), name)
    space = [a for a, k in enumerate(kinds) if k in _SPACE_KINDS]
    voxel = [a for a, k in enumerate(kinds) if k not in _SPACE_KINDS]
    with np.errstate(invalid="ignore"):  # a signalling NaN sample stays a NaN, silently
        array = np.transpose(np.asarray(data, dtype=np.float64), space + voxel)
    array = array.reshape(array.shape[:d] + vshape)
    if dim is not None and dim != d:
        raise error("input", f"NRRD image {name!r} has {d} space axes, not {dim}")
    if world is not None:
        return _owned(array, d, world)  # the reader's array is this image's own: no second copy
    try:
        return _owned(array, d, _nrrd_world(header, space, d))
    except (TypeError, ValueError, IndexError, KeyError) as exc:
        why = str(exc)
    except TensorLangError:  # (no matrix was written: say what in the file makes it singular)
        why = "two directions are parallel, or a spacing is 0 or too small to invert"
    raise error("input", f"NRRD image {name!r}: its space directions, spacings or space origin give no usable "
                         f"index-to-world transform ({why}); fix them, or pass world= to replace them")


def _axis_extent(header: dict, space: list[int], ndim: int, m: np.ndarray) -> bool:
    """Without space directions, ``axis mins`` and ``axis maxs`` of every space axis place the samples, as
    Teem's ``unu dnorm`` (Diderot's runtime) does, before any spacings: a node-centered axis from min to
    max, any other cell-centered (its first sample half a cell in); ``m`` set, True; else False."""
    lo, hi = (np.atleast_1d(np.asarray(header.get(k, [np.nan] * ndim), dtype=np.float64)) for k in ("axis mins", "axis maxs"))
    if lo.shape != (ndim,) or hi.shape != (ndim,) or np.any(np.isnan(lo[space]) | np.isnan(hi[space])):
        return False
    centers = header.get("centerings", header.get("centers", [""] * ndim))
    centers = centers.split() if isinstance(centers, str) else list(centers)  # (pynrrd keeps "centers:" as text)
    for row, a in enumerate(space):
        n, node = int(np.atleast_1d(header["sizes"])[a]), str(centers[a]).lower() == "node"
        with np.errstate(all="ignore"):  # (-inf to inf: the sum below is invalid too; one node: 1/0)
            step = (hi[a] - lo[a]) / (n - 1 if node else n)
            if not np.isfinite(step + lo[a]):
                raise ValueError(f"axis {a}'s mins and maxs ({lo[a]}, {hi[a]}) give no finite sample spacing")
        m[row, row], m[row, -1] = step, lo[a] if node else lo[a] + step / 2
    return True


def _nrrd_world(header: dict, space: list[int], d: int) -> np.ndarray:
    """The index-to-world matrix of an NRRD header's space directions (or spacings; NaN:
    1) and space origin; ValueError where a field given does not fit the image."""
    m = np.eye(d + 1)
    ndim = int(header["dimension"])
    directions = header.get("space directions")
    # NRRD's space names as Teem reads them: any case, the words joined by -, a blank or nothing
    space_name = re.sub(r"[- ]", "", str(header.get("space", "ras")).lower())
    if not re.fullmatch(r"(rightanterior|leftanterior|leftposterior)superior(time)?|(ras|las|lps)t?|scannerxyz"
                        r"(time)?|3d(right|left)handed(time)?", space_name):
        raise ValueError(f"space {str(header['space'])[:40]!r} is none of NRRD's space names")  # (Teem's too)
    if "space" in header and "space dimension" in header:
        raise ValueError("the header gives both space and space dimension")
    if "space dimension" in header or "space" in header:  # (Teem refuses directions of another length)
        dim = int(header.get("space dimension", 4 if space_name.endswith(("time", "ast", "pst")) else 3))
        if dim != d:
            raise ValueError(f"space dimension {dim} for {d} space axes")
        directions = [[np.nan] * d] * ndim if directions is None else directions  # (given as none: error[input]
        # below, Teem steps 1 there too; spacings, mins: ignored)
    if directions is not None:
        if len(directions) != ndim:
            raise ValueError(f"{len(directions)} space directions for {ndim} axes")
        for field in ("spacings", "axis mins", "axis maxs", "units"):  # Teem (Diderot's loader) refuses these
            if given := [a for a, v in enumerate(np.atleast_1d(header.get(field, [])))
                         if a in space and str(v) not in ("nan", "", "???") and not np.isnan(directions[a]).all()]:
                raise ValueError(f"axis {given[0]} has a space direction and {field} too")
        for column, a in enumerate(space):
            row = np.asarray(directions[a], dtype=np.float64)
            if "space directions" not in header:  # Teem's dnorm: a step of 1 along the axis's own
                row = np.eye(d)[column]
            if row.shape != (d,) or not np.all(np.isfinite(row)):
                raise ValueError(f"the space direction of axis {a}, {row.tolist()}, is not {d} finite numbers "
                                 f"(the image has {d} space axes)")
            m[:d, column] = row  # column a: the world step of index axis a
    elif _axis_extent(header, space, ndim, m):
        return m  # (an origin too: Teem's dnorm, which Diderot's runtime runs, takes no space origin here)
    elif header.get("spacings") is not None:
        spacings = np.atleast_1d(np.asarray(header["spacings"], dtype=np.float64))
        if spacings.shape != (ndim,) or np.any(np.isinf(spacings[space])):
            raise ValueError(f"spacings {spacings.tolist()} for {ndim} axes (one finite number or nan each)")
        spacings = spacings[space]
        m[:d, :d] = np.diag(np.where(np.isnan(spacings), 1.0, spacings))
    origin = header.get("space origin")
    if origin is not None:
        origin = np.atleast_1d(np.asarray(origin, dtype=np.float64))
        if origin.shape != (d,) or not np.all(np.isfinite(origin)):
            raise ValueError(f"space origin {origin.tolist()} is not {d} finite numbers")
        m[:d, d] = origin
    return m
