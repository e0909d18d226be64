"""Issue 16: the generated code under stress.

* ASan/UBSan on *optimized* programs with BLAS (GEMM) and mode-product steps beside the
  loop nests: the kernels are built with ``CC="gcc -fsanitize=address,undefined ..."``
  (the compiler command is part of the cache key) and loaded into a Python with libasan
  preloaded, in a subprocess; any report fails (tests/properties/test_c_sanitizers.py
  covers random unoptimized loop-only programs with a stand-alone driver).
* One compiled kernel called from 8 Python threads at once: every result is right.
* Two processes compiling the same program at once into one cache directory: both
  succeed, and a third process then loads the entry (intact) without compiling.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.semantics.values import FUNCTIONS

TESTS = Path(__file__).resolve().parents[1]
SRC = TESTS.parent / "src"
HAVE_C = "c" in tl.available_backends()
needs_c = pytest.mark.skipif(not HAVE_C, reason="no C compiler")


def _gcc_runtime(name: str) -> str | None:
    if shutil.which("gcc") is None:
        return None
    path = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


SANITIZED_RUN = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import tensorlang as tl
    from corpus import batched_inputs, helmholtz_source, interpolation_source

    rng = np.random.default_rng(1)
    programs = [
        ("in var A : [3 30 40]\\nin var B : [3 40 20]\\nout var C : [3 30 20]\\n"
         "C[b,i,j] = sum(k) A[b,i,k] * B[b,k,j]\\n", None),                       # GEMM step
        ("in var A : [40 50]\\nin var B : [50 60]\\nout var C : [60 40]\\nC = (A # B . [2 3]) ^ [1 2]\\n", None),
        (interpolation_source(16, 20), batched_inputs(16, 20, rng)),           # mode steps
        (helmholtz_source(6, 3), batched_inputs(6, 3, rng, ("S",))),
        ("in var x : [9]\\nin var M : [9 9]\\nout var y : [7]\\nout var z : []\\n"   # loops: affine, δ, stack,
         "y[i] = sum(k) M[i+1,k] * (x[k] + delta[k,3]) - [x[i+1], x[i+2]][2] / x[i+1]\\n"  # reductions, fusion
         "z[] = max(j) sum(k) M[j,k] * x[k]\\n", None),
    ]
    kinds = set()
    for text, inputs in programs:
        kernel = tl.compile(text, backend="c")
        kinds |= {type(step).__name__ for step in kernel.schedule.steps}
        if inputs is None:
            inputs = {n: rng.uniform(-1, 1, kernel.shapes[n]) for n in kernel.inputs}
        got = kernel(**inputs)
        expected = tl.compile(text, backend="numpy", opt=False)(**inputs)
        for name in expected:
            np.testing.assert_allclose(got[name], expected[name], rtol=1e-10, atol=1e-10)
    print("steps:", " ".join(sorted(kinds)))
""")


@pytest.mark.slow
@needs_c
@pytest.mark.skipif(_gcc_runtime("libasan.so") is None, reason="gcc's ASan runtime is not installed")
@pytest.mark.parametrize("fuse", ["0", "1"])  # statement by statement (BLAS, mode steps), and fused loops
def test_optimized_programs_with_blas_and_mode_steps_are_clean_under_asan_and_ubsan(tmp_path, fuse):
    env = dict(os.environ, TENSORLANG_FUSE=fuse, CC="gcc -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer",
               LD_PRELOAD=_gcc_runtime("libasan.so") or "", ASAN_OPTIONS="detect_leaks=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1", TENSORLANG_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=str(SRC))
    script = tmp_path / "run.py"
    script.write_text(SANITIZED_RUN)
    ran = subprocess.run([sys.executable, str(script), str(TESTS)], env=env, capture_output=True, text=True,
                         timeout=300)
    report = ran.stdout + ran.stderr
    assert ran.returncode == 0, report[-4000:]
    assert "AddressSanitizer" not in report and "runtime error" not in report, report[-4000:]
    wanted = {"GemmStep", "ModeStep", "LoopStep"} if fuse == "0" else {"LoopStep"}
    assert wanted <= set(report.split("steps:")[1].split()), report
    # the kernels were really built with the sanitizers: their objects need ASan's runtime
    objects = list((tmp_path / "cache").rglob("*.so"))
    assert objects and any(b"__asan" in path.read_bytes() for path in objects)


# ---------------------------------------------------------------- threads
@pytest.mark.parametrize("backend", [b for b in ("c", "numpy") if b in tl.available_backends()])
def test_one_kernel_called_from_8_threads_at_once_gives_every_caller_its_result(backend):
    text = ("in var A : [64 64]\nin var x : [64]\nout var y : [64]\nout var s : []\n"
            "y[i] = sum(j) A[i,j] * x[j] + x[i]\ns[] = sum(i) x[i] * x[i]\n")
    kernel = tl.compile(text, backend=backend, threads=1)
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, (64, 64))
    inputs = [rng.uniform(-1, 1, 64) for _ in range(8)]
    failures: list[str] = []
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        x = inputs[n]
        barrier.wait()
        for _ in range(50):
            out = kernel(A=A, x=x)
            if not (np.allclose(out["y"], A @ x + x, rtol=1e-12, atol=1e-12) and np.isclose(out["s"], x @ x)):
                failures.append(f"thread {n}: wrong result")
                return
            y = np.empty(64)
            kernel(A=A, x=x, out={"y": y})
            if not np.allclose(y, A @ x + x, rtol=1e-12, atol=1e-12):
                failures.append(f"thread {n}: wrong result in out=")
                return

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not failures, failures


# ---------------------------------------------------------------- processes
COMPILE_ONE = textwrap.dedent("""
    import sys, numpy as np, tensorlang as tl
    text = sys.argv[1]
    kernel = tl.compile(text, backend="c")
    y = kernel(x=np.arange(5.0))["y"]
    assert np.array_equal(y, 3 * np.arange(5.0) + 1), y
    print("ok")
""")


@pytest.mark.slow
@needs_c
def test_two_processes_compiling_the_same_program_into_one_cache_both_succeed(tmp_path):
    cache = tmp_path / "cache"
    text = "in var x : [5]\nout var y : [5]\ny[i] = 3 * x[i] + 1 // compiled twice at once\n"
    env = dict(os.environ, TENSORLANG_CACHE=str(cache), PYTHONPATH=str(SRC))
    script = tmp_path / "one.py"
    script.write_text(COMPILE_ONE)
    for round_ in range(2):  # twice: a cold cache, then a fresh text each
        text_n = text.replace("twice", f"twice, round {round_}")
        procs = [subprocess.Popen([sys.executable, str(script), text_n], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            assert p.returncode == 0 and out.strip() == "ok", err[-3000:]
    entries = {p: p.stat().st_mtime_ns for p in cache.rglob("*.so") if p.is_file()}
    assert entries, list(cache.rglob("*"))
    for obj in entries:  # each manifest describes the object beside it
        manifest = json.loads(obj.with_suffix(".json").read_text())
        assert manifest["sha256"] == hashlib.sha256(obj.read_bytes()).hexdigest(), obj
    # a third process loads what the two left: a cache hit (nothing rebuilt), the right result
    third = subprocess.run([sys.executable, str(script), text.replace("twice", "twice, round 1")], env=env,
                           capture_output=True, text=True, timeout=300)
    assert third.returncode == 0 and third.stdout.strip() == "ok", third.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.so") if p.is_file()} == entries
    info = subprocess.run([sys.executable, "-m", "tensorlang.cli", "cache", "info"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert info.returncode == 0, info.stderr


# ---------------------------------------------------------------- identifiers
C_WORDS = {"double", "float", "for", "if", "else", "inline", "int", "int64_t", "return", "static", "typedef", "void",
           "restrict", "const", "real", "while", "break", "continue", "sizeof", "memcpy", "memset", "LL", "a", "b",
           "nthreads", "omp_get_max_threads", "omp_get_thread_num", "omp_get_num_threads", "NAN", "INFINITY",
           "HUGE_VAL", "isnan", "char", "size_t", "long", "unsigned"}
# the run-time team decision of parallel loops (targets/c/codegen.py, THREADS): libc's names
C_WORDS |= {"struct", "timespec", "clock_gettime", "CLOCK_MONOTONIC", "tv_sec", "tv_nsec", "INT64_MIN", "sysconf",
            "_SC_NPROCESSORS_ONLN", "open", "O_RDONLY", "read", "close", "ssize_t", "atol", "__atomic_load_n",
            "__atomic_store_n", "__ATOMIC_RELAXED"}
C_WORDS |= {f.c_name for f in FUNCTIONS.values()} | {f.c_name + "f" for f in FUNCTIONS.values()}  # libm
GENERATED = re.compile(r"(v|acc|t|s|p)\d+|x_[A-Za-z0-9_]+|tl_[A-Za-z0-9_]+")  # buffers, accumulators, indices, helpers


@needs_c
@pytest.mark.parametrize("case", ["c_keywords.tl", "c_codegen_names.tl", "codegen_names.tl", "python_keywords.tl"])
def test_generated_identifiers_come_from_a_fixed_alphabet(case):
    """The C code names buffers v<slot>, loop indices x_<index>, helpers tl_*; a user's
    variable name appears only in comments (so no name can clash with C or escape)."""
    text = (TESTS / "hostile" / "cases" / case).read_text()
    kernel = tl.compile(text, backend="c")
    user = set(kernel.shapes)
    code = re.sub(r"/\*.*?\*/|//[^\n]*|^\s*#[^\n]*", "", kernel.code("c"), flags=re.S | re.M)
    for word in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code)):
        assert word in C_WORDS or GENERATED.fullmatch(word), word
        assert word not in user or re.fullmatch(r"v\d+|x_\w+", word) or word in C_WORDS, word
    # the variables' names reach neither target's code outside comments and string
    # literals: renaming every variable leaves the identifiers of both codes unchanged
    renamed = re.sub(r"\b(" + "|".join(map(re.escape, user)) + r")\b",
                     lambda m: f"w{sorted(user).index(m.group(1))}", text)
    for target in ("c", "numpy"):
        words = [set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(
            r"/\*.*?\*/|//[^\n]*|#[^\n]*|'[^'\n]*'", "", tl.compile(t, backend=target).code(target), flags=re.S)))
            for t in (text, renamed)]
        assert words[0] == words[1], (target, words[0] ^ words[1])


@needs_c
def test_a_cache_directory_others_can_write_is_not_used(tmp_path, monkeypatch, capsys):
    from tensorlang.targets.c import build as c_build

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anybody could plant an object here
    monkeypatch.setenv("TENSORLANG_CACHE", str(shared))
    monkeypatch.setattr(c_build, "_loaded", {})
    monkeypatch.setattr(c_build, "_notified", False)
    kernel = tl.compile("in var x : [3]\nout var y : [3]\ny[i] = 5 * x[i] // not in a shared directory\n", backend="c")
    np.testing.assert_array_equal(kernel(x=np.arange(3.0))["y"], [0, 5, 10])
    assert "not usable" in capsys.readouterr().err
    assert not list(shared.rglob("*.so"))


@needs_c
def test_a_kernel_compiled_twice_is_the_same_object(tmp_path, monkeypatch):
    """Builds are deterministic (no temporary file name is embedded), so two processes
    compiling one kernel at once install the same bytes, whichever manifest lands last."""
    from tensorlang.targets.c import build as c_build

    source = tl.compile("in var x : [4]\nout var y : [4]\ny[i] = x[i] * x[i] + 1\n", backend="c").code("c")
    compiler = c_build.require_compiler()
    objects = []
    for n in range(2):
        directory = tmp_path / f"d{n}"
        directory.mkdir(mode=0o700)
        monkeypatch.setattr(c_build, "_fallback_dir", None)
        objects.append(c_build._compile_into(directory, "k", source, compiler).read_bytes())
    assert objects[0] == objects[1]
