"""Normalized helicity of a 3-D flow (paper 004 §7): the cosine of the angle between the
flow direction V/|V| and the vorticity direction ∇×V/|∇×V|,

    H = (V/|V|) • (∇×V/|∇×V|),

±1 in the cores of vortices.  The flow blends an Arnold–Beltrami–Childress flow (curl
V = V) into its mirror image (curl W = −W) across the box, so H runs
from +1 to −1; the picture is a slice through the middle.

    python examples/fields/helicity.py [out.png]
"""

from __future__ import annotations

import sys

import numpy as np

import tensorlang as tl
from picture import diverging, grid, write_png


def flow(n: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """Samples of the flow on an n³ grid over [0, 2π)³ and the index-to-world map."""
    h = 2 * np.pi / (n - 1)
    x, y, z = np.meshgrid(*([np.arange(n) * h] * 3), indexing="ij")
    A, B, C = 1.0, 0.7, 0.4

    def abc(x, y, z):  # curl V = V: helicity +1 everywhere
        return np.stack([A * np.sin(z) + C * np.cos(y), B * np.sin(x) + A * np.cos(z),
                         C * np.sin(y) + B * np.cos(x)], -1)

    right = abc(x, y, z)
    mirrored = abc(-x, y, z) * np.array([-1.0, 1.0, 1.0])  # a mirror image: curl W = −W
    blend = (x / (2 * np.pi))[..., None]
    return (1 - blend) * right + blend * mirrored, np.diag([h, h, h])


def main(out: str = "helicity.png", n: int = 32, pixels: int = 160) -> np.ndarray:
    data, world = flow(n)
    V = tl.field(data, "bspln3", dim=3, world=world)
    H = tl.normalize(V) @ tl.normalize(tl.curl(V))
    span = 2 * np.pi
    xy = grid(0.05 * span, 0.95 * span, pixels)
    pts = np.column_stack([xy, np.full(len(xy), 0.5 * span)])
    h = H.probe(pts).reshape(pixels, pixels)
    write_png(out, diverging(h)[::-1])
    print(f"helicity: H in [{np.nanmin(h):.3f}, {np.nanmax(h):.3f}]; stages {H.stages()[:3]} -> {out}")
    return h


if __name__ == "__main__":
    main(*(sys.argv[1:2]))
