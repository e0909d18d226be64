"""Diderot's dvr example: direct volume rendering.  Orthographic rays march through a
3-D scalar field; at each sample the value picks an opacity (a bump around an isovalue)
and the gradient gives the surface normal n = −∇F/|∇F| for Lambertian shading; samples
are composited front to back.  Every ray's probe of F and ∇F at a step is one batch.

    python examples/fields/dvr.py [out.png] [kernel: bspln3, ctmr or c1tent]
"""

from __future__ import annotations

import sys

import numpy as np

import tensorlang as tl
from picture import grid, write_png


def volume(n: int = 40) -> np.ndarray:
    x, y, z = np.meshgrid(*([np.linspace(-1, 1, n)] * 3), indexing="ij")
    torus = (np.sqrt(x ** 2 + y ** 2) - 0.55) ** 2 + z ** 2
    return np.exp(-torus / 0.05) + 0.8 * np.exp(-((x - 0.1) ** 2 + (y + 0.1) ** 2 + (z - 0.1) ** 2) / 0.03)


def main(out: str = "dvr.png", kernel: str = "bspln3", n: int = 40, pixels: int = 128, samples: int = 80):
    spacing = 2.0 / (n - 1)
    F = tl.field(volume(n), kernel, world={"spacing": spacing, "origin": -1.0})
    normal = -tl.normalize(tl.grad(F))
    light = np.array([0.4, 0.5, 0.77])
    light /= np.linalg.norm(light)
    rays = grid(-0.9, 0.9, pixels)
    colour = np.zeros((len(rays), 3))
    alpha = np.zeros(len(rays))
    for z in np.linspace(0.9, -0.9, samples):  # front (z = 0.9) to back
        pts = np.column_stack([rays, np.full(len(rays), z)])
        v = F.probe(pts)
        a = np.nan_to_num(np.clip(np.exp(-((v - 0.5) ** 2) / 0.01) * 0.35, 0, 1))
        if not a.any():
            continue
        shade = np.nan_to_num(np.clip(normal.probe(pts) @ light, 0, 1))
        base = np.array([0.9, 0.6, 0.3])
        colour += ((1 - alpha) * a)[:, None] * (0.2 + 0.8 * shade)[:, None] * base
        alpha += (1 - alpha) * a
    picture = colour.reshape(pixels, pixels, 3)
    write_png(out, picture[::-1])
    print(f"dvr ({kernel}): {pixels}x{pixels} rays, {samples} samples, opacity up to {alpha.max():.2f} -> {out}")
    return alpha.reshape(pixels, pixels)


if __name__ == "__main__":
    main(*sys.argv[1:3])
