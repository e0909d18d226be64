"""What a new user meets first: the version, ``python -m tensorlang``, ``explain``, the
JSON outputs, help on every option, hints for numpy-style code, ``s = sum(i) ...`` for a
rank-0 target, and kernels that refuse positional arguments (issue 24)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tensorlang as tl
from tensorlang import cli
from tensorlang.errors import CODES
from tensorlang.explain import EXPLANATIONS

ROOT = Path(__file__).resolve().parents[2]
MATMUL = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n"


def run_cli(capsys, *args):
    rc = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


# --------------------------------------------------------------------------- tooling
def test_version_comes_from_the_package_metadata(capsys):
    try:
        expected = metadata.version("tensorlang")
    except metadata.PackageNotFoundError:  # a source checkout: pyproject.toml's
        expected = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert tl.__version__ == expected
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"tensorlang {expected}"


def test_python_dash_m_tensorlang_runs_the_command_line(tmp_path):
    prog = tmp_path / "mm.tl"
    prog.write_text(MATMUL)
    env_path = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-m", "tensorlang", "check", str(prog)], capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{prog}: ok"


def test_the_license_is_the_mit_license_pyproject_names():
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def _all_actions(parser: argparse.ArgumentParser, path=("tensorlang",)):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name != "bench":  # tensorlang_bench's own parser, tested there
                    yield from _all_actions(sub, path + (name,))
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_option_and_argument_has_help_text():
    missing = [f"{' '.join(path)} {action.dest}" for path, action in _all_actions(cli.build_parser())
               if not action.help]
    assert missing == []


def test_lang_offers_exactly_the_registered_front_ends():
    from tensorlang.lang import PUBLIC, REGISTRY

    choices = {tuple(sorted(a.choices)) for _, a in _all_actions(cli.build_parser()) if a.dest == "lang"}
    assert choices == {tuple(sorted(PUBLIC))}  # the internal ones (ein_built, builder) are not offered
    assert set(REGISTRY) - set(PUBLIC) == {"ein_built", "builder"}
    assert "stur" in REGISTRY  # STUR (paper 003) is a front end since issue 17


# --------------------------------------------------------------------------- explain
@pytest.mark.parametrize("code", sorted(CODES))
def test_explain_prints_every_code(capsys, code):
    rc, out, err = run_cli(capsys, "explain", code)
    assert (rc, err) == (0, "")
    assert out.startswith(f"error[{code}]: ")
    assert EXPLANATIONS[code].detail[:40] in out.replace("\n", " ")


def _run_example(entry, text: str) -> None:
    if entry.kind == "program":
        tl.check(text)
    else:
        exec(compile(text, f"<explain {entry.code}>", "exec"), {})


@pytest.mark.parametrize("code", sorted(c for c, e in EXPLANATIONS.items() if e.example))
def test_each_explained_example_fails_with_exactly_its_code_and_its_fix_works(code):
    entry = EXPLANATIONS[code]
    with pytest.raises(tl.TensorLangError) as info:
        _run_example(entry, entry.example)
    assert info.value.code == code
    _run_example(entry, entry.fix)  # raises nothing


def test_only_codes_nothing_can_produce_on_purpose_lack_an_example():
    assert {c for c, e in EXPLANATIONS.items() if not e.example} == {"internal"}


def test_explain_lists_codes_and_refuses_unknown_ones(capsys):
    rc, out, _ = run_cli(capsys, "explain")
    assert rc == 0 and len(out.splitlines()) == len(CODES)
    assert run_cli(capsys, "explain", "error[shape]")[1].startswith("error[shape]")
    rc, _, err = run_cli(capsys, "explain", "nonsense")
    assert rc == 1 and "error[input]" in err and "dim-range" in err


# --------------------------------------------------------------------------- JSON
def test_check_json_reports_each_file_with_its_diagnostics(tmp_path, capsys):
    good, bad = tmp_path / "good.tl", tmp_path / "bad.tl"
    good.write_text(MATMUL)
    bad.write_text("var a : [2]\nvar b : [3]\na = a + b\n")
    rc, out, err = run_cli(capsys, "check", "--json", good, bad)
    assert (rc, err) == (1, "")
    reports = json.loads(out)
    assert [r["ok"] for r in reports] == [True, False]
    (diag,) = reports[1]["diagnostics"]
    assert diag["code"] == "shape" and (diag["line"], diag["col"]) == (3, 5) and diag["rule"] == "t-elem"
    assert reports[1]["file"] == str(bad)


def test_analyze_json_has_the_costs_before_and_after(capsys):
    rc, out, err = run_cli(capsys, "analyze", "--json", ROOT / "examples" / "interpolation_grouped.tl")
    assert (rc, err) == (0, "")
    facts = json.loads(out)
    assert facts["after"]["flops"] < facts["before"]["flops"]
    assert all({"statement", "flops", "bytes", "shape"} <= set(s) for s in facts["before"]["statements"])
    assert [p["name"] for p in facts["passes"]]


def test_run_json_and_quiet(tmp_path, capsys):
    prog = tmp_path / "mm.tl"
    prog.write_text(MATMUL)
    a = np.arange(6.0).reshape(2, 3)
    np.save(tmp_path / "A.npy", a)
    rc, out, err = run_cli(capsys, "run", prog, "--json", "--input", f"A={tmp_path / 'A.npy'}", "--random-inputs=4")
    assert (rc, err) == (0, "")
    facts = json.loads(out)
    assert facts["inputs"]["A"]["from"] == str(tmp_path / "A.npy")
    assert "seed 4" in facts["inputs"]["B"]["from"]
    assert facts["results"]["C"]["shape"] == [2, 4]
    assert facts["seconds"]["compile"] > 0 and facts["seconds"]["first_call"] > 0
    rc, out, err = run_cli(capsys, "run", prog, "-q", "--random-inputs", "--output", tmp_path / "r")
    assert (rc, out, err) == (0, f"{tmp_path / 'r.npz'}\n", "")


def test_run_says_what_ran_and_prints_small_results_whole(tmp_path, capsys):
    prog = tmp_path / "mm.tl"
    prog.write_text(MATMUL)
    rc, out, err = run_cli(capsys, "run", prog, "--random-inputs", "--backend", "numpy")
    assert (rc, err) == (0, "")
    assert f"ran {prog} (tl) on back end numpy, float64" in out
    assert "random uniform in [-1, 1], seed 0" in out
    assert "checksum: the sum of all elements" in out
    assert re.search(r"time: compile .*; run .* \(median of \d+ warm calls; first call", out)
    assert out.count("[[") == 1  # the 2x4 result printed whole


def test_large_results_are_summarised_not_printed(tmp_path, capsys):
    prog = tmp_path / "big.tl"
    prog.write_text("in var x : [20 20]\nout var y : [20 20]\ny = x * x\n")
    rc, out, _ = run_cli(capsys, "run", prog, "--random-inputs")
    assert rc == 0 and "[[" not in out and re.search(r"y\s+\[20 20\]\s+min=\S+ max=\S+ checksum=", out)


def test_nan_and_infinities_in_json_stay_valid_json(tmp_path, capsys):
    prog = tmp_path / "inf.tl"
    prog.write_text("var x : [3]\nx = x / 0\n")
    np.save(tmp_path / "x.npy", np.array([1.0, -1.0, 0.0]))
    rc, out, _ = run_cli(capsys, "run", prog, "--json", "--input", f"x={tmp_path / 'x.npy'}")
    assert rc == 0
    assert json.loads(out)["results"]["x"]["checksum"] == "nan"


def test_a_text_file_named_npz_is_a_clear_input_error(tmp_path, capsys):
    prog = tmp_path / "mm.tl"
    prog.write_text(MATMUL)
    fake = tmp_path / "AB.npz"
    fake.write_text("1 2 3\n4 5 6\n")
    for args in (["--inputs", fake], ["--input", f"A={fake}", "--random-inputs"]):
        rc, _, err = run_cli(capsys, "run", prog, *args)
        assert rc == 1 and "error[input]" in err and "the file is text" in err and "pickle" not in err


def test_too_large_names_the_back_end(tmp_path, capsys, monkeypatch):
    prog = tmp_path / "mm.tl"
    prog.write_text(MATMUL)
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", "64")
    rc, _, err = run_cli(capsys, "run", prog, "--random-inputs", "--backend", "interp")
    assert rc == 1 and "error[too-large]" in err and "back end interp" in err and "--backend c" in err


def test_no_colour_when_not_on_a_terminal(tmp_path, capsys):
    bad = tmp_path / "bad.tl"
    bad.write_text("var x : [2]\nx = y\n")
    _, _, err = run_cli(capsys, "check", bad)
    assert "\033[" not in err and "error[undeclared]" in err


# --------------------------------------------------------------------------- kernel calls
@pytest.mark.parametrize("args", [({"A": np.ones((2, 3)), "B": np.ones((3, 4))},), (np.ones((2, 3)), np.ones((3, 4)))],
                         ids=["dict", "arrays"])
@pytest.mark.parametrize("backend", ["numpy", "interp", "c"])
def test_positional_arguments_are_an_input_error_saying_how_to_call(args, backend):
    if backend not in tl.available_backends():
        pytest.skip("no C compiler")
    k = tl.compile(MATMUL, backend=backend)
    with pytest.raises(tl.TensorLangError) as info:
        k(*args)
    assert info.value.code == "input"
    assert "by name" in info.value.message and ("k.run(d)" in info.value.message or "A=..." in info.value.message)
    # out= is taken by keyword only, and still works
    c = np.zeros((2, 4))
    assert k(A=np.ones((2, 3)), B=np.ones((3, 4)), out={"C": c})["C"] is c
    np.testing.assert_array_equal(c, np.full((2, 4), 3.0))


# --------------------------------------------------------------------------- syntax
SPECIALS = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0])


@settings(max_examples=40, deadline=None)
@given(m=hnp.arrays(np.float64, (3, 3), elements=st.one_of(SPECIALS, st.floats(-1e3, 1e3))),
       word=st.sampled_from(["sum", "max", "min", "prod"]))
def test_rank0_target_without_brackets_equals_the_bracketed_form(m, word):
    """``s = sum(i) M[i,i]`` is ``s[] = sum(i) M[i,i]``: same AST, same results as the
    reference interpreter on inputs with NaN, infinities and signed zeros."""
    decls = "in var M : [3 3]\nout var s : []\n"
    plain = tl.compile(f"{decls}s = {word}(i) M[i,i] * 2 + 1\n", backend="numpy")
    bracketed = tl.compile(f"{decls}s[] = {word}(i) M[i,i] * 2 + 1\n", backend="interp")
    assert plain.program.stmts == bracketed.program.stmts or \
        plain.ir("ast").splitlines()[2] == bracketed.ir("ast").splitlines()[2]
    np.testing.assert_array_equal(plain(M=m)["s"], bracketed(M=m)["s"])


def test_rank0_form_on_a_tensor_target_is_a_shape_error():
    with pytest.raises(tl.TensorLangError) as info:
        tl.check("var M : [3 3]\nvar v : [3]\nv = sum(i) M[i,i]\n")
    assert info.value.code == "shape"


DECLS = "var A : [2 3]\nvar B : [3 2]\nvar C : [2 2]\nvar a : [3]\nvar s : []\n"


@pytest.mark.parametrize("line, right_form", [
    ("C = np.einsum('ij,jk->ik', A, B)", "C[i,k] = sum(j) A[i,j] * B[j,k]"),
    ('C = einsum("ij,jk", A, B)', "C[i,k] = sum(j) A[i,j] * B[j,k]"),
    ("s = einsum('ii', A)", "s[] = sum(i) A[i,i]"),
    ("C = np.dot(A, B)", "C[i,j] = sum(k) A[i,k] * B[k,j]"),
    ("C = A @ B", "C = A # B . [2 3]"),
    ("C = A.T", "C = A ^ [1 2]"),
    ("C = np.transpose(A)", "C = A ^ [1 2]"),
    ("s = np.trace(A)", "s = sum(i) A[i,i]"),
    ("s = np.sum(a)", "s = sum(i) a[i]"),
    ("s = jnp.exp(s)", "exp(s)"),
    ("C = A ** 2", "x * x"),
    ("C = A . [1, 2]", "[1 2]"),
    ("import numpy as np", "declarations"),
])
def test_foreign_forms_get_a_one_line_hint_with_the_tensorlang_form(line, right_form):
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(DECLS + line + "\n")
    assert info.value.code == "syntax"
    assert right_form in info.value.message and "\n" not in info.value.message
    assert info.value.line == 6


@pytest.mark.parametrize("text, right_form", [("var A : [3, 3]\n", "[3 3]"), ("var A : (3, 3)\n", "[3 3]")])
def test_commas_in_shapes_get_a_hint(text, right_form):
    with pytest.raises(tl.TensorLangError) as info:
        tl.check(text)
    assert info.value.code == "syntax" and right_form in info.value.message


def test_einsum_hints_compute_what_einsum_computes():
    """The statement an einsum hint proposes, run, equals numpy.einsum."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    for spec, shape in (("ij,jk->ik", [2, 2]), ("ij,jk->ki", [2, 2]), ("ij,jk", [2, 2]), ("ij,ji->", [])):
        with pytest.raises(tl.TensorLangError) as info:
            tl.check(DECLS + f"C = einsum('{spec}', A, B)\n")
        statement = info.value.message.rsplit("this one is ", 1)[1]
        decl = "out var C : [" + " ".join(map(str, shape)) + "]"
        k = tl.compile(f"in var A : [2 3]\nin var B : [3 2]\n{decl}\n{statement}\n", backend="numpy")
        np.testing.assert_allclose(k(A=a, B=b)["C"], np.einsum(spec, a, b), rtol=1e-12)


def test_zero_based_dimensions_say_they_are_numbered_from_one():
    with pytest.raises(tl.TensorLangError) as info:
        tl.check("var A : [3 3]\nvar s : []\ns = A . [0 1]\n")
    assert info.value.code == "dim-range" and "numbered from 1" in info.value.message


def test_plain_syntax_errors_keep_the_expected_tokens():
    with pytest.raises(tl.TensorLangError) as info:
        tl.check("var x : [2]\nx = x +\n")
    assert info.value.message.startswith("unexpected end of input; expected")
