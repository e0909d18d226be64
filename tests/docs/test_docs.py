"""The documentation cannot drift from the code: the language pages against the
grammars, the error page against ``tensorlang explain``'s examples, the CLI page
against the argument parser, and the tutorial's and other pages' Python blocks run."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tensorlang as tl
from tensorlang import cli
from tensorlang.errors import CODES
from tensorlang.explain import EXPLANATIONS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SRC = ROOT / "src" / "tensorlang"


def _code(markdown: str) -> str:
    """Everything inside backticks or fenced blocks: where a keyword counts as documented."""
    fenced = re.findall(r"```[^\n]*\n(.*?)```", markdown, re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", markdown, flags=re.S))
    return "\n".join(fenced + inline)


def _grammar_words(path: Path) -> set[str]:
    """The words a grammar accepts: its quoted keywords and the alternatives of its regular
    expression terminals (``(add|mul|prod)``)."""
    text = "\n".join(line.split("//", 1)[0] for line in path.read_text().splitlines())
    words = {w for w in re.findall(r'"([^"]+)"', text) if w.isalpha()}
    for alternatives in re.findall(r"\(([a-z+*|]+)\)", text):
        words.update(alternatives.split("|"))
    if re.search(r"/(red\[\+\*\])/", text):  # red+ and red*
        words.update({"red+", "red*"})
    return words


def _front_end_words(name: str) -> set[str]:
    """Words a front end fills into its grammar at run time: the function names, the
    index-form reductions."""
    if name != "tl":
        return set()
    from tensorlang.semantics.values import FUNCTIONS

    return set(FUNCTIONS) | {"prod", "max", "min"}


GRAMMARS = [
    ("tl", SRC / "lang" / "tl" / "grammar.lark", DOCS / "language.md"),
    ("teil", SRC / "lang" / "teil" / "grammar.lark", DOCS / "teil.md"),
    ("cfd", SRC / "lang" / "cfd" / "cfd.lark", DOCS / "cfdlang.md"),
]


@pytest.mark.parametrize("name, grammar, page", GRAMMARS, ids=[g[0] for g in GRAMMARS])
def test_every_keyword_of_a_grammar_is_in_its_reference_page(name, grammar, page):
    words = _grammar_words(grammar) | _front_end_words(name)
    assert words, "no keywords found: the pattern no longer reads the grammar"
    code = _code(page.read_text())
    missing = sorted(w for w in words if not re.search(r"(?<![\w+*])" + re.escape(w) + r"(?![\w+*])", code))
    assert missing == [], f"{page.name} does not document {missing}"


#: Each alternative of the model language's grammar (its ``-> alias``) and a form of it
#: that docs/language.md shows: a new alias fails here until the page documents it.
TL_FORMS = {
    "assign": "C = A # B . [2 3]", "index_assign": "C[i,j] = sum(k) A[i,k] * B[k,j]",
    "scalar_assign": "s = sum(i) M[i,i]",
    "add": "s * x + w", "sub": "a - b - c", "mul": "s * x", "div": "`*` `/`", "neg": "unary `-`",
    "outer": "A # B", "contract": ". [2 3]", "transpose": "^ [m n]", "single_pair": ". [m n]",
    "pair_group": "[[m1 n1] [m2 n2] ...]", "var": "NAME : [extents]", "number": "`2`, `0.5`",
    "paren": "(A # B) . [2 3]", "call": "exp", "stack": "[a, b]",
    "iadd": "+ D[i,j]", "isub": "A[i,2] - delta[i,1]", "imul": "A[i,k] * B[k,j]", "idiv": "x[i+a-1] / 3",
    "ineg": "-sum(k)", "ivar": "A plain name in index form is a scalar variable", "inumber": "2 * sum(k)",
    "iparen": "(sum(k) a[k])", "icall": "exp", "access": "A[i,k]", "delta": "delta[i,1]",
    "eps": "eps[i,j,k]", "isum_": "sum(k)", "ireduce_": "prod(k) e", "istack": "[e1, e2, ..., en][i]", "concat": "concat(f, vec(f # f))", "vec": "vec(e)",
    "iconcat": "concat(a:3 => f[a], b:9 => g[b])[p]",
    "structure_word": "[n n] symmetric", "structure_slice": "row(2)", "structure_where": "where i1 = i2",
}


def test_every_form_of_the_model_language_is_shown_in_its_reference_page():
    grammar = (SRC / "lang" / "tl" / "grammar.lark").read_text()
    aliases = set(re.findall(r"->\s*(\w+)", grammar))
    assert aliases == set(TL_FORMS), "document the new grammar alternative in docs/language.md and add it here"
    page = (DOCS / "language.md").read_text()
    missing = sorted(alias for alias, form in TL_FORMS.items() if form not in page)
    assert missing == []


# --------------------------------------------------------------------------- errors
def test_the_error_page_lists_every_code_with_its_example_and_fix():
    page = (DOCS / "errors.md").read_text()
    for code in CODES:
        assert f"### {code}\n" in page, code
        entry = EXPLANATIONS[code]
        assert entry.example.rstrip("\n") in page and entry.fix.rstrip("\n") in page, code


#: the codes of SPEC.md section 5's table; any other code is a decision of ours
SPEC_CODES = {"redeclared", "undeclared-assign", "assign-shape", "undeclared", "shape", "dim-range", "syntax",
              "uninit", "index-extent", "free-index", "repeated-index", "structure", "input"}


def test_every_code_beyond_the_specification_is_a_listed_decision():
    notes = (DOCS / "spec-notes.md").read_text().split("## Error codes beyond the table")[1].split("\n## ")[0]
    listed = set(re.findall(r"^- `([a-z-]+)`:", notes, re.M))
    assert SPEC_CODES <= CODES, "a code of the specification's table is gone"
    assert listed == CODES - SPEC_CODES, "list each code the specification does not name in docs/spec-notes.md"


# --------------------------------------------------------------------------- CLI
def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name != "bench":  # tensorlang_bench's own page (performance.md)
                    found.add(name)
                    found |= _options(sub)
        elif action.help != argparse.SUPPRESS:
            found.update(action.option_strings)
    return found


def test_the_cli_page_describes_every_option_and_only_real_ones():
    page = (DOCS / "cli.md").read_text()
    documented_part = page.split("## tensorlang bench")[0]
    options = _options(cli.build_parser())
    missing = sorted(o for o in options if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", page))
    assert missing == []
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", documented_part))
    assert named - options == set()
    for command in {"check", "run", "compile", "analyze", "explain", "cache"}:
        assert f"## tensorlang {command}\n" in page


# --------------------------------------------------------------------------- runnable pages
def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), re.S)


@pytest.mark.parametrize("page", ["tutorial.md", "index.md", "api.md"])
def test_the_python_in_a_page_runs(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks(DOCS / page)
    assert blocks
    namespace: dict = {}
    for n, block in enumerate(blocks):
        exec(compile(block, f"{page} block {n + 1}", "exec"), namespace)


def test_the_tutorial_shows_the_optimized_program_it_prints(capsys):
    page = (DOCS / "tutorial.md").read_text()
    namespace: dict = {}
    for block in _python_blocks(DOCS / "tutorial.md")[:2]:
        exec(block, namespace)
    printed = namespace["k"].ir("opt")
    shown = re.search(r"```python\nprint\(k.ir\(\"opt\"\)\)\n```\n\n```\n(.*?)```", page, re.S)[1]
    assert all(line in printed for line in shown.strip().splitlines())


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (pip install -e '.[docs]')")
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    # not -q: mkdocs counts the warnings strict mode turns into errors only when it logs them
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "WARNING" not in proc.stderr, proc.stderr
    assert (tmp_path / "site" / "tutorial" / "index.html").is_file()


def test_every_page_in_the_nav_exists():
    nav = re.findall(r":\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert nav and all((DOCS / page).is_file() for page in nav)


def test_version_is_importable_from_the_package():
    assert tl.__version__ and tl.__version__ != "0+unknown"
