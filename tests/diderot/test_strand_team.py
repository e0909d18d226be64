"""The strand driver's parallel loops in chunks of neighbouring tiles or blocks (bands of
tiles across a tall grid), its team chosen by load and timings (strands.FIXED_TEAM off) or
taken as asked, and real outputs of several components copied out in C (tl_out_real):
every way gives the one-thread answer, which is the closed form here."""

from __future__ import annotations

import numpy as np
import pytest

from tensorlang.targets.c import strands as CS
from agreement import same  # tests/diderot is on the path
from test_compiled import needs_cc, program

#: a solo program (no strand reads another): tiles of the grid, bands of them where rows are many
SOLO = """#version 2.0
input int R = 520;
input int C = 17;
strand S (int r, int c) {
  output vec3 v = [0, 0, 0];
  int k = 0;
  update {
    v += [real(r), real(c), 0.5];
    k += 1;
    if (k >= (r + c) % 5 + 1) { stabilize; }
  }
}
create_array { S(r, c) | r in 0..R-1, c in 0..C-1 }
"""

#: a global block makes the steps bulk-synchronous: blocks of strands, chunks of blocks
BLOCKS = SOLO.replace("create_array", "int iter = 0;\nupdate { iter += 1; if (iter == 9) { stabilize; } }\n"
                                      "create_array")


def _closed_form(rows: int, cols: int, kind: str) -> np.ndarray:
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    k = ((r + c) % 5 + 1).astype(float)
    return np.stack([r * k, c * k, 0.5 * k], axis=-1)


@needs_cc
@pytest.mark.parametrize("text", [SOLO, BLOCKS], ids=["solo", "blocks"])
@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "adaptive"])
def test_two_threads_in_chunks_give_the_one_thread_answer(monkeypatch, text, fixed):
    monkeypatch.setattr(CS, "FIXED_TEAM", fixed)
    p = program(text)
    one = p.run({}, backend="c", threads=1)
    for _ in range(4):  # (the adaptive team tries both, its first calls)
        two = p.run({}, backend="c", threads=2)
        same(one, two)
    assert np.array_equal(np.asarray(one.outputs["v"]), _closed_form(520, 17, text))


@needs_cc
def test_a_collections_vector_outputs_are_its_stable_strands_in_order():
    text = SOLO.replace("if (k >= (r + c) % 5 + 1) { stabilize; }",
                        "if (k >= (r + c) % 5 + 1) { if ((r + c) % 3 == 0) { die; } stabilize; }") \
        .replace("create_array", "create_collection")
    res = program(text).run({"R": 40}, backend="c", threads=2)
    want = _closed_form(40, 17, "")
    keep = (np.add.outer(np.arange(40), np.arange(17)) % 3 != 0)
    assert np.array_equal(np.asarray(res.outputs["v"]), want[keep])


def test_state_refuses_strand_columns_outside_the_run():
    """The outputs are copied in C (``tl_out_real``): columns outside the run's strands are
    refused before C reads them, not read past the state arrays."""
    from tensorlang.lang.diderot import parse_program
    from tensorlang.lang.diderot import typecheck as check
    from tensorlang.lang.diderot.lower import strand_plan
    from tensorlang.targets.c import strands as c_strands

    ir, why = strand_plan(check(parse_program("#version 1.0\nstrand s(int i) { output vec3 v = [real(i), 1.0, 2.0]; "
                                              "update { stabilize; } }\ninitially [ s(i) | i in 0..4 ];\n")))
    assert why is None
    run = c_strands.build(ir, 10).start({}, [(0, 4)])
    assert run.state("v", (3,), "tensor", np.array([4, 0])).tolist() == [[4.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    for bad in (np.array([0, 5]), np.array([-1]), np.ones(6, bool)):
        with pytest.raises(IndexError):
            run.state("v", (3,), "tensor", bad)
