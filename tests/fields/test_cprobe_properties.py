"""The fast C probes (fields/cprobe.py: rows, outer axes first, batches of points)
against the reference evaluation (the numpy reconstruction, fields/reconstruct.py, and
the EIN evaluator for the program around it) on generated images, kernels, voxel
shapes, world maps and points: inside, exactly on the domain's border, just outside,
far outside and not finite.  Same ⊥s (NaN exactly where a point is not inside(), or a
NaN sample or ∞·0 reaches the sum), same infinities, values within rounding."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.fields import KERNELS, cprobe, reconstruct, run
from tensorlang.loops.parallel import probe_threads_from
from tensorlang.machine import PARALLEL_WORK
from tensorlang.targets.c import probe as c_probe
from tensorlang.targets.c import threshold

pytestmark = pytest.mark.skipif(not cprobe.available(), reason="no working C compiler")

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300]
#: kernels declared smoother than they are (teaching kernels: the tent and Catmull-Rom
#: polynomials with a higher declared continuity): the order their derivatives are continuous to
TRUE_SMOOTHNESS = {"c1tent": 0, "c2tent": 0, "c2ctmr": 1}


@st.composite
def cases(draw, dim=None, support=None, scalar=False):
    """An image, kernel, derivative order and points (``dim``, the kernel's ``support``,
    scalar voxels: fixed where given)."""
    d = draw(st.integers(1, 3)) if dim is None else dim
    kern = KERNELS[draw(st.sampled_from(sorted(k for k in KERNELS if support in (None, KERNELS[k].support))))]
    # c1tent is C0 with a declared C1 (Diderot's cheap gradients): at an integer position,
    # on its kink, both take the right-hand derivative (docs/fields.md)
    order = draw(st.integers(0, min(kern.continuity, 2)))
    voxel = () if scalar else draw(st.sampled_from([(), (), (2,), (3,), (2, 2)]))
    sizes = tuple(draw(st.integers(kern.support, kern.support + 5)) for _ in range(d))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    data = rng.normal(size=sizes + voxel)
    flat = data.reshape(-1)
    for _ in range(draw(st.integers(0, 2))):  # special samples: ⊥ and ∞ must travel alike
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from(SPECIAL))
    if draw(st.booleans()):  # a general affine world map (well conditioned)
        world = np.eye(d + 1)
        world[:d, :d] = np.eye(d) * rng.uniform(0.5, 2.0, size=d) + rng.uniform(-0.3, 0.3, size=(d, d))
        world[:d, d] = rng.uniform(-2, 2, size=d)
    else:
        world = None
    img = tl.image(data, dim=d, world=world)
    # index-space points: inside, on the border, just outside, far, not finite
    s = kern.radius
    lo, hi = float(s - 1), np.array(sizes, dtype=float) - s  # inside: lo <= x < hi
    n = draw(st.integers(1, 40))
    x = rng.uniform(lo - 1.5, hi + 1.5, size=(n, d))
    picks = draw(st.lists(st.sampled_from(["lo", "hi", "below", "above", "nan", "inf", "-inf", "far"]),
                          max_size=6))
    if draw(st.booleans()):  # integer positions: outer taps exactly at the support's end
        x = np.where(np.arange(n)[:, None] < draw(st.integers(1, n)), np.round(x), x)
    for k, pick in enumerate(picks):
        row, axis = k % n, k % d
        x[row, axis] = {"lo": lo, "hi": np.nextafter(hi[axis], -np.inf), "below": np.nextafter(lo, -np.inf),
                        "above": hi[axis], "nan": np.nan, "inf": np.inf, "-inf": -np.inf, "far": 1e30}[pick]
    with np.errstate(all="ignore"):
        points = (img.world[:d, :d] @ x.T).T + img.world[:d, d]
    return img, kern, order, points


@pytest.fixture(scope="module", autouse=True)
def known_threshold():
    """The parallel threshold fixed at the library's default for these tests: on a loaded
    machine the measurement finds that two threads never win (threshold.NEVER), and a test
    sized past it asked for 10^17 points (MemoryError in a CI run)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENSORLANG_PARALLEL_WORK", str(PARALLEL_WORK))
        threshold.clear()
        yield
    threshold.clear()


def parallel_points(d: int, support: int, ncomp: int) -> int:
    """The points from which a probe runs on threads, on this machine."""
    return probe_threads_from(d, support, ncomp, threshold.parallel_work())


def _agree(ours, ref):
    assert ours.shape == ref.shape
    assert np.array_equal(np.isnan(ours), np.isnan(ref)), (ours, ref)
    infinite = np.isinf(ref)
    assert np.array_equal(ours[infinite], ref[infinite]), (ours, ref)
    finite = np.isfinite(ref)
    scale = np.max(np.abs(ref[finite]), initial=1.0)
    assert np.allclose(ours[finite], ref[finite], rtol=1e-9, atol=1e-9 * scale), (ours, ref)


def _on_a_kink(img, points, tol=1e-9):
    """Points whose index position is within ``tol`` of an integer on some axis: there a
    kernel that is only C0 (c1tent, declared C1) has two one-sided derivatives, and a world
    map's rounding (each side inverts it in its own order) picks either side."""
    d = img.dim
    with np.errstate(all="ignore"):
        idx = np.linalg.solve(img.world[:d, :d], (points - img.world[:d, d]).T).T
        return (np.abs(idx - np.round(idx)) < tol).any(axis=1)


def _agree_off_kinks(ours, ref, img, kern, order, points):
    """``_agree``, except that where ``order`` passes the kernel's true smoothness a point
    on a kink only has to agree on ⊥ (which side's derivative it gets is rounding's)."""
    if order > TRUE_SMOOTHNESS.get(kern.name, kern.continuity):
        kink = _on_a_kink(img, points)
        assert np.array_equal(np.isnan(ours[kink]), np.isnan(ref[kink]))
        _agree(ours[~kink], ref[~kink])
    else:
        _agree(ours, ref)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(cases())
def test_c_probe_tensors_agree_with_the_reference(case):
    img, kern, order, points = case
    ours = run.probe_tensor(img, kern, order, points, use_c=True)
    ref = reconstruct.probe(img, kern, order, points)
    _agree_off_kinks(ours, ref, img, kern, order, points)
    out = ~reconstruct.inside(img, kern, points)
    assert np.isnan(ours[out]).all()  # ⊥ wherever the support leaves the image


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(cases(), st.integers(1, 3))
def test_c_field_probes_agree_with_the_ein_reference(case, threads):
    """Whole fields (a direct probe, and an expression run as a tensor program): the C
    path at 1..3 threads against the numpy reconstruction with the EIN evaluator."""
    img, kern, order, points = case
    F = tl.field(img, kern.name)
    fields = [F]
    if img.voxel_shape == () and order >= 1:
        fields += [tl.grad(F), tl.norm(tl.grad(F))]
    if img.voxel_shape == () and order >= 2:
        fields += [tl.hessian(F)]
    for field in fields:
        run.USE_C = False
        try:
            ref = field.probe(points)
        finally:
            run.USE_C = True
        try:
            ours = field.probe(points, threads=threads)
        finally:
            run.USE_C = False
        _agree(ours, ref)
        if np.isfinite(img.data).all():
            assert np.array_equal(np.isnan(ours).reshape(len(points), -1).any(axis=1), ~tl.inside(F, points))


def test_many_points_on_threads_equal_one_thread():
    """The OpenMP loop over batches of points (past cprobe.parallel_points, with a partial last
    batch) gives what one thread gives."""
    rng = np.random.default_rng(7)
    img = tl.image(rng.normal(size=(12, 13, 14)))
    pts = rng.uniform(0.5, 12.5, size=(3 * parallel_points(3, 4, 1) + 5, 3))
    one = cprobe.probe(img, KERNELS["bspln3"], 2, pts, threads=1)
    many = cprobe.probe(img, KERNELS["bspln3"], 2, pts, threads=3)
    assert np.array_equal(one, many, equal_nan=True)


def test_bad_thread_counts_are_input_errors():
    F = tl.field(np.zeros((6, 6)), "bspln3")
    for bad in (0, -1, 1.5, "2", 10 ** 6):
        with pytest.raises(tl.TensorLangError) as info:
            F.probe([[2.5, 2.5]], threads=bad)
        assert info.value.code == "input"


@pytest.mark.parametrize("order", [0, 1, 2])
# each case builds its own C probe; the weights are the same function on every axis: the quick
# tier checks them in 1-D at every order, the full run in 2-D and 3-D as well
@pytest.mark.parametrize("d", [1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)])
def test_an_infinite_sample_just_past_the_support_of_an_integer_point_gives_bottom(d, order):
    """bspln3 at an integer position: the last tap is exactly at |x| = 2, where the kernel
    is 0 (past the support), so an ∞ sample there gives 0·∞ = ⊥ in the reference.  The C
    weights once evaluated the last piece's polynomial there (2.2e-16) and gave ∞."""
    kern = KERNELS["bspln3"]
    data = np.ones((7,) * d)
    data[(4,) * d] = np.inf  # the point (2, .., 2) reads taps 1 .. 4 on each axis
    img = tl.image(data, dim=d)
    points = np.full((1, d), 2.0)
    ours = run.probe_tensor(img, kern, order, points, use_c=True)
    ref = reconstruct.probe(img, kern, order, points)
    assert np.isnan(ref).all()
    _agree(ours, ref)


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(cases(), st.integers(1, 3), st.sampled_from([0, c_probe.COHERENT_POINTS]))
def test_probes_in_block_order_equal_probes_in_the_given_order(case, threads, coherent):
    """Sorting the points by the image's blocks (cprobe.sorts, C's tl_sort) changes the
    order of the work only: every result, ⊥ and ∞ included, is bit-for-bit the one the
    unsorted probe writes at that point's own index.  ``coherent`` 0: always sorted (these
    small images have one block, so that tl_sort would find every order coherent)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(c_probe, "COHERENT_POINTS", coherent)
        _block_order_equals_given_order(case, threads)


def _block_order_equals_given_order(case, threads):
    img, kern, order, points = case
    plain = cprobe.probe(img, kern, order, points, threads=threads, sort=False)
    blocked = cprobe.probe(img, kern, order, points, threads=threads, sort=True)
    assert np.array_equal(plain, blocked, equal_nan=True)
    # many points in few blocks, out of order, with points outside and not finite among
    # them; past cprobe.parallel_points, so that threads > 1 sort in parallel (each thread counts
    # and scatters its own range: every point must still get its own result)
    rng = np.random.default_rng(len(points))
    reps = max(40, -(-(parallel_points(img.dim, kern.support, int(np.prod(img.voxel_shape))) + 5)
                     // len(points)))
    many = np.concatenate([points] * reps)[rng.permutation(reps * len(points))]
    assert np.array_equal(cprobe.probe(img, kern, order, many, threads=threads, sort=False),
                          cprobe.probe(img, kern, order, many, threads=threads, sort=True), equal_nan=True)


@st.composite
def blocked_cases(draw):
    """An image of several of the sort's blocks (2^SORT_SHIFT cells per axis) with special
    samples, and many points: inside, on and next to the blocks' borders (where the sort's
    key and the probe's cell could round apart), outside and not finite."""
    d = draw(st.integers(1, 3))
    kern = KERNELS[draw(st.sampled_from(sorted(KERNELS)))]
    order = draw(st.integers(0, min(kern.continuity, 2)))
    voxel = draw(st.sampled_from([(), (), (2,)]))
    block = 1 << c_probe.SORT_SHIFT
    sizes = tuple(draw(st.integers(kern.support, 2 * block + 7)) for _ in range(d))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    data = rng.normal(size=sizes + voxel)
    flat = data.reshape(-1)
    for _ in range(draw(st.integers(0, 3))):
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from(SPECIAL))
    world = None
    if draw(st.booleans()):
        world = np.eye(d + 1)
        world[:d, :d] = np.eye(d) * rng.uniform(0.5, 2.0, size=d) + rng.uniform(-0.3, 0.3, size=(d, d))
        world[:d, d] = rng.uniform(-2, 2, size=d)
    img = tl.image(data, dim=d, world=world)
    n = draw(st.integers(1, 400))
    s = kern.radius
    x = rng.uniform(s - 2.5, np.array(sizes, dtype=float) - s + 1.5, size=(n, d))
    for k in range(draw(st.integers(0, min(n, 24)))):  # on a block's border, or one ulp to either side
        border = float(block * draw(st.integers(1, 2)))
        x[k, k % d] = draw(st.sampled_from([border, np.nextafter(border, -np.inf), np.nextafter(border, np.inf)]))
    for k, bad in enumerate(draw(st.lists(st.sampled_from([np.nan, np.inf, -np.inf, 1e30]), max_size=3))):
        x[(n - 1 - k) % n, k % d] = bad
    with np.errstate(all="ignore"):
        points = (img.world[:d, :d] @ x.T).T + img.world[:d, d]
    return img, kern, order, points


def _force_image_batches(real):
    """c_probe.source, with every tiled batch probed from the image instead (the branch a
    batch takes when one of its points' support is not inside its block's tile)."""
    def source(*args, **kwargs):
        src, decl = real(*args, **kwargs)
        assert src.count("if (room != NULL && intile)") == 1
        return src.replace("if (room != NULL && intile)", "if (room != NULL && intile && 0)"), decl
    return source


@pytest.mark.slow
@settings(max_examples=4, deadline=None)  # the file's longest property: each example builds and probes whole images in C
@given(blocked_cases(), st.integers(1, 2))
def test_probes_from_tiles_equal_probes_from_the_image(case, threads):
    """In block order each block's samples are copied into a tile with other strides and its
    points probed from there (targets/c/probe.py's TILES; csrc/probe_points.c's
    tl_probe_tiles), or, where a batch's point reaches past its tile, from the image: every
    result, ⊥ and ∞ included, is bit for bit the one the untiled probe (point by point,
    tl_probe_points, and block by block from the image, REGION_POINTS) and the given order
    write, on images of several blocks with points on the blocks' borders, and with many
    points on threads (each thread copies and probes its own range of blocks)."""
    img, kern, order, points = case
    given_order = cprobe.probe(img, kern, order, points, threads=threads, sort=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(c_probe, "COHERENT_POINTS", 0)
        patch.setattr(c_probe, "TILES", 0)
        patch.setattr(c_probe, "REGION_POINTS", 0)
        pointwise = cprobe.probe(img, kern, order, points, threads=threads, sort=True)
        patch.setattr(c_probe, "REGION_POINTS", 1)  # block by block from the image wherever the blocks hold a point
        untiled = cprobe.probe(img, kern, order, points, threads=threads, sort=True)
        _block_order_equals_given_order(case, threads)
        patch.setattr(c_probe, "TILES", 1)  # tiled wherever the blocks hold a point on average
        tiled = cprobe.probe(img, kern, order, points, threads=threads, sort=True)
        _block_order_equals_given_order(case, threads)  # many points: the threads' own ranges of blocks
        patch.setattr(c_probe, "source", _force_image_batches(c_probe.source))
        patch.setattr(cprobe, "_KERNELS", {})
        fallback = cprobe.probe(img, kern, order, points, threads=threads, sort=True)
    for other in (pointwise, untiled, tiled, fallback):
        assert np.array_equal(given_order, other, equal_nan=True)


@pytest.mark.slow
def test_large_images_take_the_block_order_and_agree_with_the_reference():
    rng = np.random.default_rng(11)
    side = 130  # 130³ float64: 17 MiB, past SORT_IMAGE_BYTES
    img = tl.image(rng.normal(size=(side, side, side)))
    assert img.data.nbytes >= cprobe.SORT_IMAGE_BYTES
    assert cprobe.sorts(img, cprobe.SORT_POINTS)
    assert not cprobe.sorts(img, cprobe.SORT_POINTS - 1)  # too few points to pay
    assert not cprobe.sorts(tl.image(rng.normal(size=(40, 40, 40))), 10 ** 6)  # 0.5 MiB: the caches hold it
    pts = rng.uniform(-1.0, side + 1.0, size=(cprobe.SORT_POINTS, 3))
    pts[:5] = [np.nan, 0.0, 1.0], [np.inf, 2.0, 3.0], [1e30, 5, 5], [0.0, 0.0, 0.0], [side - 1, side - 1, side - 1]
    for order in (0, 1):
        ours = cprobe.probe(img, KERNELS["bspln3"], order, pts, threads=2)  # sorted: sorts() said so
        _agree(ours, reconstruct.probe(img, KERNELS["bspln3"], order, pts))


@pytest.mark.parametrize("threads", [1, 2])
def test_coherent_points_are_not_sorted_and_agree(monkeypatch, threads):
    """tl_sort counts the jumps between blocks of consecutive points: a grid in raster
    order and points already in block order are probed in the given order (the scratch's
    perm is never written), random points are sorted (perm is a permutation, where C's
    layout puts it); the results are the given order's either way, bit for bit, and the
    reference's."""
    rng = np.random.default_rng(8)
    side = 50  # 4 blocks of 16 cells per axis
    img = tl.image(rng.normal(size=(side, side, side)))
    kern = KERNELS["bspln3"]
    n = 27_000
    grid = np.stack(np.meshgrid(*(np.linspace(0.5, side - 1.5, 30),) * 3, indexing="ij"), -1).reshape(-1, 3)
    rand = rng.uniform(-1.0, side + 1.0, size=(n, 3))
    rand[:3] = [np.nan, 0.0, 1.0], [np.inf, 2.0, 3.0], [1e30, 5, 5]
    keys = (np.floor(np.clip(np.nan_to_num(rand, nan=0.0), 0, side - 1)).astype(np.int64) >> 4) @ [16, 4, 1]
    blocked = rand[np.argsort(keys, kind="stable")]
    monkeypatch.setattr(cprobe, "_SCRATCH", [])
    for points, sorted_ in ((grid, False), (blocked, False), (rand, True)):
        # at an odd address: C aligns the sorted coordinates, keys and results to 64 bytes inside it
        scratch = np.full(cprobe.scratch_bytes(n, 3, 3) + 5, 0xFF, dtype=np.uint8)[5:]
        cprobe._SCRATCH[:] = [scratch]
        ours = cprobe.probe(img, kern, 1, points, sort=True, threads=threads)  # 2: past parallel_points
        assert cprobe._SCRATCH == [scratch]
        start = -scratch.ctypes.data % 64 + -(-24 * n // 64) * 64  # C's layout: 64-byte aligned
        place = scratch[start: start + 4 * n].view(np.int32)
        start += -(-4 * n // 64) * 64
        packed = scratch[start: start + 24 * n].view(np.float64).reshape(n, 3)
        if sorted_:
            assert np.array_equal(np.sort(place), np.arange(n))
            # the packed gradient: the derivative counts (0,0,1), (0,1,0), (1,0,0) in turn
            assert np.array_equal(packed[place][:, ::-1], ours, equal_nan=True)
        else:
            assert (packed.view(np.int64) == -1).all()  # untouched: no sort
        assert np.array_equal(ours, cprobe.probe(img, kern, 1, points, sort=False), equal_nan=True)
        _agree(reconstruct.to_world(ours, img, 1), reconstruct.probe(img, kern, 1, points))


def test_the_block_order_reuses_one_scratch_buffer_and_keeps_none_too_large(monkeypatch):
    """The sort's buffers come from one scratch array kept between calls (fresh pages
    cost a fault and the kernel's zeroing each call); one larger than SCRATCH_KEEP_BYTES
    is the call's own; the results are those of the given order either way."""
    if not cprobe.available():
        pytest.skip("no C compiler")
    rng = np.random.default_rng(4)
    img = tl.image(rng.normal(size=(20, 20, 20)))
    kern = KERNELS["bspln3"]
    points = rng.uniform(1, 18, size=(3000, 3))
    points[7] = np.nan
    monkeypatch.setattr(cprobe, "_SCRATCH", [])
    want = cprobe.probe(img, kern, 1, points, sort=False)
    assert cprobe._SCRATCH == []  # the given order takes no scratch
    first = cprobe.probe(img, kern, 1, points, sort=True)
    (kept,) = cprobe._SCRATCH
    assert kept.nbytes >= cprobe.scratch_bytes(points.shape[0], 3, 3)
    again = cprobe.probe(img, kern, 1, points[:1000], sort=True)  # fewer points: the same buffer
    assert cprobe._SCRATCH[0] is kept
    assert np.array_equal(first, want, equal_nan=True)
    assert np.array_equal(again, want[:1000], equal_nan=True)
    monkeypatch.setattr(cprobe, "SCRATCH_KEEP_BYTES", 1000)
    cprobe._SCRATCH.clear()
    assert np.array_equal(cprobe.probe(img, kern, 1, points, sort=True), want, equal_nan=True)
    assert cprobe._SCRATCH == []  # too large to keep


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_c1tent_derivatives_at_integer_positions_are_the_right_hand_slopes(dim):
    """On a sample, the gradient of a c1tent field is the slope of the cell to the right
    ([n, n+1)), on the C probes and the numpy reference alike (docs/fields.md)."""
    rng = np.random.default_rng(dim)
    sizes = (6, 5, 4)[:dim]
    data = rng.normal(size=sizes)
    img = tl.image(data, dim=dim)
    kern = KERNELS["c1tent"]
    grid = np.stack(np.meshgrid(*[np.arange(0, n - 1) for n in sizes], indexing="ij"), -1).reshape(-1, dim)
    points = grid.astype(float)
    want = np.stack([data[tuple(np.minimum(grid[:, b] + (b == a), sizes[b] - 1) for b in range(dim))]
                     - data[tuple(grid[:, b] for b in range(dim))] for a in range(dim)], -1)
    for ours in (run.probe_tensor(img, kern, 1, points, use_c=True), reconstruct.probe(img, kern, 1, points)):
        np.testing.assert_allclose(ours.reshape(-1, dim), want, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
def test_streamed_unpacking_writes_every_result_in_its_place(monkeypatch, threads):
    """tl_unpack copies the results of the block order to the points' places through a
    buffer, streamed out where the output is large (UNPACK_STREAM_BYTES; here always):
    lines wholly inside a run of points streamed, the partial ones at either end stored
    plainly; so are the probes' own results (the packed ones in block order, block by
    block or point by point, and the given order's), a full batch's where they start on a
    line.  Into an output that starts inside a cache line and a run of points that ends
    inside one, every result is the unstreamed given order's, bit for bit, and nothing
    past the output is written."""
    monkeypatch.setattr(c_probe, "COHERENT_POINTS", 0)
    rng = np.random.default_rng(5)
    img = tl.image(rng.normal(size=(20, 20, 20)))
    kern = KERNELS["bspln3"]
    n = 64 * 40 + 13  # runs of tl_unpack's 64 points, and a partial one
    points = rng.uniform(-1.0, 21.0, size=(n, 3))
    points[:3] = [np.nan, 1.0, 1.0], [np.inf, 2.0, 3.0], [5.0, 5.0, 5.0]
    plain = [cprobe.probe(img, kern, order, points, sort=False) for order in (0, 1, 2)]  # nothing streamed
    monkeypatch.setattr(c_probe, "UNPACK_STREAM_BYTES", 0)
    for order, region, sort in itertools.product((0, 1, 2), (0, 1), (True, False)):
        monkeypatch.setattr(c_probe, "REGION_POINTS", region)  # 0: point by point; 1: block by block
        shape = (n,) + (3,) * order
        size = int(np.prod(shape))
        room = np.full(size + 16, 7.0)
        at = (-room.ctypes.data // 8 + 3) % 8  # 3 doubles past a line's start
        out = room[at: at + size].reshape(shape)
        cprobe.probe(img, kern, order, points, out=out, threads=threads, sort=sort)
        assert np.array_equal(out, plain[order], equal_nan=True)
        assert (room[:at] == 7.0).all() and (room[at + size:] == 7.0).all()
        if not sort:  # the given order into an output on a line: its full batches streamed
            aligned = np.full(size + 8, 7.0)
            on = (-aligned.ctypes.data // 8) % 8
            cprobe.probe(img, kern, order, points, out=aligned[on: on + size].reshape(shape), threads=threads, sort=False)
            assert np.array_equal(aligned[on: on + size].reshape(shape), plain[order], equal_nan=True)


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(cases(), st.sampled_from([True, False]), st.integers(1, 2))
def test_rows_transposed_or_gathered_agree_with_the_reference(case, rows, threads):
    """The batch's points across the vector lanes read a scalar image's 4-tap rows whole
    and transpose them in registers (targets/c/probe.py's ROWS) or gather each sample (every
    other shape): either agrees with the reference, ⊥ and ∞ exactly (NaN samples, 0·∞,
    points outside and not finite), values within rounding; in block order bit for bit
    the given order's."""
    img, kern, order, points = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(c_probe, "ROWS", rows)
        patch.setattr(c_probe, "COHERENT_POINTS", 0)
        src, _ = c_probe.source(img.dim, kern, order, int(np.prod(img.voxel_shape)))
        transposed = rows and kern.support == 4 and img.voxel_shape == ()
        assert ("= tl_join(data" in src) == transposed and ("TL_GATHER(data" in src) != transposed
        ours = cprobe.probe(img, kern, order, points, threads=threads, sort=False)
        many = np.concatenate([points] * 30)
        blocked = cprobe.probe(img, kern, order, many, threads=threads, sort=True)
    with np.errstate(invalid="ignore"):
        world = reconstruct.to_world(ours, img, order) if order else ours
    ref = reconstruct.probe(img, kern, order, points)
    _agree_off_kinks(world, ref, img, kern, order, points)
    assert np.array_equal(blocked, np.concatenate([ours] * 30), equal_nan=True)


@pytest.mark.slow
@pytest.mark.parametrize("rows", [True, False])
def test_an_image_smaller_than_the_support_reads_no_sample(rows, monkeypatch):
    """No point of an image smaller than the kernel's support is inside: every result is
    ⊥, and a batch reads no sample (its lanes would start at the image's first sample and
    run past its end; the sanitizer tests would see the read)."""
    monkeypatch.setattr(c_probe, "ROWS", rows)
    rng = np.random.default_rng(2)
    for sizes in ((3, 9, 9), (9, 2, 9), (9, 9, 3)):
        img = tl.image(rng.normal(size=sizes))
        points = rng.uniform(-1, 10, size=(37, 3))
        for order in (0, 2):
            out = cprobe.probe(img, KERNELS["bspln3"], order, points, sort=False)
            assert np.isnan(out).all()
