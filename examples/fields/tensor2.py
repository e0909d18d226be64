"""Diderot's tensor2 example: the value, the Jacobian ∇⊗V and the Hessian of each
component ∇⊗∇V[i] of a 3-D vector field, probed on a slice.  The picture shows |V|,
|∇⊗V| and |∇⊗∇V[0]| side by side.

    python examples/fields/tensor2.py [out.png]
"""

from __future__ import annotations

import sys

import numpy as np

import tensorlang as tl
from picture import grid, normalized, write_png


def vectors(n: int = 24) -> np.ndarray:
    x, y, z = np.meshgrid(*([np.linspace(-1, 1, n)] * 3), indexing="ij")
    return np.stack([np.sin(2 * y) * z, np.cos(x * y), x * x - z], axis=-1)


def main(out: str = "tensor2.png", n: int = 24, pixels: int = 96):
    spacing = 2.0 / (n - 1)
    V = tl.field(vectors(n), "bspln3", dim=3, world={"spacing": spacing, "origin": -1.0})
    J = tl.jacobian(V)
    H = [tl.hessian(V[i]) for i in range(3)]
    xy = grid(-0.8, 0.8, pixels)
    pts = np.column_stack([xy, np.full(len(xy), 0.25)])
    v, j, h0 = V.probe(pts), J.probe(pts), H[0].probe(pts)
    panels = [np.linalg.norm(a.reshape(len(pts), -1), axis=1).reshape(pixels, pixels) for a in (v, j, h0)]
    write_png(out, np.concatenate([normalized(p) for p in panels], axis=1)[::-1])
    print(f"tensor2: V {v.shape[1:]}, ∇⊗V {j.shape[1:]}, ∇⊗∇V[i] {h0.shape[1:]} at {len(pts)} points -> {out}")
    return V, pts


if __name__ == "__main__":
    main(*(sys.argv[1:2]))
