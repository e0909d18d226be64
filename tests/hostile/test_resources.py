"""Resources and odd environments (issue 46), each class as a family:

* inputs read with a bound: program files, standard input and array files that are
  FIFOs, devices, huge, or whose .npy header declares a shape the program does not;
* odd environments: ASCII locales, closed standard streams, negative seeds, deep
  programs compiled from many threads, powers that overflow;
* stages that read back: every printed program stage parses again, or is refused with
  error[too-large] naming the bound.

No traceback may reach a user: the CLI runs in a subprocess where the environment
matters, in-process (``main``) elsewhere, and stderr never holds "Traceback".
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang import lang
from tensorlang.cli import main
from tensorlang.errors import MAX_DEPTH, TensorLangError
from tensorlang.lang.lark_support import MAX_NESTING
from tensorlang.semantics.values import power

SRC = Path(__file__).resolve().parents[2] / "src"
SMALL = "in var x : [3]\nout var y : [3]\ny = x * 2\n"
SYMBOLIC = "in var x : [n]\nout var y : [n]\ny = x * 2\n"


def cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def subprocess_cli(*args, env=None, shell_suffix="", stdin=None, timeout=300):
    """The CLI in a fresh interpreter (through bash when ``shell_suffix`` redirects or
    closes its streams)."""
    environ = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    command = [sys.executable, "-m", "tensorlang", *map(str, args)]
    if shell_suffix:
        import shlex
        command = ["bash", "-c", " ".join(map(shlex.quote, command)) + " " + shell_suffix]
    done = subprocess.run(command, env=environ, capture_output=True, stdin=stdin, timeout=timeout)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.tl"
    path.write_text(SMALL)
    return path


# ----------------------------------------------------------------- inputs read with a bound
def _fifo(tmp_path):
    path = tmp_path / "fifo.tl"
    if not path.exists():
        os.mkfifo(path)
    return path


@pytest.mark.parametrize("make, code", [
    (lambda tmp: _fifo(tmp), "input"),            # would block forever
    (lambda tmp: Path("/dev/zero"), "input"),      # never ends
    (lambda tmp: Path("/dev/null"), "input"),      # a device, even an empty one
    (lambda tmp: tmp, "input"),                    # a directory
])
def test_a_program_that_is_no_regular_file_is_refused_before_reading(capsys, tmp_path, make, code):
    rc, out, err = cli(capsys, "check", make(tmp_path))
    assert rc == 1 and f"error[{code}]" in err and "not a regular file" in err
    with pytest.raises(TensorLangError) as info:
        lang.read_source(make(tmp_path))
    assert info.value.code == code


@pytest.mark.parametrize("limit, size", [(100, 101), (100, 10_000), (1000, 5000)])
def test_a_program_larger_than_the_limit_is_too_large(capsys, tmp_path, monkeypatch, limit, size):
    monkeypatch.setenv("TENSORLANG_MAX_SOURCE_BYTES", str(limit))
    path = tmp_path / "big.tl"
    path.write_text(SMALL + "// " + "x" * size + "\n")
    rc, _, err = cli(capsys, "check", path)
    assert rc == 1 and "error[too-large]" in err and "TENSORLANG_MAX_SOURCE_BYTES" in err
    path.write_text(SMALL)  # within the limit: read
    assert cli(capsys, "check", path)[0] == 0


def test_endless_standard_input_is_refused_at_the_limit():
    with open("/dev/zero", "rb") as zero:
        rc, _, err = subprocess_cli("check", "-", stdin=zero, env={"TENSORLANG_MAX_SOURCE_BYTES": "65536"})
    assert rc == 1 and "error[too-large]" in err and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("data", [b"\xff\xfe", b"in var x : [3]\n\xc3(\n", "ζ".encode("utf-16")])
def test_standard_input_that_is_not_utf8_is_an_input_error_in_any_locale(data):
    for env in ({}, {"LC_ALL": "C", "PYTHONUTF8": "0"}, {"PYTHONIOENCODING": "ascii:strict"}):
        done = subprocess.run([sys.executable, "-m", "tensorlang", "check", "-"], input=data, capture_output=True,
                              env={**os.environ, "PYTHONPATH": str(SRC), **env}, timeout=300)
        assert done.returncode == 1 and b"not UTF-8 text" in done.stderr and b"Traceback" not in done.stderr


def _npy_header_only(stream, shape, descr="<f8", data=b""):
    """A .npy stream that declares ``shape`` and holds ``data`` (a lying header)."""
    np.lib.format.write_array_header_1_0(stream, {"descr": descr, "fortran_order": False, "shape": shape})
    stream.write(data)


def _archive(path, shape, descr="<f8", zeros=0):
    """An .npz whose member x declares ``shape`` and holds ``zeros`` zero bytes
    (compressed: a member that would decompress to gigabytes takes kilobytes)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as member:
            _npy_header_only(member, shape, descr)
            for _ in range(zeros >> 24):
                member.write(bytes(1 << 24))
            member.write(bytes(zeros & ((1 << 24) - 1)))
    return path


# shapes an .npy header may declare for the input x : [3]; none may be read
WRONG_SHAPES = [(5,), (375_000_000,), (10**15,), (3, 1), (), (1, 3), (0,)]


@pytest.mark.parametrize("shape", WRONG_SHAPES)
@pytest.mark.parametrize("container", ["npz", "npy"])
def test_a_declared_shape_the_program_does_not_have_is_refused_from_the_header(capsys, tmp_path, small, shape,
                                                                               container):
    if container == "npz":
        # 3 GB of float64 in the header, 48 MiB of zeros behind it: refused before inflating any
        path = _archive(tmp_path / "in.npz", shape, zeros=3 << 24 if shape == (375_000_000,) else 8)
        args = ("--inputs", path)
    else:
        path = tmp_path / "x.npy"
        with open(path, "wb") as fh:
            _npy_header_only(fh, shape, data=bytes(24))
        args = ("--input", f"x={path}")
    rc, _, err = cli(capsys, "run", small, *args, "--backend", "numpy")
    assert rc == 1 and "error[input]" in err and "but is declared [3]" in err and "no data was read" in err


@pytest.mark.parametrize("descr, why", [("<U1", "dtype"), ("<c16", "dtype"), ("|O", "Python objects")])
@pytest.mark.parametrize("container", ["npz", "npy"])
def test_a_declared_dtype_that_is_no_real_number_is_refused_from_the_header(capsys, tmp_path, small, descr, why,
                                                                            container):
    if container == "npz":
        args = ("--inputs", _archive(tmp_path / "in.npz", (3,), descr, zeros=64))
    else:
        path = tmp_path / "x.npy"
        with open(path, "wb") as fh:
            _npy_header_only(fh, (3,), descr, data=bytes(64))
        args = ("--input", f"x={path}")
    rc, _, err = cli(capsys, "run", small, *args, "--backend", "numpy")
    assert rc == 1 and "error[input]" in err and why in err


def test_a_header_with_less_data_behind_it_is_an_input_error_and_more_is_not_read(capsys, tmp_path, small):
    short = tmp_path / "short.npy"
    with open(short, "wb") as fh:
        _npy_header_only(fh, (3,), data=bytes(8))
    rc, _, err = cli(capsys, "run", small, "--input", f"x={short}", "--backend", "numpy")
    assert rc == 1 and "error[input]" in err
    # 100 MiB of zeros behind a header for [3]: three numbers are read, the rest is not
    rc, out, err = cli(capsys, "run", small, "--inputs", _archive(tmp_path / "long.npz", (3,), zeros=100 << 20),
                       "--backend", "numpy", "--json")
    assert rc == 0, err
    import json
    assert json.loads(out)["results"]["y"]["checksum"] == 0


@pytest.mark.parametrize("extent", [10**6, 10**9])
def test_a_symbolic_program_bounds_what_it_reads_by_the_memory_budget(capsys, tmp_path, monkeypatch, extent):
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(10**6))
    path = tmp_path / "sym.tl"
    path.write_text(SYMBOLIC)
    rc, _, err = cli(capsys, "run", path, "--inputs", _archive(tmp_path / "in.npz", (extent,), zeros=64),
                     "--backend", "numpy")
    assert rc == 1 and "error[too-large]" in err and "memory budget" in err


@pytest.mark.parametrize("option", ["--inputs", "--input"])
@pytest.mark.parametrize("make", [lambda tmp: _fifo(tmp), lambda tmp: Path("/dev/zero"), lambda tmp: tmp])
def test_an_input_file_that_is_no_regular_file_is_refused_before_opening(capsys, tmp_path, small, option, make):
    target = make(tmp_path)
    rc, _, err = cli(capsys, "run", small, option, target if option == "--inputs" else f"x={target}")
    assert rc == 1 and "error[input]" in err and "not a regular file" in err


# ----------------------------------------------------------------- odd environments
ODD_LOCALES = [
    {"LANG": "C"}, {"LC_ALL": "C"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}, {"LC_ALL": "POSIX", "PYTHONUTF8": "0"},
    {"PYTHONIOENCODING": "ascii:strict"}, {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii:strict"},
]


@pytest.fixture(scope="module")
def non_ascii(tmp_path_factory):
    """A directory with programs that put non-ASCII text in every output: a file name, a
    diagnostic's source line, generated C's comments, run's timings (µs)."""
    base = tmp_path_factory.mktemp("ascii")
    (base / "é.tl").write_text(SMALL)
    (base / "bad.tl").write_text("in var x : [3]\nout var y : [3]\n// ⊥ é\ny = x * 2 + ζ\n")
    return base


@pytest.mark.slow
@pytest.mark.parametrize("env", ODD_LOCALES, ids=lambda e: " ".join(f"{k}={v}" for k, v in e.items()))
def test_ascii_locales_never_turn_output_into_an_internal_error(non_ascii, env):
    cases = [
        (("check", non_ascii / "é.tl"), 0),
        (("check", non_ascii / "bad.tl"), 1),
        (("check", non_ascii / "missing_é.tl"), 1),
        (("run", non_ascii / "é.tl", "--random-inputs", "--backend", "numpy"), 0),
        (("compile", non_ascii / "é.tl", "--emit", "c"), 0),
        (("compile", non_ascii / "é.tl", "--emit", "c", "-o", non_ascii / "out.c"), 0),
        (("explain", "too-large"), 0),
    ]
    for args, status in cases:
        rc, out, err = subprocess_cli(*args, env=env)
        assert rc == status, (args, err)
        assert "Traceback" not in err and "error[internal]" not in err, (args, err)
    assert "⊥" in (non_ascii / "out.c").read_text(encoding="utf-8")  # files are UTF-8 whatever the locale


@pytest.mark.parametrize("seed", ["-1", "-7", str(-10**30)])
def test_a_negative_seed_is_an_input_error(capsys, small, seed):
    rc, _, err = cli(capsys, "run", small, f"--random-inputs={seed}")
    assert rc == 1 and "error[input]" in err and "non-negative" in err


@pytest.mark.parametrize("command", [
    ("run", "{small}", "--random-inputs", "--backend", "numpy"),
    ("check", "{small}"),
    ("compile", "{small}", "--emit", "ein"),
    ("run", "{small}", "--random-inputs=-1"),        # an error with nowhere to be said
    ("check", "{missing}"),
])
@pytest.mark.slow
@pytest.mark.parametrize("closed", [">&-", "2>&-", ">&- 2>&-", "0<&- >&- 2>&-"])
def test_closed_standard_streams_are_no_crash(small, tmp_path, command, closed):
    args = [a.format(small=small, missing=tmp_path / "missing.tl") for a in command]
    failing = "--random-inputs=-1" in args or "missing" in args[-1]
    rc, out, err = subprocess_cli(*args, shell_suffix=closed)
    assert "Traceback" not in out + err and "internal" not in out + err
    stdout_closed = ">&-" in closed.replace("2>&-", "")
    assert rc == (1 if failing or stdout_closed else 0), (rc, err)
    if stdout_closed and not failing and "2>&-" not in closed:
        assert "standard output: it is closed" in err


def test_a_closed_standard_output_never_lends_its_number_to_a_file(small, tmp_path):
    # with descriptor 1 closed, the next file opened would get it: the results written
    # with --output must be the archive, nothing printed into it
    out = tmp_path / "o.npz"
    rc, _, _ = subprocess_cli("run", small, "--random-inputs", "--backend", "numpy", "--output", out, "-q",
                              shell_suffix=">&- 2>&-")
    assert rc == 1  # -q prints the file written, to a closed stream
    with np.load(out) as archive:
        assert archive["y"].shape == (3,)


DEEP = {
    "tl": "in var x : [3]\nout var y : [3]\ny = " + " + ".join(["x"] * MAX_DEPTH) + "\n",
    "teil": "in alloc x : [3, 3]\nout alloc y : [3, 3]\ny = " + "transp 1 2 " * (MAX_DEPTH - 1) + "x\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(DEEP))
def test_deep_programs_compile_from_8_threads_at_once(language):
    tl.compile(DEEP[language], lang=language, backend="interp")  # one thread: accepted
    failures: list[str] = []

    def work():
        try:
            tl.compile(DEEP[language], lang=language, backend="interp")
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            failures.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sys.getrecursionlimit() < 20_000  # put back once the last call returned


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=0, max_value=10**25))
def test_power_follows_ieee_and_never_raises(a, n):
    got = power(a, n)
    try:
        expected = float(a) ** n
    except OverflowError:  # what Python raises; IEEE says ±inf
        assert math.isinf(got)
        assert (got < 0) == (math.copysign(1, a) < 0 and n % 2 == 1)
        return
    except ZeroDivisionError:  # pragma: no cover - n >= 0 never divides
        return
    if n < 2**53:
        assert _same(got, expected) or (math.isnan(got) and math.isnan(expected))
    else:  # float(n) is even: the sign still follows n
        assert math.copysign(1, got) == (-1 if math.copysign(1, a) < 0 and n % 2 else 1) or math.isnan(got)


@pytest.mark.parametrize("base", ["10", "1e300", "0.5", "3"])
@pytest.mark.parametrize("count", [5000, 5001])
@pytest.mark.parametrize("negate", [False, True])
def test_a_product_over_equal_numbers_that_overflows_is_inf_on_every_target(base, count, negate):
    value = f"(0 - {base})" if negate else base
    src = f"in var x : [3]\nout var y : [3]\ny[i] = x[i] * prod(k:{count}) {value}\n"
    x = np.array([1.0, -2.0, 0.5])
    results = {}
    for backend in ("interp", "numpy"):
        for opt in (True, False):
            results[backend, opt] = tl.compile(src, backend=backend, opt=opt)(x=x)["y"]
    reference = results["interp", False]
    for got in results.values():
        np.testing.assert_array_equal(got, reference)


# ----------------------------------------------------------------- stages that read back
def _deep_family(depth: int) -> list[tuple[str, str, str]]:
    """(name, language, program) of programs ``depth`` operators deep, in every shape
    that printing can deepen: left and right chains, prefix chains, chains that Core-TeIL
    lengthens (transp 1 4 is five adjacent transpositions)."""
    x = "x"
    right_tl = x
    for _ in range(min(depth, MAX_NESTING) - 1):
        right_tl = f"x + ({right_tl})"
    return [
        ("tl-left-sum", "tl", "in var x : [3]\nout var y : [3]\ny = " + " + ".join(["x"] * depth) + "\n"),
        ("tl-right-sum", "tl", "in var x : [3]\nout var y : [3]\ny = " + right_tl + "\n"),
        ("teil-right-add", "teil", "in alloc x : [3]\nout alloc y : [3]\ny = " + "add x " * (depth - 1) + "x\n"),
        ("teil-left-add", "teil", "in alloc x : [3]\nout alloc y : [3]\ny = " + "add " * (depth - 1)
         + "x" + " x" * (depth - 1) + "\n"),
        ("teil-transp", "teil", "in alloc x : [2, 2]\nout alloc y : [2, 2]\ny = " + "transp 1 2 " * (depth - 1)
         + "x\n"),
        ("teil-transp-far", "teil", "in alloc x : [2, 2, 2, 2]\nout alloc y : [2, 2, 2, 2]\ny = "
         + "transp 1 4 " * min(depth - 1, 700) + "x\n"),
    ]


PROGRAM_STAGES = ("ast", "tl", "teil", "core", "ein", "opt")


def _reading_language(stage: str, language: str) -> str:
    return lang.reader_of(stage, language)


@pytest.mark.slow
@pytest.mark.parametrize("depth", [50, MAX_NESTING + 1, 700, MAX_DEPTH - 1])
def test_every_printed_stage_reads_back_or_is_refused_naming_the_bound(depth):
    refused: dict[str, list[str]] = {}
    for name, language, src in _deep_family(depth):
        kernel = tl.compile(src, lang=language, backend="interp")
        for stage in PROGRAM_STAGES:
            try:
                text = kernel.ir(stage)
            except TensorLangError as exc:
                if exc.code == "backend":  # a stage with no counterpart (no TeIL for '-' and numbers)
                    continue
                assert exc.code == "too-large", (name, stage, exc)
                assert f"more than the {_reading_language(stage, language)} front end reads back" in exc.message
                assert str(MAX_NESTING) in exc.message or str(MAX_DEPTH) in exc.message
                refused.setdefault(name, []).append(stage)
                continue
            # what was printed parses back, and checks
            reader = _reading_language(stage, language)
            tl.check(text, lang=reader)
    # TeIL needs no parentheses: its views of every deep program read back; Core-TeIL
    # lengthens transp 1 4 five-fold, and a right-nested sum has no parenthesis-free
    # infix form
    for name, stages in refused.items():
        assert "teil" not in stages, (name, stages)
        if name.startswith("teil-") and name != "teil-transp-far":
            assert "core" not in stages, (name, stages)
    if depth >= MAX_DEPTH // 5 + 1:
        assert "core" in refused.get("teil-transp-far", [])
    if depth - 2 > MAX_NESTING:  # the innermost of depth - 1 adds holds no parenthesis
        assert {"tl", "ein"} <= set(refused.get("teil-right-add", []))


@pytest.mark.slow
def test_the_cli_prints_the_refusal_as_one_diagnostic(tmp_path):
    path = tmp_path / "deep.teil"
    path.write_text("in alloc x : [3]\nout alloc y : [3]\ny = " + "add x " * 1998 + "x\n")
    for stage, ok in (("teil", True), ("core", True), ("tl", False), ("ein", False)):
        rc, out, err = subprocess_cli("compile", path, "--emit", stage)
        assert "Traceback" not in err
        if ok:
            assert rc == 0 and tl.check(out, lang="teil") is not None
        else:
            assert rc == 1 and "error[too-large]" in err and f"--emit {stage}" in err
