"""A forgotten input of a program without ``in``/``out`` qualifiers is error[input]
naming it (docs/api.md, "Inputs of a program without qualifiers"), on every back end,
in the CLI and for symbolic sizes; ``allow_missing=True`` / ``--allow-missing`` is the
documented opt-in to ⊥ (000 §5)."""

import json

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main

FIG4 = "examples/fig4_matrix_product.tl"  # var A : [30 40]; var B; var C; C = (A # B) . [2 3]
BACKENDS = [b for b in ("interp", "numpy", "c") if b in tl.available_backends()]
a = np.random.default_rng(1).standard_normal((30, 40))
b = np.random.default_rng(2).standard_normal((40, 50))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_forgotten_input_is_named(backend):
    k = tl.compile(FIG4, backend=backend)
    assert k.unassigned_reads == ("A", "B") and k.required_inputs == ("A", "B")
    with pytest.raises(tl.TensorLangError) as caught:
        k(A=a)
    err = caught.value
    assert err.code == "input" and "missing input 'B' of shape [40 50]" in err.message
    assert "allow_missing=True" in err.message and "--allow-missing" in err.message
    assert err.line == 6  # the declaration of B
    with pytest.raises(tl.TensorLangError, match=r"missing input 'A'.*\(also 'B'\)"):
        k.run({})
    np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_allow_missing_runs_with_bottom(backend):
    k = tl.compile(FIG4, backend=backend, allow_missing=True)
    assert k.required_inputs == () and k.unassigned_reads == ("A", "B")
    res = k(A=a)
    assert np.isnan(res["C"]).all() and np.isnan(res["B"]).all()


def test_a_variable_assigned_before_it_is_read_is_not_required():
    k = tl.compile("var x : [2]\nvar y : [2]\nvar z : [2]\ny = x * 2\nz = y + x\n", backend="numpy")
    assert k.required_inputs == ("x",)
    np.testing.assert_array_equal(k(x=[1.0, 2.0])["z"], [3.0, 6.0])
    # and an in-place statement reads its target first: that one is an input
    assert tl.compile("var x : [2]\nx = x + x\n", backend="numpy").required_inputs == ("x",)


def test_qualified_programs_are_unchanged():
    k = tl.compile("in var A : [2]\nout var C : [2]\nC = A + A", backend="numpy")
    assert k.unassigned_reads == () and k.required_inputs == ("A",)
    with pytest.raises(tl.TensorLangError) as caught:
        k()
    assert caught.value.message == "missing input 'A' of shape [2]"


def test_symbolic_sizes_check_each_specialisation():
    k = tl.compile("var x : [n]\nvar y : [n]\nvar z : [n]\nz = x + y\n", backend="numpy")
    with pytest.raises(tl.TensorLangError, match="missing input 'y'"):
        k(x=np.ones(3), z=np.ones(3))
    assert np.isnan(tl.compile("var x : [n]\nvar y : [n]\nvar z : [n]\nz = x + y\n", backend="numpy",
                               allow_missing=True)(x=np.ones(3), z=np.ones(3))["z"]).all()


def test_allow_missing_is_checked():
    with pytest.raises(tl.TensorLangError, match="allow_missing must be True or False"):
        tl.compile(FIG4, allow_missing="yes")


def test_the_cli_names_the_input_and_offers_the_option(capsys):
    assert main(["run", FIG4, "--backend", "numpy"]) == 1
    err = capsys.readouterr().err
    assert "error[input]: missing input 'A'" in err and "--allow-missing" in err
    assert main(["run", FIG4, "--backend", "numpy", "--allow-missing", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["results"]["C"]["checksum"] == "nan"  # ⊥ throughout
    assert main(["run", FIG4, "--backend", "numpy", "--random-inputs", "--json"]) == 0  # random A and B
    assert sorted(json.loads(capsys.readouterr().out)["inputs"]) == ["A", "B"]
