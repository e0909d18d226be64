"""Print a :class:`~.plan.Schedule` (``--emit schedule``): the buffer plan and pool, then
each step with its statements and the reason for BLAS or loops under each."""

from __future__ import annotations

from ..ein.printer import statement_to_text
from ..semantics.interface import show
from .plan import SCRATCH, Schedule
from .steps import EinsumStep, GemmStep, GramStep, LoopStep, ModeStep, ProbeStep, Step, statement_of


def step_title(step: Step) -> str:
    """One line: what kind of step, on which slots."""
    if isinstance(step, LoopStep):
        if step.fusion is not None:
            return (f"fused loop over {step.fusion.var} in 0..{step.fusion.extent - 1}, "
                    f"over {' '.join(f'v{s}' for s in step.slots)}")
        return f"loops over {' '.join(f'v{s}' for s in step.slots)}"
    if isinstance(step, ModeStep):
        w = f"v{step.matrix}{'ᵀ' if step.transpose else ''}"
        return (f"mode product: numpy.matmul v{step.target} (P,J,Q) = {w} (J,M) x v{step.operand} (P,M,Q), "
                f"P={step.p} M={step.m} J={step.j} Q={step.q}" + (f", scale {step.scale!r}" if step.scale != 1.0 else ""))
    if isinstance(step, GemmStep):
        batch, left, summed = step.left_shape
        return (f"GEMM: numpy.matmul v{step.target} = v{step.left} (batch,left,summed) x v{step.right} "
                f"(batch,summed,right), batch={batch} left={left} summed={summed} right={step.right_shape[2]}"
                + (f", scale {step.scale!r}" if step.scale != 1.0 else ""))
    if isinstance(step, EinsumStep):
        return f"einsum: opt_einsum path into v{step.target}"
    if isinstance(step, GramStep):
        layout = "m x n" if step.transposed else "n x m"
        return (f"Gram product (order {step.order}): v{step.target} from v{step.operand} as an {layout} matrix, "
                f"n={step.n} m={step.m}" + (f", its last {step.m % 8} columns as a strip" if step.strip else ""))
    if isinstance(step, ProbeStep):
        return (f"probe: v{step.target} = {step.kernel} probe of order {step.order} of image v{step.image} "
                f"({'x'.join(map(str, step.sizes))}, {step.ncomp} a sample) at the {step.n} points v{step.points}, "
                f"geometry v{step.geometry}" + (", in block order" if step.sort else ""))
    raise TypeError(f"not a schedule step: {step!r}")


def to_text(schedule: Schedule) -> str:
    plan = schedule.buffers
    pooled = plan.pooled
    lines = [f"schedule ({schedule.dtype}): {len(schedule.steps)} step{'s' * (len(schedule.steps) != 1)}, "
             f"{len(plan.buffers)} buffer{'s' * (len(plan.buffers) != 1)}",
             "buffers:"]
    width = max((len(name) for name in plan.all_names), default=0)
    storage = plan.storage_shapes
    for n, buffer in enumerate(plan.buffers):
        note = "  pooled" if buffer.pooled else ""
        if plan.pad > 1 and buffer.name != SCRATCH:
            note += f"  padded to {show(storage[n])} (pad {plan.pad})"
        if buffer.name == SCRATCH:
            note += "  (statements that read their target elsewhere write here, then copy)"
        if buffer.alias:
            note += f"  in {buffer.alias}'s buffer (a view of its first {buffer.size} elements)"
        lines.append(f"  v{n:<3} {buffer.name:<{width}}  {show(buffer.shape):<12} {buffer.role}{note}")
    for k, local in enumerate(plan.locals):
        slot = len(plan.buffers) + k
        what = ("one iteration of a fused loop" if local.per_iteration
                else "a transposed copy, made once per call before the fused loop")
        lines.append(f"  v{slot:<3} {local.name:<{width}}  {show(local.storage):<12} local  ({what})")
    for shared in plan.shared:
        how = (f"lives in result {shared.owner}'s buffer from statement {shared.at + 1}, before {shared.owner} is written"
               if shared.in_result else f"reuses {shared.owner}'s buffer from statement {shared.at + 1}")
        figure = shared.figure.replace(" (result)", "")
        why = f"{figure}: 002 memory reuse by liveness"
        if shared.dying:
            why += f"; reads {shared.dying} for the last time, renamed to {shared.name}: in place"
        lines.append(f"  v{plan.slot_of[shared.name]:<3} {shared.name:<{width}}  {how} ({why})")
    owned = [n for n in pooled if not plan.buffers[n].alias]
    lines.append(f"pool: {len(owned)} buffer{'s' * (len(owned) != 1)}, {plan.pool_bytes} bytes per call "
                 f"({schedule.dtype})")
    lines.append("steps:")
    for n, step in enumerate(schedule.steps):
        lines.append(f"  {n}: {step_title(step)}")
        if isinstance(step, LoopStep) and step.fusion is not None:
            lines.append(f"       -- {step.fusion.describe()}")
            for stmt in step.fusion.prologue:
                lines.append(f"       before the loop: {statement_to_text(stmt)}")
        for text, reason in (zip(map(statement_to_text, step.statements), step.reasons) if isinstance(step, LoopStep)
                             else ((statement_to_text(statement_of(step)), step.reason),)):
            lines.append(f"       {text}")
            lines.append(f"         -- {reason}")
        if isinstance(step, (GemmStep, ModeStep, EinsumStep)):
            lines.append(f"       runs: {step.runs}")
        if isinstance(step, (LoopStep, EinsumStep)) and step.chunk:
            lines.append(f"       einsum code: products of more than {step.chunk} operands contracted {step.chunk} at a time")
    return "\n".join(lines) + "\n"
