"""Padded buffers (paper 000 §4): aligned, zero-padded storage and the views callers see.

A padded buffer of a variable with shape (n1, ..., nk) is a C-contiguous array of shape
(⌈n1⌉, ..., ⌈nk⌉), every extent rounded up to a multiple of M
(:func:`tensorlang.schedule.padding.padded_shape`), whose first element is aligned to M
elements (M · itemsize bytes, and at least 64 bytes, a cache line) and whose padding holds
zeros.  What a caller sees is the view ``buffer[:n1, ..., :nk]``.

:func:`padded_empty` gives callers such a buffer up front; :func:`as_padded` recognises
one (by its memory layout: the view's strides are the padded buffer's and the padded
extent lies inside the memory the view's base owns) and uses it without a copy.
"""

from __future__ import annotations

import math

import numpy as np

from ...schedule.padding import padded_shape

#: Buffers are aligned to at least this many bytes (a cache line).
MIN_ALIGNMENT = 64


def alignment(pad: int, itemsize: int) -> int:
    """The byte alignment of a padded buffer: M elements, at least a cache line."""
    return max(pad * itemsize, MIN_ALIGNMENT)


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
    """An array of ``shape`` whose memory is a padded buffer for ``pad`` (aligned, every
    extent rounded up to a multiple of ``pad``, padding zero): a kernel compiled with the
    same ``pad`` and dtype reads such an input without copying it.  The values are zero.
    Write only through the returned view: the padding belongs to tensorlang."""
    shape = tuple(int(n) for n in shape)
    return unpadded(aligned_zeros(padded_shape(shape, pad), pad, dtype), shape)


def as_padded(array: np.ndarray, shape: tuple[int, ...], pad: int, dtype: np.dtype) -> np.ndarray | None:
    """The padded buffer behind ``array`` when it is a :func:`padded_empty` view (or
    laid out as one) for ``pad`` and ``dtype``, else None.  Its padding is set to zero,
    so a caller who wrote there through the base cannot change a result."""
    storage = padded_shape(shape, pad)
    base = array.base
    if array.dtype != dtype or array.shape != shape or not isinstance(base, np.ndarray) or storage == shape:
        return None
    strides = tuple(math.prod(storage[d + 1:]) * dtype.itemsize for d in range(len(storage)))
    start = array.ctypes.data
    if array.strides != strides or start % alignment(pad, dtype.itemsize):
        return None
    low = base.ctypes.data
    nbytes = math.prod(storage) * dtype.itemsize
    if not base.flags.c_contiguous or not base.flags.writeable or start < low or start + nbytes > low + base.nbytes:
        return None
    buffer = np.ndarray(storage, dtype, buffer=base, offset=start - low)
    zero_padding(buffer, shape)
    return buffer


def zero_padding(buffer: np.ndarray, shape: tuple[int, ...]) -> None:
    """Set the padding of ``buffer`` (everything outside ``buffer[:n1, ..., :nk]``) to 0."""
    for d, n in enumerate(shape):
        if buffer.shape[d] > n:
            buffer[tuple(slice(0, shape[k]) for k in range(d)) + (slice(n, None),)] = 0


def into_padded(array: np.ndarray, shape: tuple[int, ...], pad: int, dtype: np.dtype) -> np.ndarray:
    """A padded buffer holding ``array``: the caller's own when it is one, else a copy."""
    found = as_padded(array, shape, pad, dtype)
    if found is not None:
        return found
    buffer = aligned_zeros(padded_shape(shape, pad), pad, dtype)
    unpadded(buffer, shape)[...] = array
    return buffer
