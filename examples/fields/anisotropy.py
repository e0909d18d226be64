"""Fractional anisotropy of a 3x3 tensor field (paper 004 §7), as Diderot writes it:

    E = T − tr(T) I / 3          (the deviatoric part)
    A = sqrt(3/2) |E| / |T|

0 where T is isotropic (a sphere), 1 where it is a line.  The tensors model a bundle of
fibres: along a curved tract the tensor is long in the tract's direction, elsewhere
nearly isotropic.  The picture is a slice of A, and of |∇A| (which tensorlang derives:
the c4hexic kernel is C4).

    python examples/fields/anisotropy.py [out.png]
"""

from __future__ import annotations

import sys

import numpy as np

import tensorlang as tl
from picture import grid, normalized, write_png


def tensors(n: int = 24) -> np.ndarray:
    x, y, z = np.meshgrid(*([np.linspace(-1, 1, n)] * 3), indexing="ij")
    r = np.sqrt(x ** 2 + y ** 2)
    along = np.stack([-y, x, np.zeros_like(x)], -1) / np.maximum(r, 1e-9)[..., None]  # circles around z
    strength = np.exp(-((r - 0.6) ** 2) / 0.02)[..., None, None]  # a ring-shaped tract
    line = np.einsum("...i,...j->...ij", along, along)
    return 0.2 * np.eye(3) + strength * 1.5 * line


def main(out: str = "anisotropy.png", n: int = 24, pixels: int = 128) -> np.ndarray:
    spacing = 2.0 / (n - 1)
    T = tl.field(tensors(n), "c4hexic", dim=3, world={"spacing": spacing, "origin": -1.0})
    E = T - tl.trace(T) * tl.fields.identity(3) / 3.0
    A = np.sqrt(1.5) * tl.norm(E) / tl.norm(T)
    xy = grid(-1 + 2 * spacing, -1 + (n - 4.001) * spacing, pixels)  # inside c4hexic's support (6)
    pts = np.column_stack([xy, np.zeros(len(xy))])
    a = A.probe(pts).reshape(pixels, pixels)
    g = tl.norm(tl.grad(A)).probe(pts).reshape(pixels, pixels)
    write_png(out, np.concatenate([a, normalized(g)], axis=1)[::-1])
    print(f"anisotropy: FA in [{np.nanmin(a):.3f}, {np.nanmax(a):.3f}]; {A.type}; stages {A.stages()[:3]} -> {out}")
    return a


if __name__ == "__main__":
    main(*(sys.argv[1:2]))
