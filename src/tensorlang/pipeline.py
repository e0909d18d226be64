"""The back half of the compiler as one chain of values, from an EIN program to a runner:
:func:`compile`, the one driver below the front ends, runs the stages of :data:`STAGES`,
each a plain function whose value is frozen and prints (docs/architecture.md, ``pipeline.py``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from . import limits, targets
from .analysis.structure import infer
from .ein import ir
from .ein.interp import reference as ein_reference
from .ein.printer import html_text, to_lambda_text, to_text
from .ein.structure import Structure
from .loops import LOOP_REWRITE_NAMES, loop_program
from .loops.ir import LoopProgram
from .machine import PARALLEL_WORK
from .loops.printer import to_text as loops_text
from .loops.structure import visited_points
from .passes import Optimized, optimize
from .passes.split import lift_concat_items
from .schedule.plan import Schedule, plan
from .schedule.printer import to_text as schedule_text
from .semantics.interface import Role, interface
from .targets import Caps

#: The stages, in order (``--emit`` names them; ``ein`` is the program as given).
STAGES = ("opt", "facts", "schedule", "loops", "code", "build")


@dataclass(frozen=True)
class Options:
    """How a program is compiled (docs/api.md), checked once by ``api.compile_options``;
    hashable: part of a Dask worker's :class:`~tensorlang.specialize.KernelSpec`."""

    #: the target that runs the program: "c", "numpy" or "interp" (resolved from "auto")
    backend: str
    dtype: np.dtype
    #: the threads asked for (None: :func:`tensorlang.kernel.default_threads`)
    threads: int | None = None
    opt: bool = True
    skip_passes: tuple[str, ...] = ()
    #: 000 §4: the C target pads every buffer to multiples of ``pad`` (1: none; docs/c-backend.md)
    pad: int = 1
    fma: bool = True
    allow_missing: bool = False
    #: chosen by ``backend="auto"``: a program the compiled targets cannot lower runs on the interpreter
    auto: bool = False
    #: BLAS steps allowed (tests and benchmarks set False to see every statement as loops)
    blas: bool = True
    #: scalar operations from which a loop runs on threads; None: the machine's (targets/c/threshold.py)
    parallel_work: Any = None
    #: ``pad="auto"``: ``pad`` is the vector width, used where schedule.padding.auto_pad says it pays
    pad_auto: bool = False
    #: what ``pad="auto"`` may choose instead: only the fused loops' locals padded to it (1: none)
    pad_locals: int = 1


@dataclass(frozen=True)
class Facts:
    """What the stages after the optimizer ask of the executed program, computed once."""

    #: every variable's role in a call (semantics/interface.py)
    roles: Mapping[str, Role]
    #: the declared variables' shapes (the store a call starts from)
    shapes: Mapping[str, tuple[int, ...]]
    #: the structures the declarations promise, by name (ein/structure.py)
    declared: Mapping[str, Structure]
    #: what the target's steps may use on this machine
    caps: Caps
    #: structure inferred for a program with a direct sum, by name: sums with redundant blocks stay loops (003 Fig. 10)
    blocks: Mapping[str, Any] = field(default_factory=dict)
    #: where loops visit supports only: the points each statement's nest visits, and the dense count (003 Fig. 9)
    visits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: the program as the schedule sees it (passes/split.py ``lift_concat_items``, run once)
    lifted: ir.Program | None = field(default=None, compare=False)

    def __str__(self) -> str:
        lines = ["roles: " + ", ".join(f"{name} {role}" for name, role in self.roles.items())]
        lines += [f"declared structure: {name}: {structure}" for name, structure in self.declared.items()]
        lines += [f"blocks: {name}: {found.describe()}" for name, found in self.blocks.items() if found.redundant_blocks]
        lines += [f"visits: {name}: {points[0]} of {points[1]} points" for name, points in self.visits.items()]
        caps = ", ".join(f"{f.name}={getattr(self.caps, f.name)}" for f in dataclasses.fields(self.caps))
        return "\n".join([*lines, f"caps: {caps}"]) + "\n"


@dataclass(frozen=True)
class Compiled:
    """Each stage's value (None for a stage not run); ``build`` is the runner."""

    #: the program as given (``--emit ein``)
    program: ir.Program
    options: Options
    roles: Mapping[str, Role]
    #: the reference semantics ``reference(supplied, dtype) -> store`` (the interpreter target)
    reference: Callable[..., dict] | None = field(default=None, compare=False)
    opt: Optimized | None = None
    facts: Facts | None = None
    schedule: Schedule | None = None
    loops: LoopProgram | None = None
    code: Any = None
    build: Any = None

    @property
    def executed(self) -> ir.Program:
        """The EIN program the numpy and C targets run: the optimized one unless ``opt=False``."""
        return self.opt.program if self.opt is not None else self.program

    def _repr_html_(self) -> str:
        """A notebook's view: every stage run, each as its text under its name (escaped)."""
        shown = [(stage, self.show(stage)) for stage in ("ein", "opt", "facts", "schedule", "loops", "code")]
        return "".join(f"<details><summary>{stage}</summary>{html_text(text)}</details>"
                       for stage, text in shown if text is not None)

    def show(self, stage: str) -> str | None:
        """The stage as text, or None where it was not run."""
        value: Any = self.program if stage in ("ein", "lambda") else getattr(self, stage)
        if value is not None and stage == "loops":
            assert self.schedule is not None, "loops are built from a schedule"
            return loops_text(value, self.schedule)
        show = {"ein": to_text, "lambda": to_lambda_text, "opt": lambda v: to_text(v.program), "schedule": schedule_text,
                "code": lambda v: v.source}
        return None if value is None else show.get(stage, str)(value)


def optimized(program: ir.Program, options: Options) -> Optimized:
    """The opt stage: the optimizer's passes, less those ``skip_passes`` names (loop
    rewrites among them are the loops stage's)."""
    return optimize(program, [n for n in options.skip_passes if n not in LOOP_REWRITE_NAMES])


def analyze(program: ir.Program, roles: Mapping[str, Role], options: Options) -> Facts:
    """The facts stage: what the schedule, the loops and the target ask of ``program``."""
    caps = targets.REGISTRY[options.backend].caps(options.dtype, options.pad, options.blas, options.parallel_work)
    declared = {d.name: d.structure for d in program.decls if d.structure is not None}
    shapes = {d.name: d.shape for d in program.decls if d.name in roles}
    lifted = lift_concat_items(program)  # as the schedule sees it: a direct sum's items in temporaries
    blocks: Mapping[str, Any] = {}
    if caps.blas and any(isinstance(node, ir.Concat) for stmt in lifted.statements for node in ir.nodes(stmt.body)):
        blocks = _or_none(infer, lifted, annihilating=True) or {}
    visits: dict[str, tuple[int, int]] = {}
    if caps.blas and caps.supports and options.pad == 1 and declared:
        known = _or_none(infer, lifted, annihilating=False) or {}
        visits = {stmt.target: points for stmt in (lifted.statements if known else ())
                  if (points := _or_none(visited_points, stmt, known)) is not None}
    return Facts(MappingProxyType(dict(roles)), MappingProxyType(shapes), MappingProxyType(declared), caps,
                 MappingProxyType(dict(blocks)), MappingProxyType(visits), lifted)


def _or_none(analysis: Callable, *args, **options) -> Any:
    """``analysis(*args, **options)`` (structure, visited points), or None where it cannot
    read an expression (no claim is made then)."""
    try:
        return analysis(*args, **options)
    except Exception:  # noqa: BLE001 - an expression the analysis cannot read: no claim
        return None


def schedule_of(program: ir.Program, facts: Facts, options: Options) -> Schedule:
    """The schedule stage: ``plan`` for the target's caps (the one caller of ``plan``)."""
    caps = facts.caps
    return plan(program if facts.lifted is None else facts.lifted, options.dtype, facts.roles, caps.blas, reuse=caps.reuse, pad=options.pad, fuse=caps.fuse,
                from_c=caps.blas_int_max is not None, visits=facts.visits, blocks=facts.blocks, gram=caps.gram,
                local_pad=options.pad_locals, gemm_copies=caps.gemm_copies, blas_int_max=caps.blas_int_max if caps.blas else None)


def loops_of(schedule: Schedule, facts: Facts, options: Options) -> LoopProgram:
    """The loops stage: the loop IR of the schedule's loop steps."""
    work = facts.caps.parallel_work
    return loop_program(schedule, facts.declared, parallel_work=PARALLEL_WORK if work is None else work, fma=options.fma,
                        skip=[n for n in options.skip_passes if n in LOOP_REWRITE_NAMES], blas_int_max=facts.caps.blas_int_max if facts.caps.blas else None)


def check_memory(schedule: Schedule) -> None:
    """error[too-large] before the build stage allocates where the schedule's buffers (padded,
    a shared one once) need more than the memory budget (``$TENSORLANG_MAX_BYTES``)."""
    buffers = schedule.buffers
    storage = buffers.storage_shapes
    elements = sum(math.prod(storage[n]) for n, b in enumerate(buffers.buffers) if not b.alias)
    elements += sum(math.prod(local.storage) for local in buffers.locals)
    limits.check_allocation(elements, buffers.itemsize, "the buffers of the optimized program (its variables and "
                            "temporaries)")


def compile(program: ir.Program, options: Options, *, roles: Mapping[str, Role] | None = None,  # noqa: A001
            reference: Callable[..., dict] | None = None, until: str = "build",
            opt: Optimized | None = None) -> Compiled:
    """Run the stages ``options.backend``'s target needs, up to ``until``, on ``program``.
    ``roles``: the caller's interface (default: from the program's qualifiers);
    ``reference``: the reference semantics the interpreter target runs (default: EIN's
    evaluator on ``program``); ``opt``: the opt stage's value where the caller has it."""
    if until not in STAGES:
        raise ValueError(f"no stage {until!r} (stages: {', '.join(STAGES)})")
    limits.check_statements(len(program.statements))  # every front end's program, before any stage
    target = targets.REGISTRY[options.backend]
    wanted = set(STAGES[:STAGES.index(until) + 1]) & set(target.stages)
    roles = interface(program.decls).roles if roles is None else roles
    if reference is None:
        reference = ein_reference(program, roles)
    values: dict[str, Any] = {}
    if "opt" in wanted and options.opt:
        values["opt"] = opt if opt is not None else optimized(program, options)
    executed = values["opt"].program if "opt" in values else program
    facts = analyze(executed, roles, options) if wanted - {"opt"} else None  # every stage after opt asks them
    if "facts" in wanted:
        values["facts"] = facts
    if facts is not None and "schedule" in wanted:
        values["schedule"] = schedule_of(executed, facts, options)
    if facts is not None and "loops" in wanted:
        values["loops"] = loops_of(values["schedule"], facts, options)
    if facts is not None and "code" in wanted and target.render is not None:
        values["code"] = target.render(executed, values["schedule"], values.get("loops"), facts.caps)
    if "build" in wanted:
        if values.get("schedule") is not None:
            check_memory(values["schedule"])
        values["build"] = target.build(values.get("code"), values.get("schedule"), facts, options, reference)
    return Compiled(program, options, roles, reference, **values)

