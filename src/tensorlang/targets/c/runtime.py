"""The C back end: a schedule of generated C loop nests and BLAS calls over one store.

Compilation (once per kernel):
1. Each EIN statement is either a *BLAS step* — a dense contraction (a product of at
   least two tensors under a sum) whose work exceeds :data:`BLAS_WORK`: a mode product
   (one index of a tensor contracted with a matrix) is one ``numpy.matmul`` over views
   (:class:`_ModeStep`, when :func:`mode_step_pays`), another two-tensor contraction one
   batched GEMM (:class:`_GemmStep`), anything else the NumPy back end's opt_einsum path —
   or goes into a *C step*: consecutive C statements form one C function.
2. The statements are lowered to a loop program (:mod:`tensorlang.loops`), printed as C99
   (:mod:`.codegen`), compiled and cached (:mod:`.build`) and loaded with cffi,
   whose ``from_buffer`` hands numpy arrays to C for about a tenth of what ctypes'
   ``.ctypes.data`` costs (the per-call overhead is what small kernels pay).

A call (:meth:`CKernel.run`) gets validated inputs, makes every variable's buffer
(inputs that are read-only are used in place; inputs that are also results are copied,
so a caller's array is never written; ``out=`` buffers that are C-contiguous and share
no memory with an input are written directly), then runs the steps in order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...ein import ir
from ...ein.printer import statement_to_text
from ...loops import lower as loops
from ..numpy.codegen import compile_numpy
from . import build as c_build, codegen as c_codegen
from .fastcall import fast_call

#: Contractions with at least this many multiply-adds go to BLAS (numpy) when they are
#: BLAS-shaped.  Below it a generated loop nest wins: a numpy step costs ~10-20 µs of
#: Python around the BLAS call, which a 2^16-flop loop finishes in.
BLAS_WORK = 1 << 16

#: A batched mode product (:class:`_ModeStep` with P and Q both non-trivial) is one small
#: GEMM per element of P; it runs on BLAS only when each GEMM has at least this many
#: multiply-adds and W is at least MODE_BATCH_MIN on each side, else as a loop nest
#: (:func:`mode_step_pays` has the measurements).
MODE_BATCH_WORK = 1 << 19
MODE_BATCH_MIN = 16

_REAL = {"float64": "double", "float32": "float"}


def contraction_factors(stmt: ir.Statement):
    """(tensors, summed index map, scale) when the body is a scaled product of tensor
    accesses under sums — the shape BLAS computes — else None."""
    summed: list[tuple[str, int]] = []
    tensors: list[ir.Tensor] = []
    scale = 1.0
    stack = [stmt.body]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Sum):
            summed.extend(e.index)
            stack.append(e.body)
        elif isinstance(e, ir.BinOp) and e.op == "*":
            stack.extend((e.right, e.left))
        elif isinstance(e, ir.Neg):
            scale = -scale
            stack.append(e.arg)
        elif isinstance(e, ir.Const):
            scale *= e.value
        elif isinstance(e, ir.Tensor):
            tensors.append(e)
        else:
            return None
    return tensors, summed, scale


def is_blas_contraction(stmt: ir.Statement) -> bool:
    """A sum over a product of two or more tensors, big enough to pay for a BLAS call.

    Excluded (the loop nest does them): fixed positions and diagonals (repeated indices in
    one access), non-finite scale factors (0 * inf must stay NaN element by element), a
    summed name bound twice, and statements that read their own target (ev-stmt would
    need a copy of the target, which the loop nest's scratch buffer provides)."""
    found = contraction_factors(stmt)
    if found is None:
        return False
    tensors, summed, scale = found
    if not summed or len(tensors) < 2 or not math.isfinite(scale) or stmt.target in stmt.reads:
        return False
    if any(isinstance(i, int) for t in tensors for i in t.indices):
        return False
    if any(len(set(t.indices)) < len(t.indices) for t in tensors):
        return False
    names = [name for name, _ in summed]
    if len(set(names)) < len(names) or set(names) & {name for name, _ in stmt.index}:
        return False
    present = {i for t in tensors for i in t.indices}
    if not {name for name, _ in stmt.index} <= present:  # a broadcast output axis
        return False
    work = math.prod(n for _, n in stmt.index) * math.prod(n for _, n in summed)
    return work >= BLAS_WORK


@dataclass(frozen=True)
class _GemmStep:
    """``target = scale * Σ A B`` as one ``numpy.matmul`` writing the target in place.

    The operands' axes are grouped into batch (in A, B and the target), left (A and the
    target), summed (A and B) and right (B and the target); transposed and reshaped to
    (batch, left, summed) and (batch, summed, right), they are one batched GEMM whose
    result is the target's buffer itself when the target orders its axes batch, left,
    right (otherwise a temporary, copied in with the transposition)."""

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

    @property
    def plain(self) -> bool:
        """C = A B with A, B and C matrices stored as they are multiplied: no reshaping."""
        return (self.left_shape[0] == 1 and self.left_axes == (0, 1) and self.right_axes == (0, 1)
                and self.result_axes is None and self.scale == 1.0 and len(self.result_shape) == 2)

    def run(self, buffers) -> None:
        if self.plain:
            np.matmul(buffers[self.left], buffers[self.right], out=buffers[self.target])
            return
        batch, left, right = self.left_shape[0], self.left_shape[1], self.right_shape[2]
        a, b = buffers[self.left], buffers[self.right]
        if self.left_axes != tuple(range(a.ndim)):
            a = a.transpose(self.left_axes)
        if self.right_axes != tuple(range(b.ndim)):
            b = b.transpose(self.right_axes)
        if batch == 1:  # a plain GEMM: 2-D operands skip numpy's batched-matmul loop
            a, b = a.reshape(self.left_shape[1:]), b.reshape(self.right_shape[1:])
        else:
            a, b = a.reshape(self.left_shape), b.reshape(self.right_shape)
        out = buffers[self.target]
        if self.result_axes is None:  # the target is laid out as (batch, left, right)
            np.matmul(a, b, out=out.reshape((left, right) if batch == 1 else (batch, left, right)))
        else:
            value = np.matmul(a, b).reshape(self.result_shape)
            np.copyto(out, value.transpose(self.result_axes))
        if self.scale != 1.0:
            np.multiply(out, out.dtype.type(self.scale), out=out)


def gemm_step(stmt: ir.Statement, slot_of: dict[str, int], shapes: dict[str, tuple[int, ...]]) -> _GemmStep | None:
    """The :class:`_GemmStep` of a two-tensor BLAS contraction, or None for more tensors."""
    tensors, summed, scale = contraction_factors(stmt)
    if len(tensors) != 2:
        return None
    a, b = tensors
    out = [name for name, _ in stmt.index]
    extent = dict(stmt.index) | dict(summed)
    for t in tensors:
        extent.update(zip(t.indices, shapes[t.name]))
    la, lb = list(a.indices), list(b.indices)
    batch = [i for i in out if i in la and i in lb]
    left = [i for i in out if i in la and i not in lb]
    right = [i for i in out if i in lb and i not in la]
    contracted = [i for i in la if i in lb and i not in out]
    # an index only in one operand and not in the output would be a sum of one factor
    if set(la) != set(batch + left + contracted) or set(lb) != set(batch + right + contracted):
        return None
    size = lambda names: math.prod(extent[i] for i in names)  # noqa: E731
    order = batch + left + right
    result_axes = None if order == out else tuple(order.index(i) for i in out)
    return _GemmStep(
        target=slot_of[stmt.target], left=slot_of[a.name], right=slot_of[b.name],
        left_axes=tuple(la.index(i) for i in batch + left + contracted),
        right_axes=tuple(lb.index(i) for i in batch + contracted + right),
        left_shape=(size(batch), size(left), size(contracted)),
        right_shape=(size(batch), size(contracted), size(right)),
        result_shape=tuple(extent[i] for i in order), result_axes=result_axes, scale=scale,
    )


@dataclass(frozen=True)
class _ModeStep:
    """``target[P, j, Q] = scale * Σ_m W[j, m] X[P, m, Q]`` (or ``W[m, j]``): the mode
    product of X with a matrix W, one pairwise step of the spectral-element kernels
    (``t[e,l,j,k] = Σ_m B[j,m] t1[e,l,m,k]``), as one ``numpy.matmul`` that reads X and
    writes the target's buffer in place, copying nothing.

    Why not :class:`_GemmStep`: W shares no axis with X, so there P and Q both become the
    product's "right" group — X transposed to (M, P Q) and the result transposed back, two
    copies of the big tensors.  Here P and Q stay where they are: X is viewed as
    (P, M, Q) and the target as (P, J, Q), and the product is ``W' X[p]`` for every p,
    one GEMM when P or Q is empty (size 1); ``W'`` is W or Wᵀ as a view, which numpy
    hands to BLAS as a transposed matrix without a copy.  Whether the batched form (P and
    Q both non-trivial) pays is :func:`mode_step_pays`'s question."""

    target: int
    matrix: int
    operand: int
    transpose: bool  # W is indexed [m, j]: the product uses Wᵀ
    p: int  # the extents of P (product), M, J and Q (product)
    m: int
    j: int
    q: int
    scale: float

    @property
    def batched(self) -> bool:
        """P and Q both non-trivial: P GEMMs of (J, M) by (M, Q), numpy's loop over P."""
        return self.p > 1 and self.q > 1

    def run(self, buffers) -> None:
        w, x, out = buffers[self.matrix], buffers[self.operand], buffers[self.target]
        if self.transpose:
            w = w.T
        if self.p == 1:  # out(J, Q) = W' X(M, Q)
            np.matmul(w, x.reshape(self.m, self.q), out=out.reshape(self.j, self.q))
        elif self.q == 1:  # out(P, J) = X(P, M) W'ᵀ
            np.matmul(x.reshape(self.p, self.m), w.T, out=out.reshape(self.p, self.j))
        else:  # out(P, J, Q) = W' X(P, M, Q), W' broadcast over P
            np.matmul(w, x.reshape(self.p, self.m, self.q), out=out.reshape(self.p, self.j, self.q))
        if self.scale != 1.0:
            np.multiply(out, out.dtype.type(self.scale), out=out)


def mode_step(stmt: ir.Statement, slot_of: dict[str, int], shapes: dict[str, tuple[int, ...]]) -> _ModeStep | None:
    """The :class:`_ModeStep` of a BLAS contraction (:func:`is_blas_contraction`) that is a
    mode product ``target[P, j, Q] = scale * Σ_m W[j, m] X[P, m, Q]`` — W a matrix (either
    factor, indexed ``[j, m]`` or ``[m, j]``), the target X's indices with m replaced by j,
    in order — else None."""
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
        return _ModeStep(
            target=slot_of[stmt.target], matrix=slot_of[w.name], operand=slot_of[x.name],
            transpose=w.indices[0] == m, p=math.prod(shape[:at]), m=shape[at],
            j=shapes[w.name][w.indices.index(j)], q=math.prod(shape[at + 1:]), scale=scale,
        )
    return None


def mode_step_pays(step: _ModeStep) -> bool:
    """Whether ``step`` should run rather than the generated loop nest.

    A plain GEMM (P or Q empty) always does, as :class:`_GemmStep` did for it before.  A
    batched one pays numpy's ~80 ns per GEMM P times and runs the small GEMMs on one
    thread, against a loop nest on every core; it wins only when each GEMM is big in
    every direction: at least :data:`MODE_BATCH_WORK` multiply-adds and W at least
    :data:`MODE_BATCH_MIN` on each side.

    Measured on the 2-core development machine, float64, X of 2^20 elements, ms, best of
    5-8 passes (other processes were running), batched step / loop nest:

        interpolation kernel, E = 2^20 // n^3     n=4        n=8        n=12       n=16
        t2[e,l,j,k] = B[j,m] t1[e,l,m,k] (Q=n)   5.5/0.18   2.1/0.28   1.8/0.42   1.7/0.67
        v[e,i,j,k] = A[i,l] t2[e,l,j,k] (Q=n^2)  1.7/0.17   1.2/0.39   1.4/0.53   1.5/1.0
        (n=24, Q=576: 1.8/1.4; n=32, Q=1024: 1.7/13, the first n where the rule takes the step)

        t[p,j,q] = W[j,m] X[p,m,q]    J=M=16   24        32        48        64      128
        Q=32                                   2.5/0.94  2.5/1.3   3.6/1.4   4.3/2.5  4.6/9.2
        Q=128                                  1.9/1.5   2.3/1.8   3.1/2.8   2.9/8.0  4.4/16
        Q=256                        1.5/1.1   1.9/1.7   2.4/2.1   2.2/2.6   2.3/7.8  4.8/16
        Q=512                                  2.5/2.1   1.6/2.7   2.2/3.3   2.2/7.2  3.8/17
        Q=1024                       1.6/1.1   1.3/2.0   1.6/2.4   2.3/8.0   2.2/14   3.9/26
        J×M = 16×32, 32×16, Q=1024: 0.92/1.4, 2.1/3.0; 8×64, 64×8, 4×128, 128×4, 8×128, 128×8
        at 2^19 multiply-adds per GEMM: 0.70/0.63, 8.2/9.6, 0.69/0.32, 34/20, 0.73/0.60, 21/15.

    The rule picks the faster in all of these but 64×8 (1.2x missed); of the other shapes
    measured it misses 40×40 and 16×64 at Q=256 (1.9x, 1.4x).  These loop nests are the interchanged (row AXPY)
    contractions of :func:`tensorlang.loops.lower.contraction`; against the accumulator-form nests before
    them the batched step won from a few thousand multiply-adds per GEMM (n=8, Q=64: 1.5 ms
    vs 2.9 ms; n=4, Q=4: 5.5 ms vs 1.5 ms): the rule follows the loop nests it competes with."""
    if not step.batched:
        return True
    return step.j * step.m * step.q >= MODE_BATCH_WORK and min(step.j, step.m) >= MODE_BATCH_MIN


@dataclass
class _CStep:
    name: str
    slots: tuple[int, ...]
    function: object = None


@dataclass
class _NumpyStep:
    target: int
    kernel: object


@dataclass(frozen=True)
class Generated:
    """The C source of a program and the schedule that runs it."""

    source: str
    loop_program: loops.LoopProgram
    steps: tuple[object, ...]
    declarations: str


def _blas_step(stmt: ir.Statement, program: ir.Program, dtype, slot_of, shapes):
    """The BLAS step that runs ``stmt``, or None when the loop nest should: a mode product
    (:class:`_ModeStep`) when it pays, else a two-tensor GEMM (:class:`_GemmStep`), else the
    NumPy back end's opt_einsum path."""
    if not is_blas_contraction(stmt):
        return None
    mode = mode_step(stmt, slot_of, shapes)
    if mode is not None:
        # a mode product too fine-grained for BLAS stays a loop nest: _GemmStep would
        # be slower still (it copies X and the result)
        return mode if mode_step_pays(mode) else None
    gemm = gemm_step(stmt, slot_of, shapes)
    if gemm is not None:
        return gemm
    return _NumpyStep(slot_of[stmt.target], compile_numpy(ir.Program(program.decls, (stmt,)), dtype))


def generate(program: ir.Program, dtype, blas: bool = True) -> Generated:
    """The schedule and C source for ``program``; compiles nothing (``--emit c`` uses it)."""
    real = _REAL[np.dtype(dtype).name]
    loop_program = loops.lower(program)
    slot_of = {name: n for n, name in enumerate(loop_program.names)}
    steps: list[object] = []
    group: list[loops.Nest] = []
    functions: list[str] = []
    declarations: list[str] = []

    def flush():
        if group:
            step = _CStep(f"tl_step{len(functions)}", tuple(sorted(c_codegen._slots(group))))
            functions.append(c_codegen.function(loop_program, step.name, tuple(group), real, step.slots))
            declarations.append(f"int {step.name}({', '.join(['void *'] * len(step.slots) + ['int'])});")
            steps.append(step)
            group.clear()

    shapes = {d.name: d.shape for d in program.decls}
    for nest in loop_program.nests:
        step = _blas_step(nest.statement, program, dtype, slot_of, shapes) if blas else None
        if step is None:
            group.append(nest)
            continue
        flush()
        steps.append(step)
        how = {_ModeStep: "numpy.matmul (mode product)", _GemmStep: "numpy.matmul"}.get(type(step), "opt_einsum")
        functions.append(f"/* BLAS step ({how}): {c_codegen._comment(statement_to_text(nest.statement))} */\n")
    flush()
    source = c_codegen.prelude(real) + "".join("\n" + f for f in functions)
    return Generated(source, loop_program, tuple(steps), "\n".join(declarations))


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays may share memory.  Two distinct arrays that each own their data
    (``base is None``) cannot, which settles the common case without numpy's bounds check."""
    if a is b:
        return True
    if a.base is None and b.base is None:
        return False
    return np.may_share_memory(a, b)


def _disjoint(target: np.ndarray, supplied: dict, name: str, direct: dict) -> bool:
    """``target`` (for variable ``name``) shares memory with no input except ``name``'s own
    when that input *is* the target (the in-place idiom), and with no other target."""
    for key, a in supplied.items():
        if key == name and a is target:
            continue
        if _overlap(a, target):
            return False
    return not any(_overlap(b, target) for b in direct.values())


class CKernel:
    """A compiled program: the generated source, the steps, and how to run them."""

    def __init__(self, program: ir.Program, dtype, roles, blas: bool = True):
        self.program = program
        self.dtype = np.dtype(dtype)
        self.compiler = c_build.require_compiler()
        generated = generate(program, self.dtype, blas)
        self.source = generated.source
        self.loop_program = generated.loop_program
        self.names = self.loop_program.names
        self.shapes = self.loop_program.shapes
        self.ffi = None
        c_steps = [step for step in generated.steps if isinstance(step, _CStep)]
        if c_steps:
            path = c_build.build(self.source, self.compiler)
            self.ffi, lib = c_build.load(path, generated.declarations)
            # fresh step objects: a Generated is immutable and may be shared
            bound = {step.name: _CStep(step.name, step.slots, getattr(lib, step.name)) for step in c_steps}
            self.steps = tuple(bound.get(getattr(step, "name", None), step) for step in generated.steps)
        else:
            self.steps = generated.steps
        only = self.steps[0] if len(self.steps) == 1 and isinstance(self.steps[0], _CStep) else None
        self._only = (only.function, only.slots) if only is not None else None
        self._plan(roles)
        self.fast_call = fast_call(self, roles)

    # ------------------------------------------------------------------ calls
    def _plan(self, roles) -> None:
        """Per slot, how a call makes its buffer (fixed at compile time, so that a call
        does as little Python as possible: small kernels pay for every line here)."""
        self.plan = tuple((n, name, self.shapes[n], roles.get(name, "temp")) for n, name in enumerate(self.names))
        self._inputs = tuple((n, name) for n, name, _, role in self.plan if role == "in")
        self._others = tuple(entry for entry in self.plan if entry[3] not in ("in", "temp"))
        self.results = tuple((n, name) for n, name, _, role in self.plan if role in ("out", "inout", "optional"))
        self._empty = [None] * len(self.plan)
        self.temporary_slots = tuple(n for n, _, _, role in self.plan if role == "temp")
        self._pool: list[tuple[np.ndarray, ...]] = []

    def take_temporaries(self) -> tuple[np.ndarray, ...]:
        """Buffers for the temporaries (in :attr:`temporary_slots` order), reused between
        calls: a fresh multi-megabyte buffer costs a page fault per 4 KiB on first touch
        (measured: about 4 ms of the 7 ms an interpolation call took at n=8, E=2048).
        A call takes a set and gives it back when done, so concurrent calls never share
        one (the pool grows to as many sets as calls run at once)."""
        try:
            return self._pool.pop()
        except IndexError:
            return tuple(np.empty(self.shapes[n], dtype=self.dtype) for n in self.temporary_slots)

    def give_back_temporaries(self, buffers: tuple[np.ndarray, ...]) -> None:
        self._pool.append(buffers)

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        """Run with validated inputs; write results into ``targets`` where given.

        Read-only inputs are used in place when they already are C-contiguous arrays of
        the kernel's dtype (copied otherwise); every other buffer is fresh or an ``out=``
        target, so nothing the caller passed as an input is ever written.

        A target that is C-contiguous and shares no memory with an input or another
        target is the buffer itself (written in place); any other target receives a copy
        after the run.  The in-place idiom ``k(x=x, out={"x": x})`` (paper 002's
        ``x = s * x``) passes the same array as a variable's input and its target: that
        array is the buffer, already holding the input, as long as no *other* input
        shares its memory.  (Calls without anything unusual take the generated fast path
        of :mod:`.fastcall` instead.)"""
        dtype = self.dtype
        buffers = self._empty[:]
        pool = self.take_temporaries()
        for position, n in enumerate(self.temporary_slots):
            buffers[n] = pool[position]
        for n, name in self._inputs:
            given = supplied[name]
            if given.dtype != dtype or not given.flags.c_contiguous:
                given = np.ascontiguousarray(given, dtype)
            buffers[n] = given
        direct: dict[str, np.ndarray] = {}
        for n, name, shape, role in self._others:
            given = supplied.get(name)
            target = targets.get(name) if targets else None
            if (target is not None and target.flags.c_contiguous and target.dtype == dtype
                    and _disjoint(target, supplied, name, direct)):
                direct[name] = buffers[n] = target  # written in place
                if given is not None:
                    if given is not target:  # k(x=x, out={"x": x}) holds its input already
                        np.copyto(target, given)
                elif role == "optional":
                    target.fill(np.nan)
            elif given is not None:
                buffers[n] = np.array(given, dtype=dtype, order="C", copy=True)
            elif role == "optional":
                buffers[n] = np.full(shape, np.nan, dtype=dtype)
            else:
                buffers[n] = np.empty(shape, dtype=dtype)
        self.execute(buffers, threads)
        self.give_back_temporaries(pool)
        results = {}
        for n, name in self.results:
            target = targets.get(name)
            if target is not None and direct.get(name) is not target:
                np.copyto(target, buffers[n])
                results[name] = target
            else:
                results[name] = buffers[n]
        return results

    def execute(self, buffers: list[np.ndarray], threads: int = 0) -> None:
        """Run every step on ``buffers`` (one C-contiguous array of the right dtype per slot)."""
        if self._only is not None:  # one C function: the common small-kernel case, kept short
            function, slots = self._only
            from_buffer = self.ffi.from_buffer
            function(*[from_buffer(buffers[s]) for s in slots], threads)
            return
        for step in self.steps:
            if isinstance(step, _CStep):
                step.function(*[self.ffi.from_buffer(buffers[s]) for s in step.slots], threads)
            elif isinstance(step, (_GemmStep, _ModeStep)):
                with np.errstate(all="ignore"):
                    step.run(buffers)
            else:
                store = {name: buffers[n] for n, name in enumerate(self.names) if name != loops.SCRATCH}
                with np.errstate(all="ignore"):
                    value = step.kernel.function(store)[self.names[step.target]]
                np.copyto(buffers[step.target], value)
