"""The JSON form of --emit ast / ein / opt (docs/cli.md, "JSON form"): one printer for
every front end's dataclass tree, a documented schema, and a reader that rebuilds the
tree, spans included."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

import tensorlang as tl
from tensorlang import lang
from tensorlang.cli import main
from tensorlang.ein.printer import to_text
from tensorlang.errors import Source, Span
from tensorlang.lang.json_form import VERSION, from_json, to_json

from corpus import EXAMPLES

sys.path.insert(0, str(Path(__file__).parent / "stur"))
import test_stur  # noqa: E402 - the STUR programs written for its tests

FILES = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".tl", ".cfd", ".teil"))
STUR = {name: v for name, v in vars(test_stur).items() if name.isupper() and isinstance(v, str) and "symbols:" in v}
PROGRAMS = [(p.name, p.read_text(), lang.language_of(str(p), None)) for p in FILES] + [
    (name, text, "stur") for name, text in sorted(STUR.items())]


def test_every_front_end_with_text_is_covered():
    assert {language for _, _, language in PROGRAMS} >= {"tl", "cfd", "teil", "stur"}


def _encode_everything(doc) -> str:
    return json.dumps(doc, allow_nan=False)  # strict JSON: NaN and infinities are objects


@pytest.mark.parametrize("name, text, language", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_the_ast_round_trips_with_its_spans(name, text, language):
    try:
        program = lang.parse(Source(text, name), language)
    except tl.TensorLangError:
        pytest.skip("an example of a rejected program")
    doc = json.loads(_encode_everything(to_json(program, "ast", language)))
    assert doc["format"] == "tensorlang-ast" and doc["version"] == VERSION and doc["language"] == language
    assert doc["program"]["node"] == type(program).__name__
    assert set(doc["types"].values()) <= {f"{c.__module__}.{c.__qualname__}" for c in _classes(program)}
    back = from_json(doc)
    assert back == program
    assert to_json(back, "ast", language) == to_json(program, "ast", language)  # spans (compare=False) too


@pytest.mark.parametrize("name, text, language", PROGRAMS[::4], ids=[p[0] for p in PROGRAMS[::4]])
def test_the_ein_program_round_trips(name, text, language):
    try:
        k = tl.compile(text, lang=language, backend="interp")
    except tl.TensorLangError:
        pytest.skip("an example of a rejected program")
    if isinstance(k, tl.SymbolicKernel):
        k = k.specialize(**dict.fromkeys(k.symbols, 3))  # a symbol only in a condition ((j = J)) too
    back = from_json(json.loads(_encode_everything(to_json(k.ein, "ein", language))))
    assert back == k.ein and to_text(back) == to_text(k.ein)


def _classes(tree):
    found, todo = set(), [tree]
    while todo:
        v = todo.pop()
        if dataclasses.is_dataclass(v):
            found.add(type(v))
            todo.extend(getattr(v, f.name) for f in dataclasses.fields(v))
        elif isinstance(v, (tuple, list)):
            todo.extend(v)
    return found


def test_the_schema_of_a_small_program(tmp_path, capsys):
    p = tmp_path / "m.tl"
    p.write_text("in var A : [2 n]\nout var s : []\ns = sum(i, j) A[i,j] * 1e400\n")
    assert main(["compile", str(p), "--emit", "ast", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    decl = doc["program"]["decls"][0]
    assert decl["node"] == "Decl" and decl["name"] == "A" and decl["qual"] == "in"
    assert decl["shape"] == [2, {"node": "Sym", "name": "n"}]
    assert decl["span"] == {"line": 1, "col": 1, "end_line": 1, "end_col": 17}
    assert doc["types"]["Decl"] == "tensorlang.lang.tl.ast.Decl"
    assert '{"float": "inf"}' in json.dumps(doc)


def test_the_cli_prints_ein_and_opt_and_refuses_other_stages(tmp_path, capsys):
    p = tmp_path / "m.tl"
    p.write_text("in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n")
    for stage in ("ein", "opt"):
        assert main(["compile", str(p), "--emit", stage, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["format"] == "tensorlang-ein" and doc["program"]["node"] == "Program"
    assert main(["compile", str(p), "--emit", "c", "--json"]) == 1
    assert "error[input]" in capsys.readouterr().err


@dataclasses.dataclass(frozen=True)
class _Probe:  # a front end this module has never seen (the Diderot one, say)
    field: str
    at: tuple
    span: Span | None = dataclasses.field(default=None, compare=False)


def test_the_printer_is_generic_over_dataclass_trees_and_the_reader_over_ours_only():
    tree = _Probe("F", (1.5, float("nan"), frozenset({2, 1}), {"k": None}, object), Span(1, 2, 3, 4))
    doc = json.loads(_encode_everything(to_json(tree, "ast", "diderot")))
    assert doc["program"] == {"node": "_Probe", "field": "F", "span": {"line": 1, "col": 2, "end_line": 3, "end_col": 4},
                              "at": [1.5, {"float": "nan"}, {"set": [1, 2]}, {"map": [["k", None]]},
                                     {"opaque": "type", "text": str(object)}]}
    with pytest.raises(tl.TensorLangError) as info:
        from_json(doc)  # rebuilds only tensorlang's classes
    assert info.value.code == "input"
    with pytest.raises(tl.TensorLangError):
        from_json({"version": 99})


def test_an_enumeration_member_round_trips():
    from tensorlang.semantics.interface import Role

    member = list(Role)[-1]
    doc = json.loads(json.dumps(to_json((member, 2.5, -float("inf")))))
    assert doc["program"][0] == {"enum": "Role", "name": member.name}
    assert from_json(doc) == (member, 2.5, -float("inf"))


@pytest.mark.parametrize("params", [[], ["--param", "R=4", "--param", "F=3"]])
def test_a_stur_file_prints_its_tree_and_its_text(params, tmp_path, capsys):
    p = tmp_path / "cov.stur"
    p.write_text(test_stur.COVARIANCE)
    assert main(["compile", str(p), "--emit", "ast", *params]) == 0  # the checked program prints as its AST
    assert capsys.readouterr().out.startswith("symbols: R, F\n")
    assert main(["compile", str(p), "--emit", "ast", "--json", *params]) == 0
    doc = json.loads(capsys.readouterr().out)
    values = {"R": 4, "F": 3} if params else {}
    assert doc["language"] == "stur" and from_json(doc) == lang.parse(Source(test_stur.COVARIANCE, "c"), "stur", values)


def test_the_documented_example_is_what_the_command_prints(capsys):
    page = (EXAMPLES.parent / "docs" / "cli.md").read_text()
    block = page.split("### JSON form", 1)[1].split("```\n", 2)[1]
    command = block.splitlines()[0].removeprefix("$ tensorlang ").split()
    assert main(command) == 0
    printed = json.dumps(json.loads(capsys.readouterr().out))  # one line, ", " and ": " as the page writes
    shown = re.findall(r'"\w+": (?:"[^"]*"|\d+|null|\{"line"[^}]*\})', block)
    assert len(shown) >= 10
    for fragment in shown:
        assert fragment in printed, fragment
