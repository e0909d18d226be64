"""What ``pad="auto"`` chooses (schedule.padding.auto_pad, issue 44), for the padding
bench's two fused programs (the CFD interpolation and the inverse Helmholtz operator) at
the bench's sizes: which kernel, and why.  The choice depends on the vector width and the
caches, so both are fixed here: 8 lanes (AVX-512 doubles) and the caches of the machine
the rule was measured on (L1d 48 KiB, L2 2 MiB).  No timing: the measurements behind
each case are in docs/performance.md, "pad=auto weighs the remainder"."""

import numpy as np
import pytest

import tensorlang as tl
from corpus import helmholtz_source, interpolation_source
from tensorlang import machine, pipeline
from tensorlang.schedule import padding as rules
from tensorlang.targets.c import build as c_build

SOURCES = {"interpolation": interpolation_source, "helmholtz": helmholtz_source}
WIDTH = 8

#: (program, n) -> (pad of the caller's buffers, padding of the fused loops' locals, why)
CHOICES = {
    ("interpolation", 5): (1, 1, "AUTO_LOCAL_MAX_GROWTH"),  # rows of 5 padded to 8: 1.6 times as long
    ("interpolation", 7): (1, 8, "locals padded to 8"),  # 4 lanes and 3 scalars -> one vector
    # rows of a vector or more: register tiles with a masked last vector (RAGGED_TILE_BYTES)
    ("interpolation", 13): (1, 1, "register tiles"),
    ("interpolation", 16): (1, 1, "no remainder"),
    ("interpolation", 19): (1, 1, "register tiles"),
    ("interpolation", 31): (1, 1, "register tiles"),  # was every buffer padded (the locals past L2/4)
    ("helmholtz", 5): (1, 1, "AUTO_LOCAL_MAX_GROWTH"),
    ("helmholtz", 7): (1, 8, "locals padded to 8"),
    ("helmholtz", 13): (1, 1, "register tiles"),
    ("helmholtz", 16): (1, 1, "no remainder"),
    ("helmholtz", 31): (1, 1, "register tiles"),  # fused (1.5 MiB of a 2 MiB L2): ragged register tiles
}


@pytest.fixture
def measured_caches(monkeypatch):
    """The caches of the machine the rule was measured on, for this test only."""
    monkeypatch.setenv("TENSORLANG_CACHE_SIZES", "l1=48K,l2=2M")
    machine.cache_sizes.cache_clear()
    yield machine.cache_sizes()
    machine.cache_sizes.cache_clear()


def _choice(kind: str, n: int, elements: int) -> rules.AutoPad:
    """auto_pad on the unpadded schedule of ``kind`` at ``n`` on ``elements`` elements."""
    kernel = tl.compile(SOURCES[kind](n, elements), backend="interp")  # the interface only
    scheduled = pipeline.compile(kernel.ein, pipeline.Options("c", np.dtype("float64")), roles=kernel.roles(),
                                 until="schedule")
    return rules.auto_pad(scheduled.executed, scheduled.schedule, WIDTH)


@pytest.mark.parametrize("kind, n", sorted(CHOICES))
def test_what_auto_chooses_at_the_bench_sizes(kind, n, measured_caches):
    """The bench's sizes (2^20 points: E = 2^20 // n^3 elements)."""
    pad, local_pad, why = CHOICES[kind, n]
    chosen = _choice(kind, n, max(1, 2**20 // n**3))
    assert (chosen.pad, chosen.locals) == (pad, local_pad), chosen.why
    assert why in chosen.why


@pytest.mark.parametrize("kind, n", [("interpolation", 7), ("interpolation", 31), ("helmholtz", 13)])
def test_the_choice_does_not_depend_on_the_batch(kind, n, measured_caches):
    """The rule reads one iteration of the fused loop and the work per element copied,
    neither of which changes with the number of elements E."""
    first = _choice(kind, n, 2)
    assert all((_choice(kind, n, e).pad, _choice(kind, n, e).locals) == (first.pad, first.locals) for e in (3, 9))


@pytest.fixture
def without_ragged_tiles(monkeypatch):
    """The rule where rows of a vector or more are no register tiles (vectors narrower than
    RAGGED_TILE_BYTES: AVX2), so that n = 13 and 31 still reach the locals and buffers."""
    monkeypatch.setattr(rules, "RAGGED_TILE_BYTES", 1 << 30)


@pytest.mark.usefixtures("without_ragged_tiles")
def test_locals_past_the_l2_share_fall_back_to_the_locals(measured_caches, monkeypatch):
    """Past AUTO_LOCAL_L2_FRACTION every buffer is padded only where it is worth it; where
    the copies of the caller's arrays would not amortise, the locals are padded still
    (they beat the unpadded kernel at every size measured past it)."""
    monkeypatch.setattr(rules, "AUTO_FLOPS_PER_COPIED", 10**6)
    chosen = _choice("interpolation", 31, 2)
    assert (chosen.pad, chosen.locals) == (1, WIDTH)
    assert "L2" in chosen.why and "do not amortise" in chosen.why


@pytest.mark.usefixtures("without_ragged_tiles")
def test_the_switch_is_the_l2_share(measured_caches, monkeypatch):
    """From padded locals to padded buffers at AUTO_LOCAL_L2_FRACTION of L2: n = 13's
    padded locals (three of 13·13·16 doubles and C's transpose, 65 KiB) fit in a quarter
    of 2 MiB, not in a hundredth of it."""
    assert (_choice("interpolation", 13, 4).pad, _choice("interpolation", 13, 4).locals) == (1, WIDTH)
    monkeypatch.setattr(rules, "AUTO_LOCAL_L2_FRACTION", 0.01)
    chosen = _choice("interpolation", 13, 4)
    assert (chosen.pad, chosen.locals) == (WIDTH, WIDTH), chosen.why
    assert "> AUTO_LOCAL_L2_FRACTION 0.01" in chosen.why


needs_width = pytest.mark.skipif(
    c_build.find_compiler() is None or machine.simd_elements(c_build.find_compiler(), 8) != WIDTH,
    reason="the compiled choice is checked where the vector width is 8 doubles (AVX-512)")


@pytest.mark.slow
@needs_width
@pytest.mark.usefixtures("without_ragged_tiles")
def test_the_kernel_runs_what_auto_chose(measured_caches):
    """At n = 31 the kernel is padded throughout (``kernel.pad`` 8), its loop still fused
    (the fused loop reads and writes the padded buffers in place), and it computes what
    the unpadded kernel does."""
    text = interpolation_source(31, 2)
    auto, plain = tl.compile(text, backend="c", pad="auto"), tl.compile(text, backend="c")
    assert auto.pad == WIDTH and auto.auto_pad.locals == WIDTH and auto.options.pad_locals == 1
    assert [step.fusion is not None for step in auto.schedule.steps] == [True]
    assert auto.schedule.buffers.storage_shapes != plain.schedule.buffers.storage_shapes
    rng = np.random.default_rng(31)
    inputs = {name: rng.uniform(-1, 1, plain.shapes[name]) for name in plain.required_inputs}
    np.testing.assert_allclose(auto(**inputs)["v"], plain(**inputs)["v"], rtol=1e-12, atol=1e-14)


@pytest.mark.slow
@needs_width
@pytest.mark.usefixtures("without_ragged_tiles")
def test_a_fused_loop_lost_to_padding_falls_back_to_the_locals(measured_caches, monkeypatch):
    """If the padded schedule would not keep a fused loop that the unpadded one has (here
    forced: the plan refuses every group under padding), the kernel takes the padded
    locals instead and says so; the values are the unpadded kernel's."""
    from tensorlang.schedule import plan

    monkeypatch.setattr(plan, "fuses_padded", lambda group, pad: False)
    text = interpolation_source(31, 2)
    auto, plain = tl.compile(text, backend="c", pad="auto"), tl.compile(text, backend="c")
    assert auto.pad == 1 and auto.auto_pad.locals == WIDTH and auto.options.pad_locals == WIDTH
    assert "would not stay fused" in auto.auto_pad.why
    assert [step.fusion is not None for step in auto.schedule.steps] == [True]
    rng = np.random.default_rng(32)
    inputs = {name: rng.uniform(-1, 1, plain.shapes[name]) for name in plain.required_inputs}
    np.testing.assert_allclose(auto(**inputs)["v"], plain(**inputs)["v"], rtol=1e-12, atol=1e-14)
