"""A compiled program as a Python callable (docs/api.md, "Calling a kernel"): it checks
every input before anything runs, error[input] pointing at the variable's declaration."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import operator
import os
import sys
import time
from typing import Any, Mapping

import numpy as np

from . import limits, pipeline, stages
from .analysis.structure import compress, declared, infer
from .errors import (KernelFailed, Source, TensorLangError, Unpicklable, check_flag, closest, error, guard, is_integer,
                     pointing_into, shown_name, signature_checked)
from .ein import ir
from .ein.printer import html_table, html_text
from .lang import Language
from .loops.ir import LoopProgram
from .passes import Optimized
from .pipeline import Compiled, Options
from .schedule.padding import AutoPad, auto_pad, padded_shape
from .schedule.plan import Schedule
from .semantics.interface import Role, check_out, shares_elements
from .semantics.types import CheckedProgram, show
from .targets.c import callext
from .targets.interp import InterpTarget

DTYPES: dict[str, np.dtype] = {"float64": np.dtype(np.float64), "float32": np.dtype(np.float32)}


def resolve_dtype(dtype) -> np.dtype:
    """'float64' or 'float32', as a name or a numpy dtype, in the machine's byte order (``">f8"`` too)."""
    try:
        resolved = np.dtype(dtype)
    except (TypeError, ValueError):  # ValueError: a subarray dtype of a bad shape, ("f8", -1)
        resolved = None
    if resolved is None or resolved.name not in DTYPES:
        raise error("input", f"unsupported dtype {dtype!r:.80}; choose float64 or float32")
    return DTYPES[resolved.name]


#: The most threads a kernel may ask for (``threads=``, ``--threads``): above the core
#: count of any machine tensorlang targets, far below the counts at which OpenMP aborts
#: or crashes the process (it starts as many threads as it is told).
MAX_THREADS = 256


def check_threads(threads) -> int:
    """``threads`` as the kernels take it: None is 0 (OpenMP's default), else 1..MAX_THREADS."""
    if threads is None:
        return 0
    if not is_integer(threads, 1, MAX_THREADS):
        raise TensorLangError(
            "input", f"threads must be an integer from 1 to {MAX_THREADS} (or None for the default), got {threads!r}")
    return int(threads)


def default_threads() -> int:
    """``threads=None``: 0 (OpenMP's default), or MAX_THREADS where ``$OMP_NUM_THREADS``
    asks for more, which OpenMP would start (a million crashed the process)."""
    wanted = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return MAX_THREADS if wanted.isdigit() and int(wanted) > MAX_THREADS else 0


def check_input(where: str, dtype: np.dtype, shape: tuple, declared: tuple, real: np.dtype, span=None,
                note: str = "") -> None:
    """error[input] for an input (``where``: how the message names it) that holds no real
    numbers or has not the ``declared`` shape; ``real``: the kernel's dtype."""
    if dtype.kind not in "biuf":
        raise error("input", f"{where} has dtype {dtype}; expected real numbers ({real.name})", span)
    if shape != declared:
        raise error("input", f"{where} has shape {show(shape)} but is declared {show(declared)}{note}", span)


class ProgramInterface(Unpicklable):
    """What a compiled program (a :class:`Kernel`, a :class:`~tensorlang.specialize.SymbolicKernel`)
    offers its caller: its variables, their types and roles, the options it was compiled with."""

    checked: CheckedProgram
    options: Options
    source: Source
    _threads: int

    @property
    def threads(self) -> int:
        """The threads each call asks for (0: OpenMP's default); set, checked as ``threads=``."""
        return self._threads

    @threads.setter
    def threads(self, value) -> None:
        self._threads = check_threads(value) or default_threads()
        self._threads_changed()

    def _threads_changed(self) -> None:
        """Pass a new thread count on (to a kernel's C caller, a symbolic kernel's specialisations)."""

    # the options it was compiled with, and its program
    backend, dtype, opt, skip_passes, pad, fma = (property(operator.attrgetter("options." + name), doc=f"options.{name}")
                                                  for name in ("backend", "dtype", "opt", "skip_passes", "pad", "fma"))
    program = property(lambda self: self.checked.program)
    #: the variables a caller must supply, may supply (else they start as ⊥, NaN), the results
    inputs = property(lambda self: self.checked.inputs)
    optional_inputs = property(lambda self: self.checked.optional_inputs)
    outputs = property(lambda self: self.checked.results)
    shapes = property(lambda self: dict(self.checked.context.shapes))

    def _positional(self, args: tuple) -> TensorLangError:
        """error[input] for ``k(a)`` or ``k({"A": a})``, saying how to call instead."""
        names = self.inputs or self.optional_inputs
        by_name = ", ".join(f"{n}=..." for n in names) or "NAME=array"
        how = ("pass the dict as k.run(d) or k(**d)" if len(args) == 1 and isinstance(args[0], Mapping)
               else f"call k({by_name}) or k.run({{name: array}})")
        count = f"{len(args)} positional argument{'s' if len(args) != 1 else ''}"
        return error("input", f"a kernel takes its inputs by name, got {count}; {how} "
                              "(results in place: out={name: array}, by keyword)").with_source(self.source)

    def _decl_span(self, name: str):
        """Where ``name`` is declared (an error about it points there)."""
        return getattr(self.checked.context.decls.get(name), "name_span", None)

    def _check_stage(self, name, available) -> None:
        """error[backend] unless ``name`` is one of ``available``: stages.IR_STAGES (``k.ir``) or stages.CODE_STAGES."""
        if not isinstance(name, str) or name not in available:  # ([..] is unhashable)
            what = f"stage {name!r} is not available" if available is stages.IR_STAGES else f"no {name!r} code generator"
            raise error("backend", f"{what} in this version (available: {', '.join(available)})")

    @staticmethod
    def _inputs_dict(inputs) -> dict:
        """``run``'s and ``dask``'s ``inputs`` as a dict; anything but a mapping is error[input]."""
        if not isinstance(inputs, Mapping):
            raise error("input", f"inputs must be a dict from variable names to arrays, got {type(inputs).__name__}")
        return dict(inputs)

    @signature_checked
    def roles(self) -> dict[str, Role]:
        """Each variable's part in a call: in, inout, optional, out or temp (semantics/interface.py)."""
        return dict(self.checked.interface.roles)

    #: the most variables a notebook's view lists (a generated program may have thousands)
    HTML_ROWS = 40

    def _repr_html_(self) -> str:
        """A notebook's view (docs/api.md, "Notebooks")."""
        roles, shapes = self.roles(), self.shapes
        shown = [n for n in shapes if roles.get(n) != Role.TEMP]
        temps = len(shapes) - len(shown)
        required = getattr(self, "required_inputs", self.inputs)  # an unqualified program's read-first ones too
        rows = [(n, "required" if roles.get(n) == Role.OPTIONAL and n in required else roles[n].value if n in roles
                 else "", "[" + " ".join(map(str, shapes[n])) + "]", self.dtype.name) for n in shown[:self.HTML_ROWS]]
        rows += [(f"... {len(shown) - self.HTML_ROWS} more", "", "", "")] * (len(shown) > self.HTML_ROWS)
        rows += [(f"{temps} temporar{'y' if temps == 1 else 'ies'}", "temp", "", "")] * bool(temps)
        args = [f"{n}=..." for n in required] + [f"{n}=... (optional)" for n in self.optional_inputs
                                                 if n not in required]
        call = f"k({', '.join(args)}) -> {{{', '.join(f'{n!r}: ...' for n in self.outputs)}}}"
        options = [f"target {self.backend}", self.dtype.name, f"threads {self.threads or 'default'}"]
        options += [f"pad {self.pad}"] * (self.pad > 1) + ["fma"] * bool(self.fma) + ["opt=False"] * (not self.opt)
        sizes, shows, stages_html = self._html_parts()
        text = f"{call}\n{'; '.join(options + [sizes] * bool(sizes))}\n{shows}"
        title = f"tensorlang.{type(self).__name__} {self.source.filename}"
        return html_table(("variable", "role", "shape", "dtype"), rows, title) + html_text(text) + stages_html

    def _html_parts(self) -> tuple[str, str, str]:
        """Each kind's part of the notebook's view: its sizes, the stages it shows, the stages run (HTML)."""
        raise NotImplementedError

    def _variable_lines(self) -> list[str]:
        """``report``'s list of the variables: each one's role and type."""
        ctx = self.checked.context
        return ["variables:"] + [f"  {ctx.quals[n] or ('inout' if not ctx.qualified else 'temporary'):9} {n} : {show(s)}"
                                 for n, s in ctx.shapes.items()]


class Kernel(ProgramInterface):
    """``k(A=a, B=b)`` runs the program and returns a dict of results (docs/api.md,
    "Calling a kernel")."""

    __slots__ = ("_c_call",)  # the armed C caller: the C entry reads it at its offset, no look-up (callext.c)

    def __copy__(self):  # (Unpicklable's copies the instance's dict) with a runner of its own, which arms the slot
        twin = super().__copy__()
        twin.runner = Runner(twin)  # (a shared one re-armed the original for the twin's check_structure)
        twin.runner.arm()
        return twin

    def _threads_changed(self) -> None:
        caller = getattr(getattr(self, "target", None), "c_call", None)
        if caller is not None:  # the C call path keeps its own copy (it reads no attribute)
            caller.threads = self._threads

    @property
    def last_run_seconds(self) -> float | None:
        """The seconds the last call took to run, or None; the C call path keeps its own clock."""
        caller = self._c_call
        return caller.last_seconds if caller is not None and caller.last_seconds >= 0 else self._last_run_seconds

    @last_run_seconds.setter
    def last_run_seconds(self, value: float | None) -> None:
        self._last_run_seconds: float | None = value
        caller = self._c_call
        if caller is not None:
            caller.last_seconds = -1.0 if value is None else value

    def __init__(self, language: Language, checked: CheckedProgram, source: Source, options: Options,
                 sizes: Mapping[str, int] | None = None, check_structure: bool = False):
        self.language, self.options, self.checked, self.source = language, options, checked, source
        #: the armed C caller as the C entry reads it (:class:`Runner`, which alone sets it), else None
        self._c_call: Any = None
        self.threads = options.threads
        #: the values of the program's symbolic sizes this kernel was specialised for
        self.sizes: dict[str, int] = dict(sizes or {})
        self.last_run_seconds = None
        self._store_elements: int | None = None
        self._ein: ir.Program | None = None
        self._lowering_error: TensorLangError | None = None
        try:
            self._ein = self.language.lower(checked)
        except TensorLangError as exc:
            # a program the compiled targets cannot lower yet (error[backend]) still runs on the
            # reference interpreter, when asked for or under "auto" (with a note saying so)
            if exc.code != "backend" or not (options.backend == "interp" or options.auto):
                raise
            if options.backend != "interp":
                why = exc.diagnostics[0].message.split("; the compiled targets")[0]
                print(f"tensorlang: note: {shown_name(source.filename)} runs on the reference interpreter (backend "
                      f"auto; the compiled targets cannot lower it yet: {why})", file=sys.stderr)
                options = self.options = dataclasses.replace(options, backend="interp")
            self._lowering_error = exc
        self._views: dict[tuple[str, str], Compiled] = {}
        #: every stage's value (tensorlang.pipeline), or None where the compiled targets cannot lower the program
        self.compiled: Compiled | None = None if self._ein is None else (
            self._compile_padded_or_not(options) if options.pad_auto else self._compile(options))
        #: what runs the program (tensorlang.targets): the C kernel, the NumPy kernel or the reference interpreter
        self.target: Any = self.compiled.build if self.compiled is not None else InterpTarget(
            self._reference, checked.interface.roles, options.dtype)
        #: the one way this kernel is called (:class:`Runner`)
        self.runner = Runner(self)
        self._check_structure = bool(check_structure)  # (the runner arms itself at the first call)
        self._threads_changed()  # the C call path keeps its own thread count

    #: what ``pad="auto"`` chose and why (schedule.padding.AutoPad); None without "auto"
    auto_pad: Any = None

    def _compile(self, options: Options) -> Compiled:
        """The pipeline's values for ``options``, which become this kernel's."""
        assert self._ein is not None  # only a lowered program compiles
        self.options = options
        return pipeline.compile(self._ein, options, roles=self.checked.interface.roles, reference=self._reference)

    def _compile_padded_or_not(self, options: Options) -> Compiled:
        """``pad="auto"``: padded to ``options.pad`` only where :func:`~tensorlang.schedule.padding.auto_pad`
        says it pays; :attr:`options` become what was chosen."""
        if options.backend != "c":  # numpy and interp accept pad and ignore it
            self.auto_pad = AutoPad(options.pad, f"the {options.backend} back end ignores pad")
            return self._compile(dataclasses.replace(options, pad_auto=False))
        plain = dataclasses.replace(options, pad=1, pad_auto=False)
        compiled = self._compile(plain)
        assert compiled.schedule is not None
        self.auto_pad = auto_pad(compiled.executed, compiled.schedule, options.pad)
        if self.auto_pad.pad == 1:  # unpadded, or the fused loops' locals only
            return self._compile(dataclasses.replace(plain, pad_locals=self.auto_pad.locals)) \
                if self.auto_pad.locals > 1 else compiled
        chosen = self._compile(dataclasses.replace(options, pad_auto=False))
        fused = [sum(getattr(s, "fusion", None) is not None for s in getattr(c.schedule, "steps", ())) for c in (chosen, compiled)]
        if self.auto_pad.locals > 1 and fused[0] < fused[1]:  # a fused loop lost to padding: the locals only
            self.auto_pad = AutoPad(1, f"the fused loops' locals padded to {options.pad} (a fused loop would not "
                                       "stay fused with every buffer padded)", options.pad)
            return self._compile(dataclasses.replace(plain, pad_locals=options.pad))
        return chosen

    @property
    def check_structure(self) -> bool:
        """Whether each call first checks the inputs' promised structure (docs/api.md); such calls skip the C caller."""
        return self._check_structure

    @check_structure.setter
    def check_structure(self, value: bool) -> None:
        self._check_structure = bool(value)
        self.runner.arm()

    #: whether the C call path's entry serves ``Kernel.__call__`` (:meth:`Runner.arm`)
    _entry_installed = False

    def _c_call_raised(self, exc: BaseException, keywords: dict) -> dict[str, np.ndarray]:
        """The C entry's caller raised ``exc`` on ``self(**keywords)``: as :meth:`Runner.call`."""
        self.runner.raise_if_failed(exc)
        arrays = dict(keywords)
        out = arrays.pop("out", None)
        return self._general(*self._out_variable(arrays, out))

    @property
    def ein(self) -> ir.Program:
        """The program lowered to EIN (what the optimizer and the compiled targets see)."""
        if self._ein is None:
            assert self._lowering_error is not None
            raise self._lowering_error
        return self._ein

    # --------------------------------------------------------------- interface
    def _reference(self, supplied: Mapping[str, np.ndarray], dtype) -> dict[str, np.ndarray]:
        """The front end's reference semantics on the checked program (the oracle)."""
        return self.language.interpret(self.checked, supplied, dtype)

    def _compiled_for(self, stage: str, backend: str | None = None) -> Compiled:
        """The pipeline's values with ``stage`` computed: this kernel's own, else (once) what
        ``backend`` (default: C, what ``--emit loops`` shows) would compile."""
        own = self.compiled
        if own is not None and (backend is None or backend == self.backend) and \
                (stage == "ein" or getattr(own, stage) is not None):
            return own
        backend = backend or "c"
        key = (backend, stage)
        if key not in self._views:  # (no own values: self.ein raises the lowering's error)
            options = dataclasses.replace(self.options, backend=backend, opt=self.opt or stage == "opt")
            known = [c.opt for c in (own, *self._views.values()) if c is not None and c.opt is not None]
            self._views[key] = pipeline.compile(self.ein, options, roles=self.checked.interface.roles,
                                                reference=self._reference, until=stage,
                                                opt=known[0] if known else None)
        return self._views[key]

    def _value(self, stage: str, name: str, backend: str | None = None) -> Any:
        """The pipeline's value ``name`` once ``stage`` has run (:meth:`_compiled_for`)."""
        found = getattr(self._compiled_for(stage, backend), name)
        assert found is not None
        return found

    @property
    def optimized(self) -> Optimized:
        """The optimizer's run on this program (computed on request under ``opt=False``)."""
        return self._value("opt", "opt")

    @property
    def executed(self):
        """The EIN program the numpy and C back ends run (the optimized one unless ``opt=False``)."""
        return self.optimized.program if self.opt else self.ein

    @property
    def schedule(self) -> Schedule:
        """The schedule that goes with :attr:`loop_program` (for numpy and interp: the C target's)."""
        return self._value("loops", "schedule")

    @property
    def blas_from_c(self) -> bool:
        """Whether the C target would call BLAS from its generated C (machine/blas.py found one)."""
        return self._value("facts", "facts", "c").caps.blas_int_max is not None

    @property
    def loop_program(self) -> LoopProgram:
        """The loop IR of the schedule's loop steps (what the C target prints)."""
        return self._value("loops", "loops")

    @guard
    def dask(self, inputs=None, *, batch=None, chunks=None, split_every: int = 8, **arrays):
        """Chunked runs need a batch that is a symbolic size (docs/dask.md)."""
        written = f" (this kernel was specialised for {self.sizes})" if self.sizes else ""
        raise error("input", "a chunked run (k.dask) cuts the program along a symbolic size, and this program's "
                    f"sizes are all numbers{written}: declare the batch as a name, e.g. "
                    "in var u : [E n n n], and compile without a value for it")

    @functools.cached_property
    def unassigned_reads(self) -> tuple[str, ...]:
        """In a program without qualifiers, the variables it reads before assigning them
        (docs/api.md, "Inputs of a program without qualifiers"); empty for a qualified one."""
        if self.checked.context.qualified:
            return ()
        optional = set(self.checked.optional_inputs)
        if self._ein is None:  # runs on the interpreter (not lowered): those no statement assigns
            assigned = {stmt.target for stmt in self.program.stmts}
            return tuple(n for n in self.checked.optional_inputs if n not in assigned)
        assigned = set()
        needed: dict[str, None] = {}
        for stmt in self._ein.statements:
            needed.update((n, None) for n in stmt.reads if n not in assigned and n in optional)
            assigned.add(stmt.target)
        return tuple(needed)

    @property
    def required_inputs(self) -> tuple[str, ...]:
        """What a call must supply: the inputs, and the :attr:`unassigned_reads` unless ``allow_missing``."""
        return self.inputs if self.options.allow_missing else self.inputs + self.unassigned_reads

    @guard
    def specializations(self) -> list[dict[str, int]]:
        """The bindings of symbolic sizes compiled: this kernel's own (``[{}]`` without symbols)."""
        return [dict(self.sizes)]

    @guard
    def specialize(self, **sizes: int) -> Kernel:
        """``self`` for its own sizes (as :meth:`SymbolicKernel.specialize`); error[input] for others."""
        for name, value in sizes.items():
            if self.sizes.get(name) != value:
                fixed = ", ".join(f"{k}={v}" for k, v in self.sizes.items()) or "none: every extent is a number"
                raise error("input", f"this kernel has no size {name!r} = {value!r} to bind (its sizes: {fixed}); "
                                     "compile the program with that size left symbolic")
        return self

    def _html_parts(self) -> tuple[str, str, str]:
        ran = (html_text("runs on the reference interpreter (the compiled targets cannot lower it)")
               if self.compiled is None else
               f"<details><summary>stages run ({self.backend})</summary>{self.compiled._repr_html_()}</details>")
        return ("sizes " + ", ".join(f"{k}={v}" for k, v in self.sizes.items()) if self.sizes else "",
                f"k.ir(stage): {', '.join(stages.IR_STAGES)}\nk.code(target): {', '.join(stages.CODE_STAGES)}", ran)

    def __repr__(self) -> str:
        return (f"<tensorlang.Kernel {self.source.filename} backend={self.backend} dtype={self.dtype.name}"
                f"{f' pad={self.pad}' if self.pad > 1 else ''}{' fma=True' if self.fma else ''}>")

    # --------------------------------------------------------------- running
    def __call__(self, /, *args, out: Mapping[str, np.ndarray] | None = None, **arrays) -> dict[str, np.ndarray]:
        # inputs by name only (docs/api.md, "Calling a kernel"); once the C caller is armed,
        # the class's C entry (callext.install_entry) runs the plain calls and sends the rest here
        if args:
            raise self._positional(args)
        return self.runner.call(*self._out_variable(arrays, out))

    def _out_variable(self, arrays: dict, out) -> tuple[dict, Any]:
        """``k(out=x)`` where ``out`` is not a mapping and the program has a variable
        named ``out``: that variable's input."""
        if out is not None and out.__class__ is not dict and not isinstance(out, Mapping) \
                and "out" in self.checked.context:
            arrays["out"], out = out, None
        return arrays, out


    @guard
    def run(self, inputs: Mapping[str, object], out: Mapping[str, np.ndarray] | None = None,
            compressed: bool = False) -> dict:
        """``k.run({"A": a}, out={"C": c})``: ``k(A=a, out={"C": c})`` for any name; ``compressed``
        (docs/api.md, "Calling a kernel")."""
        arrays = self._inputs_dict(inputs)
        check_flag("compressed", compressed)
        results = self.runner.call(arrays, out)
        return self._compressed(results) if compressed else results

    def _compressed(self, results: dict) -> dict:
        """``results`` compressed by the structure inferred for each (annihilation aside)."""
        return {name: compress(value, self._structures.get(name) or declared(name, tuple(np.shape(value)), None))
                for name, value in results.items()}

    @functools.cached_property
    def _structures(self) -> dict:
        return infer(self.executed, annihilating=False)

    @guard
    def _general(self, arrays: dict, out) -> dict[str, np.ndarray]:
        """The general path (:class:`Runner`'s fallback): checks every argument, reports."""
        try:
            supplied = self._validate_inputs(arrays)
            if self._check_structure and self.language.check_structure is not None:
                self.language.check_structure(self.checked, supplied)
            targets = {} if out is None else self._validate_out(out)
            if self._store_elements is None:
                self._check_store_size()
            start = time.perf_counter()
            with np.errstate(over="ignore"):  # an input past float32's range rounds to ±inf, a value (no warning)
                results = self.target.run(supplied, targets, self.threads)
            self.last_run_seconds = time.perf_counter() - start
        except TensorLangError as exc:
            raise exc.with_source(self.source) from None
        return results

    def _validate_inputs(self, arrays: Mapping[str, object]) -> dict[str, np.ndarray]:
        """The inputs checked in one pass over a table; anything unusual takes the careful path, which reports."""
        shapes, required = self._input_table
        fine = {}
        for name, value in arrays.items():
            expected = shapes.get(name)
            if expected is None or type(value) is not np.ndarray or value.shape != expected or value.dtype.kind not in "biuf":
                return self._validate_inputs_carefully(arrays)
            fine[name] = value
        return fine if fine.keys() >= required else self._validate_inputs_carefully(arrays)

    @functools.cached_property
    def _input_table(self) -> tuple[dict[str, tuple[int, ...]], frozenset[str]]:
        return {n: self.checked.context[n] for n in self.checked.accepted_inputs}, frozenset(self.required_inputs)

    def _validate_inputs_carefully(self, arrays: Mapping[str, object]) -> dict[str, np.ndarray]:
        ctx = self.checked.context
        accepted = set(self.checked.accepted_inputs)
        for name in arrays:
            if name not in ctx:
                known = ", ".join(ctx.shapes) or "none"
                hint = closest(name, [*ctx.shapes, "out"])
                raise error("input", f"the program has no variable {name!r}{hint} (declared: {known})")
            if name not in accepted:
                what = f"an {ctx.quals[name]!r}" if ctx.quals[name] else "a temporary"  # ('out': the only other)
                hint = "; pass it in out= to receive the result in place" if ctx.quals[name] == "out" else ""
                raise error("input", f"{name!r} is {what} variable and takes no input{hint}", self._decl_span(name))
        missing = next((n for n in self.checked.inputs if n not in arrays), None)
        if missing is not None:
            raise error("input", f"missing input {missing!r} of shape {show(ctx[missing])}", self._decl_span(missing))
        if unset := [n for n in self.required_inputs if n not in arrays]:
            name = unset[0]
            others = f" (also {', '.join(repr(n) for n in unset[1:])})" if len(unset) > 1 else ""
            raise error("input", f"missing input {name!r} of shape {show(ctx[name])}{others}: the program reads it "
                        "before assigning it; a program without in/out qualifiers would start it as ⊥ (NaN). "
                        "Give it, or compile with allow_missing=True (tensorlang run --allow-missing) to run "
                        "with ⊥", self._decl_span(name))
        return {name: self._as_array(name, value) for name, value in arrays.items()}

    def _as_array(self, name: str, value) -> np.ndarray:
        expected = self.checked.context[name]
        limits.refuse_masked(value, f"input {name!r}", self._decl_span(name))
        try:
            arr = np.asarray(value)
        except Exception as exc:  # noqa: BLE001 - any array-like may fail its own way
            raise error("input", f"input {name!r} cannot be read as an array ({exc})", self._decl_span(name)) from None
        if arr.dtype.kind == "O" and type(value) is int:  # past int64: the real number it is, as the C caller reads it
            try:
                arr = np.asarray(float(value))
            except OverflowError:
                raise error("input", f"input {name!r} is an integer beyond the float range", self._decl_span(name)) from None
        check_input(f"input {name!r}", arr.dtype, arr.shape, expected, self.dtype, self._decl_span(name))
        return arr

    def _validate_out(self, out: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        if type(out) is dict and len(out) == 1:  # the common case, without the careful path's lookups
            shapes, dtype = self._out_table
            if all(type(t) is np.ndarray and t.shape == shapes.get(n) and t.dtype == dtype and t.flags.writeable
                   and (t.flags.forc or not shares_elements(t)) for n, t in out.items()):
                return out
        return self._validate_out_carefully(out)

    @functools.cached_property
    def _out_table(self) -> tuple[dict[str, tuple[int, ...]], np.dtype]:
        return {n: self.checked.context[n] for n in self.outputs}, self.dtype

    def _validate_out_carefully(self, out: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        if not isinstance(out, Mapping):
            raise error("input", "out= must be a dict from result names to numpy arrays")
        for name, target in out.items():
            if name not in self.outputs:
                raise error("input", f"out= names {name!r}, which is not a result (results: {', '.join(self.outputs)})")
            check_out(target, f"out[{name!r}]", self.checked.context[name], self.dtype, span=self._decl_span(name))
        for (name, target), (other, second) in itertools.combinations(out.items(), 2):
            try:  # exactly (z[::2] and z[1::2] are apart), within a bound of work
                shared = np.shares_memory(target, second, max_work=1 << 20)  # type: ignore[arg-type]  # (the stubs list -1 and 0 only)
            except getattr(np, "exceptions", np).TooHardError:  # (too hard to tell: taken as overlapping; numpy < 1.25: np's)
                shared = True
            if shared:
                raise error("input", f"out= gives overlapping arrays for {name!r} and {other!r}; each result needs its own")
        return dict(out)

    def _check_store_size(self) -> None:
        """The variables fit the memory budget (on the first call: it depends on the declarations alone)."""
        if self._store_elements is None:
            elements = sum(math.prod(padded_shape(s, self.pad)) for s in self.checked.context.shapes.values())
            limits.check_allocation(elements, self.dtype.itemsize, "the store of the program's variables")
            self._store_elements = elements
            self.runner.arm()

    # --------------------------------------------------------------- inspection
    @guard
    def ir(self, stage: str = "ast") -> str:
        """The program at a stage (``stages.IR_STAGES``; docs/api.md, "Looking inside")."""
        self._check_stage(stage, stages.IR_STAGES)
        until = stages.IR_STAGES[stage]
        with pointing_into(self.source):
            if until is None:
                return stages.front_text(stage, self.language, self.checked)
            return stages.compiled_text(stage, self._compiled_for(until), self.language.name)

    @guard
    def code(self, target: str = "numpy") -> str:
        """Generated code: the C the C target compiles (would compile), or the NumPy target's Python."""
        self._check_stage(target, stages.CODE_STAGES)
        return stages.compiled_text(target, self._compiled_for("code", target), self.language.name)

    @guard
    def report(self) -> str:
        """Per variable its role and type; per statement its type."""
        ctx = self.checked.context
        lines = [f"program {shown_name(self.source.filename)}  (backend {self.backend}, {self.dtype.name})",
                 *self._variable_lines(), "statements:"]
        lines += [f"  line {s.span.line if s.span else '?'}: {s.target} : {show(ctx[s.target])}" for s in self.program.stmts]
        return "\n".join(lines)


class Runner:
    """The one call path of a compiled kernel (docs/c-backend.md, "The C-level call path"): the
    C caller :meth:`arm` sets (and the class's C entry reads), then the general path, which reports."""

    __slots__ = ("kernel", "c_call")

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        #: the armed C caller, or None
        self.c_call: Any = None

    def arm(self) -> None:
        """Use the target's C caller, if any, once the store's size is checked and no call checks structure."""
        kernel = self.kernel
        caller = kernel.target.c_call
        ready = caller is not None and kernel._store_elements is not None and not kernel._check_structure
        self.c_call = kernel._c_call = caller if ready else None
        if ready and not Kernel._entry_installed:  # k(...) then runs the caller from C
            Kernel._entry_installed = callext.install_entry(Kernel, Kernel.__dict__["__call__"])

    def call(self, arrays: dict, out) -> dict[str, np.ndarray]:
        """The results of a call with ``arrays`` by name and ``out=`` targets (or None)."""
        caller = self.c_call
        if caller is not None:
            try:
                results = caller(arrays, out)
            except Exception as exc:  # noqa: BLE001 - anything but a KernelFailed: redone on the general path
                self.raise_if_failed(exc)
                results = None
            if results is not None:
                return results
        return self.kernel._general(arrays, out)

    def raise_if_failed(self, exc: BaseException) -> None:
        """The C caller raised ``exc`` (here or in the C entry): a KernelFailed ran and is never redone."""
        if isinstance(exc, KernelFailed):
            raise exc.with_source(self.kernel.source) from None
