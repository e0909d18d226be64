"""``--emit ast`` for a Diderot program: its tree, one declaration a line."""

from __future__ import annotations

import dataclasses

from . import ast as A


def _node(n) -> str:
    if isinstance(n, tuple):
        return "(" + ", ".join(_node(x) for x in n) + ")"
    if dataclasses.is_dataclass(n) and not isinstance(n, type):
        if isinstance(n, A.TypeSyn):
            return n.text()
        fields = [f.name for f in dataclasses.fields(n) if f.name not in ("span", "text")]
        return type(n).__name__ + "(" + ", ".join(_node(getattr(n, f)) for f in fields) + ")"
    return repr(n)


def show(program: A.Program) -> str:
    lines = [f"#version {program.version}"]
    lines += [_node(d) for d in program.decls]
    lines.append(_node(program.strand))
    for name in ("start", "update", "create"):
        value = getattr(program, name)
        if value is not None:
            lines.append(f"{name}: {_node(value)}")
    return "\n".join(lines) + "\n"
