"""Canny edges of a 2-D image as a zero set (paper 004 §3): where

    E = −∇|∇F| • ∇F/|∇F|

is zero and |∇F| is large, F has an edge.  The field is reconstructed with the C2 cubic
B-spline, so E (two derivatives deep) is defined; tensorlang derives it.

    python examples/fields/canny.py [out.png]
"""

from __future__ import annotations

import sys

import numpy as np

import tensorlang as tl
from picture import grid, write_png


def image(n: int = 64) -> np.ndarray:
    """A disk and a square, blurred: two shapes with soft edges."""
    y, x = np.mgrid[0:n, 0:n] / (n - 1)
    disk = ((x - 0.35) ** 2 + (y - 0.4) ** 2 < 0.04).astype(float)
    square = ((abs(x - 0.72) < 0.12) & (abs(y - 0.65) < 0.18)).astype(float)
    data = disk + 0.6 * square
    kernel = np.exp(-np.linspace(-2, 2, 7) ** 2)
    kernel /= kernel.sum()
    for axis in (0, 1):
        data = np.apply_along_axis(lambda r: np.convolve(r, kernel, mode="same"), axis, data)
    return data.T  # index axis 0 is x, as Diderot indexes images


def main(out: str = "canny.png", n: int = 64, pixels: int = 256) -> np.ndarray:
    F = tl.field(image(n), "bspln3")
    E = -tl.grad(tl.norm(tl.grad(F))) @ tl.normalize(tl.grad(F))
    G = tl.norm(tl.grad(F))
    pts = grid(1.0, n - 2.0001, pixels)
    e, g = E.probe(pts).reshape(pixels, pixels), G.probe(pts).reshape(pixels, pixels)
    strong = g > 0.25 * np.nanmax(g)
    # an edge pixel: E changes sign within it (the zero crossing) where the gradient is strong
    crossing = np.zeros_like(strong)
    crossing[:, 1:] |= np.sign(e[:, 1:]) != np.sign(e[:, :-1])
    crossing[1:, :] |= np.sign(e[1:, :]) != np.sign(e[:-1, :])
    edges = crossing & strong
    picture = np.stack([0.5 * g / np.nanmax(g)] * 3, axis=-1)
    picture[edges] = [1.0, 0.9, 0.2]
    write_png(out, picture[::-1])
    print(f"canny: {edges.sum()} edge pixels of {pixels}x{pixels}; stages {E.stages()[:3]} -> {out}")
    return edges


if __name__ == "__main__":
    main(*(sys.argv[1:2]))
