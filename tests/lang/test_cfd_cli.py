"""The command line with CFDlang programs: --param, --lang cfd, --emit tl."""

from __future__ import annotations


import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main
from corpus import ROOT

EXAMPLES = ROOT / "examples" / "cfd"


def cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out and "Traceback" not in err
    return rc, out, err


def test_check_cfd_examples_with_and_without_param(capsys):
    # a symbolic size checks as a symbol; --param binds it first
    rc, out, err = cli(capsys, "check", *sorted(EXAMPLES.glob("*.cfd")))
    assert rc == 0, err
    assert out.count(": ok") == len(list(EXAMPLES.glob("*.cfd")))
    rc, out, err = cli(capsys, "check", EXAMPLES / "inverse_helmholtz.cfd", "--param", "n=5")
    assert rc == 0, err
    # a program that has no size n: --param n is a mistake, not silence
    rc, out, err = cli(capsys, "check", EXAMPLES / "gradient.cfd", "--param", "n=5")
    assert rc == 1 and "error[input]" in err and "'n'" in err


def test_run_without_the_param_names_it(capsys):
    rc, out, err = cli(capsys, "run", EXAMPLES / "inverse_helmholtz.cfd", "--random-inputs")
    assert rc == 1
    assert "error[input]" in err and "--param n=" in err


@pytest.mark.parametrize("bad", ["n", "n=", "n=0", "n=-2", "n=abc", "n=2.5", "1n=3", "=3"])
def test_malformed_param_is_an_input_error(capsys, bad):
    rc, out, err = cli(capsys, "check", EXAMPLES / "interpolation.cfd", "--param", bad)
    assert rc == 1 and "error[input]" in err and "--param" in err


def test_run_helmholtz_with_params_writes_the_numpy_result(capsys, tmp_path):
    n = 3
    rng = np.random.default_rng(4)
    arrays = {k: rng.standard_normal((n, n)) for k in "ABC"}
    arrays |= {"D": rng.standard_normal((n, n, n)), "u": rng.standard_normal((n, n, n))}
    np.savez(tmp_path / "in.npz", **arrays)
    rc, out, err = cli(capsys, "run", EXAMPLES / "inverse_helmholtz.cfd", "--param", f"n={n}",
                       "--inputs", tmp_path / "in.npz", "--output", tmp_path / "out.npz", "--backend", "numpy")
    assert rc == 0, err
    A, B, C, D, u = (arrays[k] for k in "ABCDu")
    t = D * np.einsum("ai,bj,ck,abc->ijk", A, B, C, u)
    expected = np.einsum("ia,jb,kc,abc->ijk", A, B, C, t)
    with np.load(tmp_path / "out.npz") as results:
        np.testing.assert_allclose(results["v"], expected, rtol=1e-12, atol=1e-12)


def test_lang_cfd_reads_standard_input(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("var input a : [2]\nvar output b : [2 2]\nb = [a a]\n"))
    rc, out, err = cli(capsys, "run", "-", "--lang", "cfd", "--random-inputs", "--backend", "interp")
    assert rc == 0, err
    assert "b  [2 2]" in out


def test_emit_tl_prints_the_equivalent_model_program(capsys, tmp_path):
    rc, out, err = cli(capsys, "compile", EXAMPLES / "gradient.cfd", "--emit", "tl")
    assert rc == 0, err
    assert "in var u : [6 6 6]" in out and "out var v : [3 6 6 6]" in out
    assert "v = [Dx # u . [[2 3]], Dy # u . [[2 4]], Dz # u . [[2 5]]]" in out
    model = tl.compile(out, backend="numpy")
    cfd = tl.compile(EXAMPLES / "gradient.cfd", backend="numpy")
    rng = np.random.default_rng(5)
    inputs = {name: rng.standard_normal(cfd.shapes[name]) for name in cfd.inputs}
    np.testing.assert_array_equal(model(**inputs)["v"], cfd(**inputs)["v"])


def test_emit_tl_with_param_and_output_file(capsys, tmp_path):
    target = tmp_path / "helmholtz.tl"
    rc, out, err = cli(capsys, "compile", EXAMPLES / "inverse_helmholtz.cfd", "--emit", "tl",
                       "--param", "n=2", "-o", target)
    assert rc == 0, err
    text = target.read_text()
    assert "var t : [2 2 2]" in text
    assert "t = D * (A # B # C # u . [[1 7] [3 8] [5 9]])" in text
    tl.check(text)


def test_model_language_program_takes_params_for_its_sizes_only(capsys, tmp_path):
    path = tmp_path / "p.tl"
    path.write_text("var x : [2]\nx = x + x\n")
    rc, out, err = cli(capsys, "check", path, "--param", "n=3")
    assert rc == 1 and "error[input]" in err and "no symbolic sizes" in err
    path.write_text("var x : [n]\nx = x + x\n")
    rc, out, err = cli(capsys, "check", path, "--param", "n=3")
    assert rc == 0, err
