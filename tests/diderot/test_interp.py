"""The strand interpreter on small programs, and expressions against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlang as tl
from tensorlang.errors import TensorLangError
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check

HERE = Path(__file__).parent / "programs"


def load(name: str):
    return strands(check(parse_program((HERE / name).read_text())))


def test_grid_program_runs_to_stability():
    res = load("countdown.diderot").run({})
    assert res.grid_shape == (5,)
    assert res.outputs["seen"].tolist() == [0, 1, 2, 3, 4]
    assert res.outputs["pair"][:, 1].tolist() == [0, 2, 4, 6, 8]
    assert res.steps == 5 and res.active == 0


def test_iteration_limit_leaves_strands_as_they_stand():
    res = load("countdown.diderot").run({"top": 6}, limit=2)
    assert res.steps == 2 and res.active == 5
    assert res.outputs["pair"][6].tolist() == [0, 0]  # the stabilize method never ran


def test_collection_outputs_the_stable_strands_and_neighbours_see_each_other():
    res = load("neighbours.diderot").run({})
    assert res.grid_shape is None
    assert res.outputs["near"].tolist() == [1, 2, 2]  # strands 0, 2, 4 (odd ones died)


def test_unknown_input_is_refused():
    with pytest.raises(TensorLangError) as info:
        load("countdown.diderot").run({"nope": 1})
    assert info.value.code == "input"


def test_inputs_are_described():
    p = load("countdown.diderot")
    (top,) = p.inputs
    assert (top.name, top.kind, top.default, top.description) == ("top", "int", 4, "largest start")
    assert [o.name for o in p.outputs] == ["seen", "pair"]


def run_expr(expr: str, ty: str = "real") -> object:
    text = (f"#version 1.0\nstrand s () {{ output {ty} x = 0; update {{ x = {expr}; stabilize; }} }}\n"
            "initially [ s() | i in 0..0 ];\n")
    return strands(check(parse_program(text))).run({}).outputs["x"][0]


def test_integer_division_truncates_like_c():
    assert run_expr("-7/2", "int") == -3
    assert run_expr("-7%2", "int") == -1


reals = st.floats(min_value=-100, max_value=100, allow_nan=False).map(lambda v: round(v, 3))


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(a=reals, b=reals, c=st.floats(min_value=0.5, max_value=4).map(lambda v: round(v, 3)))
def test_generated_arithmetic_agrees_with_numpy(a, b, c):
    expr = f"({a}) * ({b}) - ({a}) / ({c}) + |[{a}, {b}]| + max({a}, {b})"
    want = a * b - a / c + np.hypot(a, b) + max(a, b)
    assert run_expr(expr) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_field_probe_and_gradient_of_a_linear_image():
    text = """#version 1.0
input image(2)[] img;
field#1(2)[] F = ctmr ⊛ img;
strand s (real x, real y) {
   output vec3 v = [0, 0, 0];
   update { vec2 g = ∇F([x, y]); v = [F([x, y]), g[0], g[1]]; stabilize; }
}
initially [ s(1.5 + 0.25*i, 2.0) | i in 0..3 ];
"""
    i, j = np.meshgrid(np.arange(8.0), np.arange(8.0), indexing="ij")
    res = strands(check(parse_program(text))).run({"img": 2 * i + 3 * j})
    xs = 1.5 + 0.25 * np.arange(4)
    assert np.allclose(res.outputs["v"][:, 0], 2 * xs + 6)
    assert np.allclose(res.outputs["v"][:, 1:], [2, 3])


@pytest.mark.slow
def test_probes_in_a_program_agree_with_tensorlang_fields():
    # value, gradient, Hessian eigen-system and lifted arithmetic of a rotated, scaled image
    from tensorlang.fields import KERNELS, reconstruct
    import tensorlang as tl
    rng = np.random.default_rng(7)
    t = 0.4
    lin = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) @ np.diag([0.3, 0.25])
    world = np.eye(3)
    world[:2, :2], world[:2, 2] = lin, [-1.0, -1.2]
    img = tl.image(rng.normal(size=(9, 8)), world=world)
    res = load("hessian.diderot").run({"img": img})
    j, i = np.meshgrid(np.arange(7), np.arange(10), indexing="ij")
    pts = np.stack([0.35 * i - 1.1, 0.3 * j - 0.9], axis=-1).reshape(-1, 2)
    inside = reconstruct.inside(img, KERNELS["bspln3"], pts)
    assert res.outputs["in"].reshape(-1).tolist() == inside.tolist()
    assert 0 < inside.sum() < len(pts)
    val = reconstruct.probe(img, KERNELS["bspln3"], 0, pts)
    grad = reconstruct.probe(img, KERNELS["bspln3"], 1, pts)
    hess = reconstruct.probe(img, KERNELS["bspln3"], 2, pts)
    ok = inside
    assert np.allclose(res.outputs["val"].reshape(-1)[ok], val[ok], atol=1e-10)
    assert np.allclose(res.outputs["grad"].reshape(-1, 2)[ok], grad[ok], atol=1e-9)
    lam, vec = np.linalg.eigh(hess[ok])
    assert np.allclose(res.outputs["lam"].reshape(-1, 2)[ok], lam[:, ::-1], atol=1e-8)  # descending
    ev0 = res.outputs["ev0"].reshape(-1, 2)[ok]
    assert np.allclose(np.abs(np.sum(ev0 * vec[:, :, 1], axis=1)), 1, atol=1e-8)  # up to sign
    lifted = 2 * val - np.linalg.norm(grad, axis=-1)
    assert np.allclose(res.outputs["lifted"].reshape(-1)[ok], lifted[ok], atol=1e-9)
    assert np.all(np.isnan(res.outputs["val"].reshape(-1)[~ok]))
    # the clamped tent field is defined everywhere: outside, it reads the edge samples
    xi = np.linalg.solve(lin, (pts - [-1.0, -1.2]).T).T
    n = np.floor(xi).astype(int)
    f = xi - n
    d = img.data
    want = []
    for (a, b), (fa, fb) in zip(n, f):
        def at(u, v):
            return d[min(max(u, 0), 8), min(max(v, 0), 7)]
        want.append((1 - fa) * (1 - fb) * at(a, b) + fa * (1 - fb) * at(a + 1, b)
                    + (1 - fa) * fb * at(a, b + 1) + fa * fb * at(a + 1, b + 1))
    assert np.allclose(res.outputs["edge"].reshape(-1), want, atol=1e-12)


def test_new_strands_join_at_the_end_of_the_step_and_the_global_block_sees_them():
    # what Diderot's own executable (diderotc --double) prints and writes for this program
    res = load("spawn.diderot").run({})
    assert res.printed == "2 0.5\n4 0.75\n8 0.875\n8 0.875\n"
    assert res.outputs["where"].tolist() == [0, 0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875]
    assert res.outputs["level"].tolist() == [3] * 8
    assert (res.steps, res.active, res.stable) == (4, 0, 8)


def test_a_global_stabilize_drops_the_last_step_of_the_shared_variables():
    # Diderot's executable writes pos as it was before the third step (pos is shared: the
    # strands see each other) and seen as the third step left it (seen is the strand's own)
    res = load("gstop.diderot").run({})
    assert res.outputs["pos"].tolist() == [[2, 0], [3, 0], [4, 0]]
    assert res.outputs["seen"].tolist() == [6, 6, 6]
    assert (res.steps, res.stable) == (3, 3)


def test_strands_update_and_are_written_in_the_order_of_diderots_strand_array():
    # what Diderot's executable prints and writes: a strand that dies swaps with the last
    # active one (7 updates before 6), the stable ones come first in the order they
    # stabilized (2 and 4 at the first step, 0 and 6 at the third)
    res = load("order.diderot").run({})
    assert res.printed == "0 1 2 3 4 5 7 6 \n1 6 0 3 4 7 \n0 3 6 \n"
    assert res.outputs["id"].tolist() == [2, 4, 0, 6]


def test_without_bulk_synchronous_features_the_stable_strands_keep_creation_order():
    # no global block, no new, no communication: Diderot's direct strand array
    res = load("order2.diderot").run({})
    assert res.outputs["id"].tolist() == [0, 2, 4, 6]


APPENDS = """#version 2.0
input int n = 300;
strand s (int i) {
  output real total = 0;
  output int count = 0;
  update {
    real{} acc = {};
    foreach (int j in 0 .. n-1) { acc = acc @ j; }
    total = sum { x | x in acc };
    count = length(acc);
    stabilize;
  }
}
initially [ s(i) | i in 0..0 ];
"""


def test_appending_to_a_sequence_converts_each_item_once(monkeypatch):
    """``acc = acc @ j`` converts the new int item to real once; the items already in the
    sequence (real) are not walked again by @ nor by the assignment (it was quadratic:
    45,756 conversions for 300 appends)."""
    from tensorlang.lang.diderot import interp

    calls = []
    real_coerce = interp.coerce
    monkeypatch.setattr(interp, "coerce", lambda ty, v: calls.append(1) or real_coerce(ty, v))
    res = tl.compile(APPENDS, lang="diderot", backend="interp")(n=300)
    assert res.total[0] == sum(range(300)) and res.count[0] == 300
    assert len(calls) < 2 * 300
