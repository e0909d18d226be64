"""The pictures of docs/diderot.md's tutorial, made from the tutorial's own runs.

    PYTHONPATH=src python benchmarks/diderot/tutorial_pictures.py [--out docs/img/diderot] [--small]

It samples a 2-D image and a 3-D volume (written as NRRD files with their world
coordinates, as a user's data would be), runs the tutorial's programs through
``tl.compile`` (``tests/diderot/run_programs/``: isocontour, mip, render) and draws what
they write with matplotlib.  ``--small`` makes small grids (a quick check)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAMS = ROOT / "tests" / "diderot" / "run_programs"


def write_nrrd(path: Path, data: np.ndarray, origin: float, spacing: float) -> str:
    """``data`` (C order, last axis fastest = NRRD axis 0 = world x) as an NRRD file whose
    index-to-world map is ``origin + spacing * index`` on every axis."""
    d = data.ndim
    eye = [tuple(spacing if a == b else 0.0 for b in range(d)) for a in range(d)]
    dirs = " ".join("(" + ",".join(repr(x) for x in row) + ")" for row in eye)
    head = (f"NRRD0004\ntype: double\ndimension: {d}\nspace dimension: {d}\n"
            f"sizes: {' '.join(str(n) for n in reversed(data.shape))}\nspace directions: {dirs}\n"
            f"kinds: {' '.join(['space'] * d)}\nendian: little\nencoding: raw\n"
            f"space origin: ({','.join([repr(origin)] * d)})\n\n")
    path.write_bytes(head.encode() + np.ascontiguousarray(data, dtype="<f8").tobytes())
    return str(path)


def image2d(n: int) -> tuple[np.ndarray, float, float]:
    """Two bumps and a ridge on [-1, 1]^2, sampled n x n (rows: y)."""
    h = 2.0 / (n - 1)
    y, x = np.meshgrid(-1 + h * np.arange(n), -1 + h * np.arange(n), indexing="ij")
    f = (np.exp(-((x + 0.35) ** 2 + (y - 0.2) ** 2) / 0.12) + 0.8 * np.exp(-((x - 0.45) ** 2 + (y + 0.3) ** 2) / 0.06)
         + 0.4 * np.exp(-((x - y * 0.3 - 0.1) ** 2) / 0.01) * np.exp(-y ** 2 / 0.3))
    return f, -1.0, h


def volume(n: int) -> tuple[np.ndarray, float, float]:
    """A torus and two blobs in [-1, 1]^3, sampled n^3 (axes z, y, x)."""
    h = 2.0 / (n - 1)
    z, y, x = np.meshgrid(*(-1 + h * np.arange(n),) * 3, indexing="ij")
    r = np.sqrt(x ** 2 + (y * 1.2) ** 2)
    torus = np.exp(-((r - 0.55) ** 2 + (z * 1.3) ** 2) / 0.02)
    blobs = np.exp(-((x - 0.1) ** 2 + (y + 0.05) ** 2 + z ** 2) / 0.03) \
        + 0.9 * np.exp(-((x + 0.5) ** 2 + (y - 0.5) ** 2 + (z - 0.3) ** 2) / 0.02)
    return torus + blobs, -1.0, h


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "diderot"))
    ap.add_argument("--small", action="store_true", help="small grids, for a quick check")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import tensorlang as tl

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="diderot-tutorial-"))
    n2, n3, px = (48, 24, 32) if args.small else (128, 64, 160)

    # ---- an isocontour
    f, o, h = image2d(n2)
    img = write_nrrd(work / "bumps.nrrd", f, o, h)
    t0 = time.perf_counter()
    iso = tl.compile(str(PROGRAMS / "isocontour.diderot"))(img=img, isoval=0.5, res=40 if not args.small else 12,
                                                              ext=0.95, eps=1e-9)
    print(f"isocontour: {len(iso.pos)} points, {iso.steps} steps, {time.perf_counter() - t0:.2f} s")
    fig, ax = plt.subplots(figsize=(4.2, 4.2), dpi=90)
    ax.imshow(f, origin="lower", extent=(-1, 1, -1, 1), cmap="gray")
    ax.scatter(iso.pos[:, 0], iso.pos[:, 1], s=3, c="tab:orange", label="strands' pos (isoval 0.5)")
    ax.set_xlim(-1, 1), ax.set_ylim(-1, 1), ax.set_xticks([]), ax.set_yticks([])
    ax.legend(loc="lower left", fontsize=7, markerscale=3)
    fig.tight_layout()
    fig.savefig(out / "isocontour.png")
    plt.close(fig)

    # ---- a maximum intensity projection and a direct volume rendering
    v, o, h = volume(n3)
    vol = write_nrrd(work / "vol.nrrd", v, o, h)
    t0 = time.perf_counter()
    mip = tl.compile(str(PROGRAMS / "mip.diderot"))(vol=vol, res0=px, res1=px, lo=[-0.99] * 3, hi=[0.99] * 3,
                                                     step=0.01)
    print(f"mip: {px}x{px} rays, {mip.steps} steps, {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    dvr = tl.compile(str(PROGRAMS / "render.diderot"))(vol=vol, res0=px, res1=px, step=0.01, vlo=0.2, vhi=0.9,
                                                          opac=40.0)
    print(f"render: {px}x{px} rays, {dvr.steps} steps, {time.perf_counter() - t0:.2f} s")
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.6), dpi=90)
    # mip's strands are ray(i, j) with i along x: transpose to rows = y
    axes[0].imshow(np.asarray(mip.brightest).T, origin="lower", extent=(-0.99, 0.99, -0.99, 0.99), cmap="magma")
    axes[0].set_title("mip.diderot: brightest", fontsize=9)
    axes[1].imshow(np.clip(dvr.rgb, 0, 1), origin="lower", extent=(-1, 1, -1, 1))
    axes[1].set_title("render.diderot: rgb", fontsize=9)
    for ax in axes:
        ax.set_xticks([]), ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(out / "volume.png")
    plt.close(fig)
    for name in ("isocontour.png", "volume.png"):
        print(f"{out / name}: {os.path.getsize(out / name) // 1024} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
