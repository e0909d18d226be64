"""The steps of a schedule over buffer slots: :class:`LoopStep` and the library steps
(docs/c-backend.md, "BLAS steps")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..ein import ir
from ..ein.forms import monomial
from .fusion import Fusion

#: BLAS-shaped contractions with at least this many multiply-adds go to BLAS (numpy: ~10-20 µs
#: of Python around the call, which a 2^16-flop loop finishes in).
BLAS_WORK = 1 << 16
#: With BLAS called from C a single GEMM (M, N, K at least C_BLAS_MIN, or a matrix times a
#: vector) pays from C_BLAS_WORK (docs/c-backend.md, "BLAS called from C").
C_BLAS_WORK = 1 << 13
C_BLAS_MIN = 8
#: A packed block product (loops/structure.py ``packed_product``) is one BLAS call from this
#: many multiply-adds (docs/structure.md, "Polynomial regression").
PACKED_BLAS_WORK = 1 << 20
#: A batched mode product runs on BLAS where each GEMM has MODE_BATCH_WORK multiply-adds and W
#: MODE_BATCH_MIN on each side (docs/c-backend.md, "Measurements: batched mode products").
MODE_BATCH_WORK = 1 << 19
MODE_BATCH_MIN = 16
#: The most operands one contraction of the NumPy code takes (a longer product: in chunks).
EINSUM_CHUNK = 16


def einsum_chunk(statements) -> int:
    """EINSUM_CHUNK where a sum or quotient of ``statements`` has a product of more factors, else 0."""
    longest = max((len(monomial(node).flat()[1]) for s in statements for node in ir.nodes(s.body)
                   if isinstance(node, ir.Sum) or (isinstance(node, ir.BinOp) and node.op != "*")), default=0)
    return EINSUM_CHUNK if longest > EINSUM_CHUNK else 0


#: Where a BLAS step runs (its ``runs``: :func:`~.gemm.runs`).
RUNS = ("c", "matmul", "matmul-views", "opt_einsum")


# ------------------------------------------------------------------ recognition
def contraction_factors(stmt: ir.Statement):
    """(tensors, summed index map, scale) when the body is a scaled product of tensor
    accesses under sums (:func:`ein.forms.monomial`), else None."""
    form = monomial(stmt.body)
    if not all(isinstance(f, (ir.Tensor, ir.Const)) for f in form.factors):
        return None
    return [f for f in form.factors if isinstance(f, ir.Tensor)], list(form.sums), form.coefficient()


def multiply_adds(stmt: ir.Statement, summed) -> int:
    """The multiply-adds of a contraction: the target's points times the summed points."""
    return math.prod(n for _, n in stmt.index) * math.prod(n for _, n in summed)


def blas_shape(stmt: ir.Statement) -> str | None:
    """None when ``stmt`` is a sum over a product of two or more tensors that a BLAS step
    computes, else why not."""
    found = contraction_factors(stmt)
    if found is None:
        return "not a product of tensors under a sum"
    tensors, summed, scale = found
    if not summed or len(tensors) < 2:
        return "not a sum over a product of two or more tensors"
    if not math.isfinite(scale):
        return f"non-finite scale factor {scale}"
    if stmt.target in stmt.reads:
        return "reads its own target"
    if any(isinstance(i, int) for t in tensors for i in t.indices):
        return "a fixed position in an access"
    if any(not isinstance(i, str) for t in tensors for i in t.indices):
        return "an affine index in an access"
    if any(len(set(t.indices)) < len(t.indices) for t in tensors):
        return "a diagonal (an index repeated in one access)"
    names = [name for name, _ in summed]
    if len(set(names)) < len(names) or set(names) & {name for name, _ in stmt.index}:
        return "a summed index bound twice"
    present = {i for t in tensors for i in t.indices}
    if not {name for name, _ in stmt.index} <= present:
        return "a broadcast output axis"
    return None


class _BlasStep:
    """What the BLAS steps share: a step pays from :data:`BLAS_WORK` multiply-adds (with
    ``from_c``, one GEMM from :data:`C_BLAS_WORK`) unless something else speaks against it."""

    if TYPE_CHECKING:  # each step provides it, as a property or as a (frozen) field
        @property
        def work(self) -> int:
            """The step's multiply-adds."""

    @property
    def single_gemm(self) -> tuple[int, int, int] | None:
        """(M, N, K) when the step is one GEMM on its buffers as they are, else None."""
        return None

    def threshold(self, from_c: bool = False) -> tuple[int, str]:
        """The least work that pays, and its name."""
        gemm = self.single_gemm if from_c else None
        if gemm is not None and C_BLAS_WORK < BLAS_WORK and (min(gemm) >= C_BLAS_MIN or 1 in gemm[:2]):
            return C_BLAS_WORK, "C_BLAS_WORK"
        return BLAS_WORK, "BLAS_WORK"

    def why_not(self, from_c: bool = False) -> str | None:
        """None when the step beats the loop nest, else why not."""
        least, name = self.threshold(from_c)
        return None if self.work >= least else f"{self.work} multiply-adds < {name} {least}"

    def pays(self, from_c: bool = False) -> bool:
        return self.why_not(from_c) is None


# ------------------------------------------------------------------ steps
@dataclass(frozen=True)
class LoopStep:
    """Consecutive statements run as loop nests over ``slots``, ``reasons[k]`` why statement
    k is not a BLAS step; ``fusion``: inside one batch loop (:mod:`.fusion`)."""
    statements: tuple[ir.Statement, ...]
    slots: tuple[int, ...]
    reasons: tuple[str, ...]
    fusion: Fusion | None = None
    chunk: int = 0  # einsum code: longer products contracted this many operands at a time (EINSUM_CHUNK)


@dataclass(frozen=True)
class GemmStep(_BlasStep):
    """``target = scale * Σ A B`` as one batched GEMM of A as (batch, left, summed) by B as
    (batch, summed, right), the axes moved by ``left_axes``, ``right_axes``, ``result_axes``."""
    target: int
    left: int
    right: int
    left_axes: tuple[int, ...]
    right_axes: tuple[int, ...]
    left_shape: tuple[int, int, int]
    right_shape: tuple[int, int, int]
    result_shape: tuple[int, ...]
    result_axes: tuple[int, ...] | None
    scale: float
    statement: ir.Statement | None = None
    reason: str = ""
    runs: str = "matmul"  # RUNS

    @property
    def operands(self) -> tuple[int, ...]:
        return (self.left, self.right)

    @property
    def plain(self) -> bool:
        """C = A B with A, B and C matrices stored as they are multiplied: no reshaping."""
        return (self.left_shape[0] == 1 and self.left_axes == (0, 1) and self.right_axes == (0, 1)
                and self.result_axes is None and self.scale == 1.0 and len(self.result_shape) == 2)

    @property
    def work(self) -> int:
        batch, left, summed = self.left_shape
        return batch * left * summed * self.right_shape[2]

    @property
    def single_gemm(self) -> tuple[int, int, int] | None:
        batch, left, summed = self.left_shape
        return None if batch > 1 or self.copies else (left, self.right_shape[2], summed)

    @property
    def copies(self) -> bool:
        """Whether an operand or the target is not stored in the GEMM's order."""
        return (self.left_axes != tuple(range(len(self.left_axes)))
                or self.right_axes != tuple(range(len(self.right_axes))) or self.result_axes is not None)

    def why_not(self, from_c: bool = False) -> str | None:
        """Also: a dot or matrix-vector product of an operand to transpose (the copy costs
        what the product does; the loop nest reads it where it lies, :mod:`..loops.jam`)."""
        moved = lambda axes: axes != tuple(range(len(axes)))  # noqa: E731
        if (self.right_shape[2] == 1 and moved(self.left_axes)) or (self.left_shape[1] == 1 and moved(self.right_axes)):
            return "a dot or matrix-vector product of a transposed operand: its copy costs what the product does"
        return super().why_not(from_c)


def gemm_groups(stmt: ir.Statement):
    """The two tensors of a two-tensor contraction and its index groups: batch (in both
    and the target), left (A and the target), right (B and the target) and contracted."""
    tensors, _, _ = contraction_factors(stmt)
    la, lb = tensors[0].indices, tensors[1].indices
    out = [name for name, _ in stmt.index]
    return (tensors, [i for i in out if i in la and i in lb], [i for i in out if i in la and i not in lb],
            [i for i in out if i in lb and i not in la], [i for i in la if i in lb and i not in out])


def gemm_step(stmt: ir.Statement, slot_of: dict[str, int], shapes: dict[str, tuple[int, ...]]) -> GemmStep | None:
    """The :class:`GemmStep` of a two-tensor BLAS-shaped contraction, or None for more tensors."""
    tensors, summed, scale = contraction_factors(stmt)
    if len(tensors) != 2:
        return None
    (a, b), batch, left, right, contracted = gemm_groups(stmt)
    out = [name for name, _ in stmt.index]
    extent = dict(stmt.index) | dict(summed)
    for t in tensors:
        extent.update(zip(t.indices, shapes[t.name]))
    la, lb = list(a.indices), list(b.indices)
    # an index only in one operand and not in the output would be a sum of one factor
    if set(la) != set(batch + left + contracted) or set(lb) != set(batch + right + contracted):
        return None
    size = lambda names: math.prod(extent[i] for i in names)  # noqa: E731
    order = batch + left + right
    result_axes = None if order == out else tuple(order.index(i) for i in out)
    return GemmStep(
        target=slot_of[stmt.target], left=slot_of[a.name], right=slot_of[b.name],
        left_axes=tuple(la.index(i) for i in batch + left + contracted),
        right_axes=tuple(lb.index(i) for i in batch + contracted + right),
        left_shape=(size(batch), size(left), size(contracted)),
        right_shape=(size(batch), size(contracted), size(right)),
        result_shape=tuple(extent[i] for i in order), result_axes=result_axes, scale=scale, statement=stmt,
    )


@dataclass(frozen=True)
class ModeStep(_BlasStep):
    """``target[P, j, Q] = scale * Σ_m W[j, m] X[P, m, Q]`` (or ``W[m, j]``): the mode
    product, ``W' X[p]`` for every p, copying nothing (docs/c-backend.md, "BLAS steps")."""
    target: int
    matrix: int
    operand: int
    transpose: bool  # W is indexed [m, j]: the product uses Wᵀ
    p: int  # the extents of P (product), M, J and Q (product)
    m: int
    j: int
    q: int
    scale: float
    q_axes: int = 0  # how many of X's axes Q merges (those after m)
    statement: ir.Statement | None = None
    reason: str = ""
    runs: str = "matmul"  # RUNS

    @property
    def operands(self) -> tuple[int, ...]:
        return (self.matrix, self.operand)

    @property
    def batched(self) -> bool:
        """P and Q both non-trivial: P GEMMs of (J, M) by (M, Q), numpy's loop over P."""
        return self.p > 1 and self.q > 1

    @property
    def single_gemm(self) -> tuple[int, int, int] | None:
        if self.batched:
            return None
        return (self.j, self.q, self.m) if self.p == 1 else (self.p, self.j, self.m)

    @property
    def work(self) -> int:
        return self.p * self.m * self.j * self.q

    def why_not(self, from_c: bool = False) -> str | None:
        """Also: a batched one needs :data:`MODE_BATCH_WORK` and :data:`MODE_BATCH_MIN`."""
        small = super().why_not(from_c)
        if small is not None or not self.batched:
            return small
        per_gemm = self.j * self.m * self.q
        if per_gemm < MODE_BATCH_WORK:
            return f"batched mode product: J*M*Q = {per_gemm} < MODE_BATCH_WORK {MODE_BATCH_WORK}"
        if min(self.j, self.m) < MODE_BATCH_MIN:
            return f"batched mode product: min(J,M) = {min(self.j, self.m)} < MODE_BATCH_MIN {MODE_BATCH_MIN}"
        return None


def mode_step(stmt: ir.Statement, slot_of: dict[str, int], shapes: dict[str, tuple[int, ...]]) -> ModeStep | None:
    """The :class:`ModeStep` of a BLAS-shaped contraction that is a mode product, else None."""
    tensors, summed, scale = contraction_factors(stmt)
    if len(tensors) != 2 or len(summed) != 1:
        return None
    m = summed[0][0]
    out = tuple(name for name, _ in stmt.index)
    # W is tried as the smaller factor first (with two matrices either fits: the same GEMM)
    for w, x in sorted((tensors, tensors[::-1]), key=lambda pair: math.prod(shapes[pair[0].name])):
        if len(w.indices) != 2 or m not in w.indices or m not in x.indices:
            continue
        j = w.indices[1] if w.indices[0] == m else w.indices[0]
        at = x.indices.index(m)
        if j in x.indices or out != x.indices[:at] + (j,) + x.indices[at + 1:]:
            continue
        shape = shapes[x.name]
        return ModeStep(
            target=slot_of[stmt.target], matrix=slot_of[w.name], operand=slot_of[x.name],
            transpose=w.indices[0] == m, p=math.prod(shape[:at]), m=shape[at],
            j=shapes[w.name][w.indices.index(j)], q=math.prod(shape[at + 1:]), scale=scale,
            q_axes=len(shape) - 1 - at, statement=stmt,
        )
    return None


@dataclass(frozen=True)
class EinsumStep(_BlasStep):
    """A BLAS-shaped contraction on opt_einsum's path (three or more tensors, or no GEMM)."""
    target: int
    statement: ir.Statement
    work: int
    reason: str = ""
    runs: str = "opt_einsum"  # RUNS
    chunk: int = 0  # as LoopStep.chunk


def einsum_step(stmt: ir.Statement, slot_of: dict[str, int]) -> EinsumStep:
    _, summed, _ = contraction_factors(stmt)
    return EinsumStep(slot_of[stmt.target], stmt, multiply_adds(stmt, summed))


# ------------------------------------------------------------------ Gram products
#: The Gram kernel (docs/einsum.md): the most columns m (XᵀX, the third moment); without
#: AVX-512 the work n·m² and n·m³ where it wins; the m mod 8 last columns taken as a strip.
GRAM_MAX_M, GRAM_MAX_M3 = 384, 128
GRAM_PORTABLE_WORK2 = 1 << 14
GRAM_PORTABLE_WORK3 = (1 << 20, 1 << 24)
GRAM_STRIP_TAIL = 5


@dataclass(frozen=True)
class GramStep:
    """``target = Σ X X`` (``order`` 2) or ``Σ X X X`` (3) over X read as an n × m matrix
    (``transposed``: m × n): the entries with sorted indices computed, the others filled."""
    target: int
    operand: int
    n: int
    m: int
    transposed: bool
    order: int
    statement: ir.Statement
    reason: str = ""
    strip: bool = False  # the last m mod 8 columns as a strip (:data:`GRAM_STRIP_TAIL`)

    @property
    def operands(self) -> tuple[int, ...]:
        return (self.operand,)

    @property
    def work(self) -> int:
        return self.n * self.m ** self.order

    def why_not(self, vector_bytes: int) -> str | None:
        """None when the kernel beats the other steps on a machine whose generated C has
        vectors of ``vector_bytes``, else why not."""
        limit, name = (GRAM_MAX_M, "GRAM_MAX_M") if self.order == 2 else (GRAM_MAX_M3, "GRAM_MAX_M3")
        if self.m > limit:
            return f"Gram product: m = {self.m} > {name} {limit}"
        if vector_bytes >= 64:
            return None
        if self.order == 2 and self.work >= GRAM_PORTABLE_WORK2:
            return f"Gram product without AVX-512: n*m^2 = {self.work} >= GRAM_PORTABLE_WORK2 {GRAM_PORTABLE_WORK2}"
        low, high = GRAM_PORTABLE_WORK3
        if self.order == 3 and not low <= self.work < high:
            return f"Gram product without AVX-512: n*m^3 = {self.work} outside GRAM_PORTABLE_WORK3 [{low}, {high})"
        return None


def gram_step(stmt: ir.Statement, slot_of: dict[str, int], shapes: dict[str, tuple[int, ...]]) -> GramStep | None:
    """The :class:`GramStep` of a product of two or three accesses of one tensor that differ
    at its first or last position only, the target's indices, else None."""
    tensors, summed, scale = contraction_factors(stmt)
    k = len(tensors)
    if k not in (2, 3) or scale != 1.0 or len({t.name for t in tensors}) != 1:
        return None
    first = tensors[0].indices
    if any(len(t.indices) != len(first) for t in tensors):
        return None
    differ = {d for t in tensors[1:] for d, (x, y) in enumerate(zip(first, t.indices)) if x != y}
    if len(differ) != 1:
        return None
    p = differ.pop()
    own = {t.indices[p] for t in tensors}
    others = set(first) - {first[p]}
    if len(own) != k or own & others or own != {name for name, _ in stmt.index} \
            or others != {name for name, _ in summed}:
        return None
    shape = shapes[tensors[0].name]
    if p not in (0, len(shape) - 1):
        return None
    m = shape[p]
    return GramStep(slot_of[stmt.target], slot_of[tensors[0].name], math.prod(shape) // m, m,
                    p == 0 and len(shape) > 1, k, stmt, strip=k == 2 and 1 <= m % 8 <= GRAM_STRIP_TAIL)


#: The steps a target runs with numpy.matmul over the buffers.
MatmulStep = GemmStep | ModeStep
#: The steps that run a statement on BLAS rather than as a loop nest.
BlasStep = GemmStep | ModeStep | EinsumStep


def statement_of(step: "BlasStep | GramStep | ProbeStep") -> ir.Statement:
    """The statement a BLAS step runs (one built by hand only to ask :meth:`pays` may lack it)."""
    if step.statement is None:
        raise ValueError(f"a {type(step).__name__} without its statement: {step!r}")
    return step.statement


from .probe import ProbeStep  # noqa: E402 - the probe step lives in its own module (schedule/probe.py)

Step = LoopStep | GemmStep | ModeStep | EinsumStep | GramStep | ProbeStep
