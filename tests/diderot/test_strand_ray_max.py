"""A ray's maximum (``m = max(m, F(p))`` in its ``inside`` branch, as mip's) skipping the
steps that provably leave ``m`` as it is (``strands_batch.skip_max``: ``tl_skipm`` and the
block bounds of ``csrc/strands_bounds.c``, docs/diderot-compiled.md "How a run goes"): the
bounds hold every probe of their blocks (tent and bspln3, ⊥ and ±inf samples making them
NaN), and the results and step counts are the step-by-step run's bit for bit, rays marching
either way through, past and beside a volume whose bright face makes most steps skippable,
ties and signed zeros, rotated and diagonal maps, both layouts, 1 and 2 threads, step
limits, a read-only image's kept table; and the interpreter's to rounding."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.sampling.image import Image
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as CS
from tensorlang.targets.c import strands_batch as SB
from agreement import off_and_on, run_variant, same_run  # tests/diderot is on the path
from rays import MARCH_SPACING, MIP, volume

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")


def _program(kernel="tent", start="-1"):
    return MIP.replace("KERNEL", kernel).replace("START", start)


def _volume(layout: str, axes: bool = False, bad: bool = True, ties: bool = False, flat: bool = False) -> Image:
    """A volume bright near its faces and dim inside (so that a ray's maximum is mostly made
    early and most later steps skip), noise on one side, ⊥ and ±inf samples; ``ties``:
    plateaus of exactly equal samples and signed zeros; ``flat``: 5 give or take 1e-9 (the
    bounds' margin, 5e-10, decides which blocks skip: a bound off by more shows)."""
    rng = np.random.default_rng(11)
    i, j, k = np.meshgrid(np.arange(23), np.arange(21), np.arange(19), indexing="ij", sparse=True)
    data = ((i - 11.0) ** 2 + (j - 10.0) ** 2 + (k - 9.0) ** 2) / 40.0 + 0.0 * i * j * k
    data[:, :, :4] += rng.normal(scale=0.5, size=data[:, :, :4].shape)
    if flat:
        data = 5.0 + 1e-9 * rng.random(data.shape)
    if ties:
        data = np.where(data < 2.0, -0.0, np.floor(data * 2) / 2)
        data[3:9, 3:9, 3:9] = 0.0
    if bad:
        data[12, 7, 5] = data[9, 10, 5] = np.nan  # on rays (6, 4) and (6, 6), in the dim middle (either map)
        data[11, 7, 11] = data[9, 10, 11] = np.inf
        data[8, 5, 8] = -np.inf
    return volume(data, layout, axes, MARCH_SPACING)


MAX = ((SB, "MAX"),)


def _run(text, values, on, monkeypatch, threads=1, limit=None):
    return run_variant(text, values, monkeypatch, {(SB, "MAX"): on}, threads, limit)


@pytest.mark.parametrize("radius", [1, 2])
@pytest.mark.parametrize("layout", ["c", "fortran"])
def test_the_block_bounds_are_each_blocks_largest_sample_near_it(radius, layout):
    rng = np.random.default_rng(radius)
    data = rng.normal(size=(19, 9, 26))
    data[3, 4, 20] = np.nan
    data[17, 1, 2] = -np.inf
    data = np.asfortranarray(data) if layout == "fortran" else data
    table = SB.bounds(Image(data, 3, np.eye(4)), radius)
    assert table is not None and table.shape == (4, 2, 3)  # blocks of 8 cells: axis 2 .. axis 0
    bad = 0
    for b0, b1, b2 in np.ndindex(3, 2, 4):
        box = data[tuple(slice(max(0, 8 * b - radius), min(n - 1, 8 * b + 8 + radius) + 1)
                         for b, n in zip((b0, b1, b2), data.shape))]
        if not np.isfinite(box).all():
            assert np.isnan(table[b2, b1, b0])
            bad += 1
        else:
            assert table[b2, b1, b0] == box.max() + (1e-10 * np.abs(box).max() + 1e-300)
    assert 0 < bad < 24


@pytest.mark.parametrize("kernel", ["tent", "bspln3"])
def test_every_probe_is_at_most_its_blocks_bound(kernel):
    # values of the C probe at many points, against the bound of the block of each point's cell
    text = f"""#version 1.0
input image(3)[] vol;
field#0(3)[] F = {kernel} ⊛ vol;
strand s (int i, int j, int k) {{
   vec3 p = [0.37 * real(i) + 0.011 * real(j * k % 7), 0.41 * real(j) + 0.013 * real(i * k % 5), 0.43 * real(k)];
   output real v = F(p) if inside(p, F) else -1000.0;
   update {{ stabilize; }}
}}
initially [ s(i, j, k) | i in 0..45, j in 0..38, k in 0..36 ];
"""
    rng = np.random.default_rng(3)
    data = rng.normal(size=(18, 17, 16)) * np.exp(rng.normal(size=(18, 17, 16)) * 3)  # magnitudes apart
    data[:, :, 5] = 1e-310  # subnormal samples
    data[:11, :11, :11] = 7.3  # a plateau over block 0: probes there round to about its value, the bound's
    img = Image(data, 3, np.eye(4))
    v = np.asarray(strands(check(parse_program(text))).run({"vol": img}, backend="c").outputs["v"])
    i, j, k = np.meshgrid(np.arange(46), np.arange(39), np.arange(37), indexing="ij")
    xi = np.stack([0.37 * i + 0.011 * (j * k % 7), 0.41 * j + 0.013 * (i * k % 5), 0.43 * k])
    table = SB.bounds(img, 2 if kernel == "bspln3" else 1)
    cells = np.floor(xi).astype(int) >> 3
    bound = table[cells[2], cells[1], cells[0]]
    inside = v > -1000.0
    assert inside.sum() > 20000 and (v[inside] <= bound[inside]).all()
    assert (v[inside] >= bound[inside] - 1e-9 * np.abs(bound[inside])).sum() > 1000  # the plateau's bounds are met


@pytest.mark.slow
@pytest.mark.parametrize("layout,axes", [("c", False), ("fortran", False), ("c", True)])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kernel", ["tent", "bspln3"])
def test_skipped_steps_give_the_step_by_step_results_bit_for_bit(kernel, layout, axes, threads, monkeypatch):
    text = _program(kernel)
    values = {"vol": _volume(layout, axes)}
    p, _, fast, src0, src1 = off_and_on(text, values, monkeypatch, MAX, threads)
    assert "tl_skipm(" not in src0 and "int64_t q_ = tl_skipm(1, 0, Rl, Il, gr, gi, img, k - s - u);" in src1
    m = np.asarray(fast.outputs["m"])
    # (a ⊥ sample never enters m: max is Diderot's std::max, which keeps its first operand, m, beside a NaN)
    assert not np.isnan(m).any() and np.isinf(m).any() and (m == -1).any() and (np.isfinite(m) & (m > 1)).any()
    if threads == 1 and layout == "c":  # the oracle
        ref = p.run(values, backend="interp")
        assert (ref.steps, ref.active, ref.stable) == (fast.steps, fast.active, fast.stable)
        assert np.allclose(np.asarray(ref.outputs["m"]), m, rtol=1e-12, atol=1e-12, equal_nan=True)


# each start is another program (two C builds): the quick tier keeps a signed zero's ties and
# the near ties, the full run every start
@pytest.mark.parametrize("start,how", [pytest.param("-1", "ties", marks=pytest.mark.slow), ("-0.0", "ties"),
                                       pytest.param("0.0", "ties", marks=pytest.mark.slow),
                                       pytest.param("-∞", "ties", marks=pytest.mark.slow), ("-1", "flat")])
def test_ties_signed_zeros_and_near_ties_keep_their_bits(start, how, monkeypatch):
    values = {"vol": _volume("c", bad=False, ties=how == "ties", flat=how == "flat")}
    off_and_on(_program("tent", start), values, monkeypatch, MAX)


def test_rays_without_the_blocks_prefetch_skip_too(monkeypatch):
    # no tile block (strands_batch.ENABLED off): the update without its look-ahead, tl_skipm's
    # prefetch a no-op
    values = {"vol": _volume("fortran")}
    *_, src = off_and_on(_program("bspln3"), values, monkeypatch, MAX, fixed={(SB, "ENABLED"): False})
    assert "tl_ahead" not in src and "tl_skipm(1, 0, Rl, Il" in src


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 4, 19, 41])
def test_a_step_limit_stops_a_skipping_ray_where_the_steps_stop(limit, monkeypatch):
    values = {"vol": _volume("c")}
    _, a, _, _, _ = off_and_on(_program(), values, monkeypatch, MAX, limit=limit)
    assert a.active > 0


def test_an_image_made_here_keeps_its_table_and_a_callers_array_does_not(monkeypatch):
    from tensorlang.sampling import image as I

    vol = _volume("fortran", bad=False)
    vol = I.image(vol.data, 3, vol.world)  # a copy, read-only, nothing else refers to it: its table kept
    _, a, _ = _run(_program(), {"vol": vol}, True, monkeypatch)
    assert vol.tables  # the run's table, kept with the image
    table = SB.bounds(vol, 1)
    assert SB.bounds(vol, 1) is table and vol.tables[("block bounds", 1)] is table  # kept
    assert I.image(vol, world={"spacing": 2.0}).tables is vol.tables  # the same samples in another world: the same tables
    copied = pickle.loads(pickle.dumps(vol))  # a copy's samples are the caller's (writable): no tables
    assert copied.tables is None and copied.data.flags.writeable
    _, b, _ = _run(_program(), {"vol": vol}, False, monkeypatch)
    same_run(a, b)
    for read_only_view in (False, True):  # a caller's array, or a read-only view of it: it may change
        data = np.array(vol.data)
        img = Image(data[...] if read_only_view else data, 3, vol.world)
        assert img.tables is None
        if read_only_view:
            img.data.flags.writeable = False
        first = SB.bounds(img, 1)
        data[11:14, 6:9, 4:7] = 50.0  # a bright spot in the dim middle, on ray (6, 4): the table is made again
        assert SB.bounds(img, 1) is not first
        _, c, _ = _run(_program(), {"vol": img}, True, monkeypatch)
        _, d, _ = _run(_program(), {"vol": img}, False, monkeypatch)
        same_run(c, d)
        assert np.nanmax(np.asarray(c.outputs["m"])) >= 50.0 > np.nanmax(np.asarray(a.outputs["m"]))


def test_which_updates_skip():
    # a ray's maximum of a tent or bspln3 value: yes; not: ctmr (negative weights), m read by
    # the exit test, another state change in the branch, a sum instead of a maximum
    base = _program()
    texts = {base: True, _program("bspln3"): True, _program("ctmr").replace("field#0", "field#1"): False,
             base.replace("t > far ||", "m > 9.0 || t > far ||"): False,
             base.replace("m = max(m, F(p));", "m = max(m, F(p));\n         dt = dt;"): False,
             base.replace("m = max(m, F(p));", "m = m + F(p);"): False,
             base.replace("m = max(m, F(p));", "m = max(F(p), m);"): True}
    for text, skip in texts.items():
        ir = strand_plan(check(parse_program(text)))[0]
        src = CS.Renderer(ir).source()
        assert ("static int64_t tl_skipm(" in src) == skip, text
