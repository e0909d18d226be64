"""The padded-kernel harness of tests/padding (000 §4, Corollary 3): a padded kernel's C
built as a stand-alone executable under AddressSanitizer and UndefinedBehaviorSanitizer,
whose ``main`` gives every buffer a heap block of exactly its padded size (so a read or a
write one element past it aborts), reads the initial store from stdin, runs every C step
and writes the store back to stdout.  :func:`run_padded` does all of it and checks what
comes back: the padding of every program buffer is zero, and each requested buffer's
true region is returned.  Used by test_padding_sanitizers.py (random programs, ``pad=M``)
and test_padding_fused.py (fused loops, ``pad=M`` and the padded locals)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from properties.test_c_sanitizers import SANITIZE
from properties.test_c_sanitizers import pytestmark as needs_sanitizers  # skipif: ASan does not work here
from tensorlang.targets.c import build as c_build

__all__ = ["driver", "needs_sanitizers", "run_padded"]


def driver(generated, storage) -> str:
    """``generated``'s C with a ``main`` that runs every C step on heap buffers of exactly
    the ``storage`` shapes (the padded ones), read from stdin and written back to stdout."""
    sizes = [int(np.prod(shape)) for shape in storage]
    lines = [generated.source, "#include <stdio.h>", "#include <stdlib.h>", "int main(void) {",
             f"    real *v[{max(len(sizes), 1)}];"]
    for n, size in enumerate(sizes):
        lines.append(f"    v[{n}] = malloc({max(size, 1)} * sizeof(real));")
        lines.append(f"    if (fread(v[{n}], sizeof(real), {size}, stdin) != {size}) return 2;")
    for function in generated.functions:
        lines.append(f"    {function.name}({', '.join([f'v[{s}]' for s in (*function.slots, *function.inputs)] + ['1'])});")
    for n, size in enumerate(sizes):
        lines.append(f"    fwrite(v[{n}], sizeof(real), {size}, stdout);")
        lines.append(f"    free(v[{n}]);")
    return "\n".join(lines + ["    return 0;", "}"]) + "\n"


def run_padded(generated, inputs: dict, outputs, tmp: Path) -> dict[str, np.ndarray]:
    """Build ``generated`` (a float64 kernel's :class:`~tensorlang.targets.c.codegen.Generated`,
    padded or not) with the sanitizers, run it on a store whose padding is zero and whose
    true regions hold ``inputs`` (⊥ for a variable not given; the scratch buffer ⊥
    throughout, as garbage on entry), assert it ran clean and left every program buffer's
    padding zero, and return the true regions of the buffers named in ``outputs``."""
    buffers = generated.schedule.buffers
    storage = buffers.storage_shapes
    src, exe = tmp / "kernel.c", tmp / "kernel"
    src.write_text(driver(generated, storage))
    built = subprocess.run([*c_build.require_compiler().command, *SANITIZE, str(src), "-o", str(exe), "-lm"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    initial = []
    for buffer, shape in zip(buffers.buffers, storage):
        store = np.zeros(shape)  # padding zero on entry (000 rule d-pad-var)
        if buffer.name.startswith("<"):
            store[...] = np.nan  # the scratch buffer
        else:
            store[tuple(slice(0, k) for k in buffer.shape)] = inputs.get(buffer.name, np.nan)
        initial.append(store)
    ran = subprocess.run([str(exe)], input=b"".join(a.tobytes() for a in initial), capture_output=True, timeout=120)
    assert ran.returncode == 0 and not ran.stderr, ran.stderr.decode(errors="replace")[-3000:]
    final, offset = {}, 0
    for buffer, shape in zip(buffers.buffers, storage):
        count = int(np.prod(shape))
        value = np.frombuffer(ran.stdout, np.float64, count, offset).reshape(shape)
        offset += count * 8
        if not buffer.name.startswith("<"):
            region = tuple(slice(0, k) for k in buffer.shape)
            padding = np.ones(shape, dtype=bool)
            padding[region] = False
            assert np.all(value[padding] == 0), f"padding of {buffer.name!r} is not zero"
            final[buffer.name] = value[region]
    assert offset == len(ran.stdout)
    return {name: final[name] for name in outputs}
