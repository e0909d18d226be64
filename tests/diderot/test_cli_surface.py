"""Every CLI command on a Diderot program: a result or one clear error, never error[internal]."""

import json

import pytest

from tensorlang.cli import main

PROGRAM = """input real a ("a value") = 1.0;
strand s (int i) { output real x = a*i; update { stabilize; } }
initially [ s(i) | i in 0..3 ];
"""


@pytest.fixture
def prog(tmp_path):
    path = tmp_path / "t.diderot"
    path.write_text(PROGRAM)
    return str(path)


def test_check_and_the_parsed_tree(prog, capsys):
    assert main(["check", prog]) == 0
    assert main(["compile", prog, "--emit", "ast"]) == 0
    assert "InputDecl" in capsys.readouterr().out
    assert main(["compile", prog, "--emit", "ast", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["language"] == "diderot"


@pytest.mark.parametrize("argv", [["compile", "{}", "--emit", "c"], ["compile", "{}", "--emit", "ein"],
                                  ["compile", "{}", "--emit", "opt"], ["analyze", "{}"]])
def test_kernel_stages_say_run_it_instead(prog, argv, capsys):
    code = main([a.format(prog) for a in argv])
    err = capsys.readouterr().err
    assert code != 0 and "error[backend]" in err and "tensorlang run" in err and "internal" not in err
