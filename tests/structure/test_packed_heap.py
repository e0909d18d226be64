"""Packed copies on the heap: a packed statement (loops/structure.py ``compress_packed``)
whose copies exceed the stack budget (``machine.STACK_BYTES``, loops/pipeline.py ``place_locals``)
still runs packed, its copies in one heap block per run of the statement, freed at its
end; a failed allocation is error[too-large], not a crash.  Checked against the reference
interpreter with NaN, ±inf and ±0 among the inputs, and under AddressSanitizer (a heap
block is bounds-checked byte for byte)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.loops import ir as loops
from tensorlang.loops.structure import MAX_PACKED_BYTES
from tensorlang.machine import STACK_BYTES
from tensorlang.targets.c import codegen


def _same(value, expected):
    """The C target's covariance is a BLAS syrk on the packed copies, and 1e300 among the
    inputs makes products of finite numbers overflow: where such an overflow meets the
    opposite infinity the reference's sum as written is ⊥ (inf + -inf), and OpenBLAS's
    fused multiply-adds may give that infinity instead (docs/optimizer.md, "Fused
    multiply-add", point 3), as they did on seed 0 with a SkylakeX kernel: allowed."""
    # imported here: a subprocess below imports this module with only its folder on the path
    from properties.harness import assert_same_values
    assert_same_values(value, expected, rtol=1e-12, atol=1e-9, fused=True)


#: polyreg2 at m=3000, n=8: 72 features, 44 unique (48 packed): 1.17 MB of packed copies,
#: above the 1 MiB the packed form was once limited to
M, N = 3000, 8
OLD_CAP = 1 << 20


def _poly2(m: int, n: int) -> str:
    """Polynomial regression of degree 2 with the features X among the results: X is then
    not a temporary its producer could write packed (loops/structure.py
    ``pack_in_producer``), so the covariance makes its packed copy of X itself."""
    k = n + n * n
    return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\nout var X : [{m} {k}]\nout var C : [{k} {k}]\n"
            "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n")


_KERNELS: dict = {}


def _kernel(m: int, n: int, backend: str = "c"):
    key = (m, n, backend)
    if key not in _KERNELS:
        try:
            _KERNELS[key] = tl.compile(_poly2(m, n), backend=backend)
        except TensorLangError as exc:  # no C compiler here
            pytest.skip(str(exc))
    return _KERNELS[key]


def _packed_bytes(kernel) -> int:
    """The bytes of the local buffers the covariance's nest declares at its top level."""
    nest = next(n for n in kernel.loop_program.nests if n.statement.target == "C")
    return sum(math.prod(d.shape) * 8 for d in nest.body if isinstance(d, loops.Declare))


def _with_specials(rng, shape) -> np.ndarray:
    values = rng.uniform(-2, 2, shape)
    flat = values.reshape(-1)
    spots = rng.choice(flat.size, size=12, replace=False)
    flat[spots] = [np.nan, np.inf, -np.inf, 0.0, -0.0, np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e-300]
    return values


def _reference_budget(monkeypatch):
    """The reference interpreter evaluates Σ_r X[r,p]·X[r,q] at this size through a
    3000×72×72 operand (119 MiB): above the 64 MiB budget conftest's session fixture sets
    once some test of the worker used it."""
    monkeypatch.setenv("TENSORLANG_MAX_BYTES", str(512 * 2**20))


@pytest.mark.slow
def test_copies_above_the_old_stack_cap_run_packed_on_the_heap():
    k = _kernel(M, N)
    assert OLD_CAP < _packed_bytes(k) <= MAX_PACKED_BYTES  # packed: the copies are declared
    source = k.target.source
    ends = [line for line in source.splitlines() if line.strip() == "free(tl_heap_block);"]
    assert source.count("posix_memalign(") == 1 and len(ends) == 1  # (and where a BLAS call fails, test_packed_blas)
    assert "/* packed, on the heap */" in source
    assert "_storage[" not in source  # no packed copy left on the stack


def test_small_copies_stay_on_the_stack():
    k = _kernel(64, 4)
    assert 0 < _packed_bytes(k) <= STACK_BYTES
    assert "posix_memalign(" not in k.target.source and "_storage[" in k.target.source
    nest = next(n for n in k.loop_program.nests if n.statement.target == "C")
    assert nest.heap == 0 and {d.home for d in nest.body if isinstance(d, loops.Declare)} == {"pointer"}
    assert "behind a pointer" in k.ir("loops") and "on the heap" not in k.ir("loops")


def test_the_loop_stage_places_large_copies_on_the_heap():
    """Where the copies live is the loop stage's decision (loops/pipeline.py
    ``place_locals``): the loop IR holds it and ``--emit loops`` shows it, no C needed."""
    k = tl.compile(_poly2(M, N), backend="numpy")
    nest = next(n for n in k.loop_program.nests if n.statement.target == "C")
    homes = [(d.home, d.offset) for d in nest.body if isinstance(d, loops.Declare)]
    assert homes and all(home == "heap" and offset % 64 == 0 for home, offset in homes)
    assert nest.heap >= _packed_bytes(k) > STACK_BYTES
    shown = k.ir("loops")
    assert f"# a heap block of {nest.heap} bytes" in shown and "on the heap at byte 0" in shown


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_heap_packed_result_equals_the_dense_reference(seed, monkeypatch):
    """003 Property 5 at a size whose copies are on the heap, specials among the inputs
    (each special poisons a row of the features, so NaN and ±inf reach many entries)."""
    _reference_budget(monkeypatch)
    F = _with_specials(np.random.default_rng(seed), (M, N))
    got = _kernel(M, N)(F=F)["C"]
    _same(got, _kernel(M, N, "interp")(F=F)["C"])
    # every call allocates and frees its own block: a second call gives the same result
    assert np.array_equal(_kernel(M, N)(F=F)["C"], got, equal_nan=True)


def test_a_failed_allocation_is_too_large_not_a_crash():
    assert codegen.NO_MEMORY != 0
    with pytest.raises(TensorLangError) as caught:
        codegen.check_status(codegen.NO_MEMORY)
    assert caught.value.code == "too-large"
    with pytest.raises(TensorLangError) as caught:
        codegen.check_status(-1)
    assert caught.value.code == "backend"
    codegen.check_status(0)


@pytest.mark.slow
@pytest.mark.parametrize("c_blas", ["1", "0"], ids=["blas", "no blas"])
def test_the_kernel_reports_too_large_when_the_heap_block_cannot_be_had(c_blas):
    """In a child process whose address space is capped just above what it uses after a
    first call, the next call's heap block (1.17 MB) cannot be allocated (glibc only).
    Either way the kernel is one C function (tl_kernel: its two loop steps, the packed
    product a BLAS call or loops), whose status the general path checks too."""
    if not sys.platform.startswith("linux"):
        pytest.skip("needs glibc's mallopt and /proc/self/statm")
    _kernel(M, N)  # skips where there is no C compiler (the child then compiles from the cache)
    script = textwrap.dedent(f"""
        import ctypes, resource, sys
        # glibc: blocks above 64 KiB always mapped afresh and unmapped when freed (no
        # dynamic threshold keeping a freed block for the next call)
        mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
        if mallopt is None or mallopt(-3, 1 << 16) != 1 or mallopt(-1, 0) != 1:  # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD
            print("no glibc")
            sys.exit(0)
        import numpy as np
        import tensorlang as tl
        from tensorlang.errors import TensorLangError
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_packed_heap import _poly2
        k = tl.compile(_poly2({M}, {N}), backend="c")
        F = np.ones(({M}, {N}))
        out = {{"C": np.empty(({N + N * N}, {N + N * N})), "X": np.empty(({M}, {N + N * N}))}}
        k.run({{"F": F}}, out=out)
        k.run({{"F": F}}, out=out)
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (1 << 19), resource.RLIM_INFINITY))
        try:
            k.run({{"F": F}}, out=out)
        except TensorLangError as exc:
            print("code", exc.code, str(exc))
        else:
            print("ran")
    """)
    env = {**os.environ, "TENSORLANG_NO_C_BLAS": "0" if c_blas == "1" else "1"}
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    if ran.stdout.strip() == "no glibc":
        pytest.skip("needs glibc's mallopt")
    assert "code too-large" in ran.stdout and "packed" in ran.stdout, ran.stdout + ran.stderr[-2000:]


@pytest.mark.slow
def test_heap_packed_c_is_clean_under_sanitizers(monkeypatch):
    _reference_budget(monkeypatch)
    sanitizers = pytest.importorskip("properties.test_c_sanitizers")
    if not sanitizers._sanitizers_work():
        pytest.skip("the C compiler here cannot build with ASan/UBSan")
    F = _with_specials(np.random.default_rng(2), (M, N))
    with tempfile.TemporaryDirectory() as tmp:
        got = sanitizers.run_sanitized(_poly2(M, N), {"F": F}, "float64", Path(tmp))
    _same(got["C"], _kernel(M, N, "interp")(F=F)["C"])
