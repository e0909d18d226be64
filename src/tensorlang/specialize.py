"""Kernels for programs with symbolic sizes: a :class:`SymbolicKernel` binds the sizes from
a call's arrays and runs the :class:`~tensorlang.kernel.Kernel` compiled for that binding
(docs/language.md, "Symbolic sizes")."""

from __future__ import annotations

import contextlib
import itertools
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from . import lang, stages, targets
from .targets.dask import batch_verdict, default_batch
from .analysis.cost import program_cost
from .analysis.polynomial import Poly
from .analysis.batch import NotDataParallel
from .analysis.report import symbolic_report
from .errors import Source, TensorLangError, error, guard, is_integer, pointing_into, shown_name, signature_checked
from .kernel import Kernel, Options, ProgramInterface, check_threads, closest, default_threads
from .semantics.sizes import MAX_EXTENT, Sym, poly_of
from .semantics.types import CheckedProgram, show

#: Specialisations a kernel keeps loaded (least recently used first out); the compiled
#: code stays in the disk cache, so an evicted shape costs a cache lookup, not a compile.
MAX_SPECIALIZATIONS = 64

class SymbolicKernel(ProgramInterface):
    """A kernel for every binding of its program's symbolic sizes (docs/api.md: ``k(A=a)``,
    ``k.specialize(n=8)``, ``k.specializations()``)."""

    def __init__(self, language: lang.Language, checked: CheckedProgram, source, options: Options,
                 params: Mapping[str, int] | None = None):
        #: options: those every specialisation is compiled with (its threads: this kernel's)
        self.language, self.options, self.checked, self.source = language, options, checked, source
        #: sizes given at compile time (already bound in ``checked``'s declarations)
        self.params = dict(params or {})
        #: the sizes a binding gives (an extent written as an expression of them,
        #: checked.derived_symbols, follows from them and is checked by the specialisation)
        self.symbols: tuple[str, ...] = checked.symbols
        self._threads = check_threads(options.threads) or default_threads()
        self._kernels: OrderedDict[tuple[int, ...], Kernel] = OrderedDict()
        self._lock = threading.RLock()
        #: the raw shapes of ``_shape_key``'s inputs -> their specialisation (the fast path)
        self._by_shapes: dict[tuple, Kernel] = {}
        self._last: Kernel | None = None
        #: check the inputs' promised structure at each call (``check_structure=True``)
        self.check_structure = False
        self._example: dict[str, str] | None = None  # example_sizes()
        index = {name: n for n, name in enumerate(self.symbols)}
        shapes = checked.context.shapes
        #: per variable that can bind sizes (inputs, then results): its rank and (dimension, symbol number)s
        self._binders: tuple[tuple[str, int, tuple[tuple[int, int], ...]], ...] = tuple(
            (name, len(shapes[name]), tuple((d, index[e.name]) for d, e in enumerate(shapes[name])
                                            if isinstance(e, Sym) and e.name in index))
            for name in (*checked.accepted_inputs, *(r for r in checked.results if r not in checked.accepted_inputs))
            if any(isinstance(e, Sym) for e in shapes[name]))
        determined = {s for name, _, dims in self._binders if name in checked.accepted_inputs for _, s in dims}
        #: the inputs whose shapes determine every size (empty: results' sizes need out=)
        self._shape_key: tuple[str, ...] = (
            tuple(name for name, _, _ in self._binders if name in checked.accepted_inputs)
            if len(determined) == len(self.symbols) else ("\0",))

    # ------------------------------------------------------------ interface
    def _threads_changed(self) -> None:
        for kernel in self._kernels.values():
            kernel.threads = self._threads

    @property
    def backend(self) -> str:
        """The target of the specialisation compiled or looked up last, else the one asked for."""
        with self._lock:
            last = next(reversed(self._kernels.values())) if self._kernels else None
        return last.backend if last is not None else self.options.backend

    @property
    def last_run_seconds(self) -> float | None:
        return self._last.last_run_seconds if self._last is not None else None

    @guard
    def specializations(self) -> list[dict[str, int]]:
        """The bindings compiled and loaded so far, oldest first: ``[{"n": 4}, {"n": 8}]``."""
        with self._lock:  # another thread may be adding one
            return [dict(zip(self.symbols, key)) for key in self._kernels]

    def _html_parts(self) -> tuple[str, str, str]:  # the later stages need the sizes' values
        bound = "; ".join(", ".join(f"{k}={v}" for k, v in b.items()) for b in self.specializations())
        example = ", ".join(f"{s}={v}" for s, v in self.example_sizes().items())
        return (f"sizes {', '.join(self.symbols)} bound from the inputs' shapes at each call (compiled so far: "
                f"{bound or 'none'})", f"k.ir(stage): {', '.join(('ast', *lang.VIEWS))}; the later stages and "
                f"k.code(target) of a specialisation: k.specialize({example})", "")

    def __repr__(self) -> str:
        return (f"<tensorlang.SymbolicKernel {self.source.filename} sizes={','.join(self.symbols)} "
                f"backend={self.backend} dtype={self.dtype.name} specializations={len(self._kernels)}>")

    # ------------------------------------------------------------ running
    def __call__(self, /, *args, out: Mapping[str, np.ndarray] | None = None, **arrays) -> dict[str, np.ndarray]:
        if args:  # inputs by name only, as a Kernel's (its message says how to call)
            raise self._positional(args)
        try:  # the shapes of the inputs that carry sizes, as they come: one tuple, one lookup
            kernel = self._by_shapes.get(tuple([arrays[name].shape for name in self._shape_key]))
        except Exception:  # noqa: BLE001 - a missing input or a list: the general path reports
            kernel = None
        if kernel is None:
            kernel = self._kernels.get(self._fast_key(arrays, out))  # type: ignore[arg-type]
        if kernel is None:
            kernel = self.for_inputs(arrays, out, complete=True)  # (which reports)
        self._last = kernel
        return kernel.runner.call(*kernel._out_variable(arrays, out))

    def _fast_key(self, arrays: dict, out) -> tuple[int, ...] | None:
        """The binding read off plain ndarrays unchecked (the specialisation checks), or None."""
        values = [0] * len(self.symbols)
        try:
            for name, _rank, dims in self._binders:
                value = arrays.get(name)
                if value is None:
                    if out is None or name not in out:
                        continue
                    value = out[name]
                shape = value.shape
                for d, s in dims:
                    if values[s] == 0:
                        values[s] = shape[d]
                    elif values[s] != shape[d]:
                        return None
        except Exception:  # noqa: BLE001 - anything unusual takes the careful path
            return None
        return tuple(values) if all(values) else None

    @guard
    def run(self, inputs: Mapping[str, object], out: Mapping[str, np.ndarray] | None = None,
            compressed: bool = False) -> dict:
        """``k.run({"A": a})``: as :meth:`Kernel.run`."""
        return self.for_inputs(inputs, out, complete=True).run(inputs, out, compressed)

    @guard
    def for_inputs(self, arrays: Mapping[str, object], out=None, complete: bool = False) -> Kernel:
        """The specialisation these arrays bind (:meth:`_binding`), compiled on first use."""
        arrays = self._inputs_dict(arrays)
        kernel = self._specialization(self._binding(arrays, out, complete))
        self._last = kernel
        try:
            shapes = tuple([arrays[name].shape for name in self._shape_key])  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - not plain arrays: no fast entry
            return kernel
        with self._lock:
            if len(self._by_shapes) >= 4 * MAX_SPECIALIZATIONS:
                self._by_shapes.clear()
            self._by_shapes[shapes] = kernel
        return kernel

    def _binding(self, arrays: Mapping[str, object], out=None, complete: bool = False,
                 batch: str | None = None) -> dict[str, int]:
        """Each symbol's value (but ``batch``'s) from the shapes of the inputs, then of ``out=``;
        error[input] where they disagree or bind nothing (a call's, ``complete``: its names first)."""
        found: dict[str, tuple[int, str, int]] = {}  # symbol -> (value, array, dimension)
        given = dict(out) if isinstance(out, Mapping) else {}
        for name, rank, dims in self._binders:
            value = arrays[name] if name in arrays else given.get(name)
            if value is None:
                continue
            shape = _shape_of(value, name)
            if len(shape) != rank:
                declared = show(self.checked.context[name])
                raise self._error(f"{'input' if name in arrays else 'out'} {name!r} has shape {show(shape)} "
                                  f"but is declared {declared}", name)
            for d, s in dims:
                symbol, extent = self.symbols[s], shape[d]
                if symbol == batch:
                    continue
                if symbol in found and found[symbol][0] != extent:
                    value0, array0, dim0 = found[symbol]
                    raise self._error(f"size {symbol!r} is {value0} in {array0!r} (dimension {dim0 + 1}) but "
                                      f"{extent} in {name!r} (dimension {d + 1}); every use of {symbol!r} "
                                      "must have one value", name)
                if extent < 1:
                    raise self._error(f"size {symbol!r} would be {extent} from {name!r} (dimension {d + 1}); "
                                      "sizes are positive", name)
                found.setdefault(symbol, (extent, name, d))
        if missing := [s for s in self.symbols if s not in found and s != batch]:
            if complete:  # the arrays of a call: a misspelt or forgotten input is the cause
                self._check_names(arrays, ("out",))
            raise self._unbindable(missing[0], specialize=batch is None)
        return {s: found[s][0] for s in self.symbols if s != batch}

    def _unbindable(self, free: str, specialize: bool = True) -> TensorLangError:
        """error[input]: no array given determines ``free``; how to give it."""
        users = [n for n, shape in self.checked.context.shapes.items() if any(e == Sym(free) for e in shape)]
        why = (f"size {free!r} has no value: no input given determines it (it sizes {', '.join(map(repr, users))})"
               if users else f"symbol {free!r} has no value: it sizes no tensor (a position, (j = {free}), or a factor)")
        return error("input", f"{why}; give it with --param {free}=N (params={{{free!r}: N}} in Python)" + (
            (", or call with arrays that have it" if users else f" or k.specialize({free}=N, ...)") if specialize
            else "")).with_source(self.source)

    def _check_names(self, given: Mapping[str, object], options: tuple[str, ...]) -> None:
        accepted = sorted(self.checked.accepted_inputs)
        for name in (n for n in given if n not in accepted):
            raise error("input", f"{name!r} is no input of the program{closest(name, [*accepted, *options])} (inputs: {', '.join(accepted)})")
        for name in (n for n in self.checked.inputs if n not in given):
            raise self._error(f"missing input {name!r} of shape {show(self.checked.context[name])}", name)

    def _error(self, message: str, name: str) -> TensorLangError:
        return error("input", message, self._decl_span(name)).with_source(self.source)

    # ------------------------------------------------------------ specialising
    @guard
    def specialize(self, **sizes: int) -> Kernel:
        """The kernel for these values of the sizes (all of them), compiled on first use."""
        if unknown := [s for s in sizes if s not in self.symbols]:
            raise error("input", f"the program has no size {unknown[0]!r} (its sizes: {', '.join(self.symbols)})")
        if missing := [s for s in self.symbols if s not in sizes]:
            raise error("input", f"specialize needs a value for every size; missing {', '.join(missing)}")
        for name, value in sizes.items():
            if not is_integer(value, 1):
                raise error("input", f"size {name!r} must be a positive integer, got {value!r}")
        return self._specialization({s: int(sizes[s]) for s in self.symbols})

    def _specialization(self, binding: dict[str, int]) -> Kernel:
        key = tuple(binding[s] for s in self.symbols)
        with self._lock:  # threads calling with new shapes at once compile each binding once
            kernel = self._kernels.get(key)
            if kernel is not None:
                self._kernels.move_to_end(key)
                return kernel
            for name, value in binding.items():
                if value >= MAX_EXTENT:
                    raise error("too-large", f"size {name!r} = {value} is 2^62 or more").with_source(self.source)
            kernel = self._compile(binding)
            self._kernels[key] = kernel
            if len(self._kernels) > MAX_SPECIALIZATIONS:
                self._kernels.popitem(last=False)
                self._by_shapes.clear()  # it may hold the evicted one
            return kernel

    def _checked(self, binding: dict[str, int]) -> CheckedProgram:
        return self.language.check(lang.parse(self.source, self.language.name, {**self.params, **binding}))

    def _bound_options(self) -> Options:
        """The options each specialisation compiles with: this kernel's ``threads`` as set now."""
        return replace(self.options, threads=self._threads or None)

    def _compile(self, binding: dict[str, int]) -> Kernel:
        shown = ", ".join(f"{s} = {v}" for s, v in binding.items())
        try:
            checked = self._checked(binding)
        except TensorLangError as exc:  # a range condition the values break (A[i, 3] with n = 2)
            raise error("input", f"the sizes {shown} do not fit the program: {exc.message}",
                        exc.span).with_source(self.source) from None
        with pointing_into(self.source):
            return Kernel(self.language, checked, self.source, self._bound_options(), {**self.params, **binding},
                          self.check_structure)

    # ------------------------------------------------------------ chunked runs
    @guard
    def dask(self, inputs: Mapping[str, object] | None = None, *, batch: str | None = None, chunks=None,
             split_every: int = 8, **arrays) -> dict:
        """The results as dask arrays, computed chunk by chunk along the batch size (a
        symbolic size; default: the one the program is data-parallel along): docs/dask.md.
        Inputs are given by keyword or, for names that clash with the options, in ``inputs``."""
        run_chunked = targets.REGISTRY["dask"].chunked
        assert run_chunked is not None, "the dask target runs chunks"

        listed = self._inputs_dict(inputs) if inputs is not None else {}
        for name in sorted(set(listed) & set(arrays)):  # (the keyword silently won)
            raise error("input", f"input {name!r} is given twice, in inputs and by keyword")
        given = {**listed, **arrays}
        verdict, batch = self._batch_verdict(batch)
        shapes = self.checked.context.shapes
        self._check_names(given, ("inputs", "batch", "chunks", "split_every"))
        batched = {n: v for n, v in given.items() if n in verdict.positions}
        others = {n: v for n, v in given.items() if n not in verdict.positions}
        fixed = self._binding(given, batch=batch)
        for name, value in given.items():  # (a wrong extent was found in a chunk's run, at compute, the result's shape claimed)
            want, shape = [e if isinstance(e, int) else fixed.get(getattr(e, "name", None)) for e in shapes[name]], _shape_of(value, name)
            if any(w is not None and isinstance(n, int) and n != w for w, n in zip(want, shape)):
                raise self._error(f"input {name!r} has shape {show(shape)} but is declared {show(shapes[name])}", name)
        spec = KernelSpec(self.source.text, self.source.filename, self.language.name,
                          self._bound_options(), tuple(sorted({**self.params, **fixed}.items())))
        outputs = {name: tuple(None if e == Sym(batch) else fixed[e.name] if isinstance(e, Sym) else e
                               for e in shapes[name]) for name in self.outputs}
        return run_chunked(spec, run_chunk, verdict, batched, others, outputs, self.dtype, chunks, split_every)

    def _batch_verdict(self, batch: str | None = None):
        """(the data-parallel verdict, the batch's name) for a chunked run along ``batch``."""
        if batch is None:  # the one size the program is data-parallel along (targets/dask)
            return default_batch(self.symbols, self._batch_verdict, self.checked.accepted_inputs)
        if batch not in self.symbols:
            raise error("input", f"the batch must be a symbolic size of the program ({', '.join(self.symbols)}), "
                        f"got {batch!r}")
        positions = {}
        for name, shape in self.checked.context.shapes.items():
            where = [d for d, e in enumerate(shape) if e == Sym(batch)]
            if len(where) > 1:
                raise error("input", f"the program is not data-parallel along {batch}: {name!r} : {show(shape)} has "
                            f"it in {len(where)} dimensions").with_source(self.source)
            if where:
                positions[name] = where[0]
        checked = self._checked(dict(zip(self.symbols, _stand_ins(self.source.text, len(self.symbols)))))
        ein = self.language.lower(checked)
        stmts = getattr(checked.program, "stmts", getattr(checked.program, "order", ()))  # STUR: its rules

        def line_of(n: int):
            span = getattr(stmts[n], "span", None) if n < len(stmts) and len(stmts) == len(ein.statements) else None
            return span.line if span is not None else None

        try:
            return batch_verdict(ein, positions, line_of), batch
        except NotDataParallel as exc:
            raise error("input", f"the program is not data-parallel along {batch}: {exc}").with_source(
                self.source) from None

    # ------------------------------------------------------------ inspection
    @guard
    def ir(self, stage: str = "ast") -> str:
        """The program as written (``ast``, ``tl``, ``teil``, ``core``); the later stages
        depend on the sizes: ``k.specialize(n=8).ir("ein")``."""
        self._check_stage(stage, stages.IR_STAGES)
        if stage in stages.FRONT_STAGES:
            return stages.front_text(stage, self.language, self.checked)
        raise self._needs_values(f"stage {stage!r}")

    @guard
    def code(self, target: str = "numpy") -> str:
        self._check_stage(target, stages.CODE_STAGES)
        raise self._needs_values(f"{target!r} code")

    @signature_checked
    def example_sizes(self) -> dict[str, str]:
        """Values of the sizes for a message: the first of :func:`_example_bindings` (at most
        32, about 2 MB of program text in all) the program checks with; N each if none."""
        if self._example is None:
            self._example = dict.fromkeys(self.symbols, "N")
            tries = max(1, min(32, 2_000_000 // max(1, len(self.source.text))))
            for binding in itertools.islice(_example_bindings(self.symbols, self.checked.position_symbols), tries):
                with contextlib.suppress(TensorLangError):
                    self._checked(binding)
                    self._example = {s: str(v) for s, v in binding.items()}
                    break
        return self._example

    def _needs_values(self, what: str) -> TensorLangError:
        sizes = ", ".join(self.symbols)
        example = ", ".join(f"{s}={v}" for s, v in self.example_sizes().items())
        flags = " ".join(f"--param {s}={v}" for s, v in self.example_sizes().items())
        return error("input", f"{what} depends on the values of the symbolic sizes {sizes}: give them at compile "
                     f"time ({flags}; params= in Python) or use k.specialize({example})").with_source(self.source)

    @guard
    def cost_report(self) -> str:
        """``tensorlang analyze`` without values: flops and bytes as polynomials (:meth:`_symbolic_costs`)."""
        for s in self.checked.position_symbols:
            raise error("input", f"the costs depend on the value of {s!r}, which sizes no tensor: give --param "
                        f"{s}=VALUE (params= in Python)").with_source(self.source)  # a position ((j = J)), say
        try:
            costs = self._symbolic_costs(self.symbols, {})
        except TensorLangError as exc:
            if exc.code == "input":  # a size the program needs to lower at all (a STUR position): named
                raise
            stand_ins = ", ".join(f"{s} = {v}" for s, v in zip(self.symbols, _stand_ins(self.source.text, len(self.symbols))))
            raise error(exc.code, f"costs without values lower the program at stand-in sizes ({stand_ins}), and "
                        f"there it fails: {exc.message}; give {' '.join(f'--param {s}=VALUE' for s in self.symbols)} "
                        "(params= in Python)").with_source(self.source) from None
        if costs is not None:
            return symbolic_report(costs[0], costs[1], self.symbols, self.dtype.itemsize)
        needed = []
        value = _stand_ins(self.source.text, 1, 2 * len(self.symbols))[0]  # none of the stand-ins below
        for name in self.symbols:  # which size, once it has a value, leaves polynomials in the others
            try:
                if self._symbolic_costs(tuple(s for s in self.symbols if s != name), {name: value}) is not None:
                    needed.append(name)
            except TensorLangError:
                continue
        needed = needed[:1] or list(self.symbols)
        rest = [s for s in self.symbols if s not in needed]
        raise error("input", f"the costs are no polynomials in {', '.join(needed)}: the program lowers to another "
                    f"form for each value of {' and '.join(needed)} (vec of a symbolic extent, for one, becomes a piece "
                    f"per row); give {' '.join(f'--param {n}=VALUE' for n in needed)} (params= in Python)"
                    + (f"; {', '.join(rest)} may stay symbolic" if rest else "")).with_source(self.source)

    def _symbolic_costs(self, free: tuple[str, ...], fixed: dict[str, int]):
        """(EIN lowered at stand-ins for ``free``, extent -> polynomial) where two sets of
        stand-ins give the same costs, else None; ``fixed``: the other sizes' values."""
        found = []
        for skip in (0, len(free)):
            values = _stand_ins(self.source.text, len(free), skip)
            binding = {**fixed, **dict(zip(free, values))}
            meaning: dict[int, Poly] = {v: Poly.symbol(name) for name, v in zip(free, values)}
            for name in self.checked.derived_symbols:  # a size expression's value reads back as its polynomial
                poly = poly_of(Sym(name))
                if poly is not None and all(n in binding for m in poly for n in m):
                    value = sum(c * math.prod(binding[n] for n in m) for m, c in poly.items())
                    meaning.setdefault(value, sum((Poly.constant(c) * math.prod(
                        Poly.constant(binding[n]) if n in fixed else Poly.symbol(n) for n in m)
                        for m, c in poly.items()), Poly()))

            def size(n: int, meaning=meaning):
                return meaning.get(n) or Poly.constant(n)

            ein = self.language.lower(self._checked(binding))
            found.append((ein, size, str(program_cost(ein, self.dtype.itemsize, size))))
        return found[0][:2] if found[0][2] == found[1][2] else None

    @guard
    def report(self) -> str:
        head = (f"program {shown_name(self.source.filename)}  (backend {self.backend}, {self.dtype.name}; "
                f"symbolic sizes {', '.join(self.symbols)}, {len(self._kernels)} specialization(s))")
        return "\n".join([head, *self._variable_lines()])


# ------------------------------------------------------------------ chunked runs (Dask)
@dataclass(frozen=True)
class KernelSpec:
    """What a worker process needs to make a kernel (which cannot be pickled): program and options."""

    text: str
    filename: str
    lang: str
    options: Options
    params: tuple[tuple[str, int], ...]

    def load(self) -> "SymbolicKernel | Kernel":
        source = Source(self.text, self.filename)
        language = lang.get(self.lang)
        checked = language.check(lang.parse(source, self.lang, dict(self.params)))
        symbolic = checked.symbols or checked.derived_symbols
        return (SymbolicKernel if symbolic else Kernel)(language, checked, source, self.options, dict(self.params))


#: The kernels this process made from specs (a Dask worker's, one per spec).
_LOADED: dict[KernelSpec, "SymbolicKernel | Kernel"] = {}


def run_chunk(spec: KernelSpec, batched: dict, others: dict) -> dict:
    """One chunk of a chunked run, in whatever process Dask runs it."""
    if (kernel := _LOADED.get(spec)) is None:
        kernel = _LOADED.setdefault(spec, spec.load())
    return kernel.run({**batched, **others})


def _example_bindings(symbols: tuple[str, ...], positions: tuple[str, ...]):
    """Each size 8, 1 to 7, powers of two to 2^20 (a position, ``(j = J)``, half that);
    then the sizes apart, rising and falling (``[n m-n]`` needs m > n)."""
    for value in (8, 1, 2, 3, 4, 5, 6, 7, *(2**k for k in range(4, 21))):
        yield {s: max(1, value // 2) if s in positions else value for s in symbols}
    for step in (8, 64):
        yield {s: step * (n + 1) for n, s in enumerate(symbols)}
        yield {s: step * (len(symbols) - n) for n, s in enumerate(symbols)}


def _stand_ins(text: str, count: int, skip: int = 0) -> list[int]:
    """``count`` primes from 101 on (after ``skip``) that the program does not write: sizes no other extent equals."""
    written = {int(t) for t in re.findall(r"[0-9]+", text) if len(t) < 12}
    primes = (c for c in itertools.count(101) if c not in written and all(c % p for p in range(2, int(c ** 0.5) + 1)))
    return list(itertools.islice(primes, skip, count + skip))


def _shape_of(value, name: str) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(d, (int, np.integer)) for d in shape):
        return tuple(int(d) for d in shape)
    try:
        return np.shape(value)
    except Exception as exc:  # noqa: BLE001 - any array-like may fail its own way
        raise error("input", f"input {name!r} cannot be read as an array ({exc})") from None
