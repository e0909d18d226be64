"""A matmul step as row-major GEMMs over its buffers as they are (:func:`gemm_of`), for numpy and C."""

from __future__ import annotations

from dataclasses import dataclass

from .steps import EinsumStep, GemmStep, ModeStep, gemm_groups


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


def _grouped(indices, first, second) -> bool | None:
    """False when ``indices`` is ``first + second``, True when ``second + first`` (the
    matrix is stored transposed), None when neither; an empty group is either."""
    indices, first, second = list(indices), list(first), list(second)
    return False if indices == first + second else True if indices == second + first else None


def gemm_of(step) -> Gemm | None:
    """The GEMMs of a mode product or GEMM step over its buffers as they are; None for another
    step, one without its statement, or where an operand or the result would need a copy."""
    if isinstance(step, ModeStep):
        return mode_gemm(step)
    if not isinstance(step, GemmStep) or (stmt := step.statement) is None:
        return None
    tensors, batch, left, right, contracted = gemm_groups(stmt)
    la, lb, out, nb = list(tensors[0].indices), list(tensors[1].indices), [i for i, _ in stmt.index], len(batch)
    if la[:nb] != batch or lb[:nb] != batch or out[:nb] != batch:
        return None  # the batch must lead in every buffer: one matrix per batch point
    trans_a, trans_b = _grouped(la[nb:], left, contracted), _grouped(lb[nb:], contracted, right)
    swap = _grouped(out[nb:], left, right)
    if trans_a is None or trans_b is None or swap is None:
        return None
    count, m, k = step.left_shape
    n = step.right_shape[2]
    if not swap:
        return Gemm(count, m, n, k, step.left, step.right, step.target, trans_a, trans_b, m * k, k * n, step.scale)
    # the target stored (batch, right, left): Cᵀ = op(B)ᵀ op(A)ᵀ, the operands' flags flipped
    return Gemm(count, n, m, k, step.right, step.left, step.target, not trans_b, not trans_a, k * n, m * k,
                step.scale)


def runs(step, blas_int_max: int | None, pad: int) -> str:
    """Where a BLAS step runs (:data:`.steps.RUNS`): ``c`` where the target calls BLAS from C
    (``blas_int_max``) and :func:`gemm_of` needs no copy and fits it; else numpy.matmul or opt_einsum."""
    if isinstance(step, EinsumStep):
        return "opt_einsum"
    gemm = gemm_of(step) if blas_int_max is not None else None
    if gemm is not None and min(gemm.batch, gemm.m, gemm.n, gemm.k) >= 1 and max(gemm.m, gemm.n, gemm.k) <= (blas_int_max or 0):
        return "c"
    return "matmul-views" if pad > 1 else "matmul"
