"""Print a loop program as pseudo-code (``--emit loops``): loops as ``for i in range(n)``
marked ``parallel``/``simd`` with their reductions, 0-based indices, the other steps one
line each; a tile or BLAS product as a line above the loop it stands for."""

from __future__ import annotations

from ..ein.printer import statement_to_text
from ..schedule.plan import Schedule
from ..schedule.printer import step_title
from ..schedule.steps import LoopStep, statement_of
from ..semantics.values import REDUCTIONS
from ..ein.index import to_text as index_text
from .ir import (Acc, Apply, BinOp, BlasProduct, Const, Copy, Declare, Delta, Epsilon, Init, Load, Loop, LoopProgram, Neg, Power,
                 Nest, Prefetch, Rebuild, Select, Store, Tile, Update, multiply_add, row_update)


def _number(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


class _Printer:
    def __init__(self, program: LoopProgram):
        self.names = program.names
        self.fma = False

    def name(self, slot: int) -> str:
        return self.names[slot] if slot < len(self.names) else f"v{slot}"

    def access(self, slot: int, indices) -> str:
        return f"{self.names[slot]}[{','.join(map(str, indices))}]"

    def scalar(self, e) -> str:
        if type(e) not in _SCALARS:
            raise TypeError(f"not a loop-IR scalar: {e!r}")
        return _SCALARS[type(e)](self, e)

    def node(self, node, lines: list[str], depth: int) -> None:
        pad = "  " * depth
        fused = multiply_add(node) if self.fma else None
        if fused is not None:  # one rounding (fma=True)
            place, a, b, from_zero = fused
            x = place if isinstance(place, str) else self.access(*place)
            lines.append(f"{pad}{x} = fma({self.scalar(a)}, {self.scalar(b)}, {'0' if from_zero else x})")
        elif isinstance(node, Init):
            lines.append(f"{pad}{node.acc} = {_number(REDUCTIONS[node.op].identity)}")
        elif isinstance(node, Update):
            value = self.scalar(node.value)
            lines.append(f"{pad}{node.acc} {node.op}= {value}" if node.op in ("+", "*")
                         else f"{pad}{node.acc} = {node.op}({node.acc}, {value})")
        elif isinstance(node, Store):
            place, added = self.access(node.slot, node.indices), row_update(node)
            lines.append(f"{pad}{place} = {self.scalar(node.value)}" if added is None else f"{pad}{place} += {self.scalar(added)}")
        elif isinstance(node, Prefetch):
            lines.append(f"{pad}prefetch {self.access(node.slot, node.indices)} into L1")
        elif isinstance(node, Copy):
            lines.append(f"{pad}copy {self.names[node.source]} -> {self.names[node.target]} ({node.count} elements)")
        elif isinstance(node, Rebuild):
            index = [f"i{d}" for d in range(len(node.extents))]
            packed = [f"u{d}[i{d}]" if table is not None else f"i{d}" for d, table in enumerate(node.tables)]
            sort = "".join(f", sorted in ({', '.join(packed[d] for d in g)})" for g in node.groups)
            lines.append(f"{pad}for {', '.join(index)} in {' x '.join(map(str, node.extents))}: "
                         f"{self.names[node.target]}[{','.join(index)}] = {self.names[node.source]}[{','.join(packed)}]"
                         f"  # by tables u of packed positions{sort}")
        elif isinstance(node, Declare):
            if node.slot >= len(self.names):  # a micro-kernel's accumulator block (loops/microkernel.py)
                self.names = (*self.names, *(f"acc{n}" for n in range(len(self.names), node.slot + 1)))
            home = {"pointer": " behind a pointer", "heap": f" on the heap at byte {node.offset}"}.get(node.home, "")
            lines.append(f"{pad}local {self.names[node.slot]}[{' '.join(map(str, node.shape))}]{home}")
        elif isinstance(node, Tile):
            t = node.tile
            how = (f"; else the loop below{', row by row' if node.rows else ''} (where the compiler has no AVX-512)"
                   if node.plain else ", for the loop below")
            lines.append(f"{pad}register tile: {t.x} in range({t.width}) as vectors, rows {t.u} in range({t.height}), "
                         f"summed over {t.k} in range({t.extent}){how}")
            self.node(node.loop, lines, depth + 1)
        elif isinstance(node, BlasProduct):
            p = node.product
            left = f"{self.name(p.left)}[{'r,p' if p.left_summed_first else 'p,r'}]"
            right = f"{self.name(p.right)}[{'r,q' if p.right_summed_first else 'q,r'}]"
            upper = ", p <= q" if p.upper else ""
            lines.append(f"{pad}blas {node.routine}: {self.name(p.target)}[p,q] = sum(r) {left} * {right}  "
                         f"# p < {p.rows}, q < {p.cols}{upper}, r < {p.summed}; for the loop below")
            self.node(node.loop, lines, depth + 1)
        elif isinstance(node, Loop):
            marks = ("parallel " if node.parallel else "simd " if node.simd else
                     f"unroll({node.unroll}) " if node.unroll > 1 else "")
            team = f"  # {', '.join([f'at most {node.team} threads'] * bool(node.team) + [node.omp_schedule])}" * node.parallel
            bounds = f"{node.extent}" if node.start == 0 else f"{node.start}, {node.extent}"
            reduce = "".join(f" reduce({op}: {acc})" for op, acc in node.reductions)
            lines.append(f"{pad}{marks}for {node.var} in range({bounds}){reduce}:{team}")
            for ahead in node.prefetch:
                at = ", ".join(f"{v}+{o}" if o else v for v, o in ahead.at)
                part = f", lines {ahead.lines[0]}..{ahead.lines[1] - 1}" if ahead.lines else ""
                how = "".join([", spread" if ahead.spread else "", part])
                lines.append(f"{pad}  prefetch{' for writing' if ahead.write else ''} {self.names[ahead.slot]}[{at}]{how}")
            for k, child in enumerate(node.body):
                first = len(lines)
                self.node(child, lines, depth + 1)
                if k in node.apart:
                    lines[first] += "  # a function of its own"
        else:
            raise TypeError(f"not a loop-IR node: {node!r}")

    def nest(self, nest: Nest, lines: list[str], depth: int) -> None:
        note = "  (interchanged: summed loops outside the row)" if nest.interchanged else ""
        if nest.inputs:
            note += f"  (reads {', '.join(self.names[s] for s in nest.inputs)} from the caller's input)"
        self.fma = nest.fma
        text = f"fused: {'; '.join(map(statement_to_text, nest.fused))}" if nest.fused else statement_to_text(nest.statement)
        lines.append(f"{'  ' * depth}# {text}{note}")
        if nest.heap:
            lines.append(f"{'  ' * depth}# a heap block of {nest.heap} bytes for the large locals")
        for node in nest.body:
            self.node(node, lines, depth)


#: Each scalar kind's text, by node kind.
_SCALARS = {
    Load: lambda p, e: p.access(e.slot, e.indices), Acc: lambda p, e: e.name, Const: lambda p, e: _number(e.value),
    Delta: lambda p, e: f"delta({e.first},{e.second})", Epsilon: lambda p, e: f"eps({','.join(map(str, e.indices))})",
    Neg: lambda p, e: f"-{p.scalar(e.arg)}", Power: lambda p, e: f"({p.scalar(e.arg)})^{e.n}",
    Apply: lambda p, e: f"{e.fn}({p.scalar(e.arg)})", BinOp: lambda p, e: f"({p.scalar(e.left)} {e.op} {p.scalar(e.right)})",
    Select: lambda p, e: (  # a direct sum: case k up to position bounds[k]
        f"pieces({index_text(e.var)}: {', '.join(f'<{end}: {p.scalar(c)}' for end, c in zip(e.bounds, e.cases))})" if e.bounds
        else f"select({index_text(e.var)}: {', '.join(p.scalar(c) for c in e.cases)})"),
}


def to_text(program: LoopProgram, schedule: Schedule) -> str:
    """Every step of ``schedule`` in order: loop steps as their nests in ``program``."""
    printer = _Printer(program)
    buffers = ", ".join(f"v{n} {name}" for n, name in enumerate(program.names))
    lines = [f"# loop rewrites: {', '.join(program.rewrites) or 'none'}",
             f"# loops ({schedule.dtype}); buffers: {buffers or 'none'}"]
    for n, step in enumerate(schedule.steps):
        if isinstance(step, LoopStep):
            lines.append(f"step {n}: loops")
            for nest in program.nests_of(n):
                printer.nest(nest, lines, 1)
        else:
            lines.append(f"step {n}: {step_title(step)}")
            lines.append(f"  # {statement_to_text(statement_of(step))}")
            lines += [f"  # TEAM {t}: " + ("one thread" if t < 0 else f"at most {t} threads" if t else "no cap") for m, t in program.teams if m == n]
            lines += [f"  # on threads from {p} points" for m, p in program.probes if m == n]
    return "\n".join(lines) + "\n"
