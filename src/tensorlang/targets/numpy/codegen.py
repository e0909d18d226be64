"""The NumPy target's code: a schedule's steps as generated Python over a store (a dict):
its matmul steps as the ``numpy.matmul`` calls the C target makes (:mod:`.matmul`), the
statements of the others as einsum code over labelled arrays (docs/ein.md, "The NumPy
back end" has the rules).  ``Kernel.code("numpy")`` shows the source that runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import opt_einsum

from ... import limits
from ...analysis.inplace import compatible
from ...ein import ir
from ...ein.forms import monomial
from ...ein.index import Affine, gather, has_affine, positions, variables_of
from ...ein.names import Fresh, all_names, binders_apart, free_indices, rename_bound
from ...ein.printer import statement_to_text
from ...schedule.plan import BufferPlan, Schedule
from ...schedule.steps import GemmStep, LoopStep, MatmulStep, ModeStep, statement_of
from ...semantics.values import FUNCTIONS, REDUCTIONS, controlled_division, levi_civita, powers
from . import nan_safe
from .matmul import MatmulIntoStore

#: The generated calls that are elementwise ufuncs (``out=`` may name the target).
_UFUNC_CALLS = ("_np.add(", "_np.subtract(", "_np.multiply(", "_np.negative(", "_fn[")


@dataclass
class _Statement:
    """Code generation for one statement: lines of Python, constants, fresh names."""

    codegen: "_Codegen"
    extents: dict[str, int]
    lines: list[str] = field(default_factory=list)

    def temp(self, expr: str) -> str:
        name = f"_t{self.codegen.counter}"
        self.codegen.counter += 1
        self.lines.append(f"    {name} = {expr}")
        return name

    def into_target(self, value: str, target: str) -> bool:
        """Make the last line, where it is one elementwise ufunc call computing ``value``, write
        the target's own array (``out=``, 002's ev-c-stmt); False where it is not."""
        line = self.lines[-1] if self.lines else ""
        head = f"    {value} = "
        if not line.startswith(head) or not line.endswith(")") or not line[len(head):].startswith(_UFUNC_CALLS):
            return False
        self.lines[-1] = line[:-1] + f", out=_into(_s, {target!r}, _dtype))"
        return True


class _Codegen:
    def __init__(self, dtype: np.dtype, chunk: int = 0):
        self.dtype = np.dtype(dtype)
        self.chunk = chunk  # the step's: longer products contracted this many operands at a time (0: whole)
        self.constants: list[object] = []
        self.counter = 0
        # no intermediate of a contraction path may exceed the memory budget
        self.memory_limit = limits.memory_budget_bytes() // self.dtype.itemsize

    def constant(self, value: object) -> str:
        if isinstance(value, np.ndarray):  # a statement may bind it; nothing may write it
            value.flags.writeable = False
        self.constants.append(value)
        return f"_c[{len(self.constants) - 1}]"

    # -------------------------------------------------------------- statements
    def statement(self, stmt: ir.Statement, reason: str | None = None) -> list[str]:
        # no two sums may bind one name, so that products under several sums flatten into one contraction
        here = {name for name, _ in stmt.index}
        body = stmt.body if binders_apart(stmt.body, here | free_indices(stmt.body)) else \
            rename_bound(stmt.body, Fresh(all_names(stmt.body) | here), set(here))
        extents = dict(stmt.index)
        for node in ir.nodes(body):  # a sum's, a reduction's, a concat's items' variables
            extents.update(dict(ir.binders(node)))
        st = _Statement(self, extents)
        st.lines.append(f"    # {_comment(stmt)}")
        if reason is not None:  # the schedule's: why this statement is no matmul step
            st.lines.append(f"    # {reason}")
        value, labels = self.emit(body, st)
        target = [name for name, _ in stmt.index]
        order = tuple(target.index(name) for name in labels)  # typing: free labels are all on the left
        # transpose to the target's order of the labels present, then broadcast the rest
        perm = tuple(sorted(range(len(labels)), key=lambda a: order[a]))
        present = tuple(sorted(order))
        shape = tuple(n for _, n in stmt.index)
        reads = "(" + "".join(f"_s[{name!r}], " for name in stmt.reads) + ")"
        rest = f"{perm}, {present}, {shape}, _dtype, {reads})"
        # written in place when the target's array is the store's own (_into)
        kept = tuple(labels) == tuple(target) and compatible(stmt).in_place and st.into_target(value, stmt.target)
        st.lines.append(f"    _s[{stmt.target!r}] = " + (f"_kept({value}, _s, {stmt.target!r}, {rest}" if kept else f"_finish_at({value}, {rest}"))
        return st.lines

    def matmul(self, step: MatmulStep, buffers: BufferPlan) -> list[str]:
        """A schedule's GEMM or mode-product step: numpy.matmul into a fresh array."""
        # the statement's own names: the store keeps each temporary under its name (a slot may hold several)
        stmt = statement_of(step)
        by_slot = {buffers.slot_of[name]: name for name in stmt.reads}
        call = MatmulIntoStore(step, tuple((slot, by_slot[slot]) for slot in step.operands), buffers.shapes[step.target])
        return [f"    # {statement_to_text(stmt)}", f"    # {step.reason}",
                f"    _s[{stmt.target!r}] = {self.constant(call)}(_s, _dtype)"]

    def emit(self, e: ir.Expr, st: _Statement) -> tuple[str, tuple[str, ...]]:
        """Python code for ``e`` as a labelled array (code, axis labels); error[too-large] here
        for an array past the memory budget."""
        code, labels = self._emit(e, st)
        self.bounded([st.extents[x] for x in labels], "an intermediate array")
        return code, labels

    def bounded(self, shape: list[int], what: str) -> None:
        limits.check_allocation(math.prod(shape), self.dtype.itemsize, f"{what} of the numpy target (the C target "
                                "computes it point by point)")

    def _emit(self, e: ir.Expr, st: _Statement) -> tuple[str, tuple[str, ...]]:
        if isinstance(e, (ir.BinOp, ir.Sum, ir.Neg)) and not monomial(e).lone:
            return self.product(e, st)
        if isinstance(e, ir.Tensor):
            return self.access(f"_s[{e.name!r}]", e.indices, st)
        if isinstance(e, ir.Epsilon):
            return self.access(self.constant(levi_civita(len(e.indices)).astype(self.dtype)), e.indices, st)
        if isinstance(e, ir.Const):
            return f"_dtype.type({e.value!r})", ()
        if isinstance(e, ir.Delta):
            return self.delta(e, st)
        if isinstance(e, (ir.Apply, ir.Neg)):
            arg, labels = self.emit(e.arg, st)
            return st.temp(f"{f'_fn[{e.fn!r}]' if isinstance(e, ir.Apply) else '_np.negative'}({arg})"), labels
        if isinstance(e, ir.Reduce):  # prod(k), max(k), min(k): opt_einsum only sums
            body, labels = self.emit(e.body, st)
            reduced = tuple(name for name, _ in e.index)
            extents = {name: st.extents[name] for name in labels + reduced}
            ufunc = REDUCTIONS[e.op].ufunc.__name__
            code = st.temp(f"_reduce(_np.{ufunc}, {body}, {labels!r}, {reduced!r}, {extents!r})")
            return code, tuple(x for x in labels if x not in reduced)
        if isinstance(e, (ir.Stack, ir.Concat)):  # items side by side, exactly
            emitted = [self.emit(item, st) for item in e.items]
            own = {name for name, _ in e.parts} if isinstance(e, ir.Concat) else set()
            common = tuple(dict.fromkeys(x for _, ls in emitted for x in ls if x not in own))
            extents = {name: st.extents[name] for name in common}
            args = ", ".join(code for code, _ in emitted)
            item_labels = tuple(ls for _, ls in emitted)
        if isinstance(e, ir.Stack):  # along the stack index
            index = e.index if isinstance(e.index, str) else None
            self.bounded([len(e.items), *extents.values()], "a stack")
            code = st.temp(f"_stack([{args}], {item_labels!r}, {common!r}, {index!r}, {extents!r}, _dtype)")
            if index is None:  # an affine selector: the stacked items gathered at its positions
                return self.access(code, (e.index,) + common, st)
            if index in common:
                return code, tuple(x for x in common if x != index) + (index,)
            return code, (index,) + common
        if isinstance(e, ir.Concat):  # along the index's axis
            extents |= dict(e.parts)
            parts = tuple(name for name, _ in e.parts)
            self.bounded([sum(k for _, k in e.parts), *(extents[x] for x in common)], "a direct sum (concat)")
            code = st.temp(f"_concat([{args}], {item_labels!r}, {common!r}, {parts!r}, {extents!r}, _dtype)")
            return self.access(code, common + (e.index,), st)
        if isinstance(e, ir.BinOp):  # + - / (products were handled above)
            op = {"+": "_np.add", "-": "_np.subtract", "/": "_cdiv"}[e.op]
            return self.binary(op, self.emit(e.left, st), self.emit(e.right, st), st)
        raise TypeError(f"not an EIN expression: {e!r}")  # pragma: no cover

    def access(self, array: str, indices: tuple[ir.Index, ...], st: _Statement) -> tuple[str, tuple[str, ...]]:
        """T_α: fixed positions select, repeated variables take a diagonal, affine indices gather."""
        if has_affine(indices):
            labels = variables_of(indices)
            extents = {name: st.extents[name] for name in labels}
            return st.temp(f"_gather({array}, {self.constant(indices)}, {labels!r}, {extents!r})"), labels
        if any(isinstance(i, int) for i in indices):
            picks = ", ".join(str(i - 1) if isinstance(i, int) else ":" for i in indices)
            array = f"{array}[{picks},]" if len(indices) == 1 else f"{array}[{picks}]"
        names = tuple(i for i in indices if isinstance(i, str))  # the rest: no affine index is left
        labels = tuple(dict.fromkeys(names))
        if len(labels) < len(names):
            letters = {name: opt_einsum.get_symbol(n) for n, name in enumerate(labels)}
            sub = "".join(letters[i] for i in names) + "->" + "".join(letters[i] for i in labels)
            # past 52 labels numpy's einsum has no letters: the target's own einsum (nan_safe)
            array = st.temp(f"{'_np' if len(labels) <= len(nan_safe.LETTERS) else '_nan_safe'}.einsum({sub!r}, {array})")
        return array, labels

    def delta(self, e: ir.Delta, st: _Statement) -> tuple[str, tuple[str, ...]]:
        a, b = e.first, e.second
        self.bounded([st.extents[x] for x in variables_of((a, b))], "a δ")  # a constant, made now
        if a == b or (isinstance(a, int) and isinstance(b, int)):
            return f"_dtype.type({float(a == b)!r})", ()
        if isinstance(a, Affine) or isinstance(b, Affine):
            labels = variables_of((a, b))
            first, second = positions((a, b), labels, st.extents)
            return self.constant(np.equal(first, second).astype(self.dtype)), labels
        if isinstance(a, str) and isinstance(b, str):
            return self.constant(np.eye(st.extents[a], st.extents[b], dtype=self.dtype)), (a, b)
        var, fixed = (a, b) if isinstance(a, str) else (b, a)
        if not isinstance(var, str) or not isinstance(fixed, int):  # the cases above leave one of each
            raise TypeError(f"not a delta of a variable and a position: {e!r}")
        return self.constant((np.arange(st.extents[var]) == fixed - 1).astype(self.dtype)), (var,)

    def binary(self, op: str, a: tuple, b: tuple, st: _Statement) -> tuple[str, tuple[str, ...]]:
        """``op(a, b)`` of two labelled arrays (code, labels), aligned to their labels together (``a``'s first)."""
        labels = a[1] + tuple(x for x in b[1] if x not in a[1])
        return st.temp(f"{op}({self.align(a[0], a[1], labels, st)}, {self.align(b[0], b[1], labels, st)})"), labels

    def align(self, array: str, labels: tuple[str, ...], target: tuple[str, ...], st: _Statement) -> str:
        """Reorder ``array``'s axes to follow ``target`` and add length-1 axes for the rest."""
        if labels == target or not labels:
            return array
        perm = tuple(sorted(range(len(labels)), key=lambda a: target.index(labels[a])))
        shape = tuple(st.extents[name] if name in labels else 1 for name in target)
        return st.temp(f"_np.transpose({array}, {perm}).reshape({shape})")

    def product(self, e: ir.Expr, st: _Statement) -> tuple[str, tuple[str, ...]]:
        """A product of factors under sums: one contraction on opt_einsum's path (a product that
        is no sum multiplied as written, :meth:`as_written`; docs/ein.md, "The NumPy back end")."""
        if isinstance(e, ir.Neg) or (isinstance(e, ir.BinOp) and e.op == "*"):
            return self.as_written(e, st)
        form = monomial(e)  # one product of factors under sums (bound names are unique)
        sign, factors = form.flat()
        summed = [name for name, _ in form.sums]
        in_order = [self.emit(factor, st) for factor in factors]  # (code, labels) of each factor
        operands, scalars = [f for f in in_order if f[1]], [f for f in in_order if not f[1]]
        used = {name for _, labels in operands for name in labels}
        scale = float(sign)
        for name in summed:
            if name not in used:  # Σ_k of something that does not depend on k
                scale *= st.extents[name]
        free = tuple(dict.fromkeys(n for _, labels in operands for n in labels if n not in summed))
        # the schedule's chunk (steps.EINSUM_CHUNK): chunk by chunk, keeping the labels still needed
        while self.chunk and len(operands) > self.chunk:
            chunk, rest = operands[:self.chunk], operands[self.chunk:]
            needed = set(free) | {x for _, ls in rest for x in ls}
            keep = tuple(dict.fromkeys(x for _, ls in chunk for x in ls if x in needed))
            operands = [(self.contract(chunk, keep, st), keep)] + rest
        contracted = bool(set(summed) & used)
        if operands and (len(operands) > 1 or scalars) and not contracted:
            # an elementwise or outer product: numpy.multiply, left to right as written
            code = ""
            for c, labels in in_order:
                aligned = self.align(c, labels, free, st) if labels else c
                code = st.temp(f"_np.multiply({code}, {aligned})") if code else aligned
            scalars = []
        elif operands:
            code = self.contract(operands, free, st)
        else:
            code = "_dtype.type(1.0)"
        for c, _ in scalars:
            code = st.temp(f"_np.multiply({code}, {c})")
        if scale != 1.0:
            code = st.temp(f"_np.multiply({code}, _dtype.type({scale!r}))")
        if summed and (scalars or scale != 1.0 or not contracted):  # a sum starts from +0: never -0
            code = st.temp(f"_np.add({code}, _dtype.type(0.0))")
        return code, free

    def as_written(self, e: ir.BinOp | ir.Neg, st: _Statement) -> tuple[str, tuple[str, ...]]:
        """A product that is no sum, multiplied as its parentheses say: no numbers gathered into
        one scale, no einsum adding it to a +0 (docs/ein.md)."""
        steps: list[ir.Expr | None] = []  # down the left spine: right operands, None for a negation
        node: ir.Expr = e
        while isinstance(node, ir.Neg) or (isinstance(node, ir.BinOp) and node.op == "*"):
            steps.append(None if isinstance(node, ir.Neg) else node.right)
            node = node.arg if isinstance(node, ir.Neg) else node.left
        code, labels = self.emit(node, st)
        for step in reversed(steps):  # innermost first: a chain of n factors in one pass
            if step is None:
                code = st.temp(f"_np.negative({code})")
                continue
            code, labels = self.binary("_np.multiply", (code, labels), self.emit(step, st), st)
        return code, labels

    def contract(self, operands: list[tuple[str, tuple[str, ...]]], out: tuple[str, ...], st: _Statement) -> str:
        """One contract_expression over labelled operands, giving the labels ``out``; labels only one
        operand reads are summed over it first (docs/optimizer.md, "Reassociation": an infinite factor
        meets the sum the source wrote, not each of its terms)."""
        operands = list(operands)
        for n, (code, ls) in enumerate(operands if len(operands) > 1 else ()):
            kept = tuple(x for x in dict.fromkeys(ls) if x in out or any(x in o for m, (_, o) in enumerate(operands) if m != n))
            if len(kept) < len(set(ls)):
                operands[n] = (self.contract([(code, ls)], kept, st), kept)
        letters = {name: opt_einsum.get_symbol(n)
                   for n, name in enumerate(dict.fromkeys(x for _, ls in operands for x in ls))}
        sub = ",".join("".join(letters[x] for x in ls) for _, ls in operands) + "->" + "".join(letters[x] for x in out)
        if len(operands) == 1 and sub.split("->")[0] == sub.split("->")[1]:
            return operands[0][0]
        dims = [tuple(st.extents[x] for x in ls) for _, ls in operands]
        expr = opt_einsum.contract_expression(sub, *dims, optimize="auto", memory_limit=self.memory_limit)
        path = ", ".join(str(tuple(step[0])) for step in expr.contraction_list) if hasattr(expr, "contraction_list") else ""
        # backend: numpy's tensordot, multiplied by matmul, which keeps ⊥ · 0 = ⊥ (nan_safe.py)
        code = st.temp(f"{self.constant(expr)}({', '.join(c for c, _ in operands)}, backend={nan_safe.BACKEND!r})"
                       f"  # {sub}")
        if path:
            st.lines[-1] += f"  path {path}"
        return code


def _reduce(ufunc, value, labels, reduced, extents):
    """Fold a labelled array along ``reduced`` with ``ufunc`` (EIN ``Reduce``); a label the
    value does not depend on is not iterated (max, min: the value; product: its power)."""
    value = np.asarray(value)
    count = math.prod(extents[x] for x in reduced if x not in labels)
    if count > 1 and ufunc is np.multiply:
        value = powers(value, count)
    reduced = tuple(x for x in reduced if x in labels)
    if not reduced:
        return value
    kept = [x for x in labels if x not in reduced]
    order = kept + [x for x in labels if x in reduced]
    if labels:
        value = np.transpose(value, [labels.index(x) for x in order])
    return ufunc.reduce(value, axis=tuple(range(len(kept), len(kept) + len(reduced))))


def _broadcast(value, labels, order, extents, dtype):
    """A labelled item with its axes in ``order``, broadcast over the rest (copied into its
    own slice by the caller: a NaN or inf of one item never reaches another)."""
    value = np.asarray(value, dtype=dtype)
    if labels:
        value = np.transpose(value, [labels.index(x) for x in order if x in labels])
    value = value.reshape([extents[x] if x in labels else 1 for x in order])
    return np.broadcast_to(value, [extents[x] for x in order])


def _stack(items, item_labels, common, index, extents, dtype):
    """EIN ``Stack``: the items broadcast over ``common`` along a new first axis (the diagonal
    where an item depends on ``index``)."""
    stacked = np.stack([_broadcast(v, labels, common, extents, dtype) for v, labels in zip(items, item_labels)])
    if index in common:  # labels: common without index, then index
        return np.diagonal(stacked, axis1=0, axis2=1 + common.index(index))
    return stacked


def _concat(items, item_labels, common, parts, extents, dtype):
    """EIN ``Concat``: item k broadcast over ``common`` and its own variable ``parts[k]``,
    the items joined along a last axis."""
    return np.concatenate([_broadcast(v, labels, common + (own,), extents, dtype)
                           for v, labels, own in zip(items, item_labels, parts)], axis=-1)


def _finish_at(value, perm, present, shape, dtype, reads):
    """Put the result's axes in the target's order and broadcast the missing ones."""
    value = np.asarray(value)
    if perm:
        value = np.transpose(value, perm)
    value = value.reshape(tuple(shape[a] if a in present else 1 for a in range(len(shape))))
    value = np.broadcast_to(value, shape)
    if (value.dtype != dtype or not value.flags.c_contiguous or not value.flags.writeable
            or any(np.may_share_memory(value, r) for r in reads)):
        return np.array(value, dtype=dtype, order="C", copy=True)
    return value


def _into(store, name, dtype):
    """The target's array for a ufunc's ``out=``, or None where the kernel may not write it
    (only the store's own C-contiguous, writable, unshared arrays)."""
    array = store.get(name)
    return array if (isinstance(array, np.ndarray) and array.dtype == dtype and array.flags.c_contiguous
                     and array.flags.writeable and array.base is None) else None


def _kept(value, store, name, perm, present, shape, dtype, reads):
    """The target after an in-place ufunc: its own array when ``out=`` took it, else the
    fresh result placed as :func:`_finish_at` places any."""
    return value if value is store.get(name) else _finish_at(value, perm, present, shape, dtype, reads)


@dataclass
class NumpyKernel:
    """Generated source and the function it defines."""

    source: str
    function: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]

    def __call__(self, store: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        with np.errstate(all="ignore"):  # inf and NaN are values here (⊥ is NaN), not warnings
            return self.function(dict(store))


def compile_numpy(program: ir.Program, dtype, schedule: Schedule) -> NumpyKernel:
    """The Python function that runs ``program``'s schedule: matmul steps as ``numpy.matmul``,
    every other step's statements as einsum code (which step, the schedule's choice)."""
    gen = _Codegen(dtype)
    lines = ["def kernel(_s):"]
    for step in schedule.steps:
        if isinstance(step, (GemmStep, ModeStep)):
            lines.extend(gen.matmul(step, schedule.buffers))
        else:
            gen.chunk = getattr(step, "chunk", 0)  # the schedule's (LoopStep, EinsumStep)
            pairs = zip(step.statements, step.reasons) if isinstance(step, LoopStep) else ((step.statement, step.reason),)
            for stmt, reason in pairs:
                lines.extend(gen.statement(stmt, reason))
    return _define(gen, lines)


def compile_einsum(statements: tuple[ir.Statement, ...], dtype=np.float64, chunk: int = 0) -> NumpyKernel:
    """The Python function that runs ``statements`` through einsum code (``chunk``: as the
    schedule's step says, :data:`~...schedule.steps.EINSUM_CHUNK`)."""
    gen = _Codegen(dtype, chunk)
    return _define(gen, ["def kernel(_s):", *(line for stmt in statements for line in gen.statement(stmt))])


def _define(gen: "_Codegen", lines: list[str]) -> NumpyKernel:
    lines.append("    return _s")
    source = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = {  # the generated code's globals (inf: repr() of a literal beyond the float range)
        "_np": np, "_c": gen.constants, "_cdiv": controlled_division, "_fn": {name: f.ufunc for name, f in FUNCTIONS.items()},
        "_finish_at": _finish_at, "_into": _into, "_kept": _kept, "_reduce": _reduce, "_stack": _stack, "_concat": _concat,
        "_gather": gather, "_nan_safe": nan_safe, "_dtype": gen.dtype, "inf": float("inf")}
    exec(compile(source, "<tensorlang numpy kernel>", "exec"), namespace)  # noqa: S102 - our own generated code
    return NumpyKernel(source, namespace["kernel"])


def _comment(stmt) -> str:
    """The statement as the generated code's comment: its text, or a note where the text
    is too deep for the printer's recursion (a product of hundreds of operands)."""
    try:
        return statement_to_text(stmt)
    except RecursionError:
        return f"{stmt.target} = (a statement nested too deeply to print)"
