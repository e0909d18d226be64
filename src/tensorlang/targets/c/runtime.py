"""The C target's kernel: a schedule of generated C functions (:mod:`.codegen`, built by
:mod:`.build`) and BLAS steps (from C, else ``numpy.matmul``) over one set of buffers;
docs/c-backend.md, "Calls", says how a call makes, reuses and hands back its buffers."""

from __future__ import annotations

import math
from typing import Callable, cast

import numpy as np

from ..numpy.codegen import compile_einsum
from ..numpy.matmul import run_matmul
from . import build as c_build
from ...machine import blas as c_blas
from . import callext
from .codegen import Generated, check_status
from .padded import aligned_zeros, as_padded


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays may share memory (two that own their data cannot: no bounds check)."""
    return a is b or ((a.base is not None or b.base is not None) and np.may_share_memory(a, b))


def _disjoint(target: np.ndarray, supplied: dict, name: str, direct: dict) -> bool:
    """``target`` shares memory with no input but ``name``'s own being it (in place) and no other target."""
    return not any(_overlap(a, target) for key, a in supplied.items() if not (key == name and a is target)) \
        and not any(_overlap(b, target) for b in direct.values())


def _in_place(array: np.ndarray, shape: tuple[int, ...], pad: int, dtype: np.dtype) -> np.ndarray | None:
    """``array`` as the kernel's buffer without a copy, or None: itself where plain
    (:func:`.callext.fits`; unpadded), padded the buffer behind a :func:`.padded.padded_empty` view."""
    if pad == 1:
        return array if callext.fits(array, shape, dtype) else None
    return as_padded(array, shape, pad, dtype) if array.base is not None else None


def _blank(storage: tuple[int, ...], pad: int, dtype: np.dtype) -> np.ndarray:
    """A fresh buffer: uninitialised unpadded, aligned and zero padded (000 §4)."""
    return np.empty(storage, dtype) if pad == 1 else aligned_zeros(storage, pad, dtype)


def _c_runner(ffi, function, slots: tuple[int, ...], inputs: tuple[int, ...] = ()) -> Callable[..., None]:
    """A runner of one loaded C function over its ``slots``' buffers, then each inout slot's
    input (``sources``' array where given, else the buffer itself)."""
    assert ffi is not None, "a C function is loaded with its ffi"
    # cffi's own from_buffer, without ffi.from_buffer's Python wrapper (a microsecond a call)
    fb, char = ffi._backend.from_buffer, ffi.typeof("char[]")

    def run_c(buffers, threads, sources=None):
        given = [fb(char, buffers[s] if sources is None or s not in sources else sources[s], False) for s in inputs]
        status = function(*[fb(char, buffers[s], False) for s in slots], *given, threads)
        if status:  # a heap block not had (NO_MEMORY), BLAS not set up: raises
            check_status(status)
    return run_c


def _pop(pool: list[dict[int, np.ndarray]]) -> dict[int, np.ndarray]:
    """A set of kept buffers, or an empty one (pop, not test-then-pop: threads share the pool)."""
    try:
        return pool.pop()
    except IndexError:
        return {}


class CKernel:
    """A compiled program: the generated source, the steps, and how to run them."""

    _store_hook: Callable[[dict[str, np.ndarray]], None] | None = None

    @property
    def store_hook(self) -> Callable[[dict[str, np.ndarray]], None] | None:
        """A test's hook, called after each padded run with every slot's padded buffer by name;
        while set, the C caller declines every call."""
        return self._store_hook

    @store_hook.setter
    def store_hook(self, hook: Callable[[dict[str, np.ndarray]], None] | None) -> None:
        self._store_hook = hook
        if self.c_call is not None:
            self.c_call.off = hook is not None

    def __init__(self, generated: Generated, pad: int = 1):
        self.dtype = np.dtype(generated.schedule.dtype)
        #: 000 §4: buffers padded to multiples of ``pad`` (1: none), see :meth:`run`
        self.pad = pad
        self.compiler = c_build.require_compiler()
        self.source = generated.source
        self.schedule = generated.schedule
        self.steps = self.schedule.steps  # in order
        self.names = self.schedule.buffers.names
        self.shapes = self.schedule.buffers.shapes
        self.ffi = self.lib = None
        functions = {}
        #: the one C function running the whole schedule, with its slots, or None
        self._only: tuple | None = None
        if generated.functions:
            self.ffi, lib = c_build.build_and_load(self.source, self.compiler, generated.declarations)
            if generated.blas:  # the pointers, before any call (the same each time: cached per process)
                found = c_blas.find(self.dtype)
                assert found is not None, "a source calls BLAS only where blas.find found it"
                lib.tl_set_blas(*(self.ffi.cast("void *", f) for f in (found.gemm, found.gemv, found.syrk)), found.kind)
            #: the loaded library (a field probe calls its probe step's general entry, targets/c/probe.py)
            self.lib = lib
            functions = {c.step: (getattr(lib, c.name), c.slots, c.inputs) for c in generated.functions}
            if generated.entry is not None:  # several steps, all in C: tl_kernel runs them
                self._only = (getattr(lib, generated.entry.name), generated.entry.slots, generated.entry.inputs)
            elif len(self.steps) == 1:
                self._only = functions[0]
        self._plan()
        #: how :meth:`execute` runs the schedule: the one C function, else a runner per step
        self._runners = (_c_runner(self.ffi, *self._only),) if self._only is not None else \
            tuple(self._runner(n, step, functions) for n, step in enumerate(self.steps))
        roles = self._roles = {b.name: b.role for b in self.schedule.buffers.buffers}
        #: the C-level call path (:mod:`.callext`), tried first; None where it cannot take the kernel
        self.c_call = callext.caller(self, roles)

    def ordered_call(self, order: tuple[str, ...], threads: int = 0):
        """``ordered(*arrays)``, which takes the inputs named in ``order`` and returns the one
        result, or None where an array is not plain: the C caller's method, else the same
        call in Python (:meth:`ordered_in_python`; the einsum cache's hits); None where neither can be had."""
        caller = callext.caller(self, self._roles, order)
        if caller is None:
            return self.ordered_in_python(order, threads)
        caller.threads = threads
        return caller.ordered

    def ordered_in_python(self, order: tuple[str, ...], threads: int = 0):
        """``Caller.ordered`` in Python, for a kernel no ``Caller`` takes (no extension here, too
        many slots): each array checked by :func:`.callext.fits` (a name given twice: one object), fresh
        results and temporaries, the one C function through cffi; the first result, or None.
        None where the kernel is not one C function over inputs, results and temporaries."""
        if self._only is None or self.ffi is None or self._only[2] or self.pad > 1:
            return None
        function, slots, _ = self._only
        names, roles = [self.names[s] for s in slots], [self._roles.get(self.names[s]) for s in slots]
        shapes = [tuple(int(k) for k in self.shapes[s]) for s in slots]
        if set(order) != {name for name, role in zip(names, roles) if role == "in"} or "out" not in roles \
                or {"inout", "optional"} & set(roles):
            return None
        checks = [f"ops[{k}] is ops[{order.index(name)}]" if order.index(name) < k
                  else f"fits(ops[{k}], {shapes[names.index(name)]!r}, dtype)" for k, name in enumerate(order)]
        made = [f"    b{n} = ops[{order.index(name)}]" if name in order else f"    b{n} = empty({shape!r}, dtype)"
                for n, (name, shape) in enumerate(zip(names, shapes))]
        r, buffers = roles.index("out"), ", ".join(f"fb(char, b{n}, False)" for n in range(len(names)))
        code = "\n".join([f"def ordered(*ops):\n    if len(ops) != {len(order)} or not ({' and '.join(checks)}):",
                          "        return None", *made, f"    status = function({buffers}, {int(threads)})",
                          f"    if status:\n        check_status(status)\n    return b{r}{'[()]' if shapes[r] == () else ''}\n"])
        namespace = {"fits": callext.fits, "dtype": self.dtype, "empty": np.empty, "fb": self.ffi._backend.from_buffer,
                     "char": self.ffi.typeof("char[]"), "function": function, "check_status": check_status}
        exec(compile(code, "<tensorlang ordered call>", "exec"), namespace)  # noqa: S102 - ours
        return namespace["ordered"]

    def _runner(self, n: int, step, functions: dict) -> Callable[[list, int], None]:
        """How :meth:`execute` runs step ``n`` (of the buffers and the threads)."""
        if n in functions:  # a loop step, or a BLAS step printed as C (.blascall)
            return _c_runner(self.ffi, *functions[n])
        # a BLAS step in Python: its runs (the schedule's choice, schedule.gemm.runs) says how
        assert step.runs in ("opt_einsum", "matmul", "matmul-views"), f"step {n} runs {step.runs} but has no C function"
        if step.runs == "opt_einsum":
            kernel = compile_einsum((step.statement,), self.dtype, step.chunk)
            target, name = step.target, step.statement.target
            # the statement's own variables only (never a fused loop's locals, which have no buffer)
            slot_of = {var: self.schedule.buffers.slot_of[var] for var in (step.statement.target, *step.statement.reads)}

            def run_einsum(buffers, threads):  # (the kernel's call ignores floating-point warnings)
                np.copyto(buffers[target], kernel({var: buffers[s] for var, s in slot_of.items()})[name])
            return run_einsum

        # matmul-views: on the padded buffers' views (BLAS takes the padded row stride as lda)
        used, regions = (step.target, *step.operands), self._regions if step.runs == "matmul-views" else None

        def run_blas(buffers, threads):
            with np.errstate(all="ignore"):
                run_matmul(step, buffers if regions is None else {s: buffers[s][regions[s]] for s in used})
        return run_blas

    # ------------------------------------------------------------------ calls
    def _plan(self) -> None:
        """Per slot, how a call makes its buffer (fixed once: small kernels pay for every line)."""
        buffers = self.schedule.buffers
        self.plan = tuple((n, b.name, b.shape, b.role) for n, b in enumerate(buffers.buffers))
        self.temporary_slots = buffers.pooled
        slot_of = buffers.slot_of
        #: alias slots (schedule/plan.py, Buffer.alias): views of their owner's buffer
        self._alias_of = {n: slot_of[b.alias] for n, b in enumerate(buffers.buffers) if b.alias}
        self._inputs = tuple((n, name) for n, name, _, role in self.plan if role == "in")
        self._others = tuple(entry for entry in self.plan if entry[3] not in ("in", "temp"))
        self.results = tuple((n, name) for n, name, _, role in self.plan if role in ("out", "inout", "optional"))
        self._empty: list[np.ndarray | None] = [None] * len(self.plan)  # run() fills every slot
        self._pool: list[tuple[np.ndarray, ...]] = []
        # run(): each slot's (unpadded) region and shape in memory, kept input copies and result buffers
        self._regions = tuple(tuple(slice(0, k) for k in shape) if self.pad > 1 else ... for shape in self.shapes)
        self._storage = buffers.storage_shapes
        self._input_pool: list[dict[int, np.ndarray]] = []
        self._result_pool: list[dict[int, np.ndarray]] = []

    def take_temporaries(self) -> tuple[np.ndarray, ...]:
        """The temporaries' buffers, reused between calls (a fresh large buffer pays a page fault
        per 4 KiB: docs/performance.md); each call takes a set of its own and gives it back."""
        try:
            return self._pool.pop()
        except IndexError:
            # padded: every temporary its own buffer (its padding stays zero); unpadded, aliases share
            aliased = self._alias_of if self.pad == 1 else {}
            made = {n: _blank(self._storage[n], self.pad, self.dtype) for n in self.temporary_slots if n not in aliased}
            for n, owner in aliased.items():  # 002 Fig. 20 by size: a view of the owner's memory
                made[n] = made[owner].reshape(-1)[:math.prod(self.shapes[n])].reshape(self.shapes[n])
            return tuple(made[n] for n in self.temporary_slots)

    def run(self, supplied: dict[str, np.ndarray], targets: dict[str, np.ndarray], threads: int = 0) -> dict:
        """Run with validated inputs, results into ``targets`` where given (the general path;
        docs/c-backend.md, "Calls", has which arrays are used in place, copied or kept)."""
        pad, dtype, shapes, regions, storage = self.pad, self.dtype, self.shapes, self._regions, self._storage
        buffers = self._empty[:]
        pool = self.take_temporaries()
        for position, n in enumerate(self.temporary_slots):
            buffers[n] = pool[position]
        copies = kept = None  # the kept buffers, taken when a call needs one
        for n, name in self._inputs:
            array = supplied[name]
            found = _in_place(array, shapes[n], pad, dtype)
            if found is None:
                copies = _pop(self._input_pool) if copies is None else copies
                found = copies.get(n)
                if found is None:
                    found = copies[n] = _blank(storage[n], pad, dtype)
                found[regions[n]] = array
            buffers[n] = found
        reused: dict[int, np.ndarray] = {}
        direct: dict[str, np.ndarray] = {}
        # unpadded, one C function: the inout slots whose input it takes (codegen.CFunction)
        reads = self._only[2] if self._only is not None and pad == 1 else ()
        sources: dict[int, np.ndarray] = {}
        for n, name, shape, role in self._others:
            given = supplied.get(name)
            target = targets.get(name) if targets else None
            if target is not None:
                buffer = _in_place(target, shape, pad, dtype)
                if buffer is not None and _disjoint(target, supplied, name, direct):
                    direct[name] = target
                else:  # the caller gets a copy, from a buffer kept for the next call
                    kept = _pop(self._result_pool) if kept is None else kept
                    buffer = reused[n] = kept[n] if n in kept else _blank(storage[n], pad, dtype)
            else:
                buffer = _blank(storage[n], pad, dtype)
            if given is not None:
                if given is target and name in direct:  # k(x=x, out={"x": x}) holds it already
                    pass
                elif n in reads:  # the C function reads the input itself: a copy only where it is not
                    plain = callext.fits(given, shape, dtype) and not _overlap(given, buffer)  # plain or overlaps
                    sources[n] = given if plain else np.array(given, dtype=dtype, order="C", copy=True)
                else:
                    buffer[regions[n]] = given
            elif role == "optional":
                buffer[regions[n]] = np.nan
            buffers[n] = buffer
        # every slot is filled now (_plan's roles partition the slots): no None is left
        filled = cast("list[np.ndarray]", buffers)
        if sources:
            cast("Callable[..., None]", self._runners[0])(filled, threads, sources)  # the one C function's (_c_runner)
        else:
            self.execute(filled, threads)
        if self._store_hook is not None:  # tests: the padded store, padding included (Theorem 3)
            self._store_hook({name: filled[n] for n, name in enumerate(self.names)})
        self._pool.append(pool)  # the temporaries, given back
        if copies is not None:
            self._input_pool.append(copies)
        results = {}
        for n, name in self.results:
            target = targets.get(name) if targets else None
            if target is not None and direct.get(name) is target:
                results[name] = target  # written in place
                continue
            view = filled[n][regions[n]] if pad > 1 else filled[n]  # (padded 0-d: a numpy scalar)
            if target is not None:
                np.copyto(target, view)
                view = target
            results[name] = view
        if reused:  # result buffers copied out to out= targets: kept for the next call
            self._result_pool.append(reused)
        return results

    def execute(self, buffers: list[np.ndarray], threads: int = 0) -> None:
        """Run every step on ``buffers`` (one C-contiguous array of the right dtype per slot)."""
        for run in self._runners:
            run(buffers, threads)

