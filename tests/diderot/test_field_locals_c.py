"""Field locals in strand methods and functions (``field#2(2)[] G = s * F;`` in an ``update``) run in C: the
local stands for its definition, whose operands are taken where it is declared (a later ``s = 2.0`` does not
change G), probed, differentiated and tested with ``inside`` where the method does, declared in branches and
loops, handed to a function's field parameter. They fell back to the interpreter ("field arithmetic outside a
probe"). The values are those diderotc's executable (``--double --exec``) printed for the same program."""

from __future__ import annotations

import numpy as np
import pytest

from agreement import agree  # tests/diderot is on the path: the folder is not a package
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.targets.c import build as c_build

PROGRAM = """#version 2.0
input image(2)[] img;
input real w = 0.7;
field#2(2)[] F = bspln3 ⊛ img;
function real twice(vec2 p, real a) {
  field#2(2)[] H = a * F + F;
  return H(p) + |∇H(p)|;
}
function real pr(field#2(2)[] Q, vec2 p) = Q(p) + ∇Q(p)[0];
strand S (int i, int j) {
  vec2 x = [0.2*real(i) - 0.3, 0.2*real(j) - 0.3];
  output real v = 0.0;
  output vec2 g = [0.0, 0.0];
  output real t = 0.0;
  update {
    real s = 0.5;
    field#2(2)[] G = s * F;
    s = 2.0;
    field#2(2)[] K = G - w * F;
    field#1(2)[2] D = ∇G;
    v = G(x) + K(x);
    if (i > 1) {
      field#2(2)[] L = G * G;
      v += L(x) + twice(x, s);
      g = D(x) + ∇L(x);
    } else {
      g = ∇K(x);
    }
    real acc = 0.0;
    foreach (int k in 0..2) {
      field#2(2)[] M = real(k) * F;
      acc += M(x + [0.01*real(k), 0.0]);
    }
    t = acc + (1.0 if inside(x, K) else -1.0) + pr(-K, x);
    stabilize;
  }
}
create_array { S(i, j) | i in 0..3, j in 0..3 }
"""
#: diderotc's executable's v of the strands S(0, 0..3) and S(1, 0..1) on the image of ``_image``
DIDEROTC_V = [0.14964480250514994, 0.145278309705485, 0.1226399628405086, 0.1263390893430486, 0.17203766823920913,
              0.14724677479687082]


def _image(folder) -> str:
    import nrrd

    path = str(folder / "img.nrrd")
    nrrd.write(path, np.random.default_rng(0).random((9, 9)), {"space dimension": 2, "space origin": [-1.0, -1.0],
                                                               "space directions": [[0.25, 0.0], [0.0, 0.25]]})
    return path


def test_field_locals_give_what_diderotc_gives(tmp_path):
    p = strands(check(parse_program(PROGRAM)))
    res = p.run({"img": _image(tmp_path)}, backend="interp")
    assert np.allclose(res.outputs["v"].ravel()[:6], DIDEROTC_V, rtol=1e-12)


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")
def test_field_locals_run_in_c_and_agree_with_the_interpreter(tmp_path):
    agree(strands(check(parse_program(PROGRAM))), {"img": _image(tmp_path)})
