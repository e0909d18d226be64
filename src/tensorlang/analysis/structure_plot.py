"""``tensorlang analyze --plot OUT.png``: every tensor's structure drawn as 003 Fig. 4 does (docs/structure.md,
after "Reading the structure section"); without matplotlib error[input]."""

from __future__ import annotations

import os

import numpy as np

from ..ein import ir
from ..errors import error
from .structure import TensorStructure, infer, representatives, support_mask


def _grid(s: TensorStructure) -> np.ndarray:
    """0 zero, 1 copy, 2 unique, over the tensor's positions (0-based): the unique set is inside the support."""
    return support_mask(s).astype(np.int8) + support_mask(TensorStructure(s.name, s.shape, s.unique))


def _panel(grid: np.ndarray) -> np.ndarray:
    if grid.ndim == 1:
        return grid[None, :]
    if grid.ndim == 2:
        return grid
    if grid.ndim == 3:
        gap = np.full((grid.shape[1], 1), -1, dtype=np.int8)
        return np.concatenate([piece for k in grid for piece in (k, gap)][:-1], axis=1)
    return grid[(slice(None), slice(None)) + (0,) * (grid.ndim - 2)]


#: No panel is drawn for tensors of more entries than this (enumerating them is slow).
MAX_ENTRIES = 1 << 16

#: A matrix of at most this many entries gets each entry's number written in it, as in
#: 003 Fig. 4: entries with one number hold one value (1, 2, ... in the order of the
#: unique positions, row-major); zeros get none.
MAX_NUMBERED = 400


def _numbers(s: TensorStructure) -> np.ndarray:
    """For each entry of a matrix, the number of the unique entry it holds (0: zero)."""
    reps = representatives(s)
    inside = support_mask(s).reshape(-1)
    unique = np.unique(reps[inside])
    numbers = np.searchsorted(unique, reps) + 1
    return np.where(inside, numbers, 0).reshape(s.shape)


def plot_structure(program: ir.Program, path: str) -> list[str]:
    """Draw the structure of every tensor of ``program`` to ``path`` (PNG); returns the
    names drawn."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import ListedColormap
    except ImportError:
        raise error("input", "--plot needs matplotlib (pip install matplotlib)") from None
    found = [s for s in infer(program).values() if s.shape and s.dense_size <= MAX_ENTRIES]
    if not found:
        raise error("input", "--plot: no tensor with dimensions to draw")
    side = 5.0 if any(len(s.shape) == 2 and 64 < s.dense_size <= MAX_NUMBERED for s in found) else 3.2
    fig, axes = plt.subplots(1, len(found), figsize=(side * len(found), side + 0.6), squeeze=False)
    colours = ListedColormap(["#bdbdbd", "#ffffff", "#9ecae1", "#08519c"])  # gap, zero, copy, unique
    for ax, s in zip(axes[0], found):
        grid = _grid(s)
        ax.imshow(_panel(grid), cmap=colours, vmin=-1, vmax=2, interpolation="nearest")
        if len(s.shape) == 2 and s.dense_size <= MAX_NUMBERED:
            size = min(9.0, 0.35 * side * 72 / max(s.shape))  # points: a third of a cell
            for (i, j), number in np.ndenumerate(_numbers(s)):
                if number:
                    ax.text(j, i, str(number), ha="center", va="center", fontsize=size,
                            color="white" if grid[i, j] == 2 else "black")
        ax.set_title(f"{s.name} [{' '.join(map(str, s.shape))}]\nunique {s.unique_size} of {s.dense_size}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100, format=None if os.path.splitext(path)[1] else "png")  # 'out': out, not out.png
    except (OSError, ValueError) as exc:  # ValueError: a suffix matplotlib cannot write ('x.out')
        raise error("input", f"--plot: cannot write {path}: {getattr(exc, 'strerror', None) or exc}") from None
    finally:
        plt.close(fig)
    return [s.name for s in found]
