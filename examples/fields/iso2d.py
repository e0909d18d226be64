"""Diderot's iso2d example: particles move by Newton steps onto an isocontour of a 2-D
field,

    x ← x − (F(x) − v) ∇F(x) / |∇F(x)|²,

every particle a probe of F and ∇F per step (here: all particles at once).  The picture
shows where the particles landed.

    python examples/fields/iso2d.py [out.png]
"""

from __future__ import annotations

import sys

import numpy as np

import tensorlang as tl
from picture import grid, write_png


def image(n: int = 48) -> np.ndarray:
    x, y = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
    return np.exp(-((x - 0.3) ** 2 + y ** 2) / 0.1) + np.exp(-((x + 0.35) ** 2 + (y - 0.2) ** 2) / 0.06)


def main(out: str = "iso2d.png", n: int = 48, seeds: int = 40, steps: int = 12, isovalue: float = 0.5):
    F = tl.field(image(n), "ctmr")
    step = (F - isovalue) * tl.grad(F) / (tl.grad(F) @ tl.grad(F))  # one field: the Newton step
    x = grid(2.0, n - 3.0, seeds)
    for _ in range(steps):
        x = x - step.probe(x)
    residual = np.abs(F.probe(x) - isovalue)
    landed = x[np.isfinite(residual) & (residual < 1e-6)]
    picture = np.zeros((256, 256))
    ij = np.clip((landed / (n - 1) * 255).astype(int), 0, 255)
    picture[ij[:, 1], ij[:, 0]] = 1.0
    write_png(out, picture[::-1])
    print(f"iso2d: {len(landed)} of {len(x)} particles on F = {isovalue} -> {out}")
    return landed, F


if __name__ == "__main__":
    main(*(sys.argv[1:2]))
