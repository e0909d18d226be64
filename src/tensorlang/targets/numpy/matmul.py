"""A schedule's matmul steps (GEMM, mode product) on numpy arrays, the target's buffer
written in place (a view's row stride handed to BLAS): the C target's BLAS steps run in
Python and the NumPy target's through :class:`MatmulIntoStore`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...schedule.gemm import gemm_of
from ...schedule.steps import GemmStep, MatmulStep


def _view(array: np.ndarray, shape) -> np.ndarray:
    """``array`` reshaped to ``shape`` without copying (AttributeError where that needs a copy)."""
    view = array.view()
    view.shape = shape  # numpy refuses rather than copies
    return view


def run_matmul(step: MatmulStep, buffers) -> None:
    """Run ``step`` on ``buffers`` (by slot): its GEMMs over views (:func:`~tensorlang.schedule.gemm.gemm_of`),
    else over operands transposed and copied into order."""
    if isinstance(step, GemmStep) and step.plain:
        np.matmul(buffers[step.left], buffers[step.right], out=buffers[step.target])
        return
    g = gemm_of(step)
    out = buffers[step.target]
    if g is not None:
        a = _matrices(buffers[g.a], g.batch if g.stride_a else 1, g.m, g.k, g.trans_a)
        b = _matrices(buffers[g.b], g.batch if g.stride_b else 1, g.k, g.n, g.trans_b)
        np.matmul(a, b, out=_view(out, (g.m, g.n) if g.batch == 1 else (g.batch, g.m, g.n)))
    elif isinstance(step, GemmStep):  # (a mode product's GEMMs are never None)
        _run_copying(step, buffers)
    if step.scale != 1.0:
        np.multiply(out, out.dtype.type(step.scale), out=out)


def _matrices(array: np.ndarray, count: int, rows: int, cols: int, transposed: bool) -> np.ndarray:
    """``array`` as ``count`` matrices (1: unbatched) of rows × cols, stored transposed or not."""
    stored = (cols, rows) if transposed else (rows, cols)
    view = array.reshape(stored if count == 1 else (count, *stored))
    return view.swapaxes(-1, -2) if transposed else view


def _run_copying(step: GemmStep, buffers) -> None:
    """A GEMM step whose operands are transposed into order first (its result too, where needed)."""
    batch, left, right = step.left_shape[0], step.left_shape[1], step.right_shape[2]
    a = buffers[step.left].transpose(step.left_axes).reshape(step.left_shape[1:] if batch == 1 else step.left_shape)
    b = buffers[step.right].transpose(step.right_axes).reshape(step.right_shape[1:] if batch == 1 else step.right_shape)
    out = buffers[step.target]
    if step.result_axes is None:  # the target is laid out as (batch, left, right)
        np.matmul(a, b, out=_view(out, (left, right) if batch == 1 else (batch, left, right)))
    else:
        np.copyto(out, np.matmul(a, b).reshape(step.result_shape).transpose(step.result_axes))


@dataclass(frozen=True)
class MatmulIntoStore:
    """A matmul step over a store of named arrays: the result is a fresh array."""

    step: MatmulStep
    operands: tuple[tuple[int, str], ...]  # (slot, variable) of each operand
    shape: tuple[int, ...]

    def __call__(self, store: dict[str, np.ndarray], dtype: np.dtype) -> np.ndarray:
        buffers = {slot: store[name] for slot, name in self.operands}
        buffers[self.step.target] = out = np.empty(self.shape, dtype)
        run_matmul(self.step, buffers)
        return out
