"""Diderot's lic2d example: line integral convolution of a 2-D flow.  From every pixel,
a streamline of the normalized flow V/|V| is traced forward and back (midpoint steps,
every pixel's probe at once) and the noise image R is averaged along it, so the noise
smears along the flow.

    python examples/fields/lic.py [out.png]
"""

from __future__ import annotations

import sys

import numpy as np

import tensorlang as tl
from picture import grid, normalized, write_png


def flow(n: int = 48) -> np.ndarray:
    x, y = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
    return np.stack([-y + 0.3 * x, x + 0.3 * y], axis=-1)  # a spiral source


def main(out: str = "lic.png", n: int = 48, pixels: int = 160, steps: int = 15, h: float = 0.25):
    V = tl.field(flow(n), "ctmr", dim=2)
    R = tl.field(np.random.default_rng(0).uniform(size=(n, n)), "tent")
    direction = tl.normalize(V)
    seeds = grid(2.0, n - 3.0, pixels)
    total, count = R.probe(seeds), np.ones(len(seeds))
    for sign in (1.0, -1.0):
        x = seeds.copy()
        for _ in range(steps):
            mid = x + 0.5 * sign * h * direction.probe(x)
            x = x + sign * h * direction.probe(mid)
            r = R.probe(x)
            ok = np.isfinite(r)
            total[ok] += r[ok]
            count[ok] += 1
    lic = (total / count).reshape(pixels, pixels)
    speed = tl.norm(V).probe(seeds).reshape(pixels, pixels)
    picture = normalized(lic)[..., None] * (0.4 + 0.6 * normalized(speed))[..., None] * np.array([1.0, 0.9, 0.7])
    write_png(out, picture[::-1])
    print(f"lic: {pixels}x{pixels} pixels, {2 * steps} steps each -> {out}")
    return lic


if __name__ == "__main__":
    main(*(sys.argv[1:2]))
