"""The JSON form of any front end's tree or EIN program (``--emit ast --json``; the schema is docs/cli.md's
"JSON form"): it knows no node kind, only frozen dataclasses; :func:`from_json` rebuilds the tree."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import math
from typing import Any, Mapping

from ..errors import Span, error

VERSION = 1


def to_json(tree: Any, kind: str = "ast", language: str | None = None) -> dict:
    """The document for ``tree`` (a front end's AST, or an EIN program with ``kind="ein"``)."""
    types: dict[str, str] = {}
    return {"format": f"tensorlang-{kind}", "version": VERSION, "language": language,
            "types": types, "program": _encode(tree, types)}


def _encode(value: Any, types: dict[str, str]) -> Any:
    if isinstance(value, Span):
        return {"line": value.line, "col": value.col, "end_line": value.end_line, "end_col": value.end_col}
    if isinstance(value, enum.Enum):
        return {"enum": _kind(type(value), types), "name": value.name}
    if isinstance(value, (bool, str, int)) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        node = {"node": _kind(type(value), types)}
        for f in dataclasses.fields(value):
            node[f.name] = _encode(getattr(value, f.name), types)
        return node
    if isinstance(value, (tuple, list)):
        return [_encode(v, types) for v in value]
    if isinstance(value, Mapping):
        return {"map": [[_encode(k, types), _encode(v, types)] for k, v in value.items()]}
    if isinstance(value, (set, frozenset)):
        return {"set": sorted((_encode(v, types) for v in value), key=repr)}
    return {"opaque": type(value).__name__, "text": str(value)}


def _kind(cls: type, types: dict[str, str]) -> str:
    """A class's name as the node kind; its full path where another class has the name."""
    path = f"{cls.__module__}.{cls.__qualname__}"
    kind = cls.__name__ if types.setdefault(cls.__name__, path) == path else path
    types[kind] = path
    return kind


def from_json(document: Mapping) -> Any:
    """The tree a :func:`to_json` document describes (error[input] for another format)."""
    if not isinstance(document, Mapping) or document.get("version") != VERSION or "program" not in document:
        raise error("input", f"not a tensorlang JSON form of version {VERSION}")
    classes = {kind: _class(path) for kind, path in document.get("types", {}).items()}
    return _decode(document["program"], classes)


def _class(path: str) -> type:
    module, _, name = path.rpartition(".")
    if not module.startswith("tensorlang."):
        raise error("input", f"the JSON form names the class {path!r}, which is not tensorlang's")
    cls = getattr(importlib.import_module(module), name, None)
    if not isinstance(cls, type) or not (dataclasses.is_dataclass(cls) or issubclass(cls, enum.Enum)):
        raise error("input", f"the JSON form names {path!r}, which is no node class")
    return cls


def _decode(value: Any, classes: dict[str, type]) -> Any:
    if isinstance(value, list):
        return tuple(_decode(v, classes) for v in value)
    if not isinstance(value, dict):
        return value
    if "node" in value:
        cls, given = classes[value["node"]], [f for f in dataclasses.fields(classes[value["node"]]) if f.name in value]
        node = cls(**{f.name: _decode(value[f.name], classes) for f in given if f.init})
        for f in given:
            if not f.init:
                object.__setattr__(node, f.name, _decode(value[f.name], classes))
        return node
    if "enum" in value:
        return getattr(classes[value["enum"]], value["name"])
    if "float" in value:
        return float(value["float"])
    if "map" in value:
        return {_decode(k, classes): _decode(v, classes) for k, v in value["map"]}
    if "set" in value:
        return frozenset(_decode(v, classes) for v in value["set"])
    if "line" in value:
        return Span(value["line"], value["col"], value["end_line"], value["end_col"])
    raise error("input", f"the JSON form has an object that is no node: {sorted(value)}")


__all__ = ["VERSION", "from_json", "to_json"]
