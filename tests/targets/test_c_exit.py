"""A process that ran compiled code on two OpenMP threads exits cleanly with
``OMP_WAIT_POLICY=active`` (docs/c-backend.md, "Threads"): the compiled objects are loaded
``RTLD_NODELETE``, so that unloading them at exit does not unmap libgomp under its pool's
workers, which spin between regions under that policy (a segfault after the results).

Each program runs in a subprocess; its return code is the test (-11: SIGSEGV).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tensorlang.targets import available
from tensorlang.targets.c import build as c_build

ROOT = Path(__file__).resolve().parents[2]
SPHERE = ROOT / "benchmarks" / "diderot" / "programs" / "sphere.diderot"

needs_c = pytest.mark.skipif("c" not in available(), reason="no C compiler")

KERNEL = """
import numpy as np
import tensorlang as tl

rng = np.random.default_rng(0)
A, B = rng.standard_normal((400, 300)), rng.standard_normal((400, 300))
kernel = tl.compile("in var A : [400 300]\\nin var B : [400 300]\\nout var C : [400 300]\\nC = A * B + A\\n",
                    backend="c", threads=2)
for _ in range(20):
    C = kernel(A=A, B=B)["C"]
assert np.allclose(C, A * B + A)
print("ok kernel")
"""

STRANDS = f"""
import numpy as np
import tensorlang as tl

program = tl.compile({str(SPHERE)!r})
pos = program.run({{"num": 300, "gens": 5}}, threads=2)["pos"]
assert pos.shape == (300, 3) and np.allclose(np.linalg.norm(pos, axis=1), 1)
print("ok strands")
"""


def run_active(tmp_path: Path, name: str, script: str) -> subprocess.CompletedProcess:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
               OMP_WAIT_POLICY="active", TENSORLANG_PARALLEL_WORK="1")  # every loop on its team of two
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)


@pytest.mark.slow
@needs_c
@pytest.mark.parametrize("name", ["kernel", "strands"])
def test_exit_after_active_threads(tmp_path, name):
    proc = run_active(tmp_path, name, {"kernel": KERNEL, "strands": STRANDS}[name])
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert f"ok {name}" in proc.stdout


@needs_c
@pytest.mark.skipif(not (hasattr(os, "RTLD_NODELETE") and Path("/proc/self/maps").exists()), reason="not Linux")
def test_objects_never_unloaded():
    """An object :func:`build.load` opened stays mapped after dlclose (RTLD_NODELETE)."""
    source = "int tl_exit_probe(int x) { return x + 42; }\n"
    ffi, lib = c_build.build_and_load(source, c_build.require_compiler(), "int tl_exit_probe(int x);")
    assert lib.tl_exit_probe(1) == 43
    path = str(c_build.build(source, c_build.require_compiler()))
    c_build._loaded.pop(path)
    ffi.dlclose(lib)
    assert path in Path("/proc/self/maps").read_text()
