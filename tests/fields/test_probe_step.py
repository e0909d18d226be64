"""A field probe's probe tensors are steps of the schedule (schedule/probe.py): the lowered
program carries one Sample statement per probe tensor (ein/fields.py), the schedule makes
each a ProbeStep (deciding the block order there), the C target renders it
(targets/c/probe.py), and the EIN evaluator runs the same program with the reference."""

import numpy as np
import pytest

import tensorlang as tl
from tensorlang import pipeline
from tensorlang.ein import interp
from tensorlang.ein.fields import Sample
from tensorlang.fields import KERNELS, cprobe, reconstruct, run
from tensorlang.schedule.probe import SORT_IMAGE_BYTES, SORT_POINTS, ProbeStep, sorts
from tensorlang.schedule.steps import LoopStep

C = pytest.mark.skipif(not cprobe.available(), reason="no working C compiler")


def _schedule(program):
    options = pipeline.Options("c", np.dtype(np.float64), opt=False)
    return pipeline.compile(program, options, until="schedule").schedule


def test_each_probe_tensor_is_a_sample_statement_and_a_probe_step():
    rng = np.random.default_rng(1)
    F = tl.field(rng.normal(size=(12, 12, 12)), "bspln3")
    E = tl.grad(F) @ tl.grad(F) + tl.trace(tl.hessian(F))
    program = E.program()
    samples = [s for s in program.statements if isinstance(s.body, Sample)]
    assert sorted(s.body.order for s in samples) == [1, 2]  # one per (image, kernel, order), shared
    steps = _schedule(program).steps
    probes = [s for s in steps if isinstance(s, ProbeStep)]
    assert [p.order for p in probes] == [1, 2] and all(not p.sort for p in probes)
    assert all(isinstance(s, LoopStep) for s in steps[len(probes):])  # the tensor program after them
    assert not any(isinstance(st.body, Sample) for s in steps if isinstance(s, LoopStep) for st in s.statements)
    shown = E.ir("schedule")
    assert shown.count("probe: v") == 2 and "bspln3 probe of order 2" in shown


def test_the_block_order_is_decided_by_the_schedule():
    """The step sorts the points by the image's blocks where the image is large and the
    points many (the same rule the many-point entry applies per call)."""
    assert sorts((256, 256, 256), 1, SORT_POINTS) and not sorts((256, 256, 256), 1, SORT_POINTS - 1)
    assert not sorts((64, 64, 64), 1, 10 ** 6)  # 2 MiB: the caches hold it
    side = int(round((SORT_IMAGE_BYTES / 8) ** (1 / 3))) + 1
    assert sorts((side,) * 3, 1, 10 ** 6) and not sorts((side - 2,) * 3, 1, 10 ** 6)
    big = cprobe.sample_program(3, (), (256, 256, 256), "bspln3", 2, SORT_POINTS)
    small = cprobe.sample_program(3, (), (64, 64, 64), "bspln3", 2, SORT_POINTS)
    assert _schedule(big).steps[0].sort and not _schedule(small).steps[0].sort
    assert "in block order" in pipeline.compile(big, pipeline.Options("c", np.dtype(np.float64), opt=False),
                                                until="schedule").show("schedule")


@pytest.mark.parametrize("world", [None, {"spacing": [0.5, 2.0], "origin": [1.0, -1.0]}])
def test_the_ein_evaluator_runs_the_program_with_the_reference(world):
    """Without a compiler the same program runs on the EIN evaluator, whose rule for a
    Sample is the numpy reference in index space (the world's chain rule follows as EIN)."""
    rng = np.random.default_rng(2)
    img = tl.image(rng.normal(size=(10, 11, 2)), dim=2, world=world)
    F = tl.field(img, "ctmr")
    E = tl.jacobian(F)
    plan = run.probe_plan(E)
    points = rng.uniform(2.0, 7.0, size=(50, 2)) * (0.5 if world else 1.0)
    inputs = run._inputs(E, plan)
    block = np.full((run.BLOCK, 2), np.nan)
    block[:50] = points
    inputs["X"] = block
    ours = np.asarray(interp.run(plan.program, inputs)["E"])[:50]
    want = reconstruct.probe(img, KERNELS["ctmr"], 1, points)
    assert np.allclose(ours, want, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.array_equal(np.isnan(ours), np.isnan(want))


@C
def test_two_probe_steps_share_one_c_source():
    """A probe of a gradient and a Hessian is two probe steps in one C source, each with
    its names made its own, and the loop step after them; the results are the reference's."""
    rng = np.random.default_rng(3)
    F = tl.field(rng.normal(size=(9, 10, 11)), "bspln3")
    E = tl.norm(tl.grad(F)) * tl.trace(tl.hessian(F))
    code = E.ir("c")
    assert "tl_step0_points(" in code and "tl_step1_points(" in code
    assert code.count("#pragma GCC push_options") == 2 == code.count("#pragma GCC pop_options")
    points = rng.uniform(1.0, 7.5, size=(300, 3))
    ours = E.probe(points)
    run.USE_C = False
    try:
        want = E.probe(points)
    finally:
        run.USE_C = True
    assert np.allclose(ours, want, rtol=1e-10, atol=1e-10, equal_nan=True)
