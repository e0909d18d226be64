"""3-D ray programs in the C target's strand blocks (strands_batch: a ray's position
computed ahead of its update and its support prefetched steps ahead; strands_probe: a 3-D
probe's sums as straight-line scalars): the generated C takes that path, and its results
are the per-strand loops' bit for bit (a NaN's sign aside), with ⊥ and ±inf among the
samples, a rotated index-to-world map (the gradient's chain rule), a vector image and
either layout; and the interpreter's to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as CS
from tensorlang.targets.c import strands_batch as SB
from tensorlang.targets.c import strands_probe as SP
from agreement import off_and_on, run_variant, same_bits  # tests/diderot is on the path
from rays import RAYS, noisy_volume

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

# a vector volume probed at a position a local reassigned behind a branch: no block
# computes it ahead (the update probes as it always did), the sums straight-line still
MOVED = """#version 1.0
input image(3)[2] vol;
field#1(3)[2] F = c1tent ⊛ vol;
strand ray (int ui, int vi) {
   real t = 0;
   output vec2 acc = [0, 0];
   output tensor[2,3] j = zeros[2,3];
   update {
      if (t > 3.0) { stabilize; }
      vec3 p = [-1.9 + 0.31 * real(ui), -1.7 + 0.29 * real(vi), -2.0 + t];
      if (ui % 2 == 0) { p = p * 0.9; }
      acc += F(p);
      j += ∇⊗F(p);
      t += 0.4;
   }
}
initially [ ray(ui, vi) | vi in 0..6, ui in 0..7 ];
"""


BLOCKS = ((SB, "ENABLED"), (SP, "STRAIGHT"))


def _run(text: str, values: dict, fast: bool, monkeypatch, threads: int = 1, limit=None):
    return run_variant(text, values, monkeypatch, dict.fromkeys(BLOCKS, fast), threads, limit)


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["c", "fortran"])
def test_rays_in_blocks_give_the_per_strand_results_bit_for_bit(threads, layout, monkeypatch):
    values = {"vol": noisy_volume(layout)}
    p, _, fast, src0, src1 = off_and_on(RAYS, values, monkeypatch, BLOCKS, threads)
    # the per-strand build has no block and loops over taps; the fast one computes each ray's
    # position ahead of its update (one family per kernel: tent and bspln3), prefetches its
    # support and sums the taps in straight-line code
    assert "tl_ahead" not in src0 and "double *restrict data = im->data" not in src0
    assert src1.count("static inline void tl_ahead") == 2 and "#define TL_BATCH 1" in src1
    assert "tl_ahead0(X, pf, img, 0);" in src1  # ray by ray
    assert "double *restrict data = im->data" in src1 and "tl_fill" not in src1
    if threads == 1:  # the oracle (slow: once per layout)
        ref = p.run(values, backend="interp")
        for name in ref.outputs:
            a, b = np.asarray(ref.outputs[name]), np.asarray(fast.outputs[name])
            assert a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True), name
    m, g = np.asarray(fast.outputs["m"]), np.asarray(fast.outputs["g"])
    # the samples ⊥ and ±inf reached some rays and not others
    assert np.isfinite(m).any() and (np.isnan(g).any() or np.isinf(g).any()) and np.isfinite(g).all(axis=-1).any()


@pytest.mark.slow
def test_a_reassigned_position_is_probed_by_the_update_in_straight_line_code(monkeypatch):
    values = {"vol": noisy_volume("c", vox=(2,))}
    _, plain, _ = _run(MOVED, values, False, monkeypatch)
    p, fast, src = _run(MOVED, values, True, monkeypatch)
    assert "tl_ahead" not in src and "#define TL_BATCH 0" in src
    assert "double *restrict data = im->data" in src and " + 1 * cst]" in src  # the second component
    for name in plain.outputs:
        assert same_bits(plain.outputs[name], fast.outputs[name]), name
    ref = p.run(values, backend="interp")
    for name in ref.outputs:
        assert np.allclose(ref.outputs[name], fast.outputs[name], rtol=1e-12, atol=1e-12, equal_nan=True), name


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 4])
def test_a_step_limit_stops_a_ray_block_where_the_per_strand_loop_stops(limit, monkeypatch):
    values = {"vol": noisy_volume("c")}
    _, a, _, _, _ = off_and_on(RAYS, values, monkeypatch, BLOCKS, limit=limit)
    assert a.active > 0


def test_the_prefetch_reads_no_sample_and_keeps_the_last_key():
    ir = __import__("tensorlang.lang.diderot.lower", fromlist=["strand_plan"]).strand_plan(
        check(parse_program(RAYS)))[0]
    src = CS.Renderer(ir).source()
    # the families (bspln3: tl_ahead0, tent: tl_ahead1) keep their keys where the block put them
    for j, rows, key in ((0, 16, 48), (1, 4, 0)):
        ahead = src[src.index(f"static inline void tl_ahead{j}"):]
        ahead = ahead[:ahead.index("\n}\n")]
        # a hint only: no sample loaded (data only in prefetched addresses), each row of the
        # support prefetched at its start and end, the lane's index position kept as the
        # next step's key, nothing outside the volume
        assert "data[" not in ahead and ahead.count("TL_PREFETCH(") == 2 * rows
        assert f"pf[{key} + l] = xi0;" in ahead and ")) return;" in ahead


@pytest.mark.parametrize("axes", [False, True])
def test_the_update_takes_the_index_point_mapped_ahead_and_a_diagonal_map_its_one_test(axes, monkeypatch):
    # tl_ahead keeps each ray's world point and its index position; the update's maps of that
    # image at that point take them (compared as numbers), elsewhere map it themselves; a
    # diagonal map is one test, not one per entry: the same bits as the general map, with ⊥
    # and ±inf samples, and the interpreter's numbers
    values = {"vol": noisy_volume("fortran", axes)}
    monkeypatch.setattr(SP, "DIAG", False)
    _, general, _ = _run(RAYS, values, True, monkeypatch)
    monkeypatch.setattr(SP, "DIAG", True)
    p, fast, src = _run(RAYS, values, True, monkeypatch)
    update = src[src.index("static int tl_update_pf("):]
    assert "x0 == pf[" in update and "} else if (im->diag) {" in update
    assert "double x0 = X[0 + l]; pf[" in src and "im->m[5] * x1" in src
    for name in general.outputs:
        assert same_bits(general.outputs[name], fast.outputs[name]), name
    ref = p.run(values, backend="interp")
    for name in ref.outputs:
        assert np.allclose(ref.outputs[name], fast.outputs[name], rtol=1e-12, atol=1e-12, equal_nan=True), name


def test_a_probe_after_one_of_its_family_at_the_same_point_reads_the_cache(monkeypatch):
    # `real v = F(p); g = ∇F(p);` after `inside(p, F)`: the first probe fills every order of the
    # family's cache inline, the second reads it (one fill rendered, not two): the same bits as
    # rendering the second fill too, with ⊥ and ±inf samples
    values = {"vol": noisy_volume("c")}
    _, fast, src = _run(RAYS, values, True, monkeypatch)
    render = SP.render
    monkeypatch.setattr(SP, "render", lambda *args: render(*args[:-1]))  # `known` never set
    _, both, src2 = _run(RAYS, values, True, monkeypatch)
    update = src[src.index("static int tl_update_pf("):]
    update2 = src2[src2.index("static int tl_update_pf("):]
    fills = "const double *restrict data = im->data"
    assert update2.count(fills) == update.count(fills) + 1
    for name in both.outputs:
        assert same_bits(both.outputs[name], fast.outputs[name]), name


# a ray whose update keeps real and int state, stabilizes at different steps (a step count,
# the far end) and whose stabilize method reads and writes its state
OWNED = """#version 1.0
input image(3)[] vol;
field#2(3)[] F = bspln3 ⊛ vol;
strand ray (int ui, int vi) {
   vec3 dir = normalize([1.0, 0.23 * real(ui) - 0.8, 0.19 * real(vi) - 0.7]);
   real t = -0.2 * real((ui + vi) % 3);
   int hits = 0;
   output real acc = 0;
   output int n = -1;
   update {
      if (t > 4.5) { stabilize; }
      vec3 p = [-2.2, 0.1, -0.3] + t * dir;
      t += 0.17;
      if (inside(p, F)) {
         hits += 1;
         acc += F(p) * |∇F(p)|;
         if (hits > 6 + ui % 5) { stabilize; }
      }
   }
   stabilize { n = 10 * hits + vi; acc = acc / real(hits) if hits > 0 else t; }
}
initially [ ray(ui, vi) | vi in 0..8, ui in 0..10 ];
"""


@pytest.mark.slow
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("limit", [None, 3])
def test_a_solo_strands_steps_on_its_own_copies_give_the_in_place_results_bit_for_bit(fast, limit, monkeypatch):
    # a solo strand's state copied into locals for its steps (strands_batch.own_steps), in the
    # ray blocks (fast) and in the plain per-strand loop, against the state read and written
    # in place every step: the same bits, ⊥ and ±inf samples, a step limit, the interpreter
    values = {"vol": noisy_volume("c")}
    monkeypatch.setattr(SB, "OWN", False)
    _, inplace, src0 = _run(OWNED, values, fast, monkeypatch, limit=limit)
    monkeypatch.setattr(SB, "OWN", True)
    p, own, src1 = _run(OWNED, values, fast, monkeypatch, limit=limit)
    call = "tl_update_pf(1, 0, Rl, Il," if fast else "tl_update(1, 0, Rl, Il,"
    assert "Rl[" not in src0 and call in src1 and "R[3 * n + i] = Rl[3];" in src1 and "Il[0] = I[0 * n + i];" in src1
    assert (inplace.steps, inplace.active, inplace.stable) == (own.steps, own.active, own.stable)
    assert (own.active > 0) == (limit is not None)
    for name in inplace.outputs:
        assert same_bits(inplace.outputs[name], own.outputs[name]), name
    if fast and limit is None:  # the oracle (slow: once)
        ref = p.run(values, backend="interp")
        for name in ref.outputs:
            assert np.allclose(ref.outputs[name], own.outputs[name], rtol=1e-12, atol=1e-12, equal_nan=True), name
    acc = np.asarray(own.outputs["acc"])
    assert np.isfinite(acc).any() and (limit is not None or not np.isfinite(acc).all())  # ⊥ or ±inf reached


# value, gradient and Hessian of a bspln3 field (4 taps an axis) at points inside and outside
HESS = """#version 1.0
input image(3)[] vol;
field#2(3)[] F = bspln3 ⊛ vol;
strand s (int ui, int vi) {
   output tensor[3,3] h = zeros[3,3];
   output vec3 g = [0, 0, 0];
   output real v = 0;
   update {
      vec3 p = [-2.3 + 0.41 * real(ui), -2.0 + 0.37 * real(vi), -1.1 + 0.05 * real(ui * vi)];
      if (inside(p, F)) { v = F(p); g = ∇F(p); h = ∇⊗∇F(p); }
      stabilize;
   }
}
initially [ s(ui, vi) | vi in 0..10, ui in 0..11 ];
"""


@pytest.mark.slow
@pytest.mark.parametrize("text, vox", [(RAYS, ()), (MOVED, (2,)), (HESS, ())], ids=["rays", "vector", "hessian"])
@pytest.mark.parametrize("layout", ["c", "fortran"])
def test_axis_0_taps_in_vector_lanes_give_the_scalar_sums_bit_for_bit(text, vox, layout, monkeypatch):
    """``strands_probe.LANES``: a 3-D probe with 2 or 4 taps an axis sums axis 0's taps in the
    lanes of a vector (its weights too), a row of contiguous samples one load where axis 0 is
    contiguous ("fortran"), a gather of strided ones otherwise: the scalar sums' bits."""
    values = {"vol": noisy_volume(layout, vox=vox)}
    runs = []
    for lanes in (False, True):
        monkeypatch.setattr(SP, "LANES", lanes)
        runs.append(_run(text, values, True, monkeypatch))
    (_, plain, src0), (p, fast, src1) = runs
    assert "tl_ld4(data" not in src0 and "tl_ld2(data" not in src0 and ("tl_ld4(data" in src1) == (text != MOVED)
    assert ("tl_ld2(data" in src1) == (text != HESS)
    for name in plain.outputs:
        assert same_bits(plain.outputs[name], fast.outputs[name]), name
    if layout == "fortran":
        ref = p.run(values, backend="interp")
        for name in ref.outputs:
            assert np.allclose(ref.outputs[name], fast.outputs[name], rtol=1e-12, atol=1e-12, equal_nan=True), name
    out = np.concatenate([np.asarray(o, dtype=float).ravel() for o in fast.outputs.values()])
    assert np.isfinite(out).any() and not np.isfinite(out).all()  # ⊥ and ±inf reached some probes
