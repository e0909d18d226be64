"""Parameters no method reads (``lower._unstored_params``): a strand parameter that only the
state's initializers read is a local of the strand's creation, with no state row; the
outputs are the interpreter's.  A parameter an update, stabilize or global block reads, a
query's ``pos``, and every parameter of a program that runs ``new`` stay state."""

from __future__ import annotations

import numpy as np
import pytest
from agreement import agree  # tests/diderot is on the path

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build

pytestmark = [pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler"),
              pytest.mark.slow]

# x0 and k only initialize the state (k through a branch and a probe's position); w is read by update
UNREAD = """#version 1.0
input image(2)[] img;
field#0(2)[] F = tent ⊛ img;
input int gens = 3;
strand cell(vec2 x0, int k, real w) {
   vec2 pos = x0 + [0.25, 0.0];
   int age = 0;
   output real v = F(x0) if inside(x0, F) else -1.0;
   output int tag = k * 2 if k > 2 else -k;
   output real acc = 0.0;
   update {
      if (age >= gens) { stabilize; }
      acc += w * real(tag) + sum { q.v | q in sphere(1.1) };
      age += 1;
   }
}
initially [ cell([real(x), real(y)], x + y, real(y) / 4.0) | y in 0..6, x in 0..8 ];
"""

BIRTHS = """#version 1.0
strand cell(int k, real w) {
   int age = 0;
   output real v = w * real(k);
   update {
      if (age == 0 && k < 3) { new cell(k + 10, 0.5); }
      age += 1;
      if (age > 1) { stabilize; }
   }
}
initially { cell(x, real(x)) | x in 0..5 };
"""


def program(text: str):
    return strands(check(parse_program(text)))


def image():
    return np.sin(np.arange(80.0).reshape(10, 8) * 0.37)


def test_a_parameter_only_the_initializers_read_has_no_state_row():
    ir, why = strand_plan(program(UNREAD).checked)
    assert why is None
    state = {sl.name for sl in ir.state}
    assert not {"x0.0", "x0.1", "k"} & state and "w" in state and ir.params == ("w",)
    assert ir.init == () and any(getattr(st, "name", "") == "prm_0_" for st in ir.create)
    ir, _ = strand_plan(program(BIRTHS).checked)
    assert {"k", "w"} <= {sl.name for sl in ir.state} and ir.init != ()


@pytest.mark.parametrize("gens", [0, 3])
def test_unstored_parameters_give_the_interpreters_outputs(gens):
    p = program(UNREAD)
    values = {"img": image(), "gens": gens}
    agree(p, values, rtol=0)


def test_parameters_of_a_program_with_births_stay_state():
    p = program(BIRTHS)
    a, b = p.run({}, backend="interp"), p.run({}, backend="c")
    assert np.array_equal(a.outputs["v"], b.outputs["v"]) and len(b.outputs["v"]) == 9


def test_the_births_drop_the_pointers_cast_before_them(monkeypatch):
    """Run._p casts each array once into Run._ptrs; the births replace the state arrays, so
    _add_births empties it: afterwards it holds only arrays the run still has, not the
    state arrays before the births (nor the births' own buffers)."""
    from tensorlang.targets.c import strands as c_strands

    seen: list[tuple[tuple, set, set]] = []
    real = c_strands.Run._add_births

    def spy(run):
        old = (run.R, run.I, run.status)  # (held here: their ids are not reused)
        assert {id(a) for a in old} <= {id(arr) for arr, _ in run._ptrs.values()}  # (cast before the births)
        real(run)
        seen.append((old, {id(arr) for arr, _ in run._ptrs.values()}, {id(v) for v in vars(run).values()}))

    monkeypatch.setattr(c_strands.Run, "_add_births", spy)
    b = program(BIRTHS).run({}, backend="c")
    assert len(b.outputs["v"]) == 9 and seen
    for old, after, current in seen:
        assert not {id(a) for a in old} & after and after <= current
