"""The JSON form of a program's tree: ``tensorlang compile PROG --emit ast --json``.

One printer for every front end's AST and for EIN (``--emit ein`` / ``opt``): it knows no
node kind, only that the trees are frozen dataclasses, so a new front end's AST prints
without a line here.  The schema (docs/cli.md, "JSON form") is version 1:

* the document: ``{"format": "tensorlang-ast" | "tensorlang-ein", "version": 1,
  "language": NAME, "types": {KIND: "module.Class", ...}, "program": NODE}``;
* a node: ``{"node": KIND, FIELD: VALUE, ...}``, its fields in declaration order, KIND
  the class's name (``types`` says which class, for a reader that rebuilds the tree);
* a span (where a node's text stands): ``{"line": L, "col": C, "end_line": L2,
  "end_col": C2}``, 1-based, ``end_col`` one past the last character;
* a tuple or list: an array; a mapping: ``{"map": [[key, value], ...]}``; a set:
  ``{"set": [...]}`` (sorted where the items sort); an enumeration's member:
  ``{"enum": KIND, "name": NAME}``;
* a number: a JSON number (integers stay integers); NaN and ±inf: ``{"float": "nan" |
  "inf" | "-inf"}``; a string, a boolean, null: themselves;
* anything else (no node of ours is one): ``{"opaque": TYPE, "text": str(value)}``.

:func:`from_json` rebuilds the tree (classes of this package only), equal to the
original, spans included; the tests round-trip every front end's examples through it.
"""

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
    # iterative over the tree's depth is not needed: the parsers bound nesting (MAX_NESTING)
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
        items = [_encode(v, types) for v in value]
        try:
            items.sort()
        except TypeError:
            pass
        return {"set": items}
    return {"opaque": type(value).__name__, "text": str(value)}


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _kind(cls: type, types: dict[str, str]) -> str:
    """A class's name as the node kind; its full path where another class has the name."""
    path = _qualified(cls)
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
        cls = classes[value["node"]]
        fields = {f.name: _decode(value[f.name], classes) for f in dataclasses.fields(cls) if f.name in value}
        init = {k: v for k, v in fields.items() if next(f for f in dataclasses.fields(cls) if f.name == k).init}
        node = cls(**init)
        for name, v in fields.items():
            if name not in init:
                object.__setattr__(node, name, v)
        return node
    if "enum" in value:
        return classes[value["enum"]][value["name"]]
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
