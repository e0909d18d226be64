"""A matmul step as row-major GEMMs over its buffers as they are, with no copy: the one
analysis the NumPy target's ``numpy.matmul`` (targets/numpy/matmul.py) and the C target's
``dgemm``/``dgemv`` calls (targets/c/blascall.py) share for a mode product (:func:`mode_gemm`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .steps import ModeStep


@dataclass(frozen=True)
class Gemm:
    """``C_t = scale · op(A_t) op(B_t)`` for t < batch, row-major: op(A) is m×k, op(B) k×n,
    C m×n; A stored k×m when ``trans_a`` (else m×k), B stored n×k when ``trans_b``."""

    batch: int
    m: int
    n: int
    k: int
    a: int  # slots
    b: int
    c: int
    trans_a: bool
    trans_b: bool
    stride_a: int  # elements between consecutive matrices of the batch (0: the same one)
    stride_b: int
    scale: float

    @property
    def lda(self) -> int:
        return self.m if self.trans_a else self.k

    @property
    def ldb(self) -> int:
        return self.k if self.trans_b else self.n

    @property
    def slots(self) -> tuple[int, ...]:
        return tuple(sorted({self.a, self.b, self.c}))

    @property
    def extents(self) -> tuple[int, ...]:
        return (self.m, self.n, self.k, self.lda, self.ldb)

    def __str__(self) -> str:
        """``v2 = 0.5 · v0ᵀ v1 (3×4 by 4×5), 7 times``: slots, flags and extents."""
        scale = "" if self.scale == 1.0 else f"{self.scale!r} · "
        times = f", {self.batch} times" if self.batch > 1 else ""
        return (f"v{self.c} = {scale}v{self.a}{'ᵀ' * self.trans_a} v{self.b}{'ᵀ' * self.trans_b} "
                f"({self.m}×{self.k} by {self.k}×{self.n}){times}")


def mode_gemm(step: ModeStep) -> Gemm:
    """The GEMMs of a mode product step over its buffers as they are."""
    w, x, out, t = step.matrix, step.operand, step.target, step.transpose
    if step.p == 1:  # out(J, Q) = W' X(M, Q)
        return Gemm(1, step.j, step.q, step.m, w, x, out, t, False, 0, 0, step.scale)
    if step.q == 1:  # out(P, J) = X(P, M) W'ᵀ: W' stored (J, M) is Wᵀ's transpose
        return Gemm(1, step.p, step.j, step.m, x, w, out, False, not t, 0, 0, step.scale)
    # out(P, J, Q) = W' X(P, M, Q): P GEMMs, W' the same each time
    return Gemm(step.p, step.j, step.q, step.m, w, x, out, t, False, 0, step.m * step.q, step.scale)
