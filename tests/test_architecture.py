"""The house rules of docs/architecture.md, checked on the sources.

* The import graph is a DAG, among modules and among the top-level packages, with
  function-local imports counted (so none can hide a cycle), and every import goes down
  the layers of the picture (a package imports only from layers below its own).
* No front-end dispatch outside ``lang/``: nothing else imports a front end's folder,
  tests a program's language, or names a language.
* The test tree mirrors src/: top-level test files only for top-level modules, other
  folders only where listed as cross-cutting.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tensorlang"

#: The layers of docs/architecture.md, bottom first.  A top-level package or module may
#: import from its own layer's other members only where the graph stays acyclic, and
#: from lower layers freely; never from a higher layer.
LAYERS: list[set[str]] = [
    {"errors", "limits", "machine"},
    {"semantics", "sampling"},
    {"ein"},
    {"strand_ir"},
    {"lang", "analysis"},
    {"passes"},
    {"schedule"},
    {"loops"},
    {"targets"},
    {"pipeline"},
    {"stages"},  # the table of printable stages: from a Compiled and the checked program, never a Kernel
    {"kernel"},
    {"specialize"},
    {"api", "einsum_api", "builder", "fields", "strands"},
    {"cli", "__init__", "__main__", "explain", "testing"},
]
LAYER = {name: n for n, members in enumerate(LAYERS) for name in members}


def _module_name(path: Path) -> str:
    parts = ["tensorlang", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}


def _imports(name: str, path: Path) -> set[str]:
    """The tensorlang modules ``name`` imports (function-local imports included), each
    resolved to the longest module that exists (``from .x import y`` is x.y when y is a
    module, else x)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                found.add(candidate if candidate in MODULES else module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.startswith("tensorlang") and m != name}


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Each module's tensorlang imports (parsed when a test first asks, not as every xdist
    worker collects this file)."""
    return {name: {m for m in _imports(name, path) if m in MODULES} for name, path in MODULES.items()}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes, or None (iterative DFS)."""
    colour: dict[str, int] = {}
    for root in graph:
        if colour.get(root):
            continue
        stack = [(root, iter(sorted(graph[root])))]
        path = [root]
        colour[root] = 1
        while stack:
            node, children = stack[-1]
            for child in children:
                if colour.get(child) == 1:
                    return path[path.index(child):] + [child]
                if not colour.get(child):
                    colour[child] = 1
                    path.append(child)
                    stack.append((child, iter(sorted(graph.get(child, ())))))
                    break
            else:
                colour[node] = 2
                path.pop()
                stack.pop()
    return None


def test_the_module_import_graph_is_a_dag():
    assert _cycle(_graph()) is None, "import cycle: " + " -> ".join(_cycle(_graph()) or ())


def test_the_package_import_graph_is_a_dag():
    packages: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        packages.setdefault(_unit(module), set()).update(_unit(t) for t in targets if _unit(t) != _unit(module))
    assert _cycle(packages) is None, "package cycle: " + " -> ".join(_cycle(packages) or ())


def test_every_top_level_package_has_a_layer():
    units = {_unit(m) for m in MODULES}
    assert units - set(LAYER) == set(), "add the new package to LAYERS (and to docs/architecture.md)"


def test_imports_go_down_the_layers():
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if LAYER.get(_unit(target), -1) > LAYER.get(_unit(module), 99)
    )
    assert upward == []


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


# ------------------------------------------------------------------ front-end dispatch
FRONT_ENDS = sorted(p.name for p in (SRC / "lang").iterdir() if (p / "__init__.py").is_file())


def test_the_registry_lists_every_front_end_folder():
    from tensorlang import lang

    assert FRONT_ENDS, "lang/ has no front-end folders"
    assert sorted(lang.REGISTRY) == FRONT_ENDS


def test_the_lazy_registry_table_matches_each_front_end():
    # lang.FRONT_ENDS names each folder's suffixes so that it is imported only when used
    import importlib

    from tensorlang import lang

    for name in FRONT_ENDS:
        language = importlib.import_module(f"tensorlang.lang.{name}").LANGUAGE
        assert language.name == name and lang.FRONT_ENDS[name] == language.suffixes
        assert lang.REGISTRY[name] is language


def _outside_lang():
    for name, path in MODULES.items():
        if not name.startswith("tensorlang.lang"):
            yield name, path


def test_nothing_outside_lang_imports_a_front_end():
    allowed = {"tensorlang.lang", "tensorlang.lang.language"}
    found = sorted(f"{name} imports {t}" for name, _ in _outside_lang() for t in _graph()[name]
                   if t.startswith("tensorlang.lang") and t not in allowed)
    assert found == []


#: What front-end dispatch looks like in code: comparing a language, reading a program's
#: language, or naming a front end in a string.
DISPATCH = re.compile(
    r"""\blang\s*[!=]=|\bprogram\.lang\b|isinstance\([^)]*\b(teil|cfd|tl)_?ast\b|["'](%s)["']""" % "|".join(FRONT_ENDS)
)


@pytest.mark.parametrize("name", [name for name, _ in _outside_lang()])
def test_no_front_end_dispatch_outside_lang(name):
    hits = [f"{n}: {line.strip()}" for n, line in enumerate(MODULES[name].read_text().splitlines(), 1)
            if DISPATCH.search(line)]
    assert hits == []


def test_the_dispatch_pattern_would_catch_dispatch():
    for line in ('if program.lang == "teil":', "return checked.program.lang", "if lang == 'cfd':", 'isinstance(p, teil_ast.Program)',
                 'lang or "tl"'):
        assert DISPATCH.search(line), line
    assert not DISPATCH.search("language = languages.get(name)")


#: A call of the model language's parser: program text read back.
PARSE_MODEL = re.compile(r"\bparse_model\(")


def _parse_model_calls(name: str) -> list[str]:
    return [f"{name}:{n}: {line.strip()}" for n, line in enumerate(MODULES[name].read_text().splitlines(), 1)
            if PARSE_MODEL.search(line) and not line.lstrip().startswith("#")]


def test_only_the_model_language_parses_model_text():
    """Programs that Python builds (einsum, the builder, field probes) reach the compiler
    as EIN or as an AST, never as text printed and parsed again: ``parse_model(`` is
    called only inside lang/tl/ (issue 40)."""
    found = [hit for name in MODULES if not name.startswith("tensorlang.lang.tl")
             for hit in _parse_model_calls(name)]
    assert found == []


def test_the_parse_model_claim_would_catch_a_call(monkeypatch, tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("from .tl.parser import parse_model\n\ndef check(spec):\n    return parse_model(text(spec))\n")
    monkeypatch.setitem(MODULES, "tensorlang.lang.einsum.probe", path)
    assert _parse_model_calls("tensorlang.lang.einsum.probe") == ["tensorlang.lang.einsum.probe:4: return parse_model(text(spec))"]
    assert _parse_model_calls("tensorlang.lang.tl.parser")  # where it is defined and called: allowed there only


def test_a_new_front_end_is_one_language_value_and_one_registry_line(monkeypatch, tmp_path):
    """A toy front end (the model language written upside down: statements first) plugs
    in by a Language value and a registry entry; compile, check, run, --emit ast and the
    interpreter all reach it without any other change."""
    import numpy as np

    import tensorlang as tl
    from tensorlang import lang
    from tensorlang.lang import tl as model

    def parse(text, params):
        lines = text.strip().splitlines()
        return model.parser.parse_model("\n".join([l for l in lines if "var" in l] + [l for l in lines if "var" not in l]))

    toy = lang.Language(name="toy", suffixes=(".toy",), parse=parse, check=model.LANGUAGE.check,
                        lower=model.LANGUAGE.lower, interpret=model.LANGUAGE.interpret,
                        print=lambda ast: "// toy\n" + model.LANGUAGE.print(ast))
    monkeypatch.setitem(lang.REGISTRY, "toy", toy)
    monkeypatch.setitem(lang.SUFFIXES, ".toy", "toy")
    path = tmp_path / "prog.toy"
    path.write_text("C = A # B . [2 3]\nin var A : [2 3]\nin var B : [3 2]\nout var C : [2 2]\n")
    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    for backend in ("interp", "numpy"):
        np.testing.assert_allclose(tl.compile(path, backend=backend)(A=a, B=b)["C"], a @ b)
    assert tl.compile(path, backend="interp").ir("ast").startswith("// toy\n")
    tl.check(path)


# ------------------------------------------------------------------ the back half (pipeline)
ABOVE_TARGETS = {"tensorlang.kernel", "tensorlang.pipeline", "tensorlang.stages", "tensorlang.api",
                 "tensorlang.specialize"}


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("tensorlang.targets")))
def test_no_target_imports_the_kernel_or_the_driver(name):
    """Targets are renderers of the pipeline's values: they never see a Kernel."""
    assert _graph()[name] & ABOVE_TARGETS == set()



#: Where a BLAS step runs (the steps' ``runs``, schedule/gemm.py) and whether a packed product
#: is a BLAS call (loops.ir.BlasProduct) are the schedule's and the loop stage's choices: under
#: targets/ the BLAS's integer limit is only reported, as a capability (``Caps.blas_int_max``).
BLAS_LIMIT_REPORTED_IN = {"tensorlang.targets"}


def _blas_limit_readers() -> list[str]:
    return [f"{name}:{n}" for name, path in MODULES.items()
            if name.startswith("tensorlang.targets") and name not in BLAS_LIMIT_REPORTED_IN
            for n, line in enumerate(path.read_text().splitlines(), 1) if "int_max" in line.split("#")[0]]


def test_no_target_decides_where_blas_runs():
    """The C target reads where a BLAS step runs; it never tests the BLAS's limit itself."""
    assert _blas_limit_readers() == []


def test_the_blas_limit_claim_would_catch_a_reader(monkeypatch, tmp_path):
    fake = tmp_path / "codegen.py"
    fake.write_text("def f(step, caps):\n    return caps.blas_int_max is not None\n")
    monkeypatch.setitem(MODULES, "tensorlang.targets.c.fake", fake)
    assert _blas_limit_readers() == ["tensorlang.targets.c.fake:2"]


def _plan_callers() -> list[str]:
    found = []
    for name, path in MODULES.items():
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if re.search(r"(?<![_a-zA-Z])plan\(", code) and not code.lstrip().startswith("def "):
                found.append(f"{name}:{n}")
    return found


def test_the_schedule_is_planned_in_one_place():
    """``plan(`` has one caller: the pipeline's schedule stage (and no other function of
    that name is called, as ``module.plan(``, to blur the issue's ``grep "[^_a-z]plan("``)."""
    callers = _plan_callers()
    assert len(callers) == 1 and callers[0].startswith("tensorlang.pipeline:"), callers


#: The machine's facts and the thresholds tuned to its memory system: defined in
#: machine/__init__.py only (issue 40, "C as C"); a module that needs one imports it from there.
MACHINE_FACTS = {"FALLBACK_L1", "FALLBACK_L2", "WIDTHS", "DEFAULT_BYTES", "BLAS_INT_MAX", "CACHE_LINE_BYTES",
                 "TILE_BYTES", "TILE_VECTORS", "STACK_BYTES", "PARALLEL_WORK",
                 "SIMD_REDUCTION_MIN", "HINT_MIN_SLAB_AMD"}
#: How the machine is asked, in machine.py only: its cores, its affinity, its caches.
MACHINE_QUESTIONS = re.compile(r"os\.cpu_count\(|sched_getaffinity\(|SC_LEVEL\d|/sys/devices/system/cpu")


def _machine_facts_outside(name: str) -> list[str]:
    tree = ast.parse(MODULES[name].read_text())
    found = [f"{name}:{node.lineno}: defines {target.id}" for node in tree.body
             if isinstance(node, (ast.Assign, ast.AnnAssign))
             for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
             for target in (target.elts if isinstance(target, ast.Tuple) else [target])
             if isinstance(target, ast.Name) and target.id in MACHINE_FACTS]
    found += [f"{name}:{n}: asks the machine" for n, line in enumerate(MODULES[name].read_text().splitlines(), 1)
              if MACHINE_QUESTIONS.search(line.split("#")[0])]
    return found


def test_the_machines_facts_live_in_machine_py_only():
    """Caches, vector and tile widths, the cache line, prefetch distances, a thread's
    stack, BLAS integers and the default thread threshold are defined in machine.py, and
    only machine.py asks the operating system about cores and caches."""
    from tensorlang import machine

    assert MACHINE_FACTS <= set(vars(machine))
    assert [hit for name in MODULES if name != "tensorlang.machine" for hit in _machine_facts_outside(name)] == []


def test_the_machine_facts_claim_would_catch_a_definition(monkeypatch, tmp_path):
    path = tmp_path / "tiles.py"
    path.write_text("import os\n\nTILE_BYTES = 64\nA, STACK_BYTES = 1, 2\nCPUS = os.cpu_count()  # cores\n")
    monkeypatch.setitem(MODULES, "tensorlang.loops.tiles", path)
    assert _machine_facts_outside("tensorlang.loops.tiles") == [
        "tensorlang.loops.tiles:3: defines TILE_BYTES", "tensorlang.loops.tiles:4: defines STACK_BYTES",
        "tensorlang.loops.tiles:5: asks the machine"]
    assert _machine_facts_outside("tensorlang.machine")


#: What finding a BLAS looks like in code (docstrings and comments aside): the libraries
#: that list or hold one, a search for a library by name, a BLAS symbol looked up by name.
BLAS_LOOKUPS = {"threadpoolctl", "scipy.linalg.cython_blas", "cython_blas"}
BLAS_SYMBOL = re.compile(r"(?i)cblas_|openblas|blas")


def _blas_discovery_outside(name: str) -> list[str]:
    """Where module ``name`` finds a BLAS: imports threadpoolctl or scipy's cython_blas,
    calls ``find_library``, opens a library whose name mentions BLAS with ``ctypes``, or
    looks up a symbol named ``cblas_...``/``openblas_...`` in code."""
    tree = ast.parse(MODULES[name].read_text())
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or "", *(f"{node.module}.{alias.name}" for alias in node.names)]
            if any(module in BLAS_LOOKUPS or module.startswith("threadpoolctl.") for module in modules):
                found.append(f"{name}:{node.lineno}: imports a BLAS finder")
        elif isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee == "find_library":
                found.append(f"{name}:{node.lineno}: searches for a library")
            elif callee in ("CDLL", "LoadLibrary") and any(
                    isinstance(c, ast.Constant) and isinstance(c.value, str) and BLAS_SYMBOL.search(c.value)
                    for arg in node.args for c in ast.walk(arg)):
                found.append(f"{name}:{node.lineno}: opens a BLAS")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and re.search(r"(?i)\bcblas_|\bopenblas_", node.value)):
            found.append(f"{name}:{node.lineno}: names a BLAS symbol")
    return sorted(found, key=lambda hit: (int(hit.split(":")[1]), hit))


def test_blas_is_found_in_the_machine_layer_only():
    """Which BLAS the machine has, with which calling convention and symbols, is found in
    machine/blas.py only; the C target renders the calls (targets/c/blascall.py) with the
    functions it is handed."""
    from tensorlang.machine import blas

    assert {"find", "why_not", "clear", "BlasFunctions", "CBLAS64", "CBLAS32", "FORTRAN32"} <= set(vars(blas))
    assert _blas_discovery_outside("tensorlang.machine.blas")
    assert [hit for name in MODULES if name != "tensorlang.machine.blas" for hit in _blas_discovery_outside(name)] == []


def test_the_blas_claim_would_catch_a_discovery(monkeypatch, tmp_path):
    path = tmp_path / "runtime.py"
    path.write_text('"""Finds cblas_dgemm (a docstring)."""\nimport ctypes\nfrom ctypes.util import find_library\n'
                    "from threadpoolctl import threadpool_info\n"
                    "dll = ctypes.CDLL(f\"libopenblas{find_library('x')}.so\")\n"
                    "gemm = getattr(dll, f\"cblas_{'d'}gemm\")\nother = ctypes.CDLL('libgomp.so.1')\n")
    monkeypatch.setitem(MODULES, "tensorlang.targets.c.runtime", path)
    assert _blas_discovery_outside("tensorlang.targets.c.runtime") == [
        "tensorlang.targets.c.runtime:4: imports a BLAS finder", "tensorlang.targets.c.runtime:5: opens a BLAS",
        "tensorlang.targets.c.runtime:5: searches for a library", "tensorlang.targets.c.runtime:6: names a BLAS symbol"]


def _node_kinds() -> list[type]:
    from tensorlang.ein import ir

    return [c for c in vars(ir).values()
            if isinstance(c, type) and issubclass(c, ir.Node) and c is not ir.Node and c.__module__ == ir.__name__]


def test_every_node_kind_has_an_entry_in_each_evaluators_table():
    """Evaluators dispatch on node kinds through tables: adding a kind to ein/ir.py means
    one entry per table, and this lists the missing ones (docs/architecture.md, "Add a
    node kind")."""
    from tensorlang.ein.interp import EVALUATE
    from tensorlang.ein.printer import RENDER

    kinds = _node_kinds()
    assert len(kinds) >= 11
    missing = [f"{table}: {kind.__name__}" for table, entries in (("ein.interp.EVALUATE", EVALUATE),
                                                                  ("ein.printer.RENDER", RENDER))
               for kind in kinds if kind not in entries]
    assert missing == []


# ------------------------------------------------------------------ size budgets per layer
#: The layers of the size budget (docs/architecture.md, "Size budgets"): the first rule
#: that matches a file's path under src/tensorlang/ decides; .py, .c and .h files count.
SIZE_LAYERS = (
    ("compiled strands", ("strand_ir/", "lang/diderot/lower.py", "targets/c/strands", "targets/c/csrc/strands")),
    ("structure", ("ein/structure.py", "lang/tl/structure.py", "lang/stur/", "analysis/structure",
                   "loops/structure.py")),
    ("fields", ("fields/", "sampling/", "ein/fields.py", "passes/fields.py")),
    ("strands", ("strands/",)),
    ("core", ("ein/", "passes/", "semantics/", "analysis/")),
    ("diderot", ("lang/diderot/",)),
    ("front ends", ("lang/",)),
    ("schedule+loops", ("schedule/", "loops/")),
    ("targets", ("targets/", "machine/")),
    ("surface", ("",)),
)

#: Lines per layer that the design aims for (issue [pipeline]).
BUDGETS = {"compiled strands": 2500, "core": 5000, "front ends": 5000, "diderot": 2000, "structure": 3500,
           "schedule+loops": 3500, "targets": 4000, "fields": 2000, "strands": 1000, "surface": 2500}

#: Where a layer is still over its budget: the most it may have today.  A ratchet: lower
#: it when a change makes the layer smaller, never raise it without saying why in
#: docs/architecture.md.
CEILINGS = {"compiled strands": 5704, "diderot": 4207, "structure": 3922, "schedule+loops": 4017, "targets": 5276, "fields": 2554, "surface": 3794, "strands": 1060}


def layer_sizes() -> dict[str, int]:
    sizes = dict.fromkeys(BUDGETS, 0)
    for path in SRC.rglob("*"):
        if path.suffix not in (".py", ".c", ".h") or not path.is_file():
            continue
        relative = path.relative_to(SRC).as_posix()
        layer = next(name for name, prefixes in SIZE_LAYERS if any(relative.startswith(p) for p in prefixes))
        sizes[layer] += len(path.read_text(encoding="utf-8").splitlines())
    return sizes


def test_every_layer_keeps_its_size_budget():
    sizes = layer_sizes()
    over = {layer: f"{size} lines > {max(BUDGETS[layer], CEILINGS.get(layer, 0))}"
            for layer, size in sizes.items() if size > max(BUDGETS[layer], CEILINGS.get(layer, 0))}
    assert over == {}


def test_a_ceiling_is_only_kept_where_the_layer_is_over_its_budget():
    """A ceiling at or under the budget has done its job: delete it."""
    assert all(CEILINGS[layer] > BUDGETS[layer] for layer in CEILINGS)


# ------------------------------------------------------------------ the test tree
TESTS = Path(__file__).resolve().parent

#: The test files at the top of tests/, each with the top-level module of
#: src/tensorlang/ it tests ("" for the package as a whole).  Every other test lives in
#: the folder of the package it tests, or in a cross-cutting folder below.
TOP_LEVEL_TESTS = {
    "test_api.py": "api.py", "test_api_keywords.py": "api.py", "test_cli.py": "cli.py",
    "test_run_timing.py": "cli.py", "test_contract_expression.py": "einsum_api.py",
    "test_errors.py": "errors.py", "test_limits.py": "limits.py", "test_missing_inputs.py": "kernel.py", "test_kernel.py": "kernel.py",
    "test_pipeline.py": "pipeline.py", "test_stages.py": "stages.py", "test_testing_api.py": "testing.py",
    "test_architecture.py": "", "test_packaging.py": "", "test_spec_conformance.py": "",
}

#: Folders of tests/ that mirror no package of src/tensorlang/, and why.
CROSS_CUTTING = {
    "properties": "hypothesis generators and the differential harness, over every layer",
    "fuzz": "fuzzers of the front ends, the API and the command line",
    "docs": "the documentation's examples and claims, a newcomer's first use",
    "hostile": "hostile inputs, bounded work and odd environments, over every surface",
    "bench": "the benchmark package (benchmarks/), outside src/",
    "diderot": "the Diderot front end (lang/diderot/) with its strands, runner and C",
    "structure": "structure inference and its schedules (ein/, analysis/, loops/, lang/stur/)",
    "padding": "padded storage from the API to the C loops (schedule/padding.py and targets)",
}


def test_top_level_test_files_are_only_those_of_top_level_modules():
    """A new test goes into the folder of the module it tests (tests/<package>/...);
    a top-level file is listed here with the top-level module it mirrors."""
    found = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert found == sorted(TOP_LEVEL_TESTS), "move new top-level tests into tests/<package>/"
    assert all(module == "" or (SRC / module).is_file() for module in TOP_LEVEL_TESTS.values())


def test_no_two_test_files_share_a_name():
    """pytest imports test files by their base name (the folders have no __init__.py):
    two files of one name in different folders stop the whole run at collection."""
    names = [p.name for p in TESTS.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_every_test_folder_mirrors_a_package_or_is_cross_cutting():
    """tests/<a>/<b>/ holding tests mirrors src/tensorlang/<a>/<b>/ unless <a> is listed
    as cross-cutting."""
    strays = []
    for path in TESTS.rglob("test_*.py"):
        parts = path.relative_to(TESTS).parts[:-1]
        if not parts or parts[0] in CROSS_CUTTING:
            continue
        if not (SRC.joinpath(*parts)).is_dir():
            strays.append("/".join(parts))
    assert sorted(set(strays)) == []
    assert all((TESTS / folder).is_dir() for folder in CROSS_CUTTING)


def test_the_longest_test_files_named_for_the_order_of_the_full_run_exist():
    """tests/conftest.py's LONGEST_FILES (the files the workers take first) names test files
    that exist, each once: a renamed file would drop out of the order without a word."""
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))  # (`import conftest` may find another folder's)
    names = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                 and any(getattr(t, "id", "") == "LONGEST_FILES" for t in node.targets))
    assert len(names) > 10 and len(set(names)) == len(names)
    assert [name for name in names if not (TESTS / name).is_file()] == []
