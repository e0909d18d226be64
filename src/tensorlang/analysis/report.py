"""The text ``tensorlang analyze`` prints: per statement before and after the optimizer
its shape, flops, bytes and in-place verdict, then the totals, each pass's log and how
often each rewrite rule fired."""

from __future__ import annotations

import sys

from ..ein import ir
from ..ein.printer import statement_to_text
from .cost import program_cost, statement_cost
from ..semantics.interface import roles
from .inplace import in_place_verdict
from .liveness import peak_temporary_bytes, reuse, temporary_bytes
from .structure_view import structure_view


def _amount(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.0f}"


def statement_table(program: ir.Program, itemsize: int, loop_statements=None) -> list[str]:
    shapes = program.shapes
    temps = {d.name for d in program.decls if d.qual == ir.TEMP}
    lines = []
    for n, stmt in enumerate(program.statements, 1):
        cost = statement_cost(stmt, shapes, itemsize)
        shape = "[" + " ".join(str(x) for x in shapes[stmt.target]) + "]"
        kind = "temporary " if stmt.target in temps else ""
        lines.append(f"  {n:>3}. {statement_to_text(stmt)}")
        lines.append(f"       {kind}{stmt.target} : {shape}   flops {_amount(cost.flops)}   "
                     f"bytes {_amount(cost.bytes)}   {in_place_verdict(stmt)}")
    total = program_cost(program, itemsize)
    lines.append(f"  total: {len(program.statements)} statements, flops {_amount(total.flops)}, "
                 f"bytes {_amount(total.bytes)}, {program.size} IR nodes")
    lines.append("  " + temporary_memory(program, itemsize, loop_statements))
    return lines


def temporary_memory(program: ir.Program, itemsize: int, loop_statements=None) -> str:
    """The temporaries' memory without and with reuse by liveness (002 §6.2-6.3; the
    C target's buffer plan reuses by size), what reuse among one shape alone would give
    when that differs, then with temporaries also placed in results' buffers before the
    results are written (002 Fig. 20 literally) when that differs, and the peak: the most
    temporaries' memory live at once, which no reuse among temporaries can go below, and
    what of it remains outside results' buffers.  ``loop_statements(shapes)`` gives the
    test, of the target the report describes, for the statements that run as loop nests
    (Fig. 16 needs one; ``tensorlang analyze`` passes the C target's, with its BLAS-from-C
    threshold; default: those without Σ)."""
    declared = roles(program.decls)
    loops = loop_statements(program.shapes) if loop_statements is not None else None
    among = reuse(program, declared, loops, into_results=False)
    (n0, b0), (n1, b1) = temporary_bytes(program, declared, itemsize), temporary_bytes(program, declared, itemsize, among)
    plural = lambda n: "buffer" if n == 1 else "buffers"  # noqa: E731
    text = (f"temporaries: {n0} {plural(n0)}, {b0} bytes; reusing dead temporaries' buffers (002 §6.2-6.3): "
            f"{n1} {plural(n1)}, {b1} bytes")
    n2, b2 = temporary_bytes(program, declared, itemsize, reuse(program, declared, loops, by_size=False,
                                                                     into_results=False))
    if (n2, b2) != (n1, b1):
        text += f" (one shape per buffer: {n2} {plural(n2)}, {b2} bytes)"
    full = reuse(program, declared, loops)
    n3, b3 = temporary_bytes(program, declared, itemsize, full)
    if (n3, b3) != (n1, b1):
        text += f"; and results' buffers before they are written (002 Fig. 20): {n3} {plural(n3)}, {b3} bytes"
    peak, rest = peak_temporary_bytes(program, declared, itemsize), peak_temporary_bytes(program, declared, itemsize, full)
    text += f"; peak live {peak} bytes"
    if rest != peak:
        text += f", {rest} bytes outside results' buffers"
    return text


def report(before: ir.Program, optimized, itemsize: int = 8, loop_statements=None, isl: bool = False) -> str:
    """The text ``tensorlang analyze`` prints: both programs statement by statement, the
    totals, the IR size and time after each pass (004 §5.7.4), and the rules that fired
    with their counts (``optimized.rules``; rules that never fired are not listed), and
    each tensor's structure (``isl``: with its isl sets; analysis/structure_view.py)."""
    lines = ["before the optimizer (as lowered):"]
    lines += statement_table(before, itemsize, loop_statements)
    lines.append("after the optimizer:")
    lines += statement_table(optimized.program, itemsize, loop_statements)
    a, b = program_cost(before, itemsize), program_cost(optimized.program, itemsize)
    if b.flops:
        lines.append(f"flops: {a.flops / b.flops:.3g}x fewer" if a.flops >= b.flops
                     else f"flops: {b.flops / a.flops:.3g}x more")
    lines.append("passes (IR nodes and statements after each):")
    for record in optimized.log:
        lines.append(f"  {record.name:<10} {record.nodes:>7} nodes  {record.statements:>4} statements  "
                     f"{duration(record.seconds):>8}")
    fired = getattr(optimized, "rules", ())
    lines.append("rules (times fired; --skip RULE turns one off):" if fired else "rules: none fired")
    width = max((len(name) for name, _ in fired), default=0)
    for name, count in fired:
        lines.append(f"  {name:<{width}} {count:>6}")
    structure = structure_view(before, isl)
    if structure:
        lines.append("structure (unique set: the entries a structured computation computes; 003 §5.1):")
        lines += structure
    return "\n".join(lines) + "\n"


def symbolic_report(program: ir.Program, size, symbols: tuple[str, ...], itemsize: int = 8) -> str:
    """``tensorlang analyze`` for a program whose sizes are symbols: flops and bytes of
    each statement as lowered, as polynomials in the symbols (``size`` maps an extent of
    ``program``, lowered at stand-in values, to its polynomial).  The optimizer's choices
    depend on the values, so they are shown only for a binding (``--param``)."""
    shapes = program.shapes
    lines = [f"symbolic sizes: {', '.join(symbols)} (give --param NAME=VALUE to see the optimized program "
             "and its numbers)", "as lowered, before the optimizer (costs as polynomials in the sizes):"]
    for n, stmt in enumerate(program.statements, 1):
        cost = statement_cost(stmt, shapes, itemsize, size)
        shape = "[" + " ".join(str(size(x)) for x in shapes[stmt.target]) + "]"
        lines.append(f"  {n:>3}. {stmt.target} : {shape}   flops {cost.flops}   bytes {cost.bytes}")
    total = program_cost(program, itemsize, size)
    lines.append(f"  total: {len(program.statements)} statements, flops {total.flops}, bytes {total.bytes}")
    return "\n".join(lines) + "\n"


def duration(seconds: float) -> str:
    """Seconds in the unit that reads best, three digits (what every time the CLI prints
    uses): ``28.6 µs``, ``318 µs``, ``54.6 ms``, ``3.48 s``, ``125 s``, never
    ``3.48e+03 ms``; ``us`` where standard output cannot encode µ (an ASCII locale)."""
    if seconds < 1e-3:
        try:
            "µ".encode(getattr(sys.stdout, "encoding", None) or "utf-8")
            micro = "µs"
        except (UnicodeEncodeError, LookupError):
            micro = "us"
        return f"{_digits(seconds * 1e6)} {micro}"
    if seconds < 1:
        return f"{_digits(seconds * 1e3)} ms"
    return f"{_digits(seconds)} s"


def _digits(value: float) -> str:
    """Three significant digits without an exponent (``0.5``, ``28.6``, ``999``, ``1250``)."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"

