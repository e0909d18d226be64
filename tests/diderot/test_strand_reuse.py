"""A built strand program keeps the state arrays of a finished run for the next run with as
many strands (docs/diderot-compiled.md, "How a run goes"): the next run's ``tl_create``
must set or zero every row, whatever the kept arrays hold.  The kept arrays are filled
with garbage here before each C run, and the results compared with a run in new arrays,
bit for bit (and with the interpreter's, closely): grids of several index ranges whose
strands' parameters come from image probes, state initialized through a function with an early return (a jump in the created
code), and a collection whose strands die or stabilize."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.interp import DEFAULT_LIMIT
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as c_strands

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler")

GRID = """#version 1.0
input image(2)[] img;
input real scale = 1.0;
field#1(2)[] F = bspln3 ⊛ img;
function real pick(real a) {
   if (a > 0.5) {
      return a * 2.0;
   }
   return -a;
}
strand s (vec2 p, int k, real w) {
   real v = pick(w);
   int age = k % 3;
   vec2 g = ∇F(p) if inside(p, F) else [0.0, 0.0];
   output real out = v + (F(p) if inside(p, F) else -1.0);
   output int tag = age;
   update {
      age += 1;
      out += scale * g[0];
      if (age >= 4 && k % 2 == 0) {
         stabilize;
      }
   }
}
initially [ s([1.3 * real(i) + 0.2 * real(l), 0.9 * real(j) + 3.1], i * 10 + j + l,
              F([1.7 * real(i), 2.5]) if inside([1.7 * real(i), 2.5], F) else 0.25)
            | l in 0..1, i in 1..7, j in -2..6 ];
"""

COLLECTION = """#version 1.0
input image(2)[] img;
field#0(2)[] F = tent ⊛ img;
strand s (real a, int k) {
   int age = 0;
   output real out = a;
   update {
      age += 1;
      out += F([real(k % 9) + 0.5, 3.25]);
      if (out > 1.5) {
         die;
      }
      if (age > k % 5) {
         stabilize;
      }
   }
}
initially { s(F([0.7 * real(k), 1.5 + 0.1 * real(m)]) if inside([0.7 * real(k), 1.5 + 0.1 * real(m)], F) else -0.5, k + m)
            | m in 2..4, k in 0..17 };
"""


def _program(text: str):
    return strands(check(parse_program(text)))


def _poison(p, steps: int) -> None:
    """Garbage in the arrays the program's built runner (for runs of ``steps`` super-steps) keeps
    for the next run."""
    ir, why = strand_plan(p.checked)
    assert why is None, why
    runner = c_strands.build(ir, steps)
    for R, I, status, _ in runner.spare.values():
        R.fill(np.nan)
        I.fill(-123456789)
        status.fill(3)


def _same(a, b, exact: bool) -> None:
    assert (a.steps, a.active, a.stable) == (b.steps, b.active, b.stable)
    for name in a.outputs:
        x, y = np.asarray(a.outputs[name]), np.asarray(b.outputs[name])
        assert x.shape == y.shape and x.dtype.kind == y.dtype.kind, name
        if exact:
            assert np.array_equal(x, y, equal_nan=True), name
        else:  # the C probe sums in its own order: the last bits may differ
            assert np.allclose(x, y, rtol=1e-12, atol=1e-12, equal_nan=True), name


@pytest.mark.parametrize("text", [GRID, COLLECTION], ids=["grid", "collection"])
def test_reused_state_arrays_match_the_interpreter(text):
    p = _program(text)
    ir, _ = strand_plan(p.checked)
    rng = np.random.default_rng(7)
    images = [rng.random((16, 12)), rng.random((16, 12)) * 3.0 - 1.0, np.zeros((16, 12))]
    for img in images:
        values = {"img": img}
        want = p.run(values, backend="interp", limit=20)
        c_strands.build(ir, 20).spare.clear()
        fresh = p.run(values, backend="c", limit=20)  # new arrays
        _same(want, fresh, exact=False)
        for threads in (1, 2):
            _poison(p, 20)  # the arrays the last run left: this run takes them
            _same(fresh, p.run(values, backend="c", threads=threads, limit=20), exact=True)


def test_rows_to_zero_stop_at_a_jump():
    """The rows tl_create sets before any jump need no zeroing; those after a function's
    early return (a jump in the created code) are zeroed in a reused array."""
    p = _program(GRID)
    ir, _ = strand_plan(p.checked)
    runner = c_strands.build(ir)
    places = runner.renderer.state
    zeroed = {("R", k) for k in runner.unset[0]} | {("I", k) for k in runner.unset[1]}
    assert places["k"] not in zeroed  # a parameter, set first
    assert "p.0" not in places  # a parameter only the initializers read: no row (lower._unstored_params)
    assert places["out"] in zeroed and places["tag"] in zeroed  # after pick's early return


def test_a_large_run_keeps_nothing(monkeypatch):
    p = _program(COLLECTION)
    monkeypatch.setattr(c_strands, "SPARE_BYTES", 0)
    ir, _ = strand_plan(p.checked)
    c_strands.build(ir, DEFAULT_LIMIT).spare.clear()
    p.run({"img": np.ones((16, 12))}, backend="c")
    assert not c_strands.build(ir, DEFAULT_LIMIT).spare
