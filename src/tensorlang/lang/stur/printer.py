"""STUR text from the AST (``--emit ast``): one line per header and rule, reading back
as the same program."""

from __future__ import annotations

from typing import Mapping

from . import ast
from .linear import rename, text


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) and abs(value) < 1e15 else repr(value)


def factor_text(f: ast.Factor, mapping: Mapping[str, str] | None = None) -> str:
    mapping = mapping or {}
    if isinstance(f, ast.Number):
        return f"{_number(f.value)}{'^-1' if f.inverse else ''}"
    if isinstance(f, ast.Access):
        return f"{f.name}{'^-1' if f.inverse else ''}({', '.join(mapping.get(a, a) for a in f.args)})"
    parts = [text(rename(f.exprs[0], mapping))]
    for op, e in zip(f.ops, f.exprs[1:]):
        parts.append(f"{op} {text(rename(e, mapping))}")
    return "(" + " ".join(parts) + ")"


def product_text(p: ast.Product, mapping: Mapping[str, str] | None = None) -> str:
    return " * ".join(factor_text(f, mapping) for f in p.factors)


def rule_text(r: ast.Rule) -> str:
    kind = f":{r.kind}" if r.kind else ""
    return f"{r.name}{kind}({', '.join(r.args)}) := " + " + ".join(product_text(p) for p in r.products)


def to_source(program: ast.Program) -> str:
    program = getattr(program, "ast", program)  # a checked program (check.Model) prints as its AST
    lines = []
    if program.symbols:
        lines.append("symbols: " + ", ".join(program.symbols))
    if program.outputs:
        lines.append("outputs: " + ", ".join(program.outputs))
    if program.iters:
        lines.append("iters: " + "; ".join(f"{n} -> {', '.join(vs)}" for n, vs in program.iters))
    pre = [r for r in program.rules if r.preprocess]
    if pre:
        lines.append("@preprocess_start")
        lines.extend(rule_text(r) for r in pre)
        lines.append("@preprocess_end")
    lines.extend(rule_text(r) for r in program.rules if not r.preprocess)
    return "\n".join(lines) + "\n"
