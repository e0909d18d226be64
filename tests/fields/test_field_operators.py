"""Lifted operators, differential operators, normalization and typing of fields
(paper 004 §3-§5)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.ein import ir


def _vector_field(d=3, kern="bspln3", seed=0, size=9):
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(size,) * d + (d,))
    return tl.field(data, kern, dim=d), data


def _points(d, n=25, seed=1, lo=2.0, hi=6.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=(n, d))


def test_canny_edge_measure_matches_its_first_order_form():
    """004 §3: E = −∇|∇F| • ∇F/|∇F| = −(∇Fᵀ H ∇F) / |∇F|² (the hand derivation)."""
    rng = np.random.default_rng(5)
    F = tl.field(rng.normal(size=(12, 12)), "bspln3")
    E = -tl.grad(tl.norm(tl.grad(F))) @ tl.normalize(tl.grad(F))
    pts = _points(2, 60, lo=2, hi=9)
    g, H = tl.grad(F).probe(pts), tl.hessian(F).probe(pts)
    expected = -np.einsum("ni,nij,nj->n", g, H, g) / np.einsum("ni,ni->n", g, g)
    assert np.allclose(E.probe(pts), expected, rtol=1e-9, atol=1e-12)
    assert E.type == "field#0(2)[]"  # bspln3 is C2; E takes two derivatives


def test_curl_of_a_linear_vector_field():
    """F(x) = A x has ∇×F = (A32−A23, A13−A31, A21−A12); in 2-D the scalar A21 − A12."""
    rng = np.random.default_rng(2)
    for d in (2, 3):
        A = rng.normal(size=(d, d))
        idx = np.indices((8,) * d).astype(float)
        data = np.einsum("ij,j...->...i", A, idx)
        F = tl.field(data, "ctmr", dim=d)
        pts = _points(d, 10)
        c = tl.curl(F).probe(pts)
        if d == 3:
            expected = np.array([A[2, 1] - A[1, 2], A[0, 2] - A[2, 0], A[1, 0] - A[0, 1]])
        else:
            expected = A[1, 0] - A[0, 1]
        assert np.allclose(c, np.broadcast_to(expected, c.shape), atol=1e-10)
        assert np.allclose(tl.div(F).probe(pts), np.trace(A), atol=1e-10)
        assert np.allclose(tl.jacobian(F).probe(pts), np.broadcast_to(A, (10, d, d)), atol=1e-10)


@pytest.mark.parametrize("which", ["div curl", "curl grad"])
def test_div_curl_and_curl_grad_vanish_symbolically(which):
    """004 §5.4: Σ_jk ε_ijk ∂_j∂_k e ⇒ 0; the lowered program computes no probe at all."""
    if which == "div curl":
        F, _ = _vector_field()
        Z = tl.div(tl.curl(F))
    else:
        F = tl.field(np.random.default_rng(0).normal(size=(9, 9, 9)), "bspln3")
        Z = tl.curl(tl.grad(F))
    program = Z.program()
    assert all(isinstance(s.body, ir.Const) and s.body.value == 0 for s in program.statements)
    assert Z.rules().get("epsilon-symmetric-derivative") == 1
    pts = _points(3)
    assert np.all(Z.probe(pts) == 0)
    # outside the domain it is still ⊥: the probe's domain is the field's
    assert np.isnan(Z.probe(np.array([[-5.0, 0, 0]]))).all()


def test_div_curl_is_zero_up_to_rounding_when_computed_term_by_term():
    """The same quantity, computed from the Hessians of the components by hand."""
    F, data = _vector_field(seed=3)
    pts = _points(3, 30)
    H = [tl.hessian(F[k]).probe(pts) for k in range(3)]
    eps = np.zeros((3, 3, 3))
    for (i, j, k), s in {(0, 1, 2): 1, (1, 2, 0): 1, (2, 0, 1): 1, (0, 2, 1): -1, (2, 1, 0): -1, (1, 0, 2): -1}.items():
        eps[i, j, k] = s
    total = sum(eps[i, j, k] * H[k][:, j, i] for i in range(3) for j in range(3) for k in range(3))
    assert np.max(np.abs(total)) < 1e-12 * max(1.0, np.max(np.abs(np.stack(H))))


@pytest.mark.slow
def test_lifted_tensor_operations_match_numpy_on_probed_values():
    rng = np.random.default_rng(8)
    M = tl.field(rng.normal(size=(9, 9, 9, 3, 3)), "ctmr", dim=3)
    V, _ = _vector_field(kern="ctmr", seed=9)
    pts = _points(3, 20)
    m, v = M.probe(pts), V.probe(pts)
    checks = [
        (tl.det(M), np.linalg.det(m)),
        (tl.trace(M), np.trace(m, axis1=1, axis2=2)),
        (tl.transpose(M), np.swapaxes(m, 1, 2)),
        (M @ V, np.einsum("nij,nj->ni", m, v)),
        (V @ M, np.einsum("ni,nij->nj", v, m)),
        (M @ M, m @ m),
        (V @ V, np.einsum("ni,ni->n", v, v)),
        (tl.outer(V, V), np.einsum("ni,nj->nij", v, v)),
        (tl.norm(M), np.sqrt(np.einsum("nij,nij->n", m, m))),
        (tl.normalize(V), v / np.linalg.norm(v, axis=1)[:, None]),
        (2.0 * M - M / 4.0 + 1.5 * tl.fields.identity(3), 1.75 * m + 1.5 * np.eye(3)),
        (tl.det(tl.fields.identity(2, dim=3) * tl.trace(M)), np.trace(m, axis1=1, axis2=2) ** 2),
        (M[1, 2] * V, m[:, 1, 2, None] * v),
        (tl.fields.sqrt(tl.norm(V)), np.sqrt(np.linalg.norm(v, axis=1))),
        (V + np.array([1.0, 2.0, 3.0]), v + [1, 2, 3]),
    ]
    for field, expected in checks:
        assert np.allclose(field.probe(pts), expected, rtol=1e-10, atol=1e-12), field


@pytest.mark.slow
def test_fractional_anisotropy_matches_eigenvalue_formula():
    """004 §7: FA = sqrt(3/2) |T − tr(T) I/3| / |T|, for symmetric T the familiar
    eigenvalue formula."""
    rng = np.random.default_rng(11)
    A = rng.normal(size=(8, 8, 8, 3, 3))
    data = A + np.swapaxes(A, -1, -2)
    T = tl.field(data, "c4hexic", dim=3)
    E = T - tl.trace(T) * tl.fields.identity(3) / 3.0
    FA = np.sqrt(1.5) * tl.norm(E) / tl.norm(T)
    pts = _points(3, 15, lo=2.5, hi=4.5)
    lam = np.linalg.eigvalsh(T.probe(pts))
    mean = lam.mean(axis=1, keepdims=True)
    expected = np.sqrt(1.5) * np.sqrt(((lam - mean) ** 2).sum(1)) / np.sqrt((lam ** 2).sum(1))
    assert np.allclose(FA.probe(pts), expected, rtol=1e-9)
    # and it is differentiable (C4 kernel): ∇FA agrees with finite differences
    p, h = pts[:1], 1e-5
    fd = np.array([(FA.probe(p + e) - FA.probe(p - e))[0] / (2 * h) for e in np.eye(3) * h])
    assert np.allclose(tl.grad(FA).probe(p)[0], fd, rtol=1e-5, atol=1e-7)


def test_normalized_helicity_and_its_gradient():
    F, _ = _vector_field(seed=12)
    H = tl.normalize(F) @ tl.normalize(tl.curl(F))
    pts = _points(3, 10, lo=3, hi=5)
    v, c = F.probe(pts), tl.curl(F).probe(pts)
    expected = np.einsum("ni,ni->n", v, c) / np.linalg.norm(v, axis=1) / np.linalg.norm(c, axis=1)
    assert np.allclose(H.probe(pts), expected, rtol=1e-9)
    assert np.all(np.abs(H.probe(pts)) <= 1 + 1e-12)
    with pytest.raises(tl.TensorLangError) as err:  # bspln3 is C2: curl uses one, ∇ another, a third is too many
        tl.hessian(H)
    assert err.value.code == "shape" and err.value.rule == "field-continuity"


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["+", "-", "*s", "neg", "exp", "sin", "norm2"]), min_size=1, max_size=4),
       st.floats(-3, 3))
def test_probes_commute_with_lifted_operators(ops, scale):
    """(e₁ ⊙ e₂)@x = (e₁@x) ⊙ (e₂@x): any chain of lifted operations probed equals the
    same operations on the probed values (004 §5.3's rules, checked by value)."""
    rng = np.random.default_rng(0)
    F = tl.field(rng.normal(size=(8, 8)), "ctmr")
    G = tl.field(rng.normal(size=(8, 8)), "bspln3")
    pts = _points(2, 12, lo=1.5, hi=5.5)
    f, g = F.probe(pts), G.probe(pts)
    field, value = F, f
    for op in ops:
        if op == "+":
            field, value = field + G, value + g
        elif op == "-":
            field, value = G - field, g - value
        elif op == "*s":
            field, value = scale * field * G, scale * value * g
        elif op == "neg":
            field, value = -field, -value
        elif op == "exp":
            field, value = tl.fields.exp(field / 10.0), np.exp(value / 10.0)
        elif op == "sin":
            field, value = tl.fields.sin(field), np.sin(value)
        else:
            field, value = tl.norm(field), np.abs(value)
    scale = 1.0 + np.nanmax(np.abs(value))  # the optimizer may reassociate: rounding of the terms' size
    assert np.allclose(field.probe(pts), value, rtol=1e-10, atol=1e-12 * scale)
    # and the derivative of the chain agrees with finite differences of probes
    if all(op != "norm2" for op in ops):
        h = 1e-6
        fd = np.stack([(field.probe(pts + e) - field.probe(pts - e)) / (2 * h) for e in np.eye(2) * h], axis=1)
        assert np.allclose(tl.grad(field).probe(pts), fd, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ types and errors
def _error(fn):
    with pytest.raises(tl.TensorLangError) as err:
        fn()
    return err.value


def test_continuity_bounds_differentiation():
    data = np.zeros((6, 6))
    assert _error(lambda: tl.grad(tl.field(data, "tent"))).rule == "field-continuity"
    assert tl.grad(tl.field(data, "c1tent")).continuity == 0
    assert _error(lambda: tl.hessian(tl.field(data, "ctmr"))).rule == "field-continuity"
    assert tl.hessian(tl.field(data, "bspln3")).type == "field#0(2)[2,2]"
    assert _error(lambda: tl.grad(tl.hessian(tl.field(data, "bspln3"))[0, 0])).code == "shape"
    F = tl.field(data, "c4hexic")
    assert tl.jacobian(tl.jacobian(tl.hessian(F))).type == "field#0(2)[2,2,2,2]"


def test_shape_errors_are_tensorlang_errors():
    V, _ = _vector_field()
    S = tl.field(np.zeros((5, 5, 5)), "ctmr")
    M = tl.field(np.zeros((5, 5, 5, 4, 4)), "ctmr", dim=3)
    for bad in (lambda: V + S, lambda: V * V, lambda: tl.curl(S), lambda: tl.div(S), lambda: tl.det(M),
                lambda: tl.trace(V), lambda: V @ M, lambda: tl.grad(V), lambda: S @ S, lambda: V[3],
                lambda: V / V, lambda: V + tl.field(np.zeros((5, 5, 2)), "ctmr", dim=2), lambda: V + "x",
                lambda: V[0, 0]):
        assert _error(bad).code == "shape"
    assert _error(lambda: tl.field(np.zeros(4), "lanczos")).code == "input"
    assert _error(lambda: tl.field(np.zeros((2, 2, 2, 2)), "tent")).code == "input"
    assert _error(lambda: tl.field(np.zeros((4, 4)), "tent", world=np.zeros((3, 3)))).code == "input"
    assert _error(lambda: S.probe(np.zeros((4, 2)))).code == "input"
    assert _error(lambda: S.probe("here")).code == "input"


def test_nan_and_infinite_inputs_give_bottom():
    data = np.random.default_rng(0).normal(size=(10, 10))
    data[5, 5] = np.nan
    F = tl.field(data, "bspln3")
    pts = np.array([[5.2, 5.3], [2.0, 2.0], [np.nan, 3.0], [np.inf, 3.0], [-np.inf, 3.0], [0.5, 3.0], [3.0, 8.7],
                    [-0.0, 3.0]])
    value = F.probe(pts)
    assert np.isnan(value[0]) and np.isfinite(value[1])  # the NaN sample is in the support of point 0
    assert np.isnan(value[2:]).all()  # not finite, or outside (bspln3 needs a sample on each side)
    assert list(tl.inside(F, pts)) == [True, True, False, False, False, False, False, False]
    assert np.isnan(tl.grad(F).probe(pts)[0]).all()
    big = tl.field(np.full((6, 6), 1e308), "ctmr")
    assert np.isinf((big * 10.0).probe(np.array([[2.5, 2.5]])))  # overflows, never raises
    inf_img = tl.field(np.where(np.eye(6) > 0, np.inf, 0.0), "tent")
    # IEEE: a sample of ∞ with kernel weight 0 gives 0·∞ = ⊥; with weight > 0 only, ∞
    assert np.isnan(inf_img.probe(np.array([[2.0, 2.0]])))
    assert np.isinf(tl.field(np.full((6, 6), np.inf), "tent").probe(np.array([[2.5, 2.5]])))


def test_stages_report_node_counts_and_value_numbering_shares_probes():
    F = tl.field(np.random.default_rng(0).normal(size=(9, 9, 9)), "bspln3")
    E = -tl.grad(tl.norm(tl.grad(F))) @ tl.normalize(tl.grad(F))
    stages = dict(E.stages())
    assert set(stages) >= {"field", "normalize", "slice"} and all(n > 0 for n in stages.values())
    # Slice: all the probes of ∇F share one probe tensor, all of H one more
    names = sorted(d.name for d in E.program().decls if d.name.startswith("P"))
    assert names == ["P0", "P1"]
    assert E.rules()["derivative-onto-kernel"] >= 3 and E.rules()["chain-rule"] == 1


def test_single_point_and_one_dimensional_fields():
    F = tl.field(np.arange(10.0) ** 2, "ctmr")
    assert F.probe(3.5) == pytest.approx(12.25)
    assert np.allclose(F.probe([2.5, 4.0]), [6.25, 16.0])
    assert np.allclose(tl.jacobian(F).probe([2.5, 4.0]), [[5.0], [8.0]])
    G = tl.field(np.zeros((5, 5)), "tent")
    assert G.probe([1.5, 1.5]).shape == ()


def test_numpy_arrays_and_constants_combine_with_fields():
    V, _ = _vector_field(kern="ctmr", seed=4)
    pts = _points(3, 5)
    v = V.probe(pts)
    shift = np.array([1.0, -2.0, 0.5])
    for field, expected in ((shift + V, v + shift), (V - shift, v - shift), (np.float64(2.0) * V, 2 * v),
                            (shift @ V, v @ shift), (tl.fields.identity(3) @ V, v)):
        assert isinstance(field, tl.fields.Field)
        assert np.allclose(field.probe(pts), expected)
    S = tl.field(np.zeros((6, 6)), "ctmr")
    assert (tl.fields.identity(2) * S).dim == 2  # a constant field takes the dimension it meets


def test_epsilon_rule_needs_a_symmetric_pair_of_derivatives():
    """Σ_jk ε_ijk ∂_j∂_k∂_k F is no zero pattern (swapping j, k changes the derivative):
    the rule must not fire, and the value must match the hand computation."""
    from tensorlang.ein import ir as e
    from tensorlang.ein.fields import Conv, Probe
    from tensorlang.ein.rewrite import Tally
    from tensorlang.passes import fields as fp

    body = e.Sum((("j", 3), ("k", 3)), e.BinOp("*", e.Epsilon(("i", "j", "k")), Probe(Conv("V", "c4hexic", (), ("j", "k", "k")), "x")))
    tally = Tally()
    assert fp.normalize(body, tally) == body and "epsilon-symmetric-derivative" not in tally.counts
    zero = e.Sum((("j", 3), ("k", 3)), e.BinOp("*", e.Epsilon(("i", "j", "k")), Probe(Conv("V", "c4hexic", (), ("k", "i", "j")), "x")))
    assert fp.normalize(zero, tally) == e.Const(0.0) and tally.counts["epsilon-symmetric-derivative"] == 1


def test_every_stage_prints():
    F = tl.field(np.zeros((8, 8)), "bspln3")
    E = tl.grad(F) @ tl.grad(F)
    field, normal = E.ir("field"), E.ir("normalize")
    assert "∂/∂x" in field and "@x" in field and "⊛ bspln3" in field
    assert "∂/∂x" not in normal and "⊛ bspln3^[" in normal  # derivatives moved onto the kernel
    assert "P0[p," in E.ir("slice") and "out var E" in E.ir("opt")
    schedule = E.ir("schedule")  # each probe tensor a probe step of the schedule, rendered by the C target
    assert "probe: v" in schedule and "bspln3 probe of order 1" in schedule
    assert "probe(I0 ⊛ bspln3^1, X, G0)" in E.ir("opt")
    assert "tl_step0_points" in E.ir("c")
    assert _error(lambda: E.ir("tiles")).code == "input"


def test_deep_and_exploding_fields_are_too_large_not_a_hang(monkeypatch):
    from tensorlang.passes import fields as fp

    F = tl.field(np.zeros((8, 8)), "bspln3")
    H = F
    for _ in range(400):  # deep, but within the depth bound: it runs
        H = H + 0.5 * F
    assert H.probe([3.0, 3.0]) == 0.0 and np.all(tl.grad(H).probe([3.0, 3.0]) == 0.0)
    with pytest.raises(tl.TensorLangError) as err:
        for _ in range(10_000):
            H = H + F
    assert err.value.code == "too-large"
    monkeypatch.setattr(fp, "MAX_STEPS", 2_000)
    K = tl.field(np.zeros((8, 8)), "c4hexic")
    for _ in range(8):
        K = K * K + 1.0  # the product rule doubles the work at every level
    assert _error(lambda: tl.hessian(tl.hessian(K)[0, 0]).probe([3.0, 3.0])).code == "too-large"
