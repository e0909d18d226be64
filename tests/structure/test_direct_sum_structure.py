"""Structure through the direct sum and vec (003 Fig. 10's direct-sum and repetition
rules): x = f ⊕ vec(f⊗f) keeps the symmetry of f⊗f as a redundancy along its last
dimension that is no permutation of whole dimensions, the covariance Σ_r x xᵀ inherits
it in both indices besides its own symmetry, and the C back end computes only the
packed unique entries and reconstructs the rest (003 Property 5, checked against the
reference interpreter with NaN, ±inf and ±0 among the inputs)."""

from __future__ import annotations

import itertools

import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.analysis.structure import Block, compress, count, infer, representatives
from tensorlang.errors import TensorLangError
from tensorlang.loops import ir as loops
from tensorlang.loops.structure import runs


def _poly(m: int, n: int, degree: int) -> str:
    k = n + n * n + (n ** 3 if degree == 3 else 0)
    return (f"in var F : [{m} {n}]\nvar G : [{m} {n} {n}]\n"
            + (f"var H : [{m} {n} {n} {n}]\n" if degree == 3 else "")
            + f"var X : [{m} {k}]\nout var C : [{k} {k}]\nG[r,i,j] = F[r,i] * F[r,j]\n"
            + ("H[r,i,j,l] = G[r,i,j] * F[r,l]\nX = concat(F, vec(G), vec(vec(H)))\n" if degree == 3
               else "X = concat(F, vec(G))\n")
            + "C[p,q] = sum(r) X[r,p] * X[r,q]\n")


PROGRAMS = {
    "polyreg2": _poly(5, 3, 2),
    "polyreg3": _poly(4, 3, 3),
    # symmetric by the sum rule, not by an outer product
    "sum-symmetric block": "in var F : [4 3]\nin var S : [4 3 3]\nvar G : [4 3 3]\nvar X : [4 12]\nout var C : [12 12]\n"
                           "G[r,i,j] = S[r,i,j] + S[r,j,i]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * X[r,q]\n",
    # blocks in one index only: no symmetry, the other index dense
    "one blocked index": "in var F : [5 3]\nin var Z : [5 4]\nvar G : [5 3 3]\nvar X : [5 12]\nout var C : [12 4]\n"
                         "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) X[r,p] * Z[r,q]\n",
    # a product without a sum reads through the blocks too (computed densely)
    "weighted": "in var F : [3 2]\nin var w : [3]\nvar G : [3 2 2]\nvar X : [3 6]\nout var C : [6 6]\n"
                "G[r,i,j] = F[r,i] * F[r,j]\nX = concat(F, vec(G))\nC[p,q] = sum(r) w[r] * X[r,p] * X[r,q]\n",
}

_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5])
_MODERATE = st.one_of(st.floats(1e-3, 100), st.floats(-100, -1e-3))
_VALUES = st.one_of(_MODERATE, _SPECIAL)
_KERNELS: dict = {}


def _kernel(name: str, backend: str = "c"):
    key = (name, backend)
    if key not in _KERNELS:
        try:
            _KERNELS[key] = tl.compile(PROGRAMS[name], backend=backend)
        except TensorLangError as exc:  # no C compiler here
            pytest.skip(str(exc))
    return _KERNELS[key]


def _structures(name: str):
    return infer(tl.compile(PROGRAMS[name], backend="numpy").ein)


def _same(value, expected, scale=None):
    """Equal NaNs and infinities; finite entries within 1e-12 of ``scale`` (default: their own size),
    the size of the terms summed into an entry where cancellation leaves a small result."""
    assert np.array_equal(np.isnan(value), np.isnan(expected)), (value, expected)
    infinite = np.isinf(expected)
    assert np.array_equal(value[infinite], expected[infinite])
    finite = np.isfinite(expected)
    size = np.abs(expected) if scale is None else np.where(np.isfinite(scale), np.maximum(scale, np.abs(expected)), np.abs(expected))
    assert np.all(np.abs(value[finite] - expected[finite]) <= 1e-9 + 1e-12 * size[finite]), (value, expected)


# ------------------------------------------------------------------ inference
def test_vec_of_a_symmetric_tensor_is_a_block_with_a_local_symmetry():
    found = _structures("polyreg2")
    assert found["X"].blocks == (None, (Block(0, (3,)), Block(3, (3, 3), ((0, 1),))))
    assert found["X"].groups == ()  # not a permutation of whole dimensions
    # the covariance: symmetric, and X's blocks in both indices
    assert found["C"].groups == ((0, 1),)
    assert found["C"].blocks == (found["X"].blocks[1],) * 2
    unique = 3 + 6  # f and the upper triangle of f⊗f: the pairs the loops compute
    assert count(found["C"].pairwise_unique) == unique * (unique + 1) // 2
    # every entry is a moment of F of degree 2, 3 or 4 (003 §2): C(4,2) + C(5,3) + C(6,4)
    assert found["C"].moments is not None and found["C"].moments.degrees == (2, 3, 4)
    assert found["C"].unique_size == count(found["C"].unique) == 6 + 10 + 15


def test_degree_three_inlines_to_a_full_s3_symmetry():
    found = _structures("polyreg3")
    assert found["H"].groups == ((1, 2, 3),)  # G ⊗ f with G = f ⊗ f: rule inlining
    assert found["X"].blocks[1][2] == Block(12, (3, 3, 3), ((0, 1, 2),))
    unique = 3 + 6 + 10
    assert count(found["C"].pairwise_unique) == unique * (unique + 1) // 2
    # moments of degree 2 .. 6 of 3 features: Σ_D C(D + 2, D)
    assert found["C"].moments.degrees == (2, 3, 4, 5, 6)
    assert found["C"].unique_size == count(found["C"].unique) == 6 + 10 + 15 + 21 + 28


def test_a_block_symmetric_by_the_sum_rule():
    found = _structures("sum-symmetric block")
    assert found["X"].blocks[1] == (Block(0, (3,)), Block(3, (3, 3), ((0, 1),)))


def test_one_blocked_index_and_no_symmetry():
    found = _structures("one blocked index")
    assert found["C"].groups == ()
    assert found["C"].blocks[0] is not None and found["C"].blocks[1] is None


def _points(space: isl.Set, rank: int) -> list[tuple[int, ...]]:
    """The points of an isl set of 1-based positions, as 0-based index tuples."""
    found: list[tuple[int, ...]] = []
    space.foreach_point(lambda p: found.append(tuple(
        int(p.get_coordinate_val(isl.dim_type.set, d).to_python()) - 1 for d in range(rank))))
    return found


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_redundancy_relation_holds_on_the_values(name):
    """Every pair of positions the isl relation relates holds equal values (finite
    random inputs; equal up to the rounding of a reassociated product)."""
    k = _kernel(name, "interp")
    shapes = k.checked.context.shapes
    rng = np.random.default_rng(1)
    inputs = {n: rng.uniform(-2, 2, shapes[n]) for n in k.checked.accepted_inputs}
    values = {**inputs, **k.run(inputs)}
    for tname, found in _structures(name).items():
        if not found.blocks and not found.groups or tname not in values:
            continue
        value = values[tname]
        # every position against the one it copies (numeric representatives)
        reps = representatives(found)
        assert np.allclose(value.reshape(-1), value.reshape(-1)[reps], rtol=1e-12, atol=1e-12), tname
        if found.dense_size > 300:  # the isl relation's points: small tensors only
            continue
        relation = found.equivalence()
        for a in np.ndindex(*value.shape):  # position by position (the whole relation at once is slow)
            point = isl.Set("{ [" + ", ".join(str(c + 1) for c in a) + "] }")
            points = _points(relation.intersect_domain(point).range(), value.ndim)
            assert a in points
            for b in points:
                assert np.isclose(value[a], value[b], rtol=1e-12, atol=1e-12), (tname, a, b)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_isl_unique_set_and_numeric_representatives_agree(name):
    for found in _structures(name).values():
        if not found.shape or found.dense_size > 5000:
            continue
        reps = representatives(found)
        numeric = {tuple(int(c) for c in np.unravel_index(i, found.shape)) for i in range(reps.size) if reps[i] == i}
        unique = set(_points(found.unique, len(found.shape)))
        assert unique == numeric & unique  # the support may cut the ordered set further
        assert len(unique) == found.unique_size


def test_runs_cover_the_unique_positions_once():
    blocks = (Block(0, (4,)), Block(4, (4, 4), ((0, 1),)), Block(20, (4, 4, 4), ((0, 1, 2),)))
    found = runs(blocks)
    reps = [off + s * t for r in found for off, s in r.images[:1] for t in range(r.length)]
    assert len(reps) == len(set(reps)) == 4 + 10 + 20
    assert [r.u0 for r in found] == list(itertools.accumulate([0] + [r.length for r in found][:-1]))
    # every image of a run is a copy of the representative: same local multiset
    for r in found:
        for t in range(r.length):
            rep = r.images[0][0] + r.images[0][1] * t
            for off, s in r.images:
                assert _multiset(off + s * t, blocks) == _multiset(rep, blocks)


def _multiset(g: int, blocks) -> tuple:
    for n, b in enumerate(blocks):
        if b.start <= g < b.start + b.size:
            return n, tuple(sorted(np.unravel_index(g - b.start, b.shape)))
    raise AssertionError(g)


# ------------------------------------------------------------------ compressed code
def _declares(nodes) -> int:
    found = 0
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, loops.Declare):
            found += 1
        elif isinstance(node, loops.Loop):
            stack.extend(node.body)
    return found


@pytest.mark.parametrize("name", ["polyreg2", "polyreg3", "sum-symmetric block", "one blocked index"])
def test_blocked_sums_run_packed_as_loop_nests(name):
    k = tl.compile(PROGRAMS[name], backend="numpy")
    nest = next(n for n in k.loop_program.nests if n.statement.target == "C")
    # the packed result, and X's packed copy: a local of its own, or X's own buffer, which
    # its producer then writes in the packed layout (loops.structure.pack_in_producer)
    x = k.schedule.buffers.slot_of["X"]
    stored_packed = k.loop_program.buffers.buffers[x].shape != k.schedule.buffers.buffers[x].shape
    assert _declares(nest.body) + stored_packed >= 2
    reasons = " ".join(r for step in k.schedule.steps for r in getattr(step, "reasons", ()))
    assert "structure:" in reasons


def test_the_packed_covariance_does_a_fraction_of_the_dense_work():
    from tensorlang.loops import loop_program
    k = tl.compile(_poly(64, 8, 2), backend="numpy")
    nest = next(n for n in k.loop_program.nests if n.statement.target == "C")
    dense = next(n for n in loop_program(k.schedule, compressed=False).nests if n.statement.target == "C")
    assert loops.work(nest.body) * 2 < loops.work(dense.body)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.data())
def test_packed_computation_plus_reconstruction_equals_the_dense_reference(name, data):
    """003 Property 5 for direct sums: the C result (packed unique entries, then the
    orbit copies) equals the reference interpreter's dense one."""
    k = _kernel(name)
    shapes = k.checked.context.shapes
    inputs = {}
    for n in k.checked.accepted_inputs:
        size = int(np.prod(shapes[n]))
        inputs[n] = np.array(data.draw(st.lists(_VALUES, min_size=size, max_size=size)), dtype=float).reshape(shapes[n])
    got = k(**inputs)
    ref = _kernel(name, "interp")(**inputs)
    # every program here is sums of products of its inputs: run on |inputs| it gives each entry's sum of
    # |terms|, the size that rounding errors scale with (Gram entries cancel: -852 from terms of 1.3e7)
    sizes = _kernel(name, "interp")(**{n: np.abs(v) for n, v in inputs.items()})
    for out, value in got.items():
        _same(value, ref[out], sizes[out])


# ------------------------------------------------------------------ compressed=True
@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["polyreg2", "polyreg3", "sum-symmetric block"]), st.sampled_from(["c", "numpy", "interp"]),
       st.data())
def test_compressed_results_round_trip(name, backend, data):
    k = _kernel(name, backend)
    shapes = k.checked.context.shapes
    inputs = {n: np.array(data.draw(st.lists(_VALUES, min_size=int(np.prod(shapes[n])),
                                             max_size=int(np.prod(shapes[n])))), dtype=float).reshape(shapes[n])
              for n in k.checked.accepted_inputs}
    dense = k.run(inputs)["C"]
    packed = k.run(inputs, compressed=True)["C"]
    assert packed.values.size == packed.structure.unique_size < dense.size
    assert packed.positions.shape == (packed.values.size, 2)
    if backend == "c" and packed.structure.moments is None:  # computed compressed: the copies are exact
        assert np.array_equal(packed.dense(), dense, equal_nan=True)
    else:  # computed densely, or equal moments computed apart: equal up to rounding
        _same(packed.dense(), dense)
    assert np.array_equal(packed.values, dense[tuple(packed.positions.T)], equal_nan=True)


@pytest.mark.parametrize("backend", ["c", "numpy", "interp"])
def test_compressed_scalar_result_and_symbolic_sizes(backend):
    """A scalar result is its one value (was an internal error: no axes to mesh), and a
    kernel with symbolic sizes takes ``compressed=True`` as a sized one does (was a
    TypeError)."""
    try:
        k = tl.compile("in var a : [3]\nout var s : []\ns = sum(i) a[i]\n", backend=backend)
        sym = tl.compile("in var X : [n m]\nout var C : [m m]\nC[j,k] = sum(i) X[i,j]*X[i,k]\n", backend=backend)
    except TensorLangError as exc:  # no C compiler here
        pytest.skip(str(exc))
    s = k.run({"a": np.array([1.0, 2.0, 4.0])}, compressed=True)["s"]
    assert s.values.tolist() == [7.0] and s.positions.shape == (1, 0) and s.dense() == 7.0
    x = np.arange(15.0).reshape(5, 3)
    c = sym.run({"X": x}, compressed=True)["C"]
    assert c.values.size == 6 and np.array_equal(c.dense(), sym.run({"X": x})["C"])
    with pytest.raises(TensorLangError, match="compressed"):
        sym.run({"X": x}, compressed="yes")


def test_compress_checks_the_shape_and_compressed_must_be_a_bool():
    found = _structures("polyreg2")["C"]
    with pytest.raises(ValueError):
        compress(np.zeros((3, 3)), found)
    k = _kernel("polyreg2", "numpy")
    with pytest.raises(TensorLangError, match="compressed"):
        k.run({"F": np.zeros((5, 3))}, compressed="yes")
