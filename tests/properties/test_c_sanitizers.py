"""Generated C under AddressSanitizer and UndefinedBehaviorSanitizer.

For random programs of the differential harness, the C back end's source (all loop nests,
no BLAS steps) is compiled into a stand-alone program with
``-fsanitize=address,undefined -fno-sanitize-recover=all``: a ``main`` that gives every
variable a heap buffer of exactly its size, reads the initial store from stdin, runs the
kernel and writes the final store to stdout.  Any out-of-bounds access or undefined
behaviour aborts with a report; the results must also meet the oracle's bound.
The sample is bounded (each example is a sanitized compile) and CI runs it.
"""

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings

import tensorlang as tl
from properties.harness import assert_close_to_oracle, cases
from tensorlang.schedule.steps import LoopStep
import sanitizer_probe
from c_source import generate
from tensorlang.targets.c import build as c_build, codegen as c_codegen

SANITIZE = list(sanitizer_probe.ASAN_UBSAN)


def _sanitizers_work() -> bool:
    return sanitizer_probe.works(sanitizer_probe.ASAN_UBSAN)


#: skipped where the C compiler cannot build and run such a program (the fixture: tests/conftest.py)
pytestmark = pytest.mark.usefixtures("asan_ubsan")


def driver(generated: c_codegen.Generated) -> str:
    """A main() that runs every C step on exactly-sized heap buffers read from stdin."""
    program = generated.loop_program
    sizes = [int(np.prod(shape)) for shape in program.shapes]
    lines = [generated.source, "#include <stdio.h>", "#include <stdlib.h>", "int main(void) {"]
    lines.append(f"    real *v[{max(len(sizes), 1)}];")
    for n, size in enumerate(sizes):
        lines.append(f"    v[{n}] = malloc({max(size, 1)} * sizeof(real));")
        lines.append(f"    if (fread(v[{n}], sizeof(real), {size}, stdin) != {size}) return 2;")
    assert all(isinstance(step, LoopStep) for step in generated.schedule.steps), "the sanitizer build runs loop nests only"
    # an inout variable's input in a buffer of its own, exactly sized, as a call with
    # out= another array passes it (the function reads it there: codegen.input_reads)
    inputs = sorted({s for function in generated.functions for s in function.inputs})
    for s in inputs:
        lines.append(f"    real *in{s} = malloc({max(sizes[s], 1)} * sizeof(real));")
        lines.append(f"    memcpy(in{s}, v[{s}], {sizes[s]} * sizeof(real));")
    first = {s: next(f for f in generated.functions if s in f.slots) for s in inputs}  # later steps: in place
    for function in generated.functions:
        given = [f"in{s}" if first[s] is function else f"v[{s}]" for s in function.inputs]
        args = ", ".join([f"v[{s}]" for s in function.slots] + given + ["1"])
        lines.append(f"    {function.name}({args});")
    lines += [f"    free(in{s});" for s in inputs]
    for n, size in enumerate(sizes):
        lines.append(f"    fwrite(v[{n}], sizeof(real), {size}, stdout);")
        lines.append(f"    free(v[{n}]);")
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def run_sanitized(text: str, inputs: dict, dtype: str, tmp: Path, **compile_args) -> dict:
    kernel = tl.compile(text, backend="interp", dtype=dtype, **compile_args)  # for the program's interface only
    generated = generate(kernel.ein, dtype, blas=False)
    src, exe = tmp / "kernel.c", tmp / "kernel"
    src.write_text(driver(generated))
    compiler = c_build.require_compiler()
    built = subprocess.run([*compiler.command, *SANITIZE, str(src), "-o", str(exe), "-lm"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    names, shapes = generated.loop_program.names, generated.loop_program.shapes
    np_dtype = np.dtype(dtype)
    initial = []
    for name, shape in zip(names, shapes):
        value = inputs.get(name)
        initial.append(np.full(shape, np.nan, np_dtype) if value is None else np.asarray(value, np_dtype))
    stdin = b"".join(np.ascontiguousarray(a).tobytes() for a in initial)
    ran = subprocess.run([str(exe)], input=stdin, capture_output=True, timeout=120)
    assert ran.returncode == 0 and not ran.stderr, ran.stderr.decode(errors="replace")[-3000:]
    final, offset = {}, 0
    for name, shape in zip(names, shapes):
        count = int(np.prod(shape))
        final[name] = np.frombuffer(ran.stdout, np_dtype, count, offset).reshape(shape)
        offset += count * np_dtype.itemsize
    assert offset == len(ran.stdout)
    return {name: final[name] for name in kernel.outputs}


@pytest.mark.slow
@settings(max_examples=60)
@given(case=cases(max_extent=5))
def test_generated_c_is_clean_under_sanitizers(case):
    note(case.text)
    with tempfile.TemporaryDirectory() as tmp:
        results = run_sanitized(case.text, case.inputs, "float64", Path(tmp))
    assert_close_to_oracle(case, results, "float64", "c (sanitized)")


@pytest.mark.slow
@settings(max_examples=20)
@given(case=cases(max_extent=4))
def test_generated_float32_c_is_clean_under_sanitizers(case):
    note(case.text)
    inputs = {name: value.astype(np.float32) for name, value in case.inputs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        results = run_sanitized(case.text, inputs, "float32", Path(tmp))
    assert_close_to_oracle(case, results, "float32", "c float32 (sanitized)")


def test_the_sanitizer_build_catches_an_out_of_bounds_write(tmp_path):
    """The check above can fail: a kernel that writes one element too far is reported."""
    kernel = tl.compile("in var x : [4]\nout var y : [4]\ny = x + x\n", backend="interp")
    generated = generate(kernel.ein, "float64", blas=False)
    broken = c_codegen.Generated(generated.source.replace("x_i < 4LL", "x_i < 5LL"), generated.schedule,
                                 generated.loop_program, generated.functions, generated.declarations)
    assert broken.source != generated.source
    src, exe = tmp_path / "k.c", tmp_path / "k"
    src.write_text(driver(broken))
    compiler = c_build.require_compiler()
    subprocess.run([*compiler.command, *SANITIZE, str(src), "-o", str(exe), "-lm"], check=True, capture_output=True)
    ran = subprocess.run([str(exe)], input=np.zeros(8).tobytes(), capture_output=True, timeout=120)
    assert ran.returncode != 0 and b"AddressSanitizer" in ran.stderr
