"""Corollary 3 of paper 000 (safety with a padded store): the padded C code, compiled with
AddressSanitizer and UndefinedBehaviorSanitizer, makes no out-of-bounds access on buffers
of exactly their padded size, on random programs (the last dimension padded), and its results meet the oracle's bound with the padding zero.

Each example is one sanitized compile, so the sample is small."""

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import tensorlang as tl
from properties.harness import assert_close_to_oracle, cases
from properties.test_c_sanitizers import SANITIZE, pytestmark  # noqa: F401 - skipped where ASan does not work
from c_source import generate
from tensorlang.targets.c import build as c_build


def _driver(generated, storage) -> str:
    """A main() that runs every C step on heap buffers of exactly their padded sizes."""
    sizes = [int(np.prod(shape)) for shape in storage]
    lines = [generated.source, "#include <stdio.h>", "#include <stdlib.h>", "int main(void) {",
             f"    real *v[{max(len(sizes), 1)}];"]
    for n, size in enumerate(sizes):
        lines.append(f"    v[{n}] = malloc({max(size, 1)} * sizeof(real));")
        lines.append(f"    if (fread(v[{n}], sizeof(real), {size}, stdin) != {size}) return 2;")
    for function in generated.functions:
        lines.append(f"    {function.name}({', '.join([f'v[{s}]' for s in function.slots] + ['1'])});")
    for n, size in enumerate(sizes):
        lines.append(f"    fwrite(v[{n}], sizeof(real), {size}, stdout);")
        lines.append(f"    free(v[{n}]);")
    return "\n".join(lines + ["    return 0;", "}"]) + "\n"


def run_padded_sanitized(text: str, inputs: dict, pad: int, tmp: Path) -> dict:
    kernel = tl.compile(text, backend="interp")  # for the program's interface only
    generated = generate(kernel.ein, "float64", kernel.roles(), blas=False, pad=pad)
    buffers = generated.schedule.buffers
    storage = buffers.storage_shapes
    src, exe = tmp / "kernel.c", tmp / "kernel"
    src.write_text(_driver(generated, storage))
    compiler = c_build.require_compiler()
    built = subprocess.run([*compiler.command, *SANITIZE, str(src), "-o", str(exe), "-lm"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    initial = []
    for buffer, shape in zip(buffers.buffers, storage):
        store = np.zeros(shape)  # padding zero on entry (000 rule d-pad-var)
        region = tuple(slice(0, k) for k in buffer.shape)
        value = inputs.get(buffer.name)
        if buffer.name.startswith("<"):
            store[...] = np.nan  # the scratch buffer: garbage on entry
        else:
            store[region] = np.nan if value is None else value
        initial.append(store)
    ran = subprocess.run([str(exe)], input=b"".join(a.tobytes() for a in initial), capture_output=True, timeout=120)
    assert ran.returncode == 0 and not ran.stderr, ran.stderr.decode(errors="replace")[-3000:]
    final, offset = {}, 0
    for buffer, shape in zip(buffers.buffers, storage):
        count = int(np.prod(shape))
        value = np.frombuffer(ran.stdout, np.float64, count, offset).reshape(shape)
        offset += count * 8
        if not buffer.name.startswith("<"):
            mask = np.ones(shape, dtype=bool)
            mask[tuple(slice(0, k) for k in buffer.shape)] = False
            assert np.all(value[mask] == 0), f"padding of {buffer.name!r} is not zero"
            final[buffer.name] = value[tuple(slice(0, k) for k in buffer.shape)]
    return {name: final[name] for name in kernel.outputs}


@pytest.mark.slow
@settings(max_examples=25)
@given(case=cases(max_extent=5), pad=st.sampled_from((2, 4, 8)))
def test_padded_c_is_clean_under_sanitizers(case, pad):
    note(case.text)
    with tempfile.TemporaryDirectory() as tmp:
        results = run_padded_sanitized(case.text, case.inputs, pad, Path(tmp))
    assert_close_to_oracle(case, results, "float64", f"c pad={pad} (sanitized)")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["max", "matrix-vector", "transpose in place", "affine", "contraction", "concat", "vec"])
def test_programs_that_could_overrun_are_clean_under_sanitizers(name, tmp_path):
    """Loops that must keep their true extents (A[i,k] padded over i would read past A's
    rows in tensorlang's layout), the scratch copy, an affine index, an interchanged
    contraction, a direct sum (its last piece read at i - S_k): each compiled with ASan
    at pad 4."""
    from test_padding_rules import PROGRAMS

    text = PROGRAMS[name]
    reference = tl.compile(text, backend="interp")
    rng = np.random.default_rng(0)
    inputs = {n: rng.uniform(-1, 1, reference.shapes[n]) for n in reference.inputs}
    expected = reference(**inputs)
    results = run_padded_sanitized(text, inputs, 4, tmp_path)
    for var, value in expected.items():
        np.testing.assert_allclose(results[var], value, rtol=1e-12, atol=1e-14, err_msg=var)
