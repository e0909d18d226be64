"""Padding (paper 000 §4): which loops of a statement may run over padded extents; the rules:
docs/c-backend.md, "Padding"."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from ..analysis.cost import body_flops
from ..analysis.inplace import compatible
from ..ein import ir
from ..ein.index import Affine, index_variables
from ..ein.names import Fresh
from ..ein.printer import statement_to_text
from ..machine import TILE_BYTES
from ..semantics.interface import Role
from ..semantics.values import FUNCTIONS
from .steps import GemmStep, LoopStep, ModeStep  # (steps knows nothing of padding)

PADDED = "padded"
REZEROED = "padded, re-zeroed"
TRUE = "true extents"


def padded(n: int, pad: int) -> int:
    """``n`` rounded up to a multiple of ``pad`` (000's rounded extent)."""
    return -(-n // pad) * pad if pad > 1 else n


def padded_shape(shape: tuple[int, ...], pad: int) -> tuple[int, ...]:
    """``shape`` in memory under ``pad``: its last (contiguous) dimension rounded up."""
    return tuple(shape) if pad <= 1 or not shape else (*shape[:-1], padded(shape[-1], pad))


#: The largest pad (far past any SIMD width or cache line).
MAX_PAD = 2**12


def check_pad(pad) -> int:
    """``pad`` as a power of two from 1 to MAX_PAD, or ValueError saying what is wrong."""
    if isinstance(pad, bool) or not isinstance(pad, int) or pad < 1 or pad & (pad - 1) or pad > MAX_PAD:
        raise ValueError(f"pad must be a power of two from 1 to {MAX_PAD} (or 'auto'), got {pad!r}")
    return pad


def _finite_const(e: ir.Expr) -> bool:
    return isinstance(e, ir.Const) and math.isfinite(e.value)


def vanishes(e: ir.Expr, var: str) -> bool:
    """Whether ``e`` is ±0 at every point where ``var`` lies in its padding (docs/c-backend.md, "Padding")."""
    if isinstance(e, ir.Tensor):
        return var in e.indices
    if isinstance(e, ir.Const):
        return e.value == 0
    if isinstance(e, ir.Neg):
        return vanishes(e.arg, var)
    if isinstance(e, ir.Apply):
        return FUNCTIONS[e.fn].zero_preserving and vanishes(e.arg, var)
    if isinstance(e, ir.BinOp):
        left, right = vanishes(e.left, var), vanishes(e.right, var)
        if e.op in "+-":
            return left and right
        if e.op == "*":
            return (left and (right or _finite_const(e.right))) or (right and _finite_const(e.left))
        if e.op == "/":
            nan_free = isinstance(e.right, ir.Const) and not math.isnan(e.right.value)
            return left and (right or nan_free)
        return False
    if isinstance(e, (ir.Sum, ir.Reduce)):
        if any(name == var for name, _ in e.index):  # var rebound inside: another index
            return False
        return vanishes(e.body, var)
    return False  # ε, a stack's selection, anything new: not shown to vanish


def reads_padded_only(body: ir.Expr, var: str, layout: frozenset[str] | None = None) -> bool:
    """Whether ``var`` only ever indexes padded last dimensions (of the buffers in ``layout``;
    None: every one) and selects no piece of a direct sum or item of a stack."""
    # (a direct sum's piece is read at var - S_k, a stack's item chosen by var: no padded slot there)
    return not any(isinstance(node, (ir.Concat, ir.Stack)) and var in index_variables(node.index)
                   or isinstance(node, ir.Tensor) and (var in node.indices[:-1] or layout is not None
                                                       and node.name not in layout and var in node.indices)
                   for node in ir.nodes(body))


def padded_sums(body: ir.Expr, layout: frozenset[str] | None = None) -> frozenset[str]:
    """The summed index names whose loops may run over padded extents: the last index of a
    Σ (only), bound only by Σ, whose summand vanishes at its padding."""
    allowed: dict[str, bool] = {}
    for node in ir.nodes(body):
        if isinstance(node, (ir.Sum, ir.Reduce)):
            names = [name for name, _ in node.index]
            for position, name in enumerate(names):
                ok = (isinstance(node, ir.Sum) and position == len(names) - 1 and names.count(name) == 1
                      and vanishes(node.body, name) and reads_padded_only(node.body, name, layout))
                allowed[name] = allowed.get(name, True) and ok
    return frozenset(name for name, ok in allowed.items() if ok)


@dataclass(frozen=True)
class StatementPadding:
    """How one statement runs under ``pad``: its mode, the padded extents of the loops that
    run padded, the target dimensions re-zeroed afterwards, and why."""
    pad: int
    mode: str
    extents: dict[str, int] = field(default_factory=dict)
    rezero: tuple[int, ...] = ()
    why: str = ""

    def extent(self, var: str, n: int) -> int:
        """The extent the loop over ``var`` (true extent ``n``) runs to."""
        return self.extents.get(var, n)

    def describe(self) -> str:
        """One line for ``--emit schedule`` and ``analyze``."""
        text = f"pad {self.pad}: {self.mode}"
        if self.extents:
            text += f" over {', '.join(sorted(self.extents))}"
        if self.why:
            text += f" ({self.why})"
        if self.rezero:
            text += "; padding re-zeroed after"
        return text


def decide(stmt: ir.Statement, pad: int, in_place: bool = True,
           layout: frozenset[str] | None = None) -> StatementPadding:
    """The padding mode of ``stmt`` under ``pad`` (docs/c-backend.md, "Padding"); ``in_place``:
    it writes its target directly; ``layout``: the padded variables (None: every one)."""
    rank = len(stmt.index)
    every = tuple(range(rank)) if not in_place else ()
    if pad <= 1:
        return StatementPadding(pad, TRUE, why="no padding")
    here = [name for name, _ in stmt.index]
    bound = {name for node in ir.nodes(stmt.body) if isinstance(node, (ir.Sum, ir.Reduce)) for name, _ in node.index}
    if any(isinstance(i, Affine) for node in ir.nodes(stmt.body) for i in ir.index_uses(node)):
        return StatementPadding(pad, TRUE, rezero=every, why="an affine index could reach past the padding")
    if bound & set(here):
        return StatementPadding(pad, TRUE, rezero=every, why="an index is both a target and a summed index")
    sums = padded_sums(stmt.body, layout)
    extents = {name: padded(n, pad) for node in ir.nodes(stmt.body) if isinstance(node, ir.Sum)
               for name, n in node.index if name in sums}
    if not stmt.index:
        return StatementPadding(pad, PADDED if extents else TRUE, extents, why="a scalar target")
    last, n = stmt.index[-1]
    if layout is not None and stmt.target not in layout:
        return StatementPadding(pad, TRUE, extents, rezero=every, why=f"{stmt.target} is not padded")
    if not reads_padded_only(stmt.body, last, layout):
        return StatementPadding(pad, TRUE, extents, rezero=every,
                                why=f"{last} indexes a dimension that is not padded")
    extents[last] = padded(n, pad)
    if vanishes(stmt.body, last):
        return StatementPadding(pad, PADDED, extents, rezero=every, why="zero maps to zero")
    return StatementPadding(pad, REZEROED, extents, rezero=every or (rank - 1,),
                            why=f"the value need not be 0 in the padding of {last}")


def padding_decisions(program: ir.Program, pad: int) -> list[tuple[ir.Statement, StatementPadding]]:
    """Each statement of ``program`` with its padding mode under ``pad`` (what the C target does)."""
    return [(stmt, decide(stmt, pad, compatible(stmt).in_place)) for stmt in program.statements]


def padding_report(program: ir.Program, pad: int) -> str:
    """Per statement the padding mode ``analyze --pad M`` prints."""
    lines = [f"padding (pad {pad}, 000 §4; C back end):"]
    for n, (stmt, chosen) in enumerate(padding_decisions(program, pad), 1):
        lines.append(f"  {n:>3}. {statement_to_text(stmt)}")
        lines.append(f"       {chosen.describe()}")
    return "\n".join(lines)


#: A BLAS step on padded buffers needs both of the matrix's sides at least this (the padded
#: loop nest wins on narrower ones: docs/performance.md, "Padding").
PADDED_BLAS_MIN = 32


def blas_on_padded(step, stmt: ir.Statement, shapes: dict[str, tuple[int, ...]]) -> str | None:
    """None when BLAS step ``step`` (of ``stmt``) runs on padded buffers as it is, else why
    not (docs/c-backend.md, "BLAS steps on padded buffers")."""
    if isinstance(step, ModeStep):
        if min(step.j, step.m) < PADDED_BLAS_MIN:
            return (f"min(J,M) = {min(step.j, step.m)} < PADDED_BLAS_MIN {PADDED_BLAS_MIN}: "
                    "the padded loop nest is faster")
        if step.q_axes > 1:
            return "a mode product over a dimension before the last two: its Q would merge a padded dimension"
        return None
    if isinstance(step, GemmStep):
        narrow = min(step.left_shape[2], step.right_shape[2])
        if narrow < PADDED_BLAS_MIN:
            return f"a side of {narrow} < PADDED_BLAS_MIN {PADDED_BLAS_MIN}: the padded loop nest is faster"
        two_d = all(len(shapes[t.name]) == 2 for t in ir.tensors(stmt.body)) and len(stmt.index) == 2
        if step.left_shape[0] == 1 and two_d and step.result_axes is None:
            return None
        return "a GEMM over reshaped operands would copy them out of the padded buffers"
    return "an einsum step runs on unpadded arrays"


#: ``pad="auto"`` (docs/c-backend.md, "What auto chooses"; the measurements: docs/performance.md,
#: "Padding that wins", "pad=auto weighs the remainder", "Register tiles for ragged rows"):
#: the program's buffers where it does this many flops per element copied and has this many elements,
AUTO_FLOPS_PER_COPIED = 16
AUTO_MIN_ELEMENTS = 1 << 14
#: a fused loop's locals where it does this many flops per byte it moves, a row grows at most
#: this much, and, past this fraction of L2, every buffer instead where that pays;
AUTO_LOCAL_FLOPS_PER_BYTE = 2.25
AUTO_LOCAL_MAX_GROWTH = 1.5
AUTO_LOCAL_L2_FRACTION = 0.25
#: none where rows of this many bytes are register tiles with a masked last vector.
RAGGED_TILE_BYTES = TILE_BYTES


@dataclass(frozen=True)
class AutoPad:
    """What ``pad="auto"`` chose: ``pad`` for the program's buffers, ``locals`` for the fused
    loops' locals (1: none), and why."""
    pad: int
    why: str
    locals: int = 1


def auto_pad(program: ir.Program, schedule, width: int) -> AutoPad:
    """``pad="auto"``: the vector ``width`` for the buffers or the fused loops' locals, given the
    *unpadded* ``schedule`` (docs/c-backend.md, "What auto chooses")."""
    if width <= 1:
        return AutoPad(1, "no vectors wider than one element")
    fused = [step.fusion for step in schedule.steps if getattr(step, "fusion", None) is not None]
    rows = sorted({stmt.index[-1][1] for group in fused for stmt in group.statements
                   if len(stmt.index) >= 2 and vector_ops(padded(stmt.index[-1][1], width), width)
                   < vector_ops(stmt.index[-1][1], width)})
    if width * schedule.buffers.itemsize >= RAGGED_TILE_BYTES and rows and min(rows) >= width:
        return AutoPad(1, f"rows of {', '.join(map(str, rows))} are register tiles with a masked last vector "
                          f"(RAGGED_TILE_BYTES {RAGGED_TILE_BYTES}): padding saves no vector operation")
    grown = [n for n in rows if padded(n, width) > AUTO_LOCAL_MAX_GROWTH * n]
    if grown:
        return AutoPad(1, f"padding rows of {grown[0]} to {padded(grown[0], width)} > AUTO_LOCAL_MAX_GROWTH "
                          f"{AUTO_LOCAL_MAX_GROWTH} times their length: the statements that are no register tile pay for it")
    if rows:
        done = f"rows of {', '.join(map(str, rows))} run without remainder"
        why = _memory_bound(fused)
        over = [b for g in fused if (b := _locals_held(g, width, schedule.buffers.itemsize)) > AUTO_LOCAL_L2_FRACTION * g.cache.l2]
        if why is not None or not over:
            return AutoPad(1, why or f"the fused loops' locals padded to {width} (their {done}; the caller's arrays are "
                                     "not copied)", locals=1 if why else width)
        past = f"a fused loop's padded locals take {over[0]} bytes > AUTO_LOCAL_L2_FRACTION {AUTO_LOCAL_L2_FRACTION} of L2"
        why = ("a fused loop would not stay fused with every buffer padded"
               if not all(fuses_padded(g, width) for g in fused) else _loops_only(schedule) or _copies_refused(program))
        if why is None:
            return AutoPad(width, f"every buffer padded to {width} (the fused loops' {done}; {past}: copying through them costs what "
                                  "copying the caller's arrays costs)", locals=width)
        return AutoPad(1, f"the fused loops' locals padded to {width} (their {done}; {past}, but {why})", locals=width)
    decided = [(stmt, decide(stmt, width)) for stmt in program.statements]
    remainders = sorted({n for stmt, chosen in decided for n in _padded_extents(stmt, chosen) if n % width})
    if not remainders:
        return AutoPad(1, f"every padded loop's extent is a multiple of the vector width {width}: no remainder")
    for _, chosen in decided:
        if chosen.mode != PADDED:
            return AutoPad(1, f"a statement would run {chosen.mode} ({chosen.why})")
    why = _loops_only(schedule) or ("the unpadded schedule fuses loops (padding their locals does not pay here, and "
                                    "padding every buffer would copy the caller's arrays per call)" if fused else None)
    why = why or _copies_refused(program)
    if why is not None:
        return AutoPad(1, why)
    return AutoPad(width, f"removes the remainders of extents {', '.join(map(str, remainders))} (vector width {width})")


def _loops_only(schedule) -> str | None:
    """Why ``schedule`` would give up a step under padding: a BLAS, Gram or einsum step."""
    step = next((step for step in schedule.steps if not isinstance(step, LoopStep)), None)
    return None if step is None else f"the schedule has a {type(step).__name__} (padded buffers would give it up)"


def _copies_refused(program: ir.Program) -> str | None:
    """Why copying ``program``'s arrays into and out of padded buffers per call would not
    pay: :data:`AUTO_FLOPS_PER_COPIED`, :data:`AUTO_MIN_ELEMENTS` (None: it would)."""
    copied = sum(math.prod(tuple(d.shape)) for d in program.decls)
    flops = _flops(program.statements)
    if copied < AUTO_MIN_ELEMENTS or flops < AUTO_FLOPS_PER_COPIED * copied:
        return f"{flops} flops on {copied} elements do not amortise copying them into padded buffers"
    return None


def vector_ops(n: int, width: int) -> int:
    """The vector operations gcc spends on a row of ``n`` elements with vectors of ``width``:
    whole vectors, a half-width one, then single elements (7 doubles at 8 lanes: 4 and 3)."""
    half = width // 2
    whole, rest = divmod(n, width)
    return whole + rest if half < 1 else whole + rest // half + rest % half


def _memory_bound(groups) -> str | None:
    """Why padding fused ``groups`` would not pay: one is bound by memory (None: none is)."""
    for group in groups:
        flops = _flops(group.statements)
        if flops < AUTO_LOCAL_FLOPS_PER_BYTE * group.bytes_fused:
            return (f"a fused loop does {flops} flops on the {group.bytes_fused} bytes it moves, fewer than "
                    f"AUTO_LOCAL_FLOPS_PER_BYTE {AUTO_LOCAL_FLOPS_PER_BYTE} per byte: memory is its limit")
    return None


def _locals_held(group, width: int, itemsize: int) -> int:
    """The bytes of one iteration of fused ``group``'s locals padded to ``width``."""
    slices = [tuple(n for _, n in stmt.index[1:]) for stmt in group.statements]
    slices += [local.storage for local in group.locals if not local.per_iteration]
    return sum(math.prod(padded_shape(shape, width)) for shape in slices) * itemsize


def _padded_extents(stmt: ir.Statement, chosen: StatementPadding) -> list[int]:
    """The extents of the loops that padding would run padded in ``stmt``, ``chosen`` its
    :func:`decide` (docs/c-backend.md, "Padding")."""
    sums = [pair for node in ir.nodes(stmt.body) if isinstance(node, ir.Sum) for pair in node.index]
    return [n for name, n in (*stmt.index[-1:], *sums) if name in chosen.extents]


def _flops(statements) -> int:
    """The flops of ``statements``: each target's points times its body's."""
    return sum(math.prod(n for _, n in stmt.index) * body_flops(stmt.body) for stmt in statements)


def fuses_padded(group, pad: int) -> bool:
    """Whether fused ``group`` stays fused under ``pad``: every statement in place, its batch
    loop at its true extent (never the padded last index)."""
    for stmt in (*group.prologue, *group.statements):
        if len(stmt.index) < 2 or not compatible(stmt).in_place:
            return False
        if group.var in decide(stmt, pad).extents and stmt in group.statements:
            return False
    return True


def local_rezero(stmt: ir.Statement, pad: int, layout: frozenset[str] | None = None,
                 ran_padded: bool = True) -> tuple[int, ...]:
    """The target dimensions re-zeroed after ``stmt`` writes a fused loop's local (never
    zeroed when declared): all but after a :data:`PADDED` statement that ``ran_padded``."""
    chosen = decide(stmt, pad, True, layout)
    if pad <= 1 or not stmt.index or (chosen.mode == PADDED and ran_padded):
        return chosen.rezero
    return tuple(sorted({*chosen.rezero, len(stmt.index) - 1}))


def with_local_copies(program: ir.Program, groups, roles, width: int) -> tuple[ir.Program, frozenset[str]]:
    """``program`` with each fused group's batched buffers with a remainder of ``width`` read through
    ``X_p[e,...] = X[e,...]`` and written through ``Y[e,...] = Y_p[e,...]``, and the copies' names."""
    statements = list(program.statements)
    shapes = dict(program.shapes)
    decls = list(program.decls)
    names = Fresh(set(shapes) | {name for s in statements for name, _ in s.index})
    copies: set[str] = set()

    def fresh(base: str) -> str:  # X_p, else X_p2, X_p3 ...
        return names.take(itertools.chain((f"{base}_p",), (f"{base}_p{k}" for k in itertools.count(2))))

    def copy(target: str, source: str, var: str) -> ir.Statement:
        shape = shapes[target if target in shapes else source]
        index = [(var, shape[0]), *((f"{var}_{d}", n) for d, n in enumerate(shape[1:], 1))]
        names = tuple(name for name, _ in index)
        return ir.Statement(target, tuple(index), ir.Tensor(source, names))

    for group in reversed(groups):
        members = statements[group.start:group.stop]
        written = {s.target for s in members}
        accesses = [t for s in group.statements for t in ir.tensors(s.body)]
        rename: dict[str, str] = {}
        before, after = [], []
        for name in dict.fromkeys(t.name for t in accesses):
            shape = shapes.get(name, ())  # (a transposed copy the group makes is no program variable)
            if name in written or len(shape) < 2 or shape[-1] % width == 0 or shape[0] != group.extent:
                continue
            if any(t.indices[0] != group.var for t in accesses if t.name == name):
                continue
            rename[name] = fresh(name)
            before.append(copy(rename[name], name, group.var))
        later = {n for s in statements[group.stop:] for n in s.reads}
        for name in dict.fromkeys(s.target for s in members):
            shape = shapes[name]
            outlives = roles.get(name, Role.TEMP) != Role.TEMP or name in later
            if not outlives or len(shape) < 2 or shape[-1] % width == 0:
                continue
            rename[name] = fresh(name)
            after.append(copy(name, rename[name], group.var))
        if not rename:
            continue
        for name, new in rename.items():
            shapes[new] = shapes[name]
            decls.append(ir.Decl(new, shapes[name]))
            copies.add(new)
        inside = [ir.Statement(rename.get(s.target, s.target), s.index, ir.rename_tensors(s.body, rename)) for s in members]
        statements[group.start:group.stop] = [*before, *inside, *after]
    return ir.Program(tuple(decls), tuple(statements)), frozenset(copies)
