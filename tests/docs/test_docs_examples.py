"""The examples of the pages users land on run, in order, as the page shows them: every
```` ```python ```` block of the landing page, the how-tos, the tutorial, coming-from, einsum,
the Python API, TeIL, tensor fields, compiled strands and Dask pages, and the quick start's
commands.

A block preceded by a line ``<!-- not run: REASON -->`` is left out (REASON says why).
The tutorial, index and api pages are also run by tests/docs/test_docs.py and the fields
page by tests/fields/test_docs_fields.py, which check what they print as well.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: The user-facing pages whose Python blocks run here.
PAGES = ["index.md", "tutorial.md", "coming-from.md", "einsum.md", "api.md", "fields.md", "dask.md", "teil.md",
         "diderot-compiled.md"] + sorted(
    f"howto/{p.name}" for p in (DOCS / "howto").glob("*.md"))
#: Pages that need an optional package to run (the how-to says to install it).
NEEDS = {"dask.md": "dask", "howto/dask.md": "dask", "howto/fields.md": "scipy",
         "howto/reference-check.md": "opt_einsum"}
#: Pages whose examples take more than a couple of seconds (they time a peer).
SLOW = {"tutorial.md", "dask.md", "einsum.md", "fields.md", "diderot-compiled.md"} | {p for p in PAGES if p.startswith("howto/")}

BLOCK = re.compile(r"(<!-- not run: [^>]+-->\n)?```python\n(.*?)```", re.S)


def python_blocks(page: str) -> list[str]:
    """The page's Python blocks that run (a ``<!-- not run: ... -->`` line skips the next)."""
    return [code for skip, code in BLOCK.findall((DOCS / page).read_text()) if not skip]


def test_every_page_with_python_runs_here():
    """A page's Python blocks run here, or (errors.md) are `tensorlang explain`'s examples,
    which tests/docs/test_first_use.py runs: a new page with an example is added above."""
    with_python = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "```python\n" in p.read_text()}
    assert sorted(with_python - set(PAGES) - {"errors.md"}) == []


def test_a_skipped_block_says_why():
    for page in PAGES:
        for reason in re.findall(r"<!-- not run:([^>]*)-->", (DOCS / page).read_text()):
            assert len(reason.strip()) > 10, (page, "say why the block is not run")


def _params():
    for page in PAGES:
        marks = [pytest.mark.slow] if page in SLOW else []
        yield pytest.param(page, marks=marks, id=page)


@pytest.mark.parametrize("page", list(_params()))
def test_the_python_blocks_of_a_page_run(page, tmp_path, monkeypatch, capsys):
    if page in NEEDS and importlib.util.find_spec(NEEDS[page]) is None:
        pytest.skip(f"{NEEDS[page]} is not installed (the page says to install it)")
    blocks = python_blocks(page)
    assert blocks, f"{page} has no Python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for n, block in enumerate(blocks):
        exec(compile(block, f"docs/{page} block {n + 1}", "exec"), namespace)


def quick_start_commands() -> list[str]:
    """The ``tensorlang ...`` commands of README's quick start and the landing page's first
    shell block (an ``install`` command before them is what the test environment did)."""
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    shell = re.findall(r"```sh\n(.*?)```", quick, re.S)[0] + re.findall(r"```sh\n(.*?)```", (DOCS / "index.md").read_text(), re.S)[0]
    commands = []
    for line in shell.splitlines():
        for part in line.split("#", 1)[0].split("&&"):
            if part.strip().startswith("tensorlang "):
                commands.append(part.strip())
    return list(dict.fromkeys(commands))


def test_the_quick_start_is_two_commands():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in re.findall(r"```sh\n(.*?)```", quick, re.S)[0].splitlines() if line.strip()]
    assert len(lines) == 2 and all(line.startswith("pip install") for line in lines)
    assert quick_start_commands()


@pytest.mark.slow
@pytest.mark.parametrize("command", quick_start_commands())
def test_a_quick_start_command_runs(command):
    args = shlex.split(command)
    proc = subprocess.run([sys.executable, "-m", "tensorlang", *args[1:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


#: Pages whose Python blocks other tests run (and which): every other user page with a
#: Python block must be in PAGES.
ELSEWHERE = {"errors.md": "tests/docs/test_first_use.py runs each code's example and fix (tensorlang.explain)",
             "diderot-compiled.md": "tests/diderot/test_compiled.py runs its heron program on both executors"}


def test_every_python_example_of_a_user_page_is_run_by_a_test():
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "internals" not in p.parts}
    with_python = {p for p in pages if "```python" in (DOCS / p).read_text()}
    assert with_python - set(PAGES) - set(ELSEWHERE) == set(), "add the page to PAGES (or say in ELSEWHERE who runs it)"


@pytest.mark.slow  # compiles four kernels and runs a Dask graph
def test_the_readme_tour_runs_line_by_line(tmp_path, monkeypatch):
    """README's Python tour, each line in order, given the arrays its comments name (a, b of
    fig4's shapes; A, B, C, u the builder's variables; then a, u, du of the sized program):
    a line whose comment says it raises must raise that code, every other line runs."""
    np = pytest.importorskip("numpy")
    import tensorlang as tl

    tour = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)[0]
    rng = np.random.default_rng(0)
    ns: dict = {"a": rng.random((30, 40)), "b": rng.random((40, 50)), "u": tl.var("u", (5, 5, 5)),
                **{n: tl.var(n, (5, 5)) for n in "ABC"}}
    monkeypatch.chdir(ROOT)
    for line in tour.splitlines():
        code, _, comment = line.partition("  #")
        if code.startswith("k = tl.compile(\"examples/sizes/"):
            ns.update(a=rng.random((4, 4)), u=rng.random((3, 4, 4, 4)))
            if importlib.util.find_spec("dask") is not None:
                import dask.array as da
                ns["du"] = da.from_array(ns["u"], chunks=(1, 4, 4, 4))
        if re.search(r"\bdu\b", code) and "du" not in ns:
            continue
        raises = re.search(r"raises TensorLangError: error\[([\w-]+)\]", comment)
        if raises:
            with pytest.raises(tl.TensorLangError) as caught:
                exec(code, ns)
            assert caught.value.code == raises[1], line
        else:
            exec(code, ns)
