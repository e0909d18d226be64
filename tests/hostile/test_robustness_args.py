"""Issue 16: nothing a user types in an argument (threads, an output path) can crash the
process, abort it inside OpenMP or end in an internal error."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import cli
from tensorlang.cli import main
from tensorlang.kernel import MAX_THREADS

PROGRAM = "in var x : [3]\nout var y : [3]\ny = 2 * x\n"


def cli_run(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


@pytest.fixture
def prog(tmp_path):
    path = tmp_path / "p.tl"
    path.write_text(PROGRAM)
    return path


# ------------------------------------------------------------------ threads
@pytest.mark.parametrize("threads", [1_000_000, 5000, 2**31, 2**64, MAX_THREADS + 1, 0, -1, True, 2.0, "4"])
def test_absurd_thread_counts_are_input_errors(threads):
    # before: 10**6 segfaulted in the C kernel, 5000 made libgomp abort, 2**31 overflowed
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(PROGRAM, backend="numpy", threads=threads)
    assert info.value.code == "input"
    assert str(MAX_THREADS) in info.value.message


@pytest.mark.parametrize("threads", [None, 1, 2, MAX_THREADS, np.int64(3)])
def test_sane_thread_counts_are_accepted(threads):
    k = tl.compile(PROGRAM, backend="numpy", threads=threads)
    np.testing.assert_array_equal(k(x=np.arange(3.0))["y"], [0, 2, 4])


def test_setting_kernel_threads_is_checked_too(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    # the C call path reads Kernel.threads: assigning an absurd count must not reach it
    k = tl.compile(PROGRAM, backend="numpy", threads=2)
    for bad in (10**6, 0, -3, 2**31, 1.5):
        with pytest.raises(tl.TensorLangError) as info:
            k.threads = bad
        assert info.value.code == "input"
    assert k.threads == 2
    k.threads = None
    assert k.threads == 0


def test_the_c_kernel_runs_with_the_largest_count():
    if "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    k = tl.compile("in var x : [256 256]\nout var y : [256 256]\ny = 2 * x\n", backend="c", threads=MAX_THREADS)
    assert k(x=np.ones((256, 256)))["y"].sum() == 2 * 256 * 256


@pytest.mark.slow
@pytest.mark.parametrize("env", ["1000000", "100000,2"])
def test_an_absurd_omp_num_threads_cannot_crash_a_kernel(env):
    # threads=None runs OpenMP's default, which is $OMP_NUM_THREADS: a million segfaulted
    if "c" not in tl.available_backends():
        pytest.skip("no C compiler")
    code = ("import numpy as np, tensorlang as tl\n"
            "k = tl.compile('in var x : [512 512]\\nout var y : [512 512]\\ny = 2 * x * x\\n', backend='c')\n"
            "print(k.threads, k(x=np.ones((512, 512)))['y'].sum())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": env})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(MAX_THREADS), "524288.0"]


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["1000000", "5000", str(2**31), "0", "-2"])
def test_cli_threads_out_of_range_is_one_line(capsys, prog, threads):
    # a subprocess: before the fix, these crashed or aborted the whole process
    done = subprocess.run([sys.executable, "-c", "import sys; from tensorlang.cli import main; sys.exit(main())",
                           "run", str(prog), "--random-inputs", "--threads", threads],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "error[input]" in done.stderr and str(MAX_THREADS) in done.stderr


# ------------------------------------------------------------------ output paths
@pytest.mark.parametrize("output", ["/", "DIR/", "DIR", "."])
def test_run_output_naming_a_directory_is_an_input_error(capsys, prog, tmp_path, output):
    (tmp_path / "DIR.npz").mkdir()
    target = output.replace("DIR", str(tmp_path / "DIR"))
    rc, out, err = cli_run(capsys, "run", prog, "--random-inputs", "--backend", "numpy", "--output", target)
    assert rc == 1 and "error[input]" in err and err.count("\n") == 1


@pytest.mark.parametrize("where", ["LONG", "LONG/x"])
def test_run_output_with_a_name_too_long_is_an_input_error(capsys, prog, tmp_path, where):
    target = str(tmp_path / where.replace("LONG", "a" * 300))
    rc, out, err = cli_run(capsys, "run", prog, "--random-inputs", "--backend", "numpy", "--output", target)
    assert rc == 1 and "error[input]" in err and err.count("\n") == 1


def test_run_output_says_which_file_it_wrote(capsys, prog, tmp_path):
    rc, out, _ = cli_run(capsys, "run", prog, "--random-inputs", "--backend", "numpy", "--output", tmp_path / "res")
    assert rc == 0 and f"to {tmp_path / 'res.npz'}" in out
    assert np.load(tmp_path / "res.npz")["y"].shape == (3,)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only directories")
def test_run_output_into_a_read_only_directory(capsys, prog, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        rc, _, err = cli_run(capsys, "run", prog, "--random-inputs", "--backend", "numpy", "--output", ro / "o.npz")
    finally:
        ro.chmod(0o755)
    assert rc == 1 and "error[input]" in err


def test_run_output_failing_to_write_is_an_input_error(capsys, prog, tmp_path, monkeypatch):
    # a read-only directory (as root, simulated) and a full disk, at each step of the write
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(cli.tempfile, "mkstemp", refuse)
    rc, _, err = cli_run(capsys, "run", prog, "--random-inputs", "--backend", "numpy", "--output", tmp_path / "o.npz")
    assert rc == 1 and "error[input]" in err and "Permission denied" in err
    monkeypatch.undo()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(cli.os, "fsync", full)
    rc, _, err = cli_run(capsys, "run", prog, "--random-inputs", "--backend", "numpy", "--output", tmp_path / "o.npz")
    assert rc == 1 and "error[input]" in err and "No space left" in err
    assert not list(tmp_path.glob("*.npz")) and not list(tmp_path.glob(".tensorlang-*"))


class _FullStdout(io.StringIO):
    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self):
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("command", [["run", "PROG", "--random-inputs", "--backend", "numpy"],
                                     ["compile", "PROG", "--emit", "c"], ["check", "PROG"], ["analyze", "PROG"],
                                     ["cache", "info"]])
def test_stdout_on_a_full_disk_is_an_input_error(capsys, prog, monkeypatch, command):
    monkeypatch.setattr(sys, "stdout", _FullStdout())
    rc = main([str(prog) if a == "PROG" else a for a in command])
    err = capsys.readouterr().err
    assert rc == 1 and "error[input]" in err and "standard output" in err and err.count("\n") == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", [["run", "PROG", "--random-inputs", "--backend", "numpy"],
                                     ["compile", "PROG", "--emit", "c"]])
def test_stdout_to_dev_full_exits_1_with_one_line(prog, command):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", "import sys; from tensorlang.cli import main; sys.exit(main())",
                               *[str(prog) if a == "PROG" else a for a in command]],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "error[input]" in done.stderr, done.stderr


@pytest.mark.parametrize("where", ["/", "DIR", "/dev/full"])
def test_compile_o_to_an_unwritable_place_is_an_input_error(capsys, prog, tmp_path, where):
    if where == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    target = str(tmp_path) if where == "DIR" else where
    rc, _, err = cli_run(capsys, "compile", prog, "--emit", "c", "-o", target)
    assert rc == 1 and "error[input]" in err and err.count("\n") == 1


# ------------------------------------------------------------------ found by tests/fuzz
def test_odd_language_stage_and_target_arguments_are_input_or_backend_errors():
    for call in (lambda: tl.compile(PROGRAM, lang=["tl"]), lambda: tl.check(PROGRAM, lang={"tl": 1}),
                 lambda: tl.compile(PROGRAM, backend="numpy").ir(["c"]),
                 lambda: tl.compile(PROGRAM, backend="numpy").code(["c"])):
        with pytest.raises(tl.TensorLangError) as info:
            call()
        assert info.value.code in ("input", "backend"), info.value.render()  # was internal (unhashable)


def test_a_program_path_with_a_nul_byte_is_an_input_error(capsys):
    rc, out, err = cli_run(capsys, "check", "a\x00.tl")
    assert rc == 1 and "error[input]" in err
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(__import__("pathlib").Path("p\x00.tl"))
    assert info.value.code == "input"


# ------------------------------------------------------------------ calls that do not fit
@pytest.mark.parametrize("call", [
    lambda: tl.compile(PROGRAM, target="c"),   # numpy's and jax's word for backend
    lambda: tl.compile(),
    lambda: tl.compile(PROGRAM, "c", "float64", None, 1, None, None, None, True, (), False, False, "extra"),
])
def test_a_call_that_does_not_fit_the_signature_is_an_input_error(call):
    # before: "internal error (TypeError: ...); please report it"
    with pytest.raises(tl.TensorLangError) as info:
        call()
    assert info.value.code == "input"
    assert "compile()" in str(info.value) and "internal" not in str(info.value)


def test_a_type_error_inside_a_call_that_fits_stays_internal(monkeypatch):
    # only a misfit call is the caller's: a TypeError raised deeper is still our bug
    from tensorlang import api

    def broken(*args, **kwargs):
        raise TypeError("a bug deep inside")

    monkeypatch.setattr(api, "check_source", broken)
    with pytest.raises(tl.TensorLangError) as info:
        tl.compile(PROGRAM)
    assert info.value.code == "internal" and "a bug deep inside" in str(info.value)
