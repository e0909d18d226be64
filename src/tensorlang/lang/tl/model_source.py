"""Any front end's program as a model-language program (``--emit tl``); a reserved name gets
underscores appended, listed in a comment at the top (docs/cfdlang.md)."""

from __future__ import annotations

import dataclasses

from ...ein.printer import reserved_renaming
from . import ast
from .printer import statement_to_source


def renamed(node, mapping: dict[str, str]):
    """``node`` with every variable name in ``mapping`` replaced (any AST node, TeIL's too)."""
    if isinstance(node, tuple):
        return tuple(renamed(item, mapping) for item in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if f.name in ("name", "target") and isinstance(value, str) and not isinstance(node, ast.Call):
            if value in mapping:
                changes[f.name] = mapping[value]
        elif isinstance(value, tuple) or dataclasses.is_dataclass(value):
            new = renamed(value, mapping)
            if new is not value:
                changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node


def to_model_source(program: ast.Program) -> str:
    """The program as model-language text that parses back to the same meaning."""
    mapping = reserved_renaming(program)
    lines = [
        f"// renamed: {old} -> {new} ('{old}' is a reserved word of the model language)"
        for old, new in mapping.items()
    ]
    if mapping:
        program = renamed(program, mapping)
    for d in program.decls:
        qual = f"{d.qual} " if d.qual else ""
        lines.append(f"{qual}var {d.name} : [{' '.join(str(x) for x in d.shape)}]")
    lines.extend(statement_to_source(s) for s in program.stmts)
    return "\n".join(lines) + "\n"
