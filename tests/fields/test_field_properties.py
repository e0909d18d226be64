"""Generated field expressions, images holding NaN, ±inf and ±0, and points outside the
domain: the compiled probe (normalize, Slice, optimizer, evaluator) agrees with the
reference semantics, the lifted operators applied to the reference probes
(semantics.values: IEEE arithmetic, controlled division, the function table)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.ein import interp
from tensorlang.fields import KERNELS, reconstruct, run
from tensorlang.ein.fields import Probe
from tensorlang.passes import fields as field_passes
from tensorlang.semantics.values import FUNCTIONS, arithmetic

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0]


@st.composite
def images(draw):
    data = np.random.default_rng(draw(st.integers(0, 2 ** 16))).normal(size=(7, 7))
    for _ in range(draw(st.integers(0, 3))):
        i, j = draw(st.integers(0, 6)), draw(st.integers(0, 6))
        data[i, j] = draw(st.sampled_from(SPECIAL))
    return data


def expressions(depth=3):
    leaf = st.sampled_from(["F", "G", "0.0", "-0.0", "1.5", "-2.0"])

    def extend(children):
        return st.one_of(st.tuples(st.sampled_from(["+", "-", "*", "/"]), children, children),
                         st.tuples(st.sampled_from(["neg", "exp", "sqrt", "abs", "sin"]), children))

    return st.recursive(leaf, extend, max_leaves=6)


def build(e, F, G):
    """The expression as a field."""
    if isinstance(e, str):
        return {"F": F, "G": G}.get(e) or tl.fields.api._lift(float(e), 2)
    if len(e) == 3:
        a, b = build(e[1], F, G), build(e[2], F, G)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b}[e[0]]()
    a = build(e[1], F, G)
    return {"neg": lambda: -a, "exp": lambda: tl.fields.exp(a), "sqrt": lambda: tl.fields.sqrt(a),
            "abs": lambda: tl.norm(a), "sin": lambda: tl.fields.sin(a)}[e[0]]()


def reference(e, f, g, n):
    """The same expression on the reference probes, by the semantics' own operations."""
    if isinstance(e, str):
        return {"F": f, "G": g}.get(e, np.full(n, float(e)) if e not in ("F", "G") else None)
    if len(e) == 3:
        return arithmetic(e[0], reference(e[1], f, g, n), reference(e[2], f, g, n))
    a = reference(e[1], f, g, n)
    return -a if e[0] == "neg" else FUNCTIONS[e[0]](a)


POINTS = np.array([[2.5, 3.25], [1.0, 1.0], [3.0, 4.0], [4.9, 2.1], [0.2, 3.0], [np.nan, 2.0], [np.inf, 2.0],
                   [-0.0, 3.0], [5.5, 5.5], [2.0, 2.0]])


def _lowered(field, pts):
    """The probe of ``field`` normalized and lowered (Slice), not optimized, with the
    probe tensors at ``pts`` (padded to a block)."""
    normal = field_passes.normalize(Probe(field.body, "x"))
    images_ = {name: (img.voxel_shape, img.dim) for name, img in field.images.items()}
    lowered = field_passes.lower(normal, tuple(zip(field.out, field.shape)), run.BLOCK, images_,
                                 {k: v.shape for k, v in field.constants.items()})
    block = np.zeros((run.BLOCK, 2))
    block[:len(pts)] = pts
    inputs = {p.name: run.probe_tensor(field.images[p.image], KERNELS[p.kernel], p.order, block)
              for p in lowered.probes}
    inputs.update({k: v for k, v in field.constants.items() if k in {d.name for d in lowered.program.decls}})
    return lowered.program, inputs


@settings(max_examples=60, deadline=None)
@given(expressions(), images(), images())
def test_normalized_probes_agree_with_the_reference_semantics(e, a, b):
    """Normalization and Slice keep the order of every operation of a derivative-free
    expression: the lowered probe equals the reference bit for bit, ⊥ included."""
    F, G = tl.field(a, "ctmr"), tl.field(b, "bspln3")
    field = build(e, F, G)
    n = len(POINTS)
    f = reconstruct.probe(F.images[next(iter(F.images))], KERNELS["ctmr"], 0, POINTS)
    g = reconstruct.probe(G.images[next(iter(G.images))], KERNELS["bspln3"], 0, POINTS)
    expected = np.broadcast_to(reference(e, f, g, n), (n,))
    program, inputs = _lowered(field, POINTS)
    got = np.broadcast_to(interp.run(program, inputs)["E"][:n], (n,))
    assert np.array_equal(np.isnan(got), np.isnan(expected)), (e, got, expected)
    assert np.array_equal(got[~np.isnan(got)], expected[~np.isnan(expected)]), (e, got, expected)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(expressions(), images(), st.sampled_from(["ctmr", "bspln3", "c4hexic"]), st.booleans())
def test_compiled_probes_keep_the_meaning_of_the_lowered_probe(e, a, kern, differentiate):
    """The whole pipeline (optimizer included) against the lowered probe evaluated with
    rounding-error bounds (tests/properties/harness.py): equal ⊥s, values within the
    bound; outside the domain ⊥."""
    from properties.harness import EPS, SLACK, ein_oracle

    F = tl.field(a, kern)
    field = build(e, F, F)
    field = tl.grad(field) if differentiate else field
    n = len(POINTS)
    program, inputs = _lowered(field, POINTS)
    value = np.array(interp.run(program, inputs)["E"][:n])  # the semantics, ⊥ included
    bound = np.asarray(ein_oracle(program, inputs)["E"][1])[:n]  # where it applies
    if field.images:
        value[~tl.inside(field, POINTS)] = np.nan
    got = field.probe(POINTS)
    value, bound = np.broadcast_to(value, got.shape), np.broadcast_to(bound, got.shape)
    nan = np.isnan(value)
    assert np.array_equal(np.isnan(got), nan), (e, got, value)
    infinite = np.isinf(value)
    assert np.array_equal(got[infinite], value[infinite]), (e, got, value)
    finite = ~nan & ~infinite
    err = np.abs(got[finite] - value[finite])
    # no first-order bound at a zero divisor or sqrt(0), nor past an overflow: unbounded there
    limit = np.where(np.isfinite(bound[finite]) & (bound[finite] >= 0), bound[finite], np.inf)
    assert np.all(err <= SLACK * EPS["float64"] * limit + 1e-300), (e, got, value, bound)


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(expressions(), images())
def test_the_c_path_agrees_with_the_reference_path(e, a):
    """Probes in generated C and the tensor program on the C target give the numpy
    reference path's values and ⊥s (one C build per expression: few examples)."""
    from tensorlang.fields import cprobe

    if not cprobe.available():
        return
    F, G = tl.field(a, "ctmr"), tl.field(a[::-1].copy(), "bspln3")
    field = tl.grad(build(e, F, G))
    reference_values = field.probe(POINTS)
    run.USE_C = True
    try:
        fresh = tl.grad(build(e, F, G))
        got = fresh.probe(POINTS)
    finally:
        run.USE_C = False
    assert np.array_equal(np.isnan(got), np.isnan(reference_values))
    assert np.allclose(got, reference_values, rtol=1e-9, atol=1e-12, equal_nan=True)
