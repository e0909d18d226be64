"""The command line (SPEC section 6): exit codes, diagnostics, inputs and outputs."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.cli import main

MATMUL = "in var A : [2 3]\nin var B : [3 4]\nout var C : [2 4]\nC = A # B . [2 3]\n"
# unqualified: every variable is inout; x and y are read before assigned
AXPY = "var s : []\nvar x : [5]\nvar y : [5]\nvar z : [5]\nz = s * x + y\n"


def cli(capsys, *args):
    """Run the CLI in-process; return (exit status, stdout, stderr)."""
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out and "Traceback" not in err
    return rc, out, err


def summary_lines(out: str) -> dict[str, str]:
    """{name: 'checksum=...'} from run's summary of its results."""
    found = {}
    for line in out.splitlines():
        m = re.match(r"^\s+(\w+)\s+\[[\d ]*\]\s+min=\S+ max=\S+ (checksum=\S+)", line)
        if m:
            found[m[1]] = m[2]
    return found


@pytest.fixture
def matmul(tmp_path):
    path = tmp_path / "mm.tl"
    path.write_text(MATMUL)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    np.save(tmp_path / "A.npy", a)
    np.save(tmp_path / "B.npy", b)
    np.savez(tmp_path / "AB.npz", A=a, B=b)
    return path, a, b


def assert_input_error(rc, out, err):
    assert rc == 1, (out, err)
    assert "error[input]" in err, err
    assert "time:" not in out  # nothing ran


# --------------------------------------------------------------------------- check
def test_check_ok(tmp_path, capsys):
    p = tmp_path / "ok.tl"
    p.write_text(MATMUL)
    rc, out, err = cli(capsys, "check", p)
    assert rc == 0
    assert err == ""
    assert str(p) in out


def test_check_quiet_prints_nothing(tmp_path, capsys):
    p = tmp_path / "ok.tl"
    p.write_text(MATMUL)
    assert cli(capsys, "check", "-q", p) == (0, "", "")


def test_check_rejected_program(tmp_path, capsys):
    p = tmp_path / "bad.tl"
    p.write_text("var a : [2]\nvar b : [3]\na = a + b\n")
    rc, out, err = cli(capsys, "check", p)
    assert rc == 1
    assert err.startswith(f"{p}:3:5: error[shape]: ")
    assert "a = a + b" in err and "^" in err and "t-elem" in err
    assert "bad.tl: ok" not in out


def test_check_several_files(tmp_path, capsys):
    good1, bad1, good2, bad2 = (tmp_path / n for n in ("g1.tl", "b1.tl", "g2.tl", "b2.tl"))
    good1.write_text(MATMUL)
    good2.write_text(AXPY)
    bad1.write_text("var x : [2]\nx = y\n")
    bad2.write_text("var x : [2]\nx = x . [1 2\n")
    rc, out, err = cli(capsys, "check", good1, bad1, good2, bad2)
    assert rc == 1
    # every file is checked, the good ones are reported ok, the bad ones diagnosed
    assert f"{good1}: ok" in out and f"{good2}: ok" in out
    assert f"{bad1}:2:5: error[undeclared]" in err
    assert f"{bad2}:" in err and "error[syntax]" in err
    assert str(bad1) not in out and str(bad2) not in out


def test_check_all_good_files(tmp_path, capsys):
    files = []
    for i, text in enumerate([MATMUL, AXPY]):
        files.append(tmp_path / f"p{i}.tl")
        files[-1].write_text(text)
    rc, out, err = cli(capsys, "check", *files)
    assert (rc, err) == (0, "")
    assert out.count(": ok") == 2


def test_check_missing_file(tmp_path, capsys):
    rc, out, err = cli(capsys, "check", tmp_path / "nope.tl")
    assert rc == 1
    assert "error[input]" in err and "nope.tl" in err


def test_check_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("var x : [2]\nx = x + y\n"))
    rc, out, err = cli(capsys, "check", "-")
    assert rc == 1
    assert err.startswith("<stdin>:2:9: error[undeclared]")


# --------------------------------------------------------------------------- run: inputs
def test_run_with_input_files(matmul, capsys):
    path, a, b = matmul
    d = path.parent
    rc, out, err = cli(capsys, "run", path, "--input", f"A={d / 'A.npy'}", "--input", f"B={d / 'B.npy'}")
    assert (rc, err) == (0, "")
    sums = summary_lines(out)
    assert list(sums) == ["C"]
    assert float(sums["C"].partition("=")[2]) == pytest.approx((a @ b).sum(), rel=1e-9)
    assert "[2 4]" in out
    assert "time:" in out


def test_run_text_and_json_say_the_same(matmul, capsys, tmp_path):
    """One report, two renderings: the text names every input with its shape and origin,
    and every result with the JSON's min, max and checksum."""
    path, _, _ = matmul
    argv = ["run", path, "--inputs", tmp_path / "AB.npz", "--input", f"A={tmp_path / 'A.npy'}", "--backend", "numpy",
            "--output", tmp_path / "res"]
    rc, text, _ = cli(capsys, *argv)
    rc_json, out, _ = cli(capsys, *argv, "--json")
    assert rc == rc_json == 0
    report = json.loads(out)
    assert report["output"] == str(tmp_path / "res.npz") and text.endswith(f"wrote 1 result(s) to {tmp_path / 'res.npz'}\n")
    assert text.startswith(f"ran {path} (tl) on back end numpy, float64\ninputs:\n")
    for name, facts in report["inputs"].items():
        assert re.search(rf"^  {name}  \[{' '.join(map(str, facts['shape']))}\] +{re.escape(facts['from'])}$", text, re.M)
    assert report["inputs"]["A"]["from"] == str(tmp_path / "A.npy") and report["inputs"]["B"]["from"] == str(tmp_path / "AB.npz")
    c = report["results"]["C"]
    assert f"min={c['min']:.6g} max={c['max']:.6g} checksum={c['checksum']:.10g}" in text
    assert f"(median of {report['seconds']['warm_calls']} warm calls" in text


def test_run_with_npz_inputs_and_output(matmul, capsys, tmp_path):
    path, a, b = matmul
    out_file = tmp_path / "res.npz"
    rc, out, err = cli(capsys, "run", path, "--inputs", tmp_path / "AB.npz", "--output", out_file)
    assert (rc, err) == (0, "")
    with np.load(out_file) as res:
        assert sorted(res.files) == ["C"]
        expected = tl.compile(str(path))(A=a, B=b)["C"]
        np.testing.assert_allclose(res["C"], expected, rtol=1e-12)
        np.testing.assert_allclose(res["C"], a @ b, rtol=1e-12)
        assert res["C"].dtype == np.float64


def test_run_input_overrides_nothing_else(matmul, capsys, tmp_path):
    """--input and --inputs combine; --input wins for a name given twice."""
    path, a, b = matmul
    other = np.ones((2, 3))
    np.save(tmp_path / "ones.npy", other)
    out_file = tmp_path / "res.npz"
    rc, _, err = cli(capsys, "run", path, "--inputs", tmp_path / "AB.npz", "--input", f"A={tmp_path / 'ones.npy'}",
                     "--output", out_file)
    assert (rc, err) == (0, "")
    with np.load(out_file) as res:
        np.testing.assert_allclose(res["C"], other @ b, rtol=1e-12)


def test_run_refuses_one_input_given_twice(matmul, capsys):
    """--input A=x --input A=y: which one was meant is not guessed (the last one was taken)."""
    path, _, _ = matmul
    d = path.parent
    rc, out, err = cli(capsys, "run", path, "--input", f"A={d / 'A.npy'}", "--input", f"A={d / 'B.npy'}",
                       "--input", f"B={d / 'B.npy'}")
    assert rc == 1 and out == ""
    assert "error[input]" in err and "--input A= is given more than once" in err
    assert "Traceback" not in err


def test_run_random_inputs_deterministic(matmul, capsys):
    path, _, _ = matmul
    rc1, out1, _ = cli(capsys, "run", path, "--random-inputs=7")
    rc2, out2, _ = cli(capsys, "run", path, "--random-inputs=7")
    rc3, out3, _ = cli(capsys, "run", path, "--random-inputs=8")
    assert rc1 == rc2 == rc3 == 0
    assert summary_lines(out1) == summary_lines(out2)
    assert summary_lines(out1) != summary_lines(out3)


def test_run_random_inputs_default_seed(matmul, capsys):
    path, _, _ = matmul
    rc, out_default, _ = cli(capsys, "run", path, "--random-inputs")
    assert rc == 0
    rc, out_zero, _ = cli(capsys, "run", path, "--random-inputs=0")
    assert rc == 0
    assert summary_lines(out_default) == summary_lines(out_zero)
    assert "C" in summary_lines(out_default)


@pytest.mark.parametrize("decl", ["where i1 = 3", "symmetric", "upper", "col(2)"])
def test_random_inputs_keep_the_structure_the_program_promises(decl, capsys, tmp_path):
    """A structured input drawn at random keeps its promise (zeros, symmetric copies), so
    every back end computes the same thing (the C target computes on the unique set only:
    with the promise broken its result would differ from the dense reference's)."""
    path = tmp_path / "s.tl"
    path.write_text(f"in var B : [40 40] {decl}\nin var C : [40 40]\nout var A : [40 40]\n"
                    "A[i,j] = sum(k) B[i,k] * C[k,j]\n")
    sums = set()
    for backend in [b for b in ("c", "numpy", "interp") if b in tl.available_backends()]:
        rc, out, _ = cli(capsys, "run", path, "--random-inputs", "--check-structure", "--backend", backend,
                         "--output", tmp_path / f"{backend}.npz")
        assert rc == 0 and "made to keep the structure" in out
        with np.load(tmp_path / f"{backend}.npz") as res:
            sums.add(round(float(res["A"].sum()), 9))
    assert len(sums) == 1, sums


def test_random_stur_inputs_keep_unique_sets_and_redundancy_maps(capsys, tmp_path):
    """A zero outside T:U and a scaled copy by T:R (BANDED: B(i,j) = -2 B(j,i) below the
    diagonal) are what --check-structure accepts."""
    from lang.stur.test_stur import BANDED

    path = tmp_path / "banded.stur"
    path.write_text(BANDED)
    rc, out, err = cli(capsys, "run", path, "--param", "W=5", "--random-inputs", "--check-structure",
                       "--backend", "numpy")
    assert (rc, err) == (0, "") and "made to keep the structure" in out


def test_random_inputs_fill_only_missing_inputs(matmul, capsys, tmp_path):
    path, a, _ = matmul
    out1, out2 = tmp_path / "r1.npz", tmp_path / "r2.npz"
    assert cli(capsys, "run", path, "--random-inputs=3", "--input", f"A={tmp_path / 'A.npy'}", "--output", out1)[0] == 0
    zeros = np.zeros((2, 3))
    np.save(tmp_path / "Z.npy", zeros)
    assert cli(capsys, "run", path, "--random-inputs=3", "--input", f"A={tmp_path / 'Z.npy'}", "--output", out2)[0] == 0
    with np.load(out1) as r1, np.load(out2) as r2:
        assert np.abs(r1["C"]).sum() > 0
        np.testing.assert_array_equal(r2["C"], np.zeros((2, 4)))  # the given A was used, not a random one


def test_run_unqualified_random_inputs_returns_whole_store(tmp_path, capsys):
    p = tmp_path / "axpy.tl"
    p.write_text(AXPY)
    out_file = tmp_path / "axpy.npz"
    rc, out, err = cli(capsys, "run", p, "--random-inputs=5", "--output", out_file)
    assert (rc, err) == (0, "")
    assert sorted(summary_lines(out)) == ["s", "x", "y", "z"]
    with np.load(out_file) as res:
        np.testing.assert_allclose(res["z"], res["s"] * res["x"] + res["y"], rtol=1e-12)
        assert not np.isnan(res["z"]).any()


def test_run_float32(matmul, capsys, tmp_path):
    path, a, b = matmul
    out_file = tmp_path / "f32.npz"
    rc, out, err = cli(capsys, "run", path, "--inputs", tmp_path / "AB.npz", "--dtype", "float32", "--output", out_file)
    assert (rc, err) == (0, "")
    assert "float32" in out
    with np.load(out_file) as res:
        assert res["C"].dtype == np.float32
        np.testing.assert_allclose(res["C"], a @ b, rtol=1e-5, atol=1e-6)


def test_run_program_from_stdin(matmul, capsys, monkeypatch, tmp_path):
    path, a, b = matmul
    monkeypatch.setattr(sys, "stdin", io.StringIO(MATMUL))
    out_file = tmp_path / "stdin.npz"
    rc, out, err = cli(capsys, "run", "-", "--inputs", tmp_path / "AB.npz", "--output", out_file)
    assert (rc, err) == (0, "")
    with np.load(out_file) as res:
        np.testing.assert_allclose(res["C"], a @ b, rtol=1e-12)


def test_run_output_without_suffix_gets_npz(matmul, capsys, tmp_path):
    path, a, b = matmul
    rc, _, err = cli(capsys, "run", path, "--inputs", tmp_path / "AB.npz", "--output", tmp_path / "plain")
    assert (rc, err) == (0, "")
    with np.load(tmp_path / "plain.npz") as res:
        np.testing.assert_allclose(res["C"], a @ b, rtol=1e-12)


# --------------------------------------------------------------------------- run: errors
def test_run_missing_program(tmp_path, capsys):
    rc, out, err = cli(capsys, "run", tmp_path / "missing.tl", "--random-inputs")
    assert_input_error(rc, out, err)
    assert "missing.tl" in err


def test_run_rejected_program(tmp_path, capsys):
    p = tmp_path / "bad.tl"
    p.write_text("in var a : [2]\nout var b : [2]\nb = a . [1 2]\n")
    rc, out, err = cli(capsys, "run", p, "--random-inputs")
    assert rc == 1
    assert err.startswith(f"{p}:3:9: error[dim-range]")


def test_run_missing_input(matmul, capsys):
    path, _, _ = matmul
    rc, out, err = cli(capsys, "run", path, "--input", f"A={path.parent / 'A.npy'}")
    assert_input_error(rc, out, err)
    assert "'B'" in err
    assert f"{path}:2:" in err  # points at B's declaration


def test_run_missing_input_file(matmul, capsys):
    path, _, _ = matmul
    rc, out, err = cli(capsys, "run", path, "--input", f"A={path.parent / 'nothere.npy'}", "--random-inputs")
    assert_input_error(rc, out, err)
    assert "nothere.npy" in err


def test_run_missing_npz_file(matmul, capsys):
    path, _, _ = matmul
    rc, out, err = cli(capsys, "run", path, "--inputs", path.parent / "nothere.npz")
    assert_input_error(rc, out, err)


def test_run_wrongly_shaped_npy(matmul, capsys, tmp_path):
    path, _, _ = matmul
    np.save(tmp_path / "wrong.npy", np.ones((3, 2)))
    rc, out, err = cli(capsys, "run", path, "--input", f"A={tmp_path / 'wrong.npy'}", "--random-inputs")
    assert_input_error(rc, out, err)
    assert "[3 2]" in err and "[2 3]" in err


def test_run_unknown_variable_in_input(matmul, capsys, tmp_path):
    path, _, _ = matmul
    rc, out, err = cli(capsys, "run", path, "--input", f"Q={tmp_path / 'A.npy'}", "--random-inputs")
    assert_input_error(rc, out, err)
    assert "'Q'" in err


def test_run_out_variable_as_input(matmul, capsys, tmp_path):
    path, _, _ = matmul
    np.save(tmp_path / "C.npy", np.ones((2, 4)))
    rc, out, err = cli(capsys, "run", path, "--input", f"C={tmp_path / 'C.npy'}", "--random-inputs")
    assert_input_error(rc, out, err)


@pytest.mark.parametrize("item", ["A", "=A.npy", "A=", ""])
def test_run_malformed_input_option(matmul, capsys, item):
    path, _, _ = matmul
    rc, out, err = cli(capsys, "run", path, "--input", item, "--random-inputs")
    assert_input_error(rc, out, err)


@pytest.mark.parametrize(
    "content",
    [
        b"garbage bytes, not an array at all",
        b"",
        b"\x93NUMPY",  # a magic number and nothing else
    ],
    ids=["garbage", "empty", "magic-only"],
)
def test_run_corrupt_npy(matmul, capsys, tmp_path, content):
    path, _, _ = matmul
    bad = tmp_path / "bad.npy"
    bad.write_bytes(content)
    rc, out, err = cli(capsys, "run", path, "--input", f"A={bad}", "--random-inputs")
    assert_input_error(rc, out, err)


def test_run_truncated_npy(matmul, capsys, tmp_path):
    path, _, _ = matmul
    data = (tmp_path / "A.npy").read_bytes()
    bad = tmp_path / "trunc.npy"
    bad.write_bytes(data[:-10])
    rc, out, err = cli(capsys, "run", path, "--input", f"A={bad}", "--random-inputs")
    assert_input_error(rc, out, err)


def test_run_npy_with_corrupt_header(matmul, capsys, tmp_path):
    path, _, _ = matmul
    data = (tmp_path / "A.npy").read_bytes()
    bad = tmp_path / "hdr.npy"
    bad.write_bytes(data[:10] + b"xx" + data[12:])  # damage the header's opening "{'"
    rc, out, err = cli(capsys, "run", path, "--input", f"A={bad}", "--random-inputs")
    assert_input_error(rc, out, err)


def test_run_npz_given_to_input(matmul, capsys, tmp_path):
    path, _, _ = matmul
    rc, out, err = cli(capsys, "run", path, "--input", f"A={tmp_path / 'AB.npz'}", "--random-inputs")
    assert_input_error(rc, out, err)


def test_run_corrupt_npz_given_to_inputs(matmul, capsys, tmp_path):
    path, _, _ = matmul
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip archive")
    rc, out, err = cli(capsys, "run", path, "--inputs", bad)
    assert_input_error(rc, out, err)


def test_run_npy_given_to_inputs(matmul, capsys, tmp_path):
    path, _, _ = matmul
    rc, out, err = cli(capsys, "run", path, "--inputs", tmp_path / "A.npy")
    assert_input_error(rc, out, err)


@pytest.mark.parametrize("where", ["missing-dir", "parent-is-a-file"])
def test_run_unwritable_output_fails_before_running(matmul, capsys, tmp_path, where):
    path, _, _ = matmul
    target = tmp_path / "no" / "such" / "dir" / "out.npz" if where == "missing-dir" else path / "out.npz"
    rc, out, err = cli(capsys, "run", path, "--inputs", tmp_path / "AB.npz", "--output", target)
    assert_input_error(rc, out, err)
    assert "checksum=" not in out  # the error came before any result was computed and lost
    assert not target.exists()


def test_run_backend_c_without_a_compiler_is_a_backend_error(matmul, capsys, tmp_path, monkeypatch):
    path, _, _ = matmul
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    rc, out, err = cli(capsys, "run", path, "--inputs", tmp_path / "AB.npz", "--backend", "c")
    assert rc == 1
    assert "error[backend]" in err and "C compiler" in err
    assert "checksum=" not in out


@pytest.mark.parametrize("backend", ["c", "numpy", "interp", "auto"])
def test_run_with_each_backend_gives_the_same_results(matmul, capsys, tmp_path, backend):
    path, a, b = matmul
    target = tmp_path / f"{backend}.npz"
    rc, out, err = cli(capsys, "run", path, "--inputs", tmp_path / "AB.npz", "--backend", backend, "--output", target)
    assert rc == 0, err
    with np.load(target) as saved:
        np.testing.assert_allclose(saved["C"], a @ b, rtol=1e-12)


# --------------------------------------------------------------------------- compile
@pytest.mark.parametrize(
    "text",
    [
        MATMUL,
        AXPY,
        "var A : [2 2]\nvar B : [2 2]\nvar s : []\n"
        "s = -(A # B) . [[1 3] [2 4]] * 2.5 - s / 4 + s * s\nA = (A - B) - (A - B ^ [1 2])\nB = exp(-A # s) ^ [1 2] . [1 2] * B\n",
    ],
    ids=["matmul", "axpy", "mixed"],
)
def test_compile_emit_ast_round_trips(tmp_path, capsys, text):
    p = tmp_path / "p.tl"
    p.write_text(text)
    rc, out, err = cli(capsys, "compile", p, "--emit", "ast")
    assert (rc, err) == (0, "")
    assert out == text  # printed back exactly (comparing ASTs would recurse too deep here)
    # and writing to a file gives the same text
    target = tmp_path / "ast.tl"
    rc, out2, err = cli(capsys, "compile", p, "--emit", "ast", "-o", target)
    assert (rc, out2, err) == (0, "", "")
    assert target.read_text() == out


def test_compile_rejected_program(tmp_path, capsys):
    p = tmp_path / "bad.tl"
    p.write_text("var x : [2]\nx = x # x\n")
    rc, out, err = cli(capsys, "compile", p, "--emit", "ast")
    assert rc == 1
    assert err.startswith(f"{p}:2:1: error[assign-shape]")
    assert out == ""


# --------------------------------------------------------------------------- subprocess
def _script() -> list[str]:
    exe = shutil.which("tensorlang")
    if exe is None:  # pragma: no cover - the package is installed with its console script
        pytest.skip("the tensorlang console script is not on PATH")
    return [exe]


def test_console_script_run_and_check(matmul, tmp_path):
    path, a, b = matmul
    out_file = tmp_path / "sub.npz"
    proc = subprocess.run(
        _script() + ["run", str(path), "--inputs", str(tmp_path / "AB.npz"), "--output", str(out_file)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    with np.load(out_file) as res:
        np.testing.assert_allclose(res["C"], a @ b, rtol=1e-12)

    bad = tmp_path / "bad.tl"
    bad.write_text("var x : [2]\n\nx = x +  y\n")
    proc = subprocess.run(_script() + ["check", str(bad), str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{bad}:3:10: error[undeclared]")
    assert f"{path}: ok" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_console_script_stdin_and_input_errors(matmul, tmp_path):
    path, _, _ = matmul
    proc = subprocess.run(_script() + ["run", "-", "--random-inputs=2"], input=MATMUL,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "C" in summary_lines(proc.stdout)
    garbage = tmp_path / "garbage.npy"
    garbage.write_bytes(b"\x00\x01 definitely not numpy \xff" * 4)
    proc = subprocess.run(_script() + ["run", str(path), "--input", f"A={garbage}", "--random-inputs"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "error[input]" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_compile_emit_ast_of_a_long_accepted_chain(tmp_path, capsys):
    p = tmp_path / "chain.tl"
    text = "var x : []\nx = " + " + ".join(["x"] * 600) + "\n"
    p.write_text(text)
    assert cli(capsys, "check", p)[0] == 0
    rc, out, err = cli(capsys, "compile", p, "--emit", "ast")
    assert (rc, err) == (0, "")
    assert out == text  # printed back exactly (comparing ASTs would recurse too deep here)


def test_random_inputs_before_the_program_is_not_taken_for_a_seed(matmul, capsys):
    path, _, _ = matmul
    rc, out_before, err = cli(capsys, "run", "--random-inputs", path)
    assert (rc, err) == (0, "")
    assert summary_lines(out_before) == summary_lines(cli(capsys, "run", path, "--random-inputs=0")[1])


def test_a_param_given_twice_with_different_values_is_an_input_error(tmp_path, capsys):
    path = tmp_path / "p.cfd"
    path.write_text("type m : [n]\nvar input x : m\nvar output y : m\ny = x\n")
    rc, out, err = cli(capsys, "check", path, "--param", "n=3", "--param", "n=4")
    assert rc == 1 and "error[input]" in err and "given twice" in err


def test_run_summary_of_results_with_infinities_prints_no_warning(tmp_path, capsys):
    path = tmp_path / "inf.tl"
    path.write_text("var x : [2]\nx = x / 0\n")
    np.save(tmp_path / "x.npy", np.array([1.0, -1.0]))
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error")
        rc, out, err = cli(capsys, "run", path, "--input", f"x={tmp_path / 'x.npy'}")
    assert rc == 0, err
    assert "checksum=nan" in out


# --------------------------------------------------------------------------- compile -o, every stage and front end
STAGE_PROGRAMS = {
    "mm.tl": MATMUL,
    "mm.cfd": "var input A : [2 3]\nvar input B : [3 4]\nvar output C : [2 4]\nC = A . B\n",
    "mm.teil": "in alloc A : [2, 3]\nin alloc B : [3, 4]\nout alloc C : [2, 4]\nC = red+ 2 (diag 2 3 (prod A B))\n",
    "cov.stur": "symbols: R, F\ncov(a, b) := data(r, a) * data(r, b)\ncov:D(a, b) := (0 <= a < F) * (0 <= b < F)\n"
                "data:D(r, a) := (0 <= r < R) * (0 <= a < F)\n",
    "mm.einsum": "ij,jk->ik : [2 3] [3 4]\n",
    "t.diderot": "input real a (\"a value\") = 1.0;\nstrand s (int i) { output real x = a*i; update { stabilize; } }\n"
                 "initially [ s(i) | i in 0..3 ];\n",
}
EMIT_STAGES = ["ast", "tl", "teil", "core", "ein", "lambda", "opt", "facts", "schedule", "loops", "c", "numpy"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STAGE_PROGRAMS))
def test_compile_o_writes_every_stage_to_the_file_and_nothing_to_stdout(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_text(STAGE_PROGRAMS[name])
    params = ["--param", "R=3", "--param", "F=2"] if name.endswith(".stur") else []
    written = 0
    for stage in EMIT_STAGES:
        for json_form in ([], ["--json"]) if stage in ("ast", "ein", "opt") else ([],):
            argv = ["compile", path, "--emit", stage, *json_form, *params]
            rc, shown, err = cli(capsys, *argv)
            target = tmp_path / f"{stage}.out"
            rc_o, out_o, err_o = cli(capsys, *argv, "-o", target)
            assert (rc_o, err_o) == (rc, err), (name, stage)
            assert out_o == "", (name, stage)  # -o: nothing on standard output
            if rc == 0:
                assert target.read_text(encoding="utf-8") == shown, (name, stage)
                written += 1
            else:
                assert not target.exists()
    assert written >= 2  # every front end has at least its ast (text and JSON)


def test_compile_o_of_a_strand_program_writes_the_file(tmp_path, capsys):
    # a strand program takes its own path (no kernel): -o was once ignored there
    path = tmp_path / "t.diderot"
    path.write_text(STAGE_PROGRAMS["t.diderot"])
    for extra in ([], ["--json"]):
        rc, out, err = cli(capsys, "compile", path, "--emit", "ast", *extra, "-o", tmp_path / "ast.txt")
        assert (rc, out, err) == (0, "", "")
        written = (tmp_path / "ast.txt").read_text()
        assert ('"language": "diderot"' if extra else "InputDecl") in written


@pytest.mark.parametrize("where", ["missing-dir/out.txt", "a-file/out.txt", "."])
def test_compile_o_into_a_place_that_cannot_be_written_is_an_input_error(tmp_path, capsys, where):
    for name in ("mm.tl", "t.diderot"):
        path = tmp_path / name
        path.write_text(STAGE_PROGRAMS[name])
        (tmp_path / "a-file").write_text("")
        rc, out, err = cli(capsys, "compile", path, "-o", tmp_path / where)
        assert rc == 1 and out == "" and "error[input]" in err and "cannot write" in err, err


# --------------------------------------------------------------------------- --lang: the public front ends
@pytest.mark.parametrize("command", ["check", "run", "compile", "analyze"])
def test_lang_help_offers_no_internal_front_end(capsys, command):
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "{cfd,diderot,einsum,stur,teil,tl}" in out
    assert "ein_built" not in out and "builder" not in out


@pytest.mark.parametrize("lang", ["ein_built", "builder"])
@pytest.mark.parametrize("command", ["check", "run", "compile", "analyze"])
def test_lang_naming_an_internal_front_end_is_a_usage_error(tmp_path, capsys, command, lang):
    path = tmp_path / "mm.tl"
    path.write_text(MATMUL)
    with pytest.raises(SystemExit) as stop:
        main([command, "--lang", lang, str(path)])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert f"invalid choice: '{lang}'" in err and "'tl'" in err and "Traceback" not in err
    assert "ein_built" not in err.split("choose from")[1]


def test_an_unknown_language_from_python_lists_only_the_public_ones():
    with pytest.raises(tl.TensorLangError) as err:
        tl.check(MATMUL, lang="nope")
    assert err.value.code == "input" and "available: cfd, diderot, einsum, stur, teil, tl)" in err.value.message


# --------------------------------------------------------------------------- run --lang diderot
def test_run_lang_diderot_runs_a_strand_program_of_any_name(tmp_path, capsys):
    # once error[backend] "a diderot program is a program of strands: run it with tensorlang run"
    path = tmp_path / "prog.txt"
    path.write_text(STAGE_PROGRAMS["t.diderot"])
    rc, out, err = cli(capsys, "run", "--lang", "diderot", path, "-a", "2", "-o", tmp_path / "x.nrrd")
    assert (rc, err) == (0, "") and (tmp_path / "x.nrrd").exists()
    rc, out, err = cli(capsys, "run", "--lang", "diderot", path, "-h")
    assert rc == 0 and "-a" in out and f"tensorlang run {path}" in out


def test_run_lang_diderot_reads_the_program_from_standard_input(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(STAGE_PROGRAMS["t.diderot"]))
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli(capsys, "run", "--lang", "diderot", "-", "-o", "x.nrrd")
    assert (rc, err) == (0, "") and (tmp_path / "x.nrrd").exists()


#: where --lang stands: once only right after `run` made a strand program of another name
#: run; anywhere else argparse took it and the kernel path said "run it with tensorlang run"
LANG_PLACES = {"before": ["--lang", "diderot", "{p}", "-a", "2"], "after": ["{p}", "--lang", "diderot", "-a", "2"],
               "last": ["{p}", "-a", "2", "--lang", "diderot"], "before=": ["--lang=diderot", "{p}", "-a", "2"],
               "after=": ["{p}", "--lang=diderot", "-a", "2"]}


@pytest.mark.parametrize("place", sorted(LANG_PLACES))
def test_run_lang_diderot_before_or_after_the_path_runs_the_same(tmp_path, capsys, place):
    path = tmp_path / "prog.txt"
    path.write_text(STAGE_PROGRAMS["t.diderot"])
    reference, written = tmp_path / "ref.nrrd", tmp_path / "x.nrrd"
    assert cli(capsys, "run", "--lang", "diderot", path, "-a", "2", "-o", reference)[0] == 0
    rc, out, err = cli(capsys, "run", *[w.format(p=path) for w in LANG_PLACES[place]], "-o", written)
    assert (rc, err) == (0, "") and written.read_bytes() == reference.read_bytes()
    rc, out, err = cli(capsys, "run", *[w.format(p=path) for w in LANG_PLACES[place]], "-h")
    assert (rc, err) == (0, "") and "-a" in out and f"tensorlang run {path}" in out


def test_run_lang_diderot_after_standard_input(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(STAGE_PROGRAMS["t.diderot"]))
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli(capsys, "run", "-", "-o", "x.nrrd", "--lang", "diderot")
    assert (rc, err) == (0, "") and (tmp_path / "x.nrrd").exists()


def test_run_lang_of_a_kernel_language_after_a_diderot_path_is_taken_as_before_it(tmp_path, capsys):
    path = tmp_path / "t.diderot"
    path.write_text(STAGE_PROGRAMS["t.diderot"])
    before = cli(capsys, "run", "--lang", "tl", path)
    after = cli(capsys, "run", path, "--lang", "tl")
    assert before == after and before[0] == 1 and "error[syntax]" in before[2]  # read as the model language


@pytest.mark.parametrize("where", ["before", "after"])
def test_run_backend_chooses_where_a_strand_program_runs(tmp_path, capsys, monkeypatch, where):
    # once "--backend c" before the path was taken for the path ("run it with tensorlang run")
    # and after it for the program's option (error[input] "unknown option")
    from tensorlang import strand_ir
    from tensorlang.strands.runner import BACKEND_ENV

    path = tmp_path / "t.diderot"
    path.write_text(STAGE_PROGRAMS["t.diderot"])
    monkeypatch.setitem(strand_ir.UNAVAILABLE, "c", lambda: "no C compiler: 'cc' is not on PATH (set $CC)")
    monkeypatch.setenv(BACKEND_ENV, "auto")

    def run(backend: str):
        words = ["--backend", backend, path] if where == "before" else [path, f"--backend={backend}"]
        return cli(capsys, "run", *words, "-o", tmp_path / "x.nrrd")
    rc, out, err = run("auto")
    assert rc == 0 and err.count("tensorlang: note:") == 1  # the control: auto falls back and says so
    rc, out, err = run("interp")
    assert (rc, err) == (0, "")
    monkeypatch.setenv(BACKEND_ENV, "interp")  # the option wins over the variable
    rc, out, err = run("c")
    assert rc == 1 and "error[backend]" in err and "not on PATH" in err
    rc, out, err = run("numpy")
    assert rc == 1 and "error[backend]" in err and "auto, c (generated C), interp" in err
    rc, out, err = run("gpu")  # (no back end at all: it was "unknown option '--backend'", from the program's parser)
    assert rc == 1 and "error[backend]: back end 'gpu'" in err
    assert "program of strands" not in err


def test_run_with_a_kernel_option_before_a_strand_program_says_which_options_apply(tmp_path, capsys):
    # "--threads 4": the 4 is taken for the path, argparse compiles the program as a kernel;
    # the error once only said "run it with tensorlang run", which the user had done
    path = tmp_path / "t.diderot"
    path.write_text(STAGE_PROGRAMS["t.diderot"])
    rc, out, err = cli(capsys, "run", "--threads", "4", path)
    assert rc == 1 and "error[backend]" in err and "only --lang and --backend apply" in err


@pytest.mark.parametrize("argv", [["run", "--lang", "tl", "{mm}", "--random-inputs"], ["run", "{mm}", "--random-inputs"]])
def test_run_lang_of_a_kernel_language_still_runs_the_kernel(tmp_path, capsys, argv):
    (tmp_path / "mm.tl").write_text(MATMUL)
    rc, out, err = cli(capsys, *[a.format(mm=tmp_path / "mm.tl") for a in argv])
    assert rc == 0 and "ran " in out


def test_check_reads_standard_input_once(monkeypatch, capsys):
    # the second '-' once read an empty program and said "ok"
    monkeypatch.setattr(sys, "stdin", io.StringIO(MATMUL))
    rc, out, err = cli(capsys, "check", "-", "-")
    assert rc == 1 and out == "" and "error[input]" in err and "standard input" in err


@pytest.mark.parametrize("pad", ["²", "--4", "٤x"])
def test_pad_that_is_no_number_is_an_input_error_not_an_internal_one(tmp_path, capsys, pad):
    """``--pad=²`` and ``--pad=--4`` passed isdigit() and then failed int(): error[internal], exit 3."""
    prog = tmp_path / "m.tl"
    prog.write_text(MATMUL)
    rc, _, err = cli(capsys, "compile", prog, "--emit", "c", f"--pad={pad}")
    assert rc == 1 and "error[input]: pad must be a power of two" in err and f"got {pad!r}" in err
    rc, _, err = cli(capsys, "compile", prog, "--emit", "c", "--pad= ٤ ")  # Arabic-Indic four: 4, as int() reads it
    assert rc == 0, err


def test_param_of_more_digits_than_int_reads_is_too_large_not_a_traceback(tmp_path, capsys):
    """``--param n=`` with 5000 digits raised int()'s ValueError out of main (a traceback)."""
    prog = tmp_path / "m.tl"
    prog.write_text("in var A : [n]\nout var B : [n]\nB = A\n")
    rc, _, err = cli(capsys, "check", prog, f"--param=n={'9' * 5000}")
    assert rc == 1 and "error[too-large]: --param n: a size of 5000 digits is 2^62 or more" in err
    rc, _, err = cli(capsys, "check", prog, f"--param=n={'0' * 4400}4")  # 4: its leading zeros are no size
    assert rc == 0, err


def test_pad_of_more_digits_than_int_reads_says_so(tmp_path, capsys):
    """argparse named the converter ("invalid _pad value") and echoed all 5000 digits."""
    prog = tmp_path / "m.tl"
    prog.write_text(MATMUL)
    with pytest.raises(SystemExit) as caught:
        cli(capsys, "compile", prog, f"--pad={'1' * 5000}")
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "argument --pad: a number of 5000 digits is too large" in err and len(err) < 1000
    rc, _, err = cli(capsys, "compile", prog, "--emit", "c", f"--pad={'0' * 4400}4")
    assert rc == 0, err


@pytest.mark.parametrize("argv", [["check", "{p}", "--param=--"], ["run", "{p}", "--output=--"],
                                  ["compile", "{p}", "--emit=--"], ["compile", "{p}", "-o=--"],
                                  ["run", "{p}", "--random-inputs=--"]])
def test_an_option_given_as_equals_double_dash_is_a_usage_error(tmp_path, capsys, argv):
    """argparse read ``--param=--`` as an empty list: a traceback out of main, or error[internal]."""
    prog = tmp_path / "m.tl"
    prog.write_text(MATMUL)
    with pytest.raises(SystemExit) as stop:
        main([a.format(p=prog) for a in argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"argument {argv[2].partition('=')[0]}: expected one argument" in err


def test_a_program_named_like_an_option_after_double_dash_is_read(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-x=--").write_text(MATMUL)
    rc, out, err = cli(capsys, "check", "--", "-x=--")
    assert rc == 0 and out == "-x=--: ok\n", err


def test_plot_to_a_name_too_long_is_an_input_error(tmp_path, capsys):
    """``Path.is_fifo`` raised ENAMETOOLONG (Python 3.11 passes on that errno): error[internal], exit 3."""
    pytest.importorskip("matplotlib")
    prog = tmp_path / "m.tl"
    prog.write_text(MATMUL)
    rc, _, err = cli(capsys, "analyze", prog, f"--plot={tmp_path / ('x' * 300)}.png")
    assert rc == 1 and "error[input]: --plot: cannot write" in err and "too long" in err
