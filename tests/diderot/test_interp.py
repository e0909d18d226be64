"""The strand interpreter on small programs, and expressions against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

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
