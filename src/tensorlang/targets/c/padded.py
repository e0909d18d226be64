"""Padded buffers (paper 000 §4): aligned C-contiguous arrays of the padded shape, padding
zero, seen through ``buffer[:n1, ..., :nk]``; :func:`padded_empty` makes one and
:func:`as_padded` uses one without a copy (docs/c-backend.md, "Padding")."""

from __future__ import annotations

import functools
import math
import sys
import weakref

import numpy as np

from ...errors import error
from ...limits import check_allocation
from ...machine import CACHE_LINE_BYTES
from ...schedule.padding import padded_shape

#: The memory of every padded_empty array, by id: only these are read in place (a slice of
#: a wider array has the same strides, but its "padding" is the caller's data).
_MADE: "weakref.WeakValueDictionary[int, np.ndarray]" = weakref.WeakValueDictionary()

#: Every array padded_empty returned, by id: (a weak reference to it, its padded buffer,
#: the views of its padding), recognised by identity without as_padded's arithmetic.
_VIEWS: dict[int, tuple[weakref.ref, np.ndarray, tuple[np.ndarray, ...]]] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _VIEWS.get(key)
    if entry is not None and entry[0] is ref:
        del _VIEWS[key]


def alignment(pad: int, itemsize: int) -> int:
    """The byte alignment of a padded buffer: M elements, at least a cache line."""
    return max(pad * itemsize, CACHE_LINE_BYTES)  # at least a cache line


def aligned_zeros(storage: tuple[int, ...], pad: int, dtype) -> np.ndarray:
    """A zeroed C-contiguous array of shape ``storage`` whose data is aligned (:func:`alignment`)."""
    dtype = np.dtype(dtype)
    align = alignment(pad, dtype.itemsize)
    nbytes = math.prod(storage) * dtype.itemsize
    raw = np.zeros(nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start:start + nbytes].view(dtype).reshape(storage)


def unpadded(buffer: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The view of a padded ``buffer`` that has the variable's true ``shape``."""
    if buffer.shape == shape:
        return buffer
    return buffer[tuple(slice(0, n) for n in shape)]


def padded_empty(shape, pad: int, dtype="float64") -> np.ndarray:
    """An array of ``shape`` whose memory is a zeroed padded buffer for ``pad``: a kernel of
    the same ``pad`` and dtype reads it without a copy.  Write only through the view."""
    shape = tuple(int(n) for n in shape)
    storage = padded_shape(shape, pad)
    # 2**62 elements: error[too-large] against the memory budget, before numpy is asked
    check_allocation(math.prod(storage), np.dtype(dtype).itemsize, f"padded_empty{shape}")
    # an empty shape is made only where numpy could make it: its other extents' bytes fit
    # an index ((0, 2**62) is numpy's ValueError, "array is too big")
    if math.prod(n for n in storage if n) * np.dtype(dtype).itemsize > sys.maxsize:
        raise error("too-large", f"padded_empty{shape}: its nonzero extents (padded: {storage}) hold more bytes "
                    "than an array can index (2^63), though it has no elements")
    buffer = aligned_zeros(storage, pad, dtype)
    owner = buffer.base
    assert isinstance(owner, np.ndarray), "aligned_zeros returns a view of its own allocation"
    _MADE[id(owner)] = owner  # the memory's owner: as_padded accepts only these
    view = unpadded(buffer, shape)
    if view is not buffer:
        key = id(view)
        ref = weakref.ref(view, functools.partial(_forget, key))
        _VIEWS[key] = (ref, buffer, padding_regions(buffer, shape))
    return view


@functools.lru_cache(maxsize=256)
def _layout(shape: tuple[int, ...], pad: int, itemsize: int) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """A padded buffer's shape, strides, alignment and bytes (once per layout)."""
    storage = padded_shape(shape, pad)
    strides = tuple(math.prod(storage[d + 1:]) * itemsize for d in range(len(storage)))
    return storage, strides, alignment(pad, itemsize), math.prod(storage) * itemsize


def as_padded(array: np.ndarray, shape: tuple[int, ...], pad: int, dtype: np.dtype) -> np.ndarray | None:
    """The padded buffer behind a :func:`padded_empty` view (or one laid out so) for ``pad``
    and ``dtype``, its padding zeroed, else None."""
    storage, strides, align, nbytes = _layout(shape, pad, dtype.itemsize)
    made = _VIEWS.get(id(array))
    if made is not None and made[0]() is array:  # padded_empty's own view: no arithmetic
        buffer = made[1]
        if (buffer.shape == storage and array.shape == shape and array.strides == strides
                and array.dtype == dtype):
            for region in made[2]:
                region.fill(0)
            return buffer
        return None
    base = array.base
    if (base is None or _MADE.get(id(base)) is not base or array.dtype != dtype or array.shape != shape
            or array.strides != strides or base.__class__ is not np.ndarray or storage == shape):
        return None
    start = array.ctypes.data
    if start % align:
        return None
    low = base.ctypes.data
    if not base.flags.c_contiguous or not base.flags.writeable or start < low or start + nbytes > low + base.nbytes:
        return None
    buffer = np.ndarray(storage, dtype, buffer=base, offset=start - low)
    if storage[:-1] == shape[:-1]:  # tensorlang's layout: the last dimension's padding only
        buffer[..., shape[-1]:] = 0
    else:
        for region in padding_regions(buffer, shape):
            region.fill(0)
    return buffer


def padding_regions(buffer: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Views of ``buffer`` that cover its padding, each element once."""
    return tuple(buffer[tuple(slice(0, shape[k]) for k in range(d)) + (slice(n, None),)]
                 for d, n in enumerate(shape) if buffer.shape[d] > n)

