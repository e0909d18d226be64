"""A ray's steps outside the volume made as its ``t += c`` and exit tests alone where they
provably fail its ``inside`` test (``strands_batch.skip_run``: ``tl_skip``,
docs/diderot-compiled.md "How a run goes"): the results and step counts are the step-by-step
run's bit for bit (a NaN's sign aside), with ⊥ and ±inf samples, rotated and diagonal maps,
rays marching either way, entering, leaving or missing the volume, step limits; and the
interpreter's to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as CS
from tensorlang.targets.c import strands_batch as SB
from agreement import off_and_on  # tests/diderot is on the path
from rays import MARCH, RAYS, noisy_volume

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


SKIP = ((SB, "SKIP"),)


@pytest.mark.slow
@pytest.mark.parametrize("layout,axes", [("c", False), ("fortran", False), ("c", True)])
@pytest.mark.parametrize("threads", [1, 2])
def test_skipped_steps_give_the_step_by_step_results_bit_for_bit(layout, axes, threads, monkeypatch):
    values = {"vol": noisy_volume(layout, axes)}
    p, _, fast, src0, src1 = off_and_on(MARCH, values, monkeypatch, SKIP, threads)
    assert "tl_skip(" not in src0 and "int64_t q_ = tl_skip(1, 0, Rl, Il, gr, gi, img, k - s - u);" in src1
    if threads == 1 and layout == "c":  # the oracle
        ref = p.run(values, backend="interp")
        assert (ref.steps, ref.active, ref.stable) == (fast.steps, fast.active, fast.stable)
        for name in ref.outputs:
            a, b = np.asarray(ref.outputs[name]), np.asarray(fast.outputs[name])
            assert a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True), name
    m = np.asarray(fast.outputs["m"])
    assert (m == -1).any() and (m > -1).any()  # some rays met the volume, some not
    g = np.asarray(fast.outputs["g"])
    assert (np.isnan(g).any() or np.isinf(g).any()) and np.isfinite(g).all(axis=-1).any()  # ⊥ and ±inf reached


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 5, 23, 37])
def test_a_step_limit_stops_a_skipping_ray_where_the_steps_stop(limit, monkeypatch):
    values = {"vol": noisy_volume("c")}
    _, a, _, _, _ = off_and_on(MARCH, values, monkeypatch, SKIP, limit=limit)
    assert a.active > 0


def test_which_updates_skip():
    # a ray march: one inside test of a point affine in t, t += c, exit tests on t; not: two
    # inside tests, a state change outside the test's branch, a point not affine in t
    moved = MARCH.replace("      t += dt;\n", "      t += dt;\n      m = m + 0.0;\n")
    bent = MARCH.replace("vec3 p = [-4.0, 0.1, -0.3] + t * dir;", "vec3 p = [-4.0, 0.1, -0.3] + t * t * dir;")
    for text, skip in ((MARCH, True), (RAYS, False), (moved, False), (bent, False)):
        ir = strand_plan(check(parse_program(text)))[0]
        src = CS.Renderer(ir).source()
        assert ("static int64_t tl_skip(" in src) == skip, text
