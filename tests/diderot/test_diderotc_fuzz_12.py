"""What the field programs (``fuzz_diderotc.py --mode fields``, docs/diderot.md, "Generated programs against
diderotc") found: a formula field that indexes its position, which diderotc's executables get wrong; and the
mode's smoke test (no diderotc here: its programs are only generated, typechecked and, once, run)."""

from __future__ import annotations

from fuzz_diderotc import generate_fields
from unseen_inputs import _write

import tensorlang as tl
from tensorlang.lang.diderot import parse_program, strands
from tensorlang.lang.diderot import typecheck as check


def test_the_field_generator_makes_programs_tensorlang_runs(tmp_path, monkeypatch, capsys):
    """Programs of the fields mode, less their lines marked "over" (a derivative past the field's continuity, which
    diderotc and tensorlang refuse), typecheck (images of every dimension among them), and one runs on its images,
    printing every line."""
    dims = set()
    for seed in range(4):
        case = generate_fields(seed)
        text = "\n".join(line for line in case.text.split("\n") if not line.endswith("// over"))
        strands(check(parse_program(text)))
        dims |= {len(kinds) - (kinds[0] != "space") for _, _, kinds, _, _ in case.files}
    assert dims == {1, 2, 3}
    (tmp_path / "run").mkdir()
    for name, data, kinds, dirs, origin in case.files:
        _write(tmp_path / f"{name}.nrrd", data, kinds, dirs, origin)
    (tmp_path / "p.diderot").write_text(text)
    monkeypatch.chdir(tmp_path / "run")
    assert tl.compile(str(tmp_path / "p.diderot"), backend="interp").main(list(case.argv)) == 0
    rows = text.split("\n")
    each = sum(row.startswith('    print("e') for row in rows)
    assert len(capsys.readouterr().out.splitlines()) == 4 * each + sum(row.startswith('  print("e') for row in rows)


FORMULA = """#version 2.0
field#2(2)[] P(x) = x[0];
field#2(2)[] Q(x) = x • x * 0.25 + x[1];
field#2(2)[] R(x) = x[0] * x[1];
strand S (int i) {
  output real o = 0.0;
  update {
    vec2 p = [2.0 + real(i), 3.0];
    print(P(p), " ", ∇P(p), " ", Q(p), " ", ∇Q(p), " ", R(p), " ", ∇R(p), "\\n");
    stabilize;
  }
}
create_array { S(i) | i in 0..1 }
"""


def test_a_formula_field_that_indexes_its_position():
    """``P(x) = x[0]`` is the first coordinate, with gradient [1, 0]. diderotc's executables print 120 and [0, 0]
    for P at [2, 3], drop the x[1] term of Q (3.25 and [1, 1.5]) and give R 0 and [0, 0] (a diderotc bug the
    generator found; it now writes formulas of x • x and x • a only)."""
    got = strands(check(parse_program(FORMULA))).run({}, backend="interp").printed
    assert got == "2 [1,0] 6.25 [1,2.5] 6 [3,2]\n3 [1,0] 7.5 [1.5,2.5] 9 [3,3]\n"
