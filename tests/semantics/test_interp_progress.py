"""Progress for long reference-interpreter runs (issue 24): ``tensorlang run --backend
interp`` shows a bar over the statements and suggests ``--backend c`` when the estimated
work is large -- only on a terminal, never with --json or --quiet, never for small
programs -- and the interpreters' hook costs nothing when nobody observes."""

import json
import sys

import pytest

import tensorlang as tl
from tensorlang import cli
from tensorlang.cli import main
from tensorlang.semantics import progress

PROGRAM = ("in var A : [4 4]\nin var u : [3 4 4]\nout var v : [3 4 4]\nvar t : [3 4 4]\n"
           "t[e,i,j] = sum(k) A[i,k] * u[e,k,j]\nv[e,i,j] = sum(k) t[e,i,k] * A[j,k]\n")


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.tl"
    path.write_text(PROGRAM)
    return str(path)


@pytest.fixture
def terminal(monkeypatch):
    """stderr is a terminal and every program counts as long."""
    monkeypatch.setattr(cli, "_terminal", lambda: True)
    monkeypatch.setattr(cli, "INTERP_LONG_FLOPS", 1)


def test_a_long_run_on_a_terminal_shows_progress_and_the_hint(program, terminal, capsys):
    pytest.importorskip("rich")
    assert main(["run", program, "--backend", "interp", "--random-inputs"]) == 0
    captured = capsys.readouterr()
    assert "--backend c" in captured.err and "interpreter" in captured.err
    assert "statements" in captured.err and "2/2" in captured.err  # the bar, at its end
    assert "results" in captured.out and "interpreter" not in captured.out


@pytest.mark.parametrize("flag", ["--json", "--quiet"])
def test_json_and_quiet_runs_show_none(program, terminal, capsys, flag):
    assert main(["run", program, "--backend", "interp", "--random-inputs", flag]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    if flag == "--json":
        assert json.loads(captured.out)["backend"] == "interp"


def test_no_progress_off_a_terminal_for_small_programs_or_compiled_back_ends(program, capsys, monkeypatch):
    assert main(["run", program, "--backend", "interp", "--random-inputs"]) == 0  # not a terminal
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(cli, "_terminal", lambda: True)
    assert main(["run", program, "--backend", "interp", "--random-inputs"]) == 0  # small: 10^7 flops at least
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(cli, "INTERP_LONG_FLOPS", 1)
    assert main(["run", program, "--backend", "numpy", "--random-inputs"]) == 0  # compiled: never
    assert capsys.readouterr().err == ""


def test_without_rich_only_the_hint(program, terminal, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "rich.progress", None)  # import fails as if not installed
    assert main(["run", program, "--backend", "interp", "--random-inputs"]) == 0
    err = capsys.readouterr().err
    assert "--backend c" in err and "statements" not in err


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("path", [None, EXAMPLES / "teil" / "fig7_matrix_product.teil",
                                  EXAMPLES / "fig18_interpolation_immediate.tl"])
def test_the_hook_reports_every_statement_and_changes_no_result(path, capsys):
    args = ["run", str(path) if path else "-", "--backend", "interp", "--random-inputs", "--json"]
    if path is None:
        kernel = tl.compile(PROGRAM, backend="interp")
        import numpy as np
        inputs = {"A": np.eye(4), "u": np.arange(48.0).reshape(3, 4, 4)}
        run = lambda: kernel(**inputs)  # noqa: E731
    else:
        def run():
            assert main(args) == 0
            return json.loads(capsys.readouterr().out)["results"]
    plain = run()
    seen = []
    with progress.observing(lambda done, total: seen.append((done, total))):
        observed = run()
    total = seen[0][1]
    assert total >= 1 and seen[:total + 1] == [(n, total) for n in range(total + 1)]
    assert str(plain) == str(observed)


def test_unobserved_statements_are_handed_back_as_they_are():
    items = [1, 2, 3]
    assert progress.statements(items) is items
