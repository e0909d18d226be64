"""A narrow state int (8, 16 or 32 bits: targets/c/strands_narrow.py) compared with an int
global or constant is compared in its own width (``tl_ge16`` and friends, the global clamped
to the width's range): the update's lanes run 2-8 times as many strands to a vector as in
64 bits.  Every operator, both orders, every width, against globals at and past each width's
ends: the interpreter's results, in lanes and one strand at a time, at 1 and 2 threads."""

from __future__ import annotations

import pytest
from agreement import agree

from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check
from tensorlang.lang.diderot.lower import strand_plan
from tensorlang.targets.c import build as c_build
from tensorlang.targets.c import strands as C
from tensorlang.targets.c import strands_narrow as NW

pytestmark = [pytest.mark.skipif(c_build.find_compiler() is None, reason="no working C compiler"),
              pytest.mark.slow]

OPS = (">=", ">", "<", "<=", "==", "!=")


def _bits(name: str) -> str:
    """One bit per operator and order: ``name OP g`` and ``g OP name``."""
    terms = [f"(1 if {name} {op} g else 0)" for op in OPS] + [f"(1 if g {op} {name} else 0)" for op in OPS]
    return " + ".join(f"{1 << k} * {t}" for k, t in enumerate(terms))


# each width's two ends, one past them when negated, and small values, strand by strand
TEXT = f"""#version 1.0
input int g = 0;
strand s(int x, int y) {{
   vec2 pos = [real(x), real(y)];
   int age = 0;
   int v8 = -128 if x == 0 else 127 if x == 1 else -1 if x == 2 else 1 if x == 3 else 0;
   int v16 = -32768 if x == 0 else 32767 if x == 1 else -129 if x == 2 else 128 if x == 3 else 5;
   int v32 = -2147483648 if x == 0 else 2147483647 if x == 1 else -32769 if x == 2 else 32768 if x == 3 else -5;
   output int r8 = 0;
   output int r16 = 0;
   output int r32 = 0;
   output int n = 0;
   update {{
      if (age >= 1) {{ stabilize; }}
      n = sum {{ q.v8 | q in sphere(1.5) }};
      r8 = {_bits("v8")};
      r16 = {_bits("v16")};
      r32 = {_bits("v32")};
      age += 1;
   }}
}}
initially [ s(x, y) | y in 0..2, x in 0..{{X}} ];
"""

EDGES = [-2**40, -2**31 - 1, -2**31, -2**31 + 1, -32769, -32768, -32767, -129, -128, -127, -1, 0, 1, 126, 127, 128,
         32767, 32768, 2**31 - 1, 2**31, 2**40]


def program(cols: int):
    return strands(check(parse_program(TEXT.replace("{X}", str(cols - 1)))))


def test_the_comparisons_are_rendered_in_the_narrow_widths():
    ir, why = strand_plan(program(12).checked)
    assert why is None
    assert {k: NW.narrow_slots(ir)[k] for k in ("v8", "v16", "v32")} == {"v8": 8, "v16": 16, "v32": 32}
    src = C.render(ir)
    lanes = src[src.index(" int tl_lanes("):]
    for fn in ("tl_ge8", "tl_gt16", "tl_eq32"):
        assert fn + "(" in lanes


@pytest.mark.parametrize("cols", [5, 40])  # rows one by one (under 8 strands), and in lanes
def test_narrow_comparisons_agree_with_the_interpreter(cols):
    p = program(cols)
    for g in EDGES:
        a, _ = agree(p, {"g": g}, rtol=0)
        for name in ("r8", "r16", "r32"):  # every strand's 12 answers: each one a bit, none of them always the same
            assert 0 < a.outputs[name].min() and a.outputs[name].max() < 1 << 12
