"""Write a PNG without any imaging library: 8-bit grey or RGB rows, zlib-compressed
(the PNG format is a signature and three chunks).  The field examples use it, so they
need nothing beyond tensorlang and numpy."""

from __future__ import annotations

import struct
import zlib

import numpy as np


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(path, pixels: np.ndarray) -> None:
    """``pixels``: (height, width) grey or (height, width, 3) RGB, values in [0, 1]
    (NaN, ⊥, is drawn black)."""
    a = np.nan_to_num(np.asarray(pixels, dtype=np.float64), nan=0.0)
    a = (np.clip(a, 0.0, 1.0) * 255 + 0.5).astype(np.uint8)
    colour = 2 if a.ndim == 3 else 0
    height, width = a.shape[:2]
    rows = b"".join(b"\x00" + a[y].tobytes() for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, 6))
                + _chunk(b"IEND", b""))


def diverging(x: np.ndarray) -> np.ndarray:
    """Values in [-1, 1] as blue (−1), white (0), red (+1)."""
    x = np.clip(np.nan_to_num(x), -1, 1)[..., None]
    red, white, blue = np.array([0.8, 0.1, 0.1]), np.ones(3), np.array([0.1, 0.2, 0.8])
    return np.where(x >= 0, white + x * (red - white), white - x * (blue - white))


def normalized(x: np.ndarray) -> np.ndarray:
    """x scaled to [0, 1] over its finite values."""
    finite = np.isfinite(x)
    if not finite.any():
        return np.zeros_like(x)
    lo, hi = np.min(x[finite]), np.max(x[finite])
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def grid(lo, hi, n: int, dims: int = 2) -> np.ndarray:
    """The n^dims points of a regular grid over [lo, hi]^dims, row-major (y slowest)."""
    axes = [np.linspace(lo, hi, n)] * dims
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([m.ravel() for m in mesh[::-1]], axis=1)  # x fastest: picture rows are y
