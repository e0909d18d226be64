"""Differences between tensorlang's two strand executors and the executables of ``diderotc --double --exec``
that remained (docs/diderot.md, "What remains different"): each test holds the value diderotc's executable
printed for the program (stored here as text), on the interpreter and on the C executor."""

from __future__ import annotations

import numpy as np
import pytest
from unseen6_inputs import write
from unseen_inputs import _grid as grid

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
BOTH = ["interp", pytest.param("c", marks=[pytest.mark.slow, needs_cc])]


def _prog(text: str):
    return strands(check(parse_program(text)))


def _run(text: str, backend: str, values=None, **run):
    p = _prog(text)
    res = p.run(values or {}, backend=backend, **run)
    if backend == "c":
        assert p.executor_note is None, p.executor_note
    return res


# ------------------------------------------------ (1) the sign of a zero in a world-space Hessian
HESS = """#version 2.0
input image(2)[] img;
field#2(2)[] F = bspln3 ⊛ img;
strand S (int i) {
  output tensor[2,2] y = zeros[2,2];
  update { y = ∇⊗∇F([0.0, 1.0]); stabilize; }
}
create_array { S(i) | i in 0..0 }
"""


@pytest.mark.parametrize("backend", BOTH)
def test_a_hessian_transforms_its_last_axis_first_as_diderotc(backend, tmp_path):
    """diderotc computes ∇⊗∇F as Σ_a M[a, i] (Σ_b H[a, b] M[b, j]) (M: world to index): on an image flipped
    along x it printed [[-0.4999999999958753,-0],[0,-2.5501267764127533e-11]]; transforming the first axis
    first gave [0,1] the sign +0 (both executors) and [1,0] -0 (C)."""
    write(tmp_path / "a.nrrd", grid([9, 8]), ["space dimension: 2", "space directions: (-0.5,0) (0,0.5)",
                                              "space origin: (2.0,-1.75)", "kinds: space space"])
    y = np.asarray(_run(HESS, backend, {"img": str(tmp_path / "a.nrrd")}).outputs["y"])[0]
    assert np.allclose(y, [[-0.4999999999958753, 0.0], [0.0, -2.5501267764127533e-11]], rtol=1e-9, atol=1e-15)
    assert np.signbit(y[0, 1]) and not np.signbit(y[1, 0])


# ------------------------------------------------ (2) a sphere query in a start method
SQ = """#version 2.0
strand S (int i) {
  vec2 pos = [real(i), 0.0];
  output int c = 0;
  start { c = sum { 1 | p in sphere(9.0) }; print(i, " start ", c, "\\n"); }
  update { c += 10 * sum { 1 | p in sphere(9.0) }; stabilize; }
}
create_collection { S(i) | i in 0..3 }
"""


def test_a_sphere_query_in_a_start_method_finds_the_strands_as_the_step_found_them():
    """diderotc's start methods run in the first super-step, after its neighbour tree holds every living strand:
    each finds the other three (it printed "i start 3", c = 33); tensorlang's found none (c = 30).  The C
    executor leaves such a program to the interpreter."""
    from tensorlang.lang.diderot.lower import strand_plan

    p = _prog(SQ)
    a = p.run({}, backend="interp")
    assert a.printed == "".join(f"{i} start 3\n" for i in range(4))
    assert np.asarray(a.outputs["c"]).tolist() == [33] * 4
    assert "a sphere query in a start method" in strand_plan(p.checked)[1]

