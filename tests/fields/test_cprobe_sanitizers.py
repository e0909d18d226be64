"""The generated probe C (fields/cprobe.py) under AddressSanitizer and UBSan.

The probe reads rows at offsets computed from each point's cell, and in block order sorts
the points into freshly allocated arrays (or a caller's scratch), writes their results
there packed and copies each back to its point's place, asking for the packed results
of the points ahead: every one of those reads and writes must stay inside its buffer.  Generated images (1-D to 3-D, scalar and tensor voxels, ⊥ and ±∞ samples) and
points (inside, on the border, just outside, far, not finite) are written into a C
``main`` that copies them into heap buffers of exactly their sizes and calls
``tl_probe`` in the given order and in block order (forced, whatever the image's size);
the index-space results must agree with the optimized build's (which
tests/fields/test_cprobe_properties.py checks against the reference) up to rounding:
built at -O1 (without OpenMP, except for the parallel sort's test), multiply-adds are
not fused there."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from properties.test_c_sanitizers import SANITIZE, pytestmark  # noqa: F401 - skipped where ASan does not work
import tensorlang as tl
from tensorlang.fields import KERNELS, cprobe, reconstruct
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import probe as c_probe
from test_cprobe_properties import _agree, cases, known_threshold, parallel_points  # noqa: F401 - the fixture


def _literal(x: float) -> str:
    if np.isnan(x):
        return "NAN"
    if np.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return float(x).hex()


def _array(name: str, ctype: str, values) -> str:
    """A heap buffer of exactly len(values) elements holding them (ASan guards its ends)."""
    items = ", ".join(values) or "0"
    n = len(values)
    return (f"    static const {ctype} {name}_init[] = {{{items}}};\n"
            f"    {ctype} *{name} = malloc({max(n, 1)} * sizeof({ctype}));\n"
            f"    memcpy({name}, {name}_init, {n} * sizeof({ctype}));\n")


def driver(img, n: int, points: np.ndarray, full: int, sort: int, threads: int = 1, order: int = 0) -> str:
    """A main() probing ``points``; ``sort`` 0: given order, 1: block order with the
    probe's own buffers, 2: block order in a caller's scratch buffer of exactly the size
    cprobe.probe passes (cprobe.scratch_bytes: ASan guards its end)."""
    d = img.dim
    packed = cprobe.packed_doubles(d, int(np.prod(img.voxel_shape, dtype=np.int64)), order)
    scratch = (f"    char *scratch = malloc({max(cprobe.scratch_bytes(n, d, packed), 1)});\n" if sort == 2
               else "    char *scratch = NULL;\n")
    m = np.ascontiguousarray(img.to_index[:d], dtype=np.float64)
    return (
        "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
        "void tl_probe(int64_t n, const double *pts, const double *data, const int64_t *sizes,\n"
        "              const double *M, double *out, int nthreads, int sort, char *scratch);\n"
        "int main(void) {\n"
        + _array("data", "double", [_literal(v) for v in np.asarray(img.data, dtype=np.float64).reshape(-1)])
        + _array("pts", "double", [_literal(v) for v in points.reshape(-1)])
        + _array("sizes", "int64_t", [str(int(s)) for s in img.sizes])
        + _array("M", "double", [_literal(v) for v in m.reshape(-1)])
        + f"    double *out = malloc({max(n * full, 1)} * sizeof(double));\n"
        + scratch
        + f"    tl_probe({n}, pts, data, sizes, M, out, {threads}, {int(sort > 0)}, scratch);\n"
        + f"    for (int i = 0; i < {n * full}; i++) printf(\"%a\\n\", out[i]);\n"
        + "    free(data); free(pts); free(sizes); free(M); free(out); free(scratch);\n    return 0;\n}\n"
    )


def run_sanitized(img, kern, order: int, points: np.ndarray, sort: int, threads: int = 1,
                  rows: bool = True) -> np.ndarray:
    """The probe's results from the sanitized build (with OpenMP where ``threads`` > 1;
    ``rows``: targets/c/probe.py's ROWS, a scalar image's 4-tap rows transposed, or gathers)."""
    compiler = c_build.require_compiler()
    ncomp = int(np.prod(img.voxel_shape, dtype=np.int64))
    with pytest.MonkeyPatch.context() as patch:
        # sort 1: tl_sort's test of coherent points (these images' one block: never sorted);
        # sort 2 and threads: always sorted
        patch.setattr(c_probe, "COHERENT_POINTS", c_probe.COHERENT_POINTS if sort == 1 and threads == 1 else 0)
        patch.setattr(c_probe, "ROWS", rows)
        src, _ = c_probe.source(img.dim, kern, order, ncomp, parallel_points(img.dim, kern.support, ncomp))
    n = points.shape[0]
    shape = (n,) + img.voxel_shape + (img.dim,) * order
    full = int(np.prod(shape[1:], dtype=np.int64))
    with tempfile.TemporaryDirectory() as tmp:
        probe_c, main_c, exe = Path(tmp, "probe.c"), Path(tmp, "main.c"), Path(tmp, "probe")
        probe_c.write_text(src)
        main_c.write_text(driver(img, n, points, full, sort, threads, order))
        openmp = ["-fopenmp"] if threads > 1 else []
        built = subprocess.run([*compiler.command, *SANITIZE, *openmp, str(probe_c), str(main_c), "-o", str(exe), "-lm"],
                               capture_output=True, text=True)
        assert built.returncode == 0, built.stderr[-3000:]
        ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr[-3000:]
    values = [float.fromhex(line) for line in ran.stdout.split()]
    assert len(values) == n * full
    return np.array(values).reshape(shape)


@st.composite
def many_points(draw):
    """A case of test_cprobe_properties with its points repeated (shuffled) past a few
    batches, so that the block order's sort and its prefetches ahead have work to do."""
    img, kern, order, points = draw(cases())
    reps = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    many = np.concatenate([points] * reps + [points[: draw(st.integers(0, points.shape[0]))]])
    return img, kern, order, many[rng.permutation(many.shape[0])]


@pytest.mark.slow
@settings(max_examples=6, deadline=None)  # (an example costs about 11 s: a sanitized build)
@given(many_points(), st.sampled_from([0, 1, 2]), st.booleans())
def test_probe_c_is_clean_under_sanitizers(case, sort, rows):
    img, kern, order, points = case
    ours = run_sanitized(img, kern, order, points, sort, rows=rows)
    _agree(ours, cprobe.probe(img, kern, order, points, sort=bool(sort)))
    assert np.isnan(ours[~reconstruct.inside(img, kern, points)]).all()


@pytest.mark.slow
@settings(max_examples=2, deadline=None)  # (an example costs about 30 s)
@given(cases(), st.integers(0, 2 ** 16))
def test_the_parallel_sort_is_clean_under_sanitizers(case, seed):
    """Past cprobe.parallel_points at 2 threads, the sort runs in parallel: each thread counts
    its own range into its own counts and scatters it; no index may leave perm or the
    sorted copy."""
    if not c_build.require_compiler().openmp:
        pytest.skip("no OpenMP: the sort is the one-thread one, tested above")
    img, kern, order, points = case
    reps = -(-(parallel_points(img.dim, kern.support, int(np.prod(img.voxel_shape))) + 3) // points.shape[0])
    many = np.concatenate([points] * reps)[np.random.default_rng(seed).permutation(reps * points.shape[0])]
    ours = run_sanitized(img, kern, order, many, 2, threads=2)  # in a scratch buffer of the exact size
    _agree(ours, cprobe.probe(img, kern, order, many, sort=False))


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
def test_the_write_combined_sort_of_many_blocks_is_clean_under_sanitizers(threads):
    """An image of 27 blocks and a few thousand random points (not a multiple of the
    buffers' 8 and 16): the sort's buffers fill and go out as whole lines, blocks start
    and end inside lines (each thread's part too, at 2 threads past parallel_points),
    in a scratch buffer of exactly cprobe.scratch_bytes wherever malloc put it."""
    if threads > 1 and not c_build.require_compiler().openmp:
        pytest.skip("no OpenMP")
    rng = np.random.default_rng(threads)
    img = tl.image(rng.normal(size=(33, 33, 33)))  # 3 blocks of 16 cells per axis
    kern = KERNELS["bspln3"]
    n = max(3001, parallel_points(3, 4, 1) + 37) | 1
    points = rng.uniform(-1.0, 34.0, size=(n, 3))
    points[:2] = [np.nan, 3.0, 3.0], [np.inf, 1.0, 2.0]
    ours = run_sanitized(img, kern, 1, points, 2, threads=threads)
    _agree(ours, cprobe.probe(img, kern, 1, points, sort=False))
